"""API keys: made by ``trawl keys create``, kept in the store only as a digest.

A key is 256 random bits, so a plain SHA-256 digest is enough: slow, salted
hashes exist to protect guessable passwords, and nobody can guess these. The
digest is looked up directly, so no comparison leaks timing about a key.

An admin request carries its key in the ``X-API-Key`` header (or
``Authorization: Bearer``); the browser UI keeps it in an HttpOnly,
SameSite=Strict cookie after the login form, which also keeps other sites
from posting forms with it (and ui.py refuses a form whose Origin is not the
server's own, for sibling hosts of the same site).
"""

from __future__ import annotations

import hashlib
import secrets

from fastapi import Request

from trawl.errors import Unauthorized
from trawl.records import ApiKey
from trawl.store.base import Store

KEY_HEADER = "X-API-Key"
COOKIE = "trawl_key"
PREFIX = "trawl_"
MAX_KEY_CHARS = 200


def new_key() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(store: Store, name: str) -> tuple[int, str]:
    """A new key named ``name``: its id, and the key itself (shown once, never stored)."""
    key = new_key()
    return store.add_api_key(name, digest(key)), key


def presented_key(request: Request, *, cookie: bool) -> str | None:
    key = request.headers.get(KEY_HEADER)
    if key is None:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        key = value.strip() if scheme.lower() == "bearer" else None
    if key is None and cookie:
        key = request.cookies.get(COOKIE)
    return key.strip() if key else None


def authenticate(store: Store, key: str | None) -> ApiKey:
    if not key:
        raise Unauthorized(f"an API key is required (header {KEY_HEADER})")
    if len(key) > MAX_KEY_CHARS or not key.isascii():
        raise Unauthorized("unknown API key")
    found = store.api_key_by_digest(digest(key))
    if found is None:
        raise Unauthorized("unknown API key")
    return found
