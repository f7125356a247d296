"""Every setting, its sources and its checks (trawl.settings)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from trawl.errors import ConfigError
from trawl.settings import Settings, load, markdown_table, table


def toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "trawl.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults() -> None:
    s = load(env={})
    assert s == Settings()
    assert s.data == Path("trawl-data")
    assert s.user_agent.startswith("TrawlBot/")
    assert s.concurrency == 8
    assert s.host_concurrency == 2
    assert s.delay == 0.5
    assert s.max_pages == 10_000
    assert s.max_depth == 50
    assert s.timeout == 20.0
    assert s.host == "127.0.0.1"
    assert s.port == 8080


def test_default_paths() -> None:
    s = Settings(data=Path("/srv/trawl"))
    assert s.sqlite_path == Path("/srv/trawl/trawl.sqlite")
    assert s.index_path == Path("/srv/trawl/index")


def test_load_without_env_or_file_ignores_a_stray_trawl_toml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The working directory must not leak into other tests: run from an empty folder.
    monkeypatch.chdir(tmp_path)
    assert load(env={}) == Settings()


def test_env_overrides_are_converted() -> None:
    s = load(
        env={
            "TRAWL_DELAY": "1.5",
            "TRAWL_CONCURRENCY": "4",
            "TRAWL_DATA": "/tmp/trawl-test",
            "TRAWL_USER_AGENT": "TestBot/9",
            "TRAWL_PORT": " 9000 ",
        }
    )
    assert s.delay == 1.5
    assert s.concurrency == 4
    assert s.data == Path("/tmp/trawl-test")
    assert s.user_agent == "TestBot/9"
    assert s.port == 9000


def test_env_variables_without_the_prefix_or_unknown_are_ignored() -> None:
    assert load(env={"DELAY": "9", "TRAWL_NO_SUCH_THING": "1", "trawl_delay": "7"}) == Settings()


def test_every_setting_has_an_env_variable() -> None:
    for info in table():
        if info.name == "data":
            continue
        default = getattr(Settings(), info.name)
        if isinstance(default, bool):
            flipped = "no" if default else "yes"
            assert getattr(load(env={info.env: flipped}), info.name) is (not default), info.name
            continue
        value = "50" if isinstance(default, int | float) else "changed"
        if info.name == "scope":
            value = "site"  # one of a fixed set
        if info.name in {
            "max_error_rate",
            "evict_min_quality",
            "evict_min_authority",
            "soft_and_share",
            "feedback_weight",
        }:
            value = "0.25"  # a share, at most 1
        if info.name == "navigational":
            value = "0"  # on or off
        value = {  # lists and addresses, checked when read
            "public_url": "https://search.example.org",
            "trusted_proxies": "10.0.0.1,fd00::/8",
            "admin_allow_hosts": "intranet:8080",
        }.get(info.name, value)
        s = load(env={info.env: value})
        assert str(getattr(s, info.name)).lower() in {value, "50.0"}, info.name


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("TRAWL_TRUSTED_PROXIES", "10.0.0.1, proxy.example", "not an address or network"),
        ("TRAWL_ADMIN_ALLOW_HOSTS", "intranet", "host:port"),
        ("TRAWL_ADMIN_ALLOW_HOSTS", "intranet:99999", "port out of range"),
        ("TRAWL_PUBLIC_URL", "search.example.org", "http(s) origin"),
        ("TRAWL_PUBLIC_URL", "https://search.example.org/x?y", "http(s) origin"),
    ],
)
def test_network_settings_are_checked_when_read(name: str, value: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(problem)):
        load(env={name: value})


def test_network_settings_read_as_lists() -> None:
    s = load(env={"TRAWL_ADMIN_ALLOW_HOSTS": "Intranet:8080, [::1]:9000"})
    assert s.admin_targets == (("intranet", 8080), ("::1", 9000))
    assert load(env={"TRAWL_TRUSTED_PROXIES": " 10.0.0.1 ,"}).proxy_networks == ("10.0.0.1",)


def test_switches_read_words_and_toml_booleans(tmp_path: Path) -> None:
    for word, expected in [("1", True), ("On", True), ("false", False), (" no ", False)]:
        assert load(env={"TRAWL_RENDER": word}).render is expected
    assert load(env={}, config_file=toml(tmp_path, "render = true\n")).render is True
    with pytest.raises(ConfigError, match="not a valid bool"):
        load(env={"TRAWL_RENDER": "sometimes"})
    with pytest.raises(ConfigError, match="not a valid bool"):
        load(env={}, config_file=toml(tmp_path, "render = 1\n"))


def test_toml_file(tmp_path: Path) -> None:
    path = toml(tmp_path, 'delay = 2.0\nconcurrency = 3\ndata = "mydata"\nhost = "0.0.0.0"\n')
    s = load(env={}, config_file=path)
    assert s.delay == 2.0
    assert s.concurrency == 3
    assert s.data == Path("mydata")
    assert s.host == "0.0.0.0"
    assert s.max_pages == Settings().max_pages


def test_toml_integer_for_a_float_setting(tmp_path: Path) -> None:
    s = load(env={}, config_file=toml(tmp_path, "delay = 2\n"))
    assert s.delay == 2.0
    assert isinstance(s.delay, float)


def test_env_overrides_the_toml_file(tmp_path: Path) -> None:
    path = toml(tmp_path, "concurrency = 9\ndelay = 3.0\n")
    s = load(env={"TRAWL_CONCURRENCY": "5"}, config_file=path)
    assert s.concurrency == 5
    assert s.delay == 3.0


def test_trawl_config_names_the_file(tmp_path: Path) -> None:
    path = toml(tmp_path, "max_depth = 4\n")
    assert load(env={"TRAWL_CONFIG": str(path)}).max_depth == 4


def test_trawl_toml_in_the_working_directory_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toml(tmp_path, "max_depth = 6\n")
    monkeypatch.chdir(tmp_path)
    assert load(env={}).max_depth == 6


def test_unknown_toml_key_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="concurency"):
        load(env={}, config_file=toml(tmp_path, "concurency = 3\n"))


def test_toml_table_is_an_unknown_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="crawl"):
        load(env={}, config_file=toml(tmp_path, "[crawl]\ndelay = 1\n"))


def test_invalid_toml_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="TOML"):
        load(env={}, config_file=toml(tmp_path, "delay = = 1\n"))


@pytest.mark.parametrize("data", [b"\xff\xfe", b"delay = 1\n# caf\xe9\n"])
def test_config_file_not_in_utf8_is_a_config_error(tmp_path: Path, data: bytes) -> None:
    # tomllib decodes before it parses: a UnicodeDecodeError escaped as a traceback.
    path = tmp_path / "latin1.toml"
    path.write_bytes(data)
    with pytest.raises(ConfigError, match="TOML"):
        load(env={}, config_file=path)


@pytest.mark.parametrize(
    "url",
    ["http://[", "http://[::1", "https://example.org:99999", "http://a@example.org", "http://:80"],
)
def test_public_url_that_urlsplit_cannot_read_is_a_config_error(url: str) -> None:
    # Accepted before, then every login and cookie write raised ValueError: a 500.
    with pytest.raises(ConfigError, match="public_url"):
        load(env={"TRAWL_PUBLIC_URL": url})


def test_missing_config_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load(env={}, config_file=tmp_path / "nope.toml")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TRAWL_CONCURRENCY", "many"),
        ("TRAWL_CONCURRENCY", "2.5"),
        ("TRAWL_DELAY", "soon"),
        ("TRAWL_PORT", "http"),
        ("TRAWL_MAX_PAGES", ""),
    ],
)
def test_bad_env_value_is_a_config_error(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name.removeprefix("TRAWL_").lower()):
        load(env={name: value})


@pytest.mark.parametrize(
    "text", ['concurrency = "abc"\n', "concurrency = [1]\n", "data = 5\n", "delay = {}\n"]
)
def test_bad_toml_value_is_a_config_error(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError):
        load(env={}, config_file=toml(tmp_path, text))


@pytest.mark.parametrize(
    "name",
    ["concurrency", "host_concurrency", "max_bytes", "per_page", "max_per_page", "port"],
)
@pytest.mark.parametrize("value", ["0", "-1"])
def test_at_least_one(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match="at least 1"):
        load(env={f"TRAWL_{name.upper()}": value})


@pytest.mark.parametrize(
    "name",
    [
        "delay",
        "max_pages",
        "max_depth",
        "timeout",
        "robots_max_bytes",
        "title_boost",
        "headings_boost",
        "body_boost",
        "url_boost",
        "host_boost",
        "snippet_chars",
    ],
)
def test_negative_is_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="must be at least"):
        load(env={f"TRAWL_{name.upper()}": "-1"})


@pytest.mark.parametrize("name", ["delay", "max_depth"])
def test_zero_is_allowed_where_it_means_something(name: str) -> None:
    assert getattr(load(env={f"TRAWL_{name.upper()}": "0"}), name) == 0


def test_negative_in_toml_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load(env={}, config_file=toml(tmp_path, "delay = -0.5\n"))


def test_replace_skips_none_and_checks_values() -> None:
    s = Settings().replace(delay=None, concurrency=3)
    assert s.concurrency == 3
    assert s.delay == Settings().delay
    with pytest.raises(ConfigError):
        Settings().replace(concurrency=0)
    with pytest.raises(ConfigError, match="bogus"):
        Settings().replace(bogus=1)


# -- values that should be refused but are not ------------------------------------------


def test_toml_float_for_an_int_setting_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load(env={}, config_file=toml(tmp_path, "concurrency = 2.7\n"))


@pytest.mark.parametrize("text", ["concurrency = true\n", "delay = true\n"])
def test_toml_boolean_for_a_number_is_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError):
        load(env={}, config_file=toml(tmp_path, text))


@pytest.mark.parametrize("text", ['host = ["a", "b"]\n', "user_agent = 5\n"])
def test_toml_non_string_for_a_string_setting_is_refused(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError):
        load(env={}, config_file=toml(tmp_path, text))


@pytest.mark.parametrize("name", ["TRAWL_DELAY", "TRAWL_TIMEOUT", "TRAWL_TITLE_BOOST"])
def test_nan_is_refused(name: str) -> None:
    with pytest.raises(ConfigError):
        load(env={name: "nan"})


def test_port_above_65535_is_refused() -> None:
    with pytest.raises(ConfigError):
        load(env={"TRAWL_PORT": "70000"})


def test_zero_timeout_is_refused() -> None:
    with pytest.raises(ConfigError):
        load(env={"TRAWL_TIMEOUT": "0"})


def test_zero_robots_max_bytes_is_refused() -> None:
    with pytest.raises(ConfigError):
        load(env={"TRAWL_ROBOTS_MAX_BYTES": "0"})


def test_per_page_above_max_per_page_is_refused() -> None:
    with pytest.raises(ConfigError):
        load(env={"TRAWL_PER_PAGE": "200", "TRAWL_MAX_PER_PAGE": "100"})


# -- the table --------------------------------------------------------------------------


def test_table_lists_every_setting_in_order() -> None:
    names = [f.name for f in dataclasses.fields(Settings)]
    assert [info.name for info in table()] == names
    for info in table():
        assert info.env == "TRAWL_" + info.name.upper()
        assert info.help
        assert info.default == getattr(Settings(), info.name)


def test_markdown_table_lists_every_setting() -> None:
    text = markdown_table()
    lines = text.splitlines()
    assert lines[0] == "| setting | env | default | meaning |"
    assert lines[1] == "|---|---|---|---|"
    rows = lines[2:]
    assert len(rows) == len(dataclasses.fields(Settings))
    for info, row in zip(table(), rows, strict=True):
        assert row.startswith(f"| `{info.name}` | `{info.env}` | `{info.default}` |")
        assert row.endswith(f"{info.help} |")
