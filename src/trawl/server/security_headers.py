"""Headers every answer carries, so a browser holds the pages to what they are.

The pages load scripts, styles and images from this server only, run no
inline script (their few scripts are static files that read data attributes),
are never framed, are not sniffed into another type, and name no page of
theirs to the sites their results link to. A crawled page's text that slipped
past escaping still could not run.
"""

from __future__ import annotations

from trawl.server.limits_middleware import ASGIApp, Message, Receive, Scope, Send

# data: images: Swagger UI's stylesheet draws its icons with them; an image runs nothing.
CSP = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none';"
    " form-action 'self'; frame-ancestors 'none'"
)
HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),  # for browsers without frame-ancestors
)


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [
                    *message.get("headers", []),
                    *((n, v) for n, v in HEADERS if n not in present),
                ]
            await send(message)

        await self.app(scope, receive, with_headers)
