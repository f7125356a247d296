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
