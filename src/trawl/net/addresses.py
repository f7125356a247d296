"""Which IP addresses a crawler may connect to: the SSRF policy, as pure functions."""

from __future__ import annotations

import ipaddress

Target = tuple[str, int]  # (host, port) exactly as the user named it


def is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def is_public(address: str) -> bool:
    """True for globally routable unicast addresses only.

    Private, loopback, link-local, shared (CGNAT), reserved, multicast and
    unspecified addresses are refused, and so are IPv4 addresses wrapped in
    IPv6 (``::ffff:127.0.0.1``) when the inner address is not public.
    """
    try:
        ip = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def may_connect(host: str, port: int, address: str, allowed: frozenset[Target]) -> bool:
    """A connection to ``address`` for ``host:port`` is allowed.

    ``allowed`` holds the exact host and port of start URLs the user gave:
    naming ``http://127.0.0.1:8765/`` opens that one target, nothing next to it.
    """
    return (host.strip("[]").lower(), port) in allowed or is_public(address)
