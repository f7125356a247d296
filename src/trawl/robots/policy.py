"""robots.txt decisions for one origin, after RFC 9309.

How the fetch went decides as much as what the file says (section 2.3.1):
a 2xx body is parsed; a 4xx means no rules, so everything is allowed; a 5xx
or a network failure means the site cannot tell us, so nothing is allowed
until a later fetch succeeds. Parsing and matching (``*``, ``$``, longest
match, Allow wins ties, group selection) are in ``rules``, after Google's
reference parser.
"""

from __future__ import annotations

from dataclasses import dataclass

from trawl.robots.rules import MAX_COMPARISONS, RobotsRules, parse_robots


@dataclass(frozen=True)
class RobotsPolicy:
    """``rules`` is the parsed file, or None when ``allow_all`` decides alone."""

    allow_all: bool
    rules: RobotsRules | None = None
    reason: str = ""
    # No answer at all (refused, unknown name, TLS, timeout): the host, not its
    # robots.txt, keeps us out, and its pages are failures with this error.
    error: str = ""
    refused_address: bool = False  # the host's address is one we must not contact

    @classmethod
    def from_response(cls, status: int, body: bytes) -> RobotsPolicy:
        if 200 <= status < 300:
            return cls(allow_all=False, rules=parse_robots(body), reason="parsed")
        if status == 429:
            # "Not now" (RFC 9309 2.3.1.3 leaves it open; Google treats it as 5xx):
            # nothing is allowed until a later fetch answers.
            return cls.unreachable("robots.txt answered 429 (too many requests)")
        if 400 <= status < 500:
            return cls(allow_all=True, reason=f"robots.txt answered {status}: no rules")
        return cls.unreachable(
            f"robots.txt answered {status}" if status else "robots.txt unreachable"
        )

    @classmethod
    def unreachable(
        cls, reason: str, error: str = "", *, refused_address: bool = False
    ) -> RobotsPolicy:
        """Nothing allowed for now; ``error``: no server answered at all."""
        return cls(
            allow_all=False,
            rules=None,
            reason=reason + ": nothing allowed",
            error=error,
            refused_address=refused_address,
        )

    @property
    def unanswered(self) -> bool:
        """robots.txt did not answer (5xx, 429, no connection): nothing allowed for now."""
        return self.rules is None and not self.allow_all

    def allows(self, url: str, user_agent: str) -> bool:
        return self.refusal(url, user_agent) is None

    def refusal(self, url: str, user_agent: str) -> str | None:
        """Why ``url`` may not be fetched, or None when it may."""
        if self.rules is None:
            # Unanswered (429, 5xx): the file forbids nothing, so say what it answered.
            return None if self.allow_all else self.reason
        allowed, over_budget = self.rules.verdict(url, product_token(user_agent))
        if over_budget:
            return f"robots.txt needs over {MAX_COMPARISONS} comparisons: refused"
        return None if allowed else "blocked by robots.txt"

    @property
    def dropped_rules(self) -> int:
        """Rules past the per-file cap, ignored."""
        return self.rules.dropped if self.rules is not None else 0

    def crawl_delay(self, user_agent: str) -> float | None:
        if self.rules is None:
            return None
        return self.rules.crawl_delay(product_token(user_agent))

    def sitemaps(self) -> list[str]:
        return list(self.rules.sitemaps) if self.rules is not None else []


def product_token(user_agent: str) -> str:
    """The robots.txt name of a User-Agent string: "TrawlBot/0.1 (+url)" -> "TrawlBot"."""
    return user_agent.split("/", 1)[0].split(" ", 1)[0] or user_agent
