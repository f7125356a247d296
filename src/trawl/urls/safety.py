"""URLs avoided for safety: links that may change state or end a session (seed 003).

``unsafe_reason(url)`` gives a short reason to skip ``url``, or None. It is a
precaution, not a guarantee: a site can put a destructive action behind any
URL. Checks are meant to run before every request and at every redirect
destination.

How a URL is read. Only the path and query count (never the host: a site
called logout.example.com is fine). The comparison copy is percent-decoded
until it stops changing, at most five passes, so ``/account%2Flogout`` and
``?action%3Ddelete`` are caught; the URL itself is never rewritten. Refused
outright: URLs over 16,384 characters, a ``%`` not followed by two hex
digits, a control character (C0 or DEL, e.g. an encoded CR/LF) in the
decoded copy, and an escape still left after five passes.

Paths: one path segment (between slashes, before any ``;params``) must *be*
the keyword, optionally with a file suffix; ``-`` and ``_`` are ignored
inside it. So ``/logout``, ``/user/logout``, ``/logout.php``,
``/account/sign-out``, ``/users/sign_out`` and ``/Account/LogOff`` match,
while ``/blog/how-to-design-a-login-page`` and
``/docs/checkout-api-reference`` do not: a keyword inside a longer slug names
an article about the thing, not the thing. Keywords: logout, log-out, logoff,
signout, sign-out (a logout), login, log-in, signin, sign-in (a login),
unsubscribe, checkout, add-to-cart, the segment pair ``cart/add``, and
WordPress's ``wp-admin`` (any path under it, ``admin-ajax.php`` included)
and ``wp-login.php``.

Query: a parameter *name* that is an action (``?logout=1``,
``?add-to-cart=123``, ``?remove_item=…``, ``?delete=5``) or an action-like
name (action, do, act, cmd, op, task, …) whose *value* is an action
(``?action=delete``, ``?do=remove``, ``?task=user.logout``). Names and
values are split into words at ``-``, ``_``, ``.`` and spaces; any word
delete, remove, logout, logoff, signout or unsubscribe counts, and so does
the whole written together (``log-out``, ``add_to_cart``). A value under any
other name is data: ``?q=delete`` searches for the word.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

MAX_URL_LENGTH = 16_384
MAX_DECODING_PASSES = 5

_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_MALFORMED_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_WORD_SEPARATORS = re.compile(r"[-_.\s]+")
# A file suffix on a path keyword: logout.php, login.aspx, wp-login.php.
_FILE_SUFFIX = re.compile(r"\.[a-z0-9]{1,5}\Z")
# Every rule below needs one of these in the lower-cased copy once word
# separators are gone; most URLs have none, and leave after a few scans.
_HINTS = ("log", "sign", "unsub", "checkout", "wp", "delete", "remove", "cart")
_SQUASH = str.maketrans("", "", "-_.+ \t\n\r\f\v")

# Path segment, lower-cased, "-" and "_" removed, file suffix removed.
_PATH_KEYWORDS = {
    "logout": "logout path",
    "logoff": "logout path",
    "signout": "logout path",
    "login": "login path",
    "signin": "login path",
    "unsubscribe": "unsubscribe path",
    "checkout": "checkout path",
    "addtocart": "add-to-cart path",
    "wpadmin": "WordPress admin path",
    "wplogin": "WordPress login path",
}
# One word of a query name or value.
_ACTION_WORDS = {
    "delete": "delete action",
    "remove": "remove action",
    "logout": "logout action",
    "logoff": "logout action",
    "signout": "logout action",
    "unsubscribe": "unsubscribe action",
}
# A whole name or value with its separators removed: "log-out", "add_to_cart".
_ACTION_PHRASES = {
    **_ACTION_WORDS,
    "addtocart": "add-to-cart action",
}
# Names whose value says what the request does.
_ACTION_NAMES = frozenset(
    {
        "a",
        "act",
        "action",
        "cmd",
        "command",
        "do",
        "event",
        "func",
        "function",
        "method",
        "mode",
        "op",
        "operation",
        "task",
    }
)


def unsafe_reason(url: str) -> str | None:
    """Why ``url`` should not be requested, in a few words; None when it may be."""
    if len(url) > MAX_URL_LENGTH:
        return "URL too long"
    copy = _path_and_query(url)
    if "%" in copy:
        if _MALFORMED_ESCAPE.search(copy):
            return "malformed percent-encoding"
        for _ in range(MAX_DECODING_PASSES):
            copy = unquote(copy, encoding="utf-8", errors="replace")
            if "%" not in copy or not _ESCAPE.search(copy):
                break
        else:
            return f"encoded more than {MAX_DECODING_PASSES} times"
    if _CONTROL.search(copy):
        return "control character"
    copy = copy.lower()
    probe = copy.translate(_SQUASH)
    if not any(hint in probe for hint in _HINTS):
        return None
    path, _, query = copy.partition("?")
    return _path_reason(path) or _query_reason(query)


def _path_and_query(url: str) -> str:
    """Everything after the authority, without the fragment (never sent)."""
    url = url.partition("#")[0]
    scheme_end = url.find("://")
    if scheme_end == -1 or not url[:scheme_end].isalnum():
        return url  # already a path (or something we read as one)
    start = scheme_end + 3
    ends = [i for i in (url.find("/", start), url.find("?", start)) if i != -1]
    return url[min(ends) :] if ends else ""


def _path_reason(path: str) -> str | None:
    previous = ""
    for segment in path.replace("\\", "/").split("/"):
        stem = _FILE_SUFFIX.sub("", segment.partition(";")[0])
        key = stem.replace("-", "").replace("_", "")
        reason = _PATH_KEYWORDS.get(key)
        if reason is not None:
            return reason
        if previous == "cart" and key == "add":
            return "add-to-cart path"
        previous = key
    return None


def _query_reason(query: str) -> str | None:
    # ";" separates parameters for some servers: read it as "&" to be safe.
    for pair in query.replace(";", "&").split("&"):
        name, _, value = pair.replace("+", " ").partition("=")
        reason = _action(name.strip())
        if reason is None and _WORD_SEPARATORS.sub("", name) in _ACTION_NAMES:
            reason = _action(value.strip())
        if reason is not None:
            return reason
    return None


def _action(text: str) -> str | None:
    if not text:
        return None
    reason = _ACTION_PHRASES.get(_WORD_SEPARATORS.sub("", text))
    if reason is not None:
        return reason
    for word in _WORD_SEPARATORS.split(text):
        reason = _ACTION_WORDS.get(word)
        if reason is not None:
            return reason
    return None
