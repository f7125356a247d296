"""A throwaway PostgreSQL server for tests and benchmarks: initdb into a temporary
folder, one server on a loopback port, a fresh database on demand.

The binaries are Debian's (``pg_config --bindir``). initdb and postgres refuse to
run as root, so as root they run as the ``postgres`` user (or ``nobody``) in a
folder that user owns: the child drops to that user itself (Popen's ``user``),
with no wrapper process between us and the server to pass signals on.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

START_TIMEOUT = 60.0


def server_binaries() -> Path | None:
    """The folder holding initdb and postgres, or None when PostgreSQL is not installed."""
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        try:
            found = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, check=True, timeout=10
            ).stdout.strip()
        except (subprocess.SubprocessError, OSError):
            found = ""
        bindir = Path(found)
        if found and (bindir / "initdb").exists() and (bindir / "postgres").exists():
            return bindir
    # pg_config may be libpq-dev's, or absent, while Debian's server is installed.
    servers = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return servers[-1].parent if servers else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _unprivileged_user() -> str | None:
    """None when we are not root; else a user initdb accepts."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise RuntimeError("running as root and no postgres or nobody user to run PostgreSQL as")


class PostgresServer:
    def __init__(self, bindir: Path) -> None:
        self._bindir = bindir
        self._user = _unprivileged_user()
        self._root = Path(tempfile.mkdtemp(prefix="trawl-pg-"))
        self._data = self._root / "data"
        self.port = _free_port()
        self._process: subprocess.Popen[bytes] | None = None
        self._names = itertools.count(1)

    def _as_user(self) -> dict[str, Any]:
        """Popen arguments that run the child as the unprivileged user."""
        if self._user is None:
            return {}
        entry = pwd.getpwnam(self._user)
        return {
            "user": entry.pw_uid,
            "group": entry.pw_gid,
            "extra_groups": [],
            "cwd": self._root,
        }

    def start(self) -> PostgresServer:
        if self._user is not None:
            entry = pwd.getpwnam(self._user)
            os.chown(self._root, entry.pw_uid, entry.pw_gid)
        subprocess.run(
            [
                str(self._bindir / "initdb"),
                "-D",
                str(self._data),
                "-U",
                "trawl",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
            **self._as_user(),
            check=True,
            capture_output=True,
            timeout=120,
        )
        log = (self._root / "server.log").open("wb")
        # No durability: a test database is thrown away anyway, and fsync is slow.
        self._process = subprocess.Popen(
            [
                str(self._bindir / "postgres"),
                "-D",
                str(self._data),
                "-p",
                str(self.port),
                "-k",
                str(self._root),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=200",
            ],
            **self._as_user(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                psycopg.connect(self.url("postgres"), connect_timeout=2).close()
                return self
            except psycopg.OperationalError:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("PostgreSQL did not start: " + self.log()[-2000:]) from None
                time.sleep(0.1)

    def log(self) -> str:
        path = self._root / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def url(self, database: str) -> str:
        return f"postgresql://trawl@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; returns its URL."""
        name = f"trawl_{next(self._names)}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGINT)  # fast shutdown: clients are cut off
            try:
                self._process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        shutil.rmtree(self._root, ignore_errors=True)
