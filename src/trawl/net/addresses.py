"""Which IP addresses a crawler may connect to: the SSRF policy, as pure functions."""

from __future__ import annotations

import ipaddress

# (host, port) exactly as the user named it; or (network, ANY_PORT) for a network the
# user named ("10.1.0.0/16"): every address in it, on any port (an intranet crawl).
Target = tuple[str, int]
ANY_PORT = 0


def is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


# IPv6 forms that carry an IPv4 address in their low 32 bits: IPv4-compatible (::/96,
# deprecated but still routed by some stacks), IPv4-translated (::ffff:0:0:0/96, which an
# SIIT translator sends on to that IPv4 address) and NAT64's well-known prefix, which a
# translator turns into a connection to that IPv4 address.
_EMBEDS_LOW_32 = (
    ipaddress.IPv6Network("::/96"),
    ipaddress.IPv6Network("::ffff:0:0:0/96"),
    ipaddress.IPv6Network("64:ff9b::/96"),
)
# Never public, whatever follows: local-use NAT64 (RFC 8215), whose IPv4 part may sit
# anywhere, and site-local (deprecated by RFC 3879 but still private where used).
_NEVER_PUBLIC = (ipaddress.IPv6Network("64:ff9b:1::/48"), ipaddress.IPv6Network("fec0::/10"))


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address leads to, for the forms that embed one."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if any(ip in net for net in _EMBEDS_LOW_32):
        return ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
    if ip.sixtofour is not None:  # 2002::/16: 6to4
        return ip.sixtofour
    if ip.teredo is not None:  # 2001::/32: the client's address, obfuscated
        return ip.teredo[1]
    return None


def is_public(address: str) -> bool:
    """True for globally routable unicast addresses only.

    Private, loopback, link-local, shared (CGNAT), reserved, multicast and
    unspecified addresses are refused, and so are IPv6 addresses that embed an
    IPv4 address (mapped ``::ffff:127.0.0.1``, compatible ``::7f00:1``, NAT64
    ``64:ff9b::a00:1``, 6to4 ``2002:7f00:1::``, Teredo) when the inner address is
    not public, local-use NAT64 and site-local ``fec0::/10`` always.
    """
    try:
        ip = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        if any(ip in net for net in _NEVER_PUBLIC):
            return False
        inner = _embedded_ipv4(ip)
        if inner is not None:
            return inner.is_global and not inner.is_multicast
    return ip.is_global and not ip.is_multicast


def may_connect(host: str, port: int, address: str, allowed: frozenset[Target]) -> bool:
    """A connection to ``address`` for ``host:port`` is allowed.

    ``allowed`` holds the exact host and port of start URLs the user gave:
    naming ``http://127.0.0.1:8765/`` opens that one target, nothing next to it;
    and the networks the user named (``--allow-host 10.1.0.0/16``), whole.
    """
    if (host.strip("[]").lower(), port) in allowed or is_public(address):
        return True
    return any(p == ANY_PORT and "/" in net and _in_network(address, net) for net, p in allowed)


def _in_network(address: str, network: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return ip in ipaddress.ip_network(network)
    except ValueError:
        return False
