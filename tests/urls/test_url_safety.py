"""URLs avoided for safety (trawl.urls.safety.unsafe_reason), seed 003."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trawl.errors import InvalidUrl
from trawl.urls.identity import normalise
from trawl.urls.safety import MAX_URL_LENGTH, unsafe_reason

SITE = "https://example.com"

# (path and query after SITE, expected reason)
UNSAFE = [
    # logout, sign-out
    ("/logout", "logout path"),
    ("/logout/", "logout path"),
    ("/user/logout", "logout path"),
    ("/logout.php", "logout path"),
    ("/LogOut.aspx", "logout path"),
    ("/account/sign-out", "logout path"),
    ("/account/signout", "logout path"),
    ("/users/sign_out", "logout path"),
    ("/log-out", "logout path"),
    ("/Account/LogOff", "logout path"),
    ("/logout;jsessionid=ABC123", "logout path"),
    ("/logout?next=/", "logout path"),
    # login
    ("/login", "login path"),
    ("/user/login?destination=/node/1", "login path"),
    ("/log-in", "login path"),
    ("/auth/sign-in", "login path"),
    ("/signin.html", "login path"),
    # unsubscribe, checkout, cart
    ("/unsubscribe", "unsubscribe path"),
    ("/newsletter/unsubscribe/abc123", "unsubscribe path"),
    ("/checkout", "checkout path"),
    ("/shop/checkout/", "checkout path"),
    ("/add-to-cart/42", "add-to-cart path"),
    ("/cart/add?id=7", "add-to-cart path"),
    # WordPress
    ("/wp-admin/", "WordPress admin path"),
    ("/wp-admin/post.php?post=1&action=edit", "WordPress admin path"),
    ("/wp-admin/admin-ajax.php", "WordPress admin path"),
    ("/blog/wp-admin/admin-ajax.php?action=heartbeat", "WordPress admin path"),
    ("/wp-login.php", "WordPress login path"),
    ("/wp-login.php?action=logout&_wpnonce=abc", "WordPress login path"),
    # action parameters
    ("/item/5?action=delete", "delete action"),
    ("/item?do=remove&id=5", "remove action"),
    ("/?add-to-cart=123", "add-to-cart action"),
    ("/shop?add_to_cart=123", "add-to-cart action"),
    ("/page?a=1&logout=1", "logout action"),
    ("/page?logout", "logout action"),
    ("/index.php?option=com_users&task=user.logout", "logout action"),
    ("/cart?remove_item=abc&_wpnonce=1", "remove action"),
    ("/list?delete=5", "delete action"),
    ("/mail?action=unsubscribe&id=9", "unsubscribe action"),
    ("/x?ACTION=Delete", "delete action"),
    ("/x?action=delete_post&id=3", "delete action"),
    ("/x?cmd=log-out", "logout action"),
    ("/x?op=add+to+cart", "add-to-cart action"),
    ("/x?a=1;action=delete", "delete action"),
    # encoded forms
    ("/account%2Flogout", "logout path"),
    ("/%6C%6F%67%6F%75%74", "logout path"),
    ("/%252F%6Cogout", "logout path"),
    ("/x?action%3Ddelete", "delete action"),
    ("/x?action=%64elete", "delete action"),
    ("/x%3Faction%3Ddelete", "delete action"),
    ("/%252525252Flogout", "logout path"),  # five passes are enough
    # refused outright
    ("/%25252525252Flogout", "encoded more than 5 times"),
    ("/a%zz", "malformed percent-encoding"),
    ("/a%", "malformed percent-encoding"),
    ("/a%2", "malformed percent-encoding"),
    ("/a%0d%0aSet-Cookie:x", "control character"),
    ("/a%00", "control character"),
    ("/a%7F", "control character"),
    ("/a%2509", "control character"),
]

SAFE = [
    "/",
    "/about/",
    "/blog/how-to-design-a-login-page",
    "/docs/checkout-api-reference",
    "/docs/logout-flow-explained.html",
    "/blog/why-we-removed-the-cart",
    "/unsubscribed-users-report",
    "/catalog/logouts/",
    "/login-help/",
    "/wp-content/uploads/2024/01/logo.png",
    "/wp-json/wp/v2/posts",
    "/search?q=delete",
    "/search?q=logout&page=2",
    "/docs?topic=remove",
    "/page?next=/logout",
    "/page?redirect=%2Flogout",
    "/page?sort=removed_at",
    "/page?show_deleted=0",
    "/page?action=view",
    "/page?do=print",
    "/cart",
    "/cart/view",
    "/catalog?sort=cart",
    "/x#logout",
    "/x?y=1#action=delete",
    "/100%25",
    "/%E2%82%AC",  # a C1-range byte inside UTF-8 is no control character
    "/caf%C3%A9?q=a+b",
]


@pytest.mark.parametrize(("tail", "reason"), UNSAFE)
def test_unsafe_urls_are_named_with_a_reason(tail: str, reason: str) -> None:
    assert unsafe_reason(SITE + tail) == reason


@pytest.mark.parametrize("tail", SAFE)
def test_ordinary_urls_are_safe(tail: str) -> None:
    assert unsafe_reason(SITE + tail) is None


@pytest.mark.parametrize(("tail", "reason"), UNSAFE)
def test_identities_keep_their_unsafe_reason(tail: str, reason: str) -> None:
    """The crawler checks normalised URLs: normalising must not hide an unsafe one."""
    try:
        identity = normalise(SITE + tail)
    except InvalidUrl:  # normalise may refuse it first, which is as good
        return
    assert unsafe_reason(identity) is not None


@pytest.mark.parametrize(
    "url",
    [
        "https://logout.example.com/",
        "https://login.example.com/docs",
        "https://wp-admin.example.com/",
        "https://checkout.example.com:8443/",
    ],
)
def test_the_host_never_counts(url: str) -> None:
    assert unsafe_reason(url) is None


def test_a_url_at_the_length_limit_is_checked_normally() -> None:
    url = SITE + "/" + "a" * (MAX_URL_LENGTH - len(SITE) - 1)
    assert len(url) == MAX_URL_LENGTH
    assert unsafe_reason(url) is None


def test_an_over_long_url_is_refused() -> None:
    url = SITE + "/" + "a" * MAX_URL_LENGTH
    assert unsafe_reason(url) == "URL too long"


def test_a_bare_path_is_read_as_a_path() -> None:
    assert unsafe_reason("/user/logout") == "logout path"
    assert unsafe_reason("/about") is None


@given(st.text(max_size=200))
def test_any_text_gives_a_reason_or_none(text: str) -> None:
    reason = unsafe_reason(SITE + "/" + text)
    assert reason is None or (isinstance(reason, str) and reason)
