"""Who is asking: API keys with scopes and an expiry, and admin logins as server-side sessions.

A key is 256 random bits, so a plain SHA-256 digest is enough: slow, salted
hashes exist to protect guessable passwords, and nobody can guess these. The
digest is looked up directly, so no comparison leaks timing about a key.

A program sends its key in the ``X-API-Key`` header (or ``Authorization:
Bearer``). A browser logs in once with a key and gets a session: a random
token of its own, stored only as a digest with an expiry, ended by logout or
by revoking the key. The cookie is HttpOnly and SameSite=Strict, and over
HTTPS Secure with the ``__Host-`` prefix (no sibling host can set or read
it). SameSite does not stop another port or a sibling host of the same site,
so every state change made with the cookie must name this server's own
origin (``from_own_origin``); the key headers are never sent by a browser on
its own, so requests carrying them need no such check.

A server with no key yet prints a setup link when it starts (``SetupLink``),
as a notebook server prints its token: one login, within the hour, for
whoever can read the server's output.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Sequence
from urllib.parse import urlsplit

from fastapi import Request
from fastapi.responses import Response

from trawl.errors import Forbidden, Unauthorized
from trawl.records import KEY_SCOPES, ApiKey, KeyScope
from trawl.store.base import Admin

KEY_HEADER = "X-API-Key"
COOKIE = "trawl_session"
SECURE_COOKIE = "__Host-trawl_session"  # over HTTPS: Secure, Path=/, no Domain
PREFIX = "trawl_"
MAX_KEY_CHARS = 200
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CROSS_SITE = "this request came from a page of another site or port"


def new_key() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(
    store: Admin,
    name: str,
    scopes: Sequence[KeyScope] = KEY_SCOPES,
    expires_at: float | None = None,
) -> tuple[int, str]:
    """A new key named ``name``: its id, and the key itself (shown once, never stored)."""
    key = new_key()
    return store.add_api_key(name, digest(key), scopes, expires_at), key


def presented_key(request: Request) -> str | None:
    """The key in the request's headers (a browser's cookie is no key: see ``session``)."""
    key = request.headers.get(KEY_HEADER)
    if key is None:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        key = value.strip() if scheme.lower() == "bearer" else None
    return key.strip() if key else None


def _usable(found: ApiKey | None, scope: KeyScope | None) -> ApiKey:
    if found is None:
        raise Unauthorized("unknown API key")
    if found.expires_at is not None and found.expires_at <= time.time():
        raise Unauthorized("this API key has expired")
    if scope is not None and scope not in found.scopes:
        raise Forbidden(f"this API key has no {scope} scope")
    return found


def _well_formed(secret: str) -> bool:
    return 0 < len(secret) <= MAX_KEY_CHARS and secret.isascii()


def authenticate(store: Admin, key: str | None, scope: KeyScope | None = "admin") -> ApiKey:
    """The key, if it exists, has not expired and holds ``scope`` (None: any)."""
    if not key:
        raise Unauthorized(f"an API key is required (header {KEY_HEADER})")
    found = store.api_key_by_digest(digest(key)) if _well_formed(key) else None
    return _usable(found, scope)


# -- sessions ---------------------------------------------------------------------


def cookie_name(request: Request) -> str:
    return SECURE_COOKIE if request.url.scheme == "https" else COOKIE


def session_token(request: Request) -> str | None:
    return request.cookies.get(cookie_name(request)) or None


def start_session(store: Admin, key: ApiKey, hours: float) -> tuple[str, int]:
    """A new session for ``key``: the cookie's token and its lifetime in seconds."""
    token = secrets.token_urlsafe(32)
    seconds = max(1, round(hours * 3600))
    expires = time.time() + seconds
    if key.expires_at is not None:
        expires = min(expires, key.expires_at)  # a login never outlives its key
    store.add_session(digest(token), key.id, expires)
    return token, max(1, round(expires - time.time()))


def session(store: Admin, token: str, scope: KeyScope | None) -> ApiKey:
    """The key behind a live session, if it holds ``scope`` (None: any)."""
    found = store.session_key(digest(token)) if _well_formed(token) else None
    if found is None:
        raise Unauthorized("not logged in, or the login has expired")
    return _usable(found, scope)


def end_session(store: Admin, token: str | None) -> None:
    if token and _well_formed(token):
        store.end_session(digest(token))


def set_session_cookie(response: Response, request: Request, token: str, seconds: int) -> None:
    response.set_cookie(
        cookie_name(request),
        token,
        max_age=seconds,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def clear_session_cookie(response: Response, request: Request) -> None:
    response.delete_cookie(
        cookie_name(request),
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


# -- the first login -----------------------------------------------------------------

SETUP_KEY_NAME = "setup link"
SETUP_MINUTES = 60.0
SETUP_PATH = "/admin/setup"


class SetupLink:
    """A one-time login link for a server with no API key yet.

    The token is 256 random bits, kept only as its digest, in this process (a
    restart makes a new one, and the old one dies with the process); it expires,
    and the first request that presents it uses it up, so a copy of the link in a
    terminal's scroll-back or a browser's history opens nothing later.
    """

    def __init__(self) -> None:
        self._digest: str | None = None
        self._expires = 0.0
        self._lock = threading.Lock()  # two tabs opening the link: one login

    def issue(self, minutes: float = SETUP_MINUTES) -> str:
        """A new token (any earlier one stops working)."""
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._digest = digest(token)
            self._expires = time.time() + minutes * 60
        return token

    def redeem(self, token: str) -> bool:
        """Whether ``token`` is the live one; it is used up either way it matched."""
        if not _well_formed(token):
            return False
        with self._lock:
            live = self._digest is not None and time.time() < self._expires
            if not (live and secrets.compare_digest(digest(token), self._digest or "")):
                return False
            self._digest = None
        return True


def setup_login(store: Admin, hours: float) -> tuple[str, int]:
    """A session for the holder of a setup link: made for a new admin key of its own,
    which nobody sees (the admin page makes keys to log in with later)."""
    key_id, _ = create_key(store, SETUP_KEY_NAME, KEY_SCOPES)
    key = next(k for k in store.api_keys() if k.id == key_id)
    return start_session(store, key, hours)


# -- where a request came from -------------------------------------------------------


def from_own_origin(request: Request, public_url: str, *, required: bool) -> bool:
    """Whether the page that made this request is one of this server's own.

    Browsers name the page's origin in every POST (Origin, else Referer); one
    that is not this server's is refused: another site, and another port or
    sibling host of this one, which SameSite=Strict lets through. "null" (a
    sandboxed or privacy-stripped origin) names no host and is refused. With
    ``public_url`` set, the scheme and host must be its own; without it, the
    host must be the one the request was sent to. ``required``: a request
    naming no page is refused too (it carried a session cookie, so it came
    from a browser, and browsers name it).
    """
    source = request.headers.get("origin") or request.headers.get("referer")
    if source is None:
        return not required
    try:
        parts = urlsplit(source)
    except ValueError:  # "http://[": names no page at all
        return False
    if public_url:
        own = urlsplit(public_url)
        return (parts.scheme.lower(), parts.netloc.lower()) == (
            own.scheme.lower(),
            own.netloc.lower(),
        )
    host = request.headers.get("host", "").lower()
    return bool(host) and parts.netloc.lower() == host
