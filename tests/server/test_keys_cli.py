"""`trawl keys`: a key is printed once, stored only as a digest, and can be revoked."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fastapi.testclient import TestClient

from fixture_sites import trawl
from service_fixtures import service_settings
from trawl.server.app import create_app


def test_create_list_use_and_revoke_a_key(tmp_path: Path) -> None:
    data = str(tmp_path)
    created = trawl("keys", "create", "--name", "ops", "--data", data)
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    assert key.startswith("trawl_") and len(key) > 40
    assert "not shown again" in created.stderr

    db = sqlite3.connect(tmp_path / "trawl.sqlite")
    stored = [tuple(r) for r in db.execute("SELECT name, digest FROM api_keys")]
    db.close()
    assert stored[0][0] == "ops" and key not in stored[0][1] and len(stored[0][1]) == 64

    listed = trawl("keys", "list", "--data", data)
    assert listed.stdout.split("\t")[:2] == ["1", "ops"] and key not in listed.stdout

    app = create_app(service_settings(tmp_path))
    with TestClient(app) as client:
        assert client.get("/api/admin/sites", headers={"X-API-Key": key}).status_code == 200
        assert trawl("keys", "revoke", "1", "--data", data).returncode == 0
        assert client.get("/api/admin/sites", headers={"X-API-Key": key}).status_code == 401

    again = trawl("keys", "revoke", "1", "--data", data)
    assert again.returncode == 2 and "no key 1" in again.stderr


def test_a_key_with_one_scope_and_an_expiry(tmp_path: Path) -> None:
    data = str(tmp_path)
    made = trawl(
        "keys", "create", "--name", "reader", "--scope", "search", "--expires-days", "2",
        "--data", data,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    listed = trawl("keys", "list", "--data", data).stdout.split("\t")
    assert listed[1] == "reader" and listed[3] == "search" and listed[4].startswith("expires")
    assert trawl("keys", "create", "--scope", "root", "--data", data).returncode != 0

    settings = service_settings(tmp_path, search_requires_key=True)
    with TestClient(create_app(settings)) as client:
        assert client.get("/api/admin/sites", headers={"X-API-Key": key}).status_code == 403
        # No index yet: the key was let through to the search itself (503), a stranger not.
        assert client.get("/api/search?q=x", headers={"X-API-Key": key}).status_code == 503
        assert client.get("/api/search?q=x").status_code == 401
