"""``search_workers`` -1 (the default): `trawl serve` searches in one worker per core,
while an app made in-process (every test's) searches in its own process unless told."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from trawl.server.app import create_app
from trawl.server.context import context_of_app
from trawl.server.search_pool import MAX_AUTO_WORKERS, SearchPool, serving_workers
from trawl.settings import Settings, info


@pytest.mark.parametrize(
    ("setting", "cores", "workers"),
    [
        (-1, 1, 0),  # one core: a worker would only add a pipe's round trip
        (-1, 2, 2),
        (-1, 3, 3),
        (-1, 64, MAX_AUTO_WORKERS),
        (0, 64, 0),  # 0 keeps meaning "in the server's own process"
        (0, 1, 0),
        (3, 1, 3),  # a number given is kept, whatever the machine
        (16, 2, 16),
    ],
)
def test_auto_is_a_worker_per_core_for_trawl_serve(setting: int, cores: int, workers: int) -> None:
    assert serving_workers(setting, cores) == workers


def test_auto_reads_this_machine_s_cores() -> None:
    cores = len(os.sched_getaffinity(0))
    assert serving_workers(-1) == (0 if cores < 2 else min(cores, MAX_AUTO_WORKERS))


def test_the_default_is_auto_and_documented_so() -> None:
    assert Settings().search_workers == -1
    row = info("search_workers")
    assert row.minimum == -1 and "-1: one per core" in row.help and "0:" in row.help


def test_an_in_process_app_searches_in_its_own_process(tmp_path: Path) -> None:
    assert SearchPool(Settings(data=tmp_path)).workers == 0
    assert SearchPool(Settings(data=tmp_path, search_workers=0)).workers == 0
    assert SearchPool(Settings(data=tmp_path, search_workers=2)).workers == 2  # not started
    app = create_app(Settings(data=tmp_path), header_checker=None)
    with TestClient(app) as client:  # the lifespan starts the pool: no process
        assert client.get("/api/search", params={"q": "x"}).status_code == 503  # no index
        assert context_of_app(app).search_pool.pids() == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _children(pid: int) -> list[str]:
    """The command lines of ``pid``'s child processes."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            found.append(cmdline.replace(b"\0", b" ").decode())
    return found


@pytest.mark.parametrize("setting", [None, "0"])
def test_trawl_serve_runs_a_worker_per_core_unless_told(
    tmp_path: Path, setting: str | None
) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRAWL_")}
    if setting is not None:
        env["TRAWL_SEARCH_WORKERS"] = setting
    command = [sys.executable, "-m", "trawl", "serve", "--data", str(tmp_path / "data")]
    child = subprocess.Popen(
        [*command, "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).close()
                break
            except OSError:
                assert child.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.2)
        workers = serving_workers(-1) if setting is None else 0
        spawned = [c for c in _children(child.pid) if "spawn_main" in c]
        assert len(spawned) == workers
    finally:
        child.terminate()
        _, err = child.communicate(timeout=20)
    said = {0: "in this process", 1: "in 1 worker process"}.get(
        workers, f"in {workers} worker processes"
    )
    assert f"(searches {said})" in err
