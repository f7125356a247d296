"""The runtime install without its extras, as `make run` leaves it.

The suite's environment has every extra installed, so their absence is
simulated: the child process gets an import hook that reports the extras'
packages as not installed (ModuleNotFoundError, as a missing package gives).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from fixture_sites import REPO, Route, SiteServer, html_page

Serve = Callable[[dict[str, Route]], SiteServer]

# Every package an extra brings, and the two heavy ones Trawl no longer uses.
EXTRA_PACKAGES = ("playwright", "psycopg", "psycopg_pool", "ir_measures", "scipy", "extruct")
# The modules that import an extra's packages: each is imported only when its
# feature is used, and says which extra is missing when it is.
EXTRA_OWNERS = {
    "trawl.net.renderer": "render",
    "trawl.store.postgres": "postgres",
    "trawl.evaluation.runner": "eval",
    "trawl.evaluation.golden": "eval",
}

_HOOK = textwrap.dedent(
    """
    import importlib.abc, sys

    class NotInstalled(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in {blocked!r}:
                raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
            return None

    sys.meta_path.insert(0, NotInstalled())
    """
).format(blocked=set(EXTRA_PACKAGES))


def without_extras(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _HOOK + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def trawl_without_extras(*args: str) -> subprocess.CompletedProcess[str]:
    return without_extras(
        f"""
        sys.argv = ["trawl", *{list(args)!r}]
        from trawl.cli import main
        main()
        """
    )


def all_modules() -> list[str]:
    src = REPO / "src"
    return sorted(
        ".".join(p.relative_to(src).with_suffix("").parts).removesuffix(".__init__")
        for p in (src / "trawl").rglob("*.py")
    )


def test_the_hook_makes_an_extra_look_missing() -> None:
    result = without_extras("import playwright")
    assert result.returncode == 1 and "ModuleNotFoundError" in result.stderr


def test_every_module_but_the_extras_owners_imports_without_the_extras() -> None:
    wanted = [m for m in all_modules() if m not in EXTRA_OWNERS and m != "trawl.__main__"]
    result = without_extras(
        f"""
        import importlib
        for name in {wanted!r}:
            importlib.import_module(name)
        print("imported", len({wanted!r}))
        """
    )
    assert result.returncode == 0, result.stderr
    assert f"imported {len(wanted)}" in result.stdout


@pytest.mark.parametrize(("module", "extra"), sorted(EXTRA_OWNERS.items()))
def test_an_owner_without_its_extra_names_the_extra(module: str, extra: str) -> None:
    result = without_extras(
        f"""
        from trawl.errors import MissingExtra
        try:
            import {module}
        except MissingExtra as e:
            print(e.extra, "|", e)
        """
    )
    assert result.returncode == 0, result.stderr
    named, _, message = result.stdout.strip().partition(" | ")
    assert named == extra
    assert f"pip install 'trawl[{extra}]'" in message


def test_crawl_search_and_export_run_on_the_runtime_alone(serve: Serve, tmp_path: Path) -> None:
    server = serve(
        {
            "/": html_page("Hedgehogs", '<a href="/care">Care</a><p>Hedgehogs at night.</p>'),
            "/care": html_page("Hedgehog care", "<h1>Care</h1><p>Feed them mealworms.</p>"),
        }
    )
    data = str(tmp_path / "data")

    crawled = trawl_without_extras("crawl", server.url("/"), "--data", data, "--delay", "0")
    found = trawl_without_extras("search", "mealworms", "--data", data)
    exported = trawl_without_extras("export", "--data", data)

    assert crawled.returncode == 0, crawled.stderr
    assert "complete: 2 fetched, 2 indexed" in crawled.stdout
    assert found.returncode == 0, found.stderr
    assert server.url("/care") in found.stdout
    assert exported.returncode == 0 and len(exported.stdout.splitlines()) == 2


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["crawl", "http://127.0.0.1:9/", "--render"], "render"),
        (["index", "--store", "postgresql://trawl@127.0.0.1:9/trawl"], "postgres"),
        (["eval", "smart", "folder-that-is-not-there"], "eval"),
    ],
)
def test_a_feature_without_its_extra_is_one_line_naming_it(
    args: list[str], extra: str, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    result = trawl_without_extras(*args, *(["--data", str(data)] if args[0] != "eval" else []))

    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"pip install 'trawl[{extra}]'" in lines[0]
    assert not data.exists(), "a crawl that cannot start must not leave a data folder"
