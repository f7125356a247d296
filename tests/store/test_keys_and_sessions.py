"""API keys with scopes and expiry, and login sessions, on both stores."""

from __future__ import annotations

import time

from trawl.store.base import Store


def test_keys_keep_their_scopes_and_expiry(store: Store) -> None:
    both = store.add_api_key("ops", "d1")
    reader = store.add_api_key("reader", "d2", ("search",), time.time() + 60)
    keys = {k.id: k for k in store.api_keys()}
    assert keys[both].scopes == ("search", "admin") and keys[both].expires_at is None
    assert keys[reader].scopes == ("search",) and keys[reader].expires_at is not None
    found = store.api_key_by_digest("d2")
    assert found is not None and found.id == reader and found.last_used is not None


def test_a_session_lives_until_it_expires_ends_or_its_key_goes(store: Store) -> None:
    key = store.add_api_key("ops", "d1")
    store.add_session("s1", key, time.time() + 60)
    store.add_session("s2", key, time.time() + 60)
    store.add_session("old", key, time.time() - 1)
    found = store.session_key("s1")
    assert found is not None and found.id == key and found.name == "ops"
    assert store.session_key("old") is None
    assert store.end_session("s1") and store.session_key("s1") is None
    assert not store.end_session("s1")
    assert store.revoke_api_key(key)
    assert store.session_key("s2") is None
