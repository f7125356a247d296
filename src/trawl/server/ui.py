"""The browser UI: server-rendered pages (Jinja2). JavaScript only polls crawl progress.

Search is public. The admin pages (sites, crawls, the SEO report, metrics)
need an API key, entered once on the login page and kept in a cookie.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path as FilePath
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError

from trawl.errors import ConfigError, Forbidden, NotFound, RateLimited, TrawlError, Unauthorized
from trawl.pipeline.integrity import stalled_runs, stalled_summary
from trawl.records import KEY_SCOPES, ApiKey
from trawl.search.request import DEFAULT_SORT, MAX_PAGE, SORTS, search_request
from trawl.server import api_admin, auth
from trawl.server.api_search import run_search
from trawl.server.charts import CHARTS, metric_chart
from trawl.server.context import Context, context_of
from trawl.server.errors import headers_for, status_for
from trawl.settings import (
    SCOPES,
    SPEED_HELP,
    SPEED_PRESETS,
    Settings,
    info,
    speed_preset_help,
)

router = APIRouter(include_in_schema=False)
templates = Jinja2Templates(directory=FilePath(__file__).parent / "templates")


def _when(value: float | str | None) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        return value[:10]
    return datetime.fromtimestamp(value, UTC).strftime("%Y-%m-%d %H:%M")


templates.env.filters["when"] = _when


def _viewer(request: Request) -> ApiKey | None:
    """The key behind the browser's login session, or None for a visitor: the header
    shows admin links and a logout button only to those logged in. Called by the page
    template, so every page using these templates gets it; without a session cookie
    (every visitor) it opens no store."""
    token = auth.session_token(request)
    if token is None:
        return None
    try:
        with context_of(request).store() as store:
            return auth.session(store, token, None)
    except TrawlError:  # expired, revoked, or the store cannot say: not logged in
        return None


templates.env.globals["viewer"] = _viewer


def _page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
    return templates.TemplateResponse(request, name, context, status_code=status)


def _error_page(request: Request, error: TrawlError) -> HTMLResponse:
    response = _page(request, "error.html", {"error": str(error)}, status_for(error))
    response.headers.update(headers_for(error))
    return response


# -- search -----------------------------------------------------------------------


@router.get("/", response_class=HTMLResponse, response_model=None)
def home(
    request: Request,
    q: Annotated[str, Query(max_length=1000)] = "",
    page: str = "1",
    site: Annotated[str, Query(max_length=253)] = "",
    lang: Annotated[str, Query(max_length=8)] = "",
    sort: Annotated[str, Query(max_length=20)] = DEFAULT_SORT,
    after: Annotated[str, Query(max_length=10)] = "",
    before: Annotated[str, Query(max_length=10)] = "",
) -> Response:
    ctx = context_of(request)
    filters = {"site": site, "lang": lang, "sort": sort, "after": after, "before": before}
    context: dict[str, Any] = {"q": q, "result": None, "error": None, "pages": [], **filters}
    context["sorts"] = SORTS
    context["default_sort"] = DEFAULT_SORT
    context["welcome"] = _index_is_empty(ctx)
    status = 200
    if q.strip():
        try:
            number = _page_number(page)
            ctx.limit_search(request)
            asked = search_request(
                q, page=number, sort=sort, lang=lang, site=site, after=after, before=before
            )
            result = run_search(ctx, asked, source="web")
            context["result"] = result
            last = max(1, math.ceil(result["total"] / result["per_page"]))
            context["pages"] = list(range(max(1, number - 4), min(last, number + 4) + 1))
            context["last_page"] = last
            keep = {k: v for k, v in {"q": q, **filters}.items() if v and v != DEFAULT_SORT}
            context["page_link"] = lambda n: "/?" + urlencode({**keep, "page": n})
        except Unauthorized:
            return RedirectResponse("/admin/login", status_code=303)
        except (RateLimited, Forbidden) as e:
            return _error_page(request, e)
        except TrawlError as e:
            context["error"] = str(e)
            status = status_for(e) if status_for(e) != 500 else 400
    return _page(request, "search.html", context, status)


def _index_is_empty(ctx: Context) -> bool:
    """No page searchable yet (no index, or one with nothing in it): the first run."""
    try:
        return ctx.index.documents() == 0
    except TrawlError:
        return True


def _page_number(text: str) -> int:
    """A hand-edited page number is forgiven: the first page, not an error, when it is no
    plain ASCII number ("²" and "①" are digits to ``str.isdigit``, not to ``int``), and the
    last page allowed when it is past it (5,000 digits are more than ``int`` reads)."""
    if not (text.isascii() and text.isdigit()):
        return 1
    digits = text.lstrip("0")
    if len(digits) > len(str(MAX_PAGE)):
        return MAX_PAGE
    return min(max(int(digits or "0"), 1), MAX_PAGE)


# -- login ------------------------------------------------------------------------


@router.get("/admin/login", response_class=HTMLResponse)
def login_page(request: Request) -> HTMLResponse:
    return _page(request, "login.html", {"error": None})


@router.post("/admin/login", response_model=None)
def login(request: Request, key: Annotated[str, Form(max_length=200)]) -> Response:
    ctx = context_of(request)
    if not auth.from_own_origin(request, ctx.settings.public_url, required=False):
        return _error_page(request, Forbidden(auth.CROSS_SITE))
    try:
        with ctx.store() as store:
            found = auth.authenticate(store, key.strip(), None)
            token, seconds = auth.start_session(store, found, ctx.settings.session_hours)
    except (Unauthorized, Forbidden) as e:
        return _page(request, "login.html", {"error": str(e)}, status_for(e))
    # A key for search only (search_requires_key) logs in to search.
    response = RedirectResponse("/admin" if "admin" in found.scopes else "/", status_code=303)
    auth.set_session_cookie(response, request, token, seconds)
    return response


@router.get(auth.SETUP_PATH, response_model=None)
def setup(request: Request, token: Annotated[str, Query(max_length=200)] = "") -> Response:
    """The link `trawl serve` prints on its first start: one login, then it is used up."""
    ctx = context_of(request)
    if not ctx.setup.redeem(token.strip()):
        error = Unauthorized(
            "this setup link has been used or has expired: log in with an API key"
            " (trawl keys create), or restart trawl serve while no key exists for a new link"
        )
        return _page(request, "login.html", {"error": str(error)}, status_for(error))
    with ctx.store() as store:
        session_token, seconds = auth.setup_login(store, ctx.settings.session_hours)
    message = (
        "Logged in with the setup link. Add a site, then crawl it."
        " To log in again later, create an API key below."
    )
    response = _back("/admin", message=message)
    response.headers["Cache-Control"] = "no-store"
    auth.set_session_cookie(response, request, session_token, seconds)
    return response


@router.post("/admin/logout", response_model=None)
def logout(request: Request) -> Response:
    ctx = context_of(request)
    if not auth.from_own_origin(request, ctx.settings.public_url, required=True):
        return _error_page(request, Forbidden(auth.CROSS_SITE))
    with ctx.store() as store:
        auth.end_session(store, auth.session_token(request))
    response = RedirectResponse("/", status_code=303)
    auth.clear_session_cookie(response, request)
    return response


def _admin(request: Request) -> Context | Response:
    """The context for an admin page, or the response that replaces the page: the login
    for a stranger, a 403 for a form posted from another origin or a key without the
    admin scope."""
    ctx = context_of(request)
    try:
        ctx.caller(request, "admin")
    except Unauthorized:
        return RedirectResponse("/admin/login", status_code=303)
    except (RateLimited, Forbidden) as e:
        return _error_page(request, e)
    return ctx


def _back(path: str, message: str = "", error: str = "") -> RedirectResponse:
    query = urlencode({k: v for k, v in {"msg": message, "err": error}.items() if v})
    return RedirectResponse(path + ("?" + query if query else ""), status_code=303)


# -- admin: sites and crawls -----------------------------------------------------------


@router.get("/admin", response_class=HTMLResponse, response_model=None)
def admin(request: Request, msg: str = "", err: str = "") -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    return _admin_page(request, ctx, msg=msg[:300], err=err[:300])


def _admin_page(request: Request, ctx: Context, **extra: Any) -> HTMLResponse:
    with ctx.store() as store:
        sites = store.sites()
        history = store.crawls(20)
        stalled = {
            run.id: stalled_summary(run) for run in stalled_runs(store, ctx.settings.index_path)
        }
        keys = store.api_keys()
    context = {"sites": sites, "history": history, "keys": keys, "status": ctx.crawls.status()}
    context["stalled"] = stalled
    context["crawl_fields"] = crawl_fields(ctx.settings)
    context["settings_now"] = ctx.settings
    context["speeds"] = [(name, speed_preset_help(name)) for name in SPEED_PRESETS]
    context["speed_help"] = SPEED_HELP
    status = extra.pop("status_code", 200)
    return _page(request, "admin.html", {**context, "scopes": KEY_SCOPES, **extra}, status)


# The crawl form's options, as `trawl crawl` names them; the speed preset is apart.
CRAWL_OPTIONS = ("scope", "max_pages", "max_depth", "delay", "render")


def crawl_fields(settings: Settings) -> list[dict[str, Any]]:
    """The crawl form's fields: each setting's name, help and bounds from the settings
    table, and the value this server crawls with when the field is left alone."""
    fields = []
    for name in CRAWL_OPTIONS:
        row = info(name)
        value = getattr(settings, name)
        kind = "select" if name == "scope" else "checkbox" if isinstance(value, bool) else "number"
        fields.append(
            {
                "name": name,
                "help": row.help,
                "default": value,
                "kind": kind,
                "choices": SCOPES if name == "scope" else (),
                "min": row.minimum,
                "max": row.maximum,
                "step": "any" if isinstance(value, float) else "1",
            }
        )
    return fields


def _crawl_options(form: dict[str, str], whole: bool) -> api_admin.CrawlIn:
    """The crawl form as the API's options: an empty field is the server's setting, and
    the render box says yes or no when the ``whole`` form was sent (an unticked box
    sends nothing; a site's own Crawl button sends no options at all)."""
    given: dict[str, Any] = {k: v.strip() for k, v in form.items() if v.strip()}
    if whole:
        given["render"] = bool(given.get("render"))
    try:
        return api_admin.CrawlIn.model_validate(given)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc'])}: {error['msg']}" for error in e.errors()
        )
        raise ConfigError(problems) from None


@router.post("/admin/keys", response_model=None)
def admin_create_key(
    request: Request,
    name: Annotated[str, Form(min_length=1, max_length=100)],
    scope: Annotated[list[str] | None, Form(max_length=len(KEY_SCOPES))] = None,
    expires_days: Annotated[str, Form(max_length=10)] = "",
) -> Response:
    """Make a key and show it on the page this once (never in a URL or a redirect)."""
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    scopes = [s for s in KEY_SCOPES if s in (scope or [])]
    days = expires_days.strip()
    if not scopes:
        return _back("/admin", error="a key needs a scope: search, admin or both")
    if days and not (days.isascii() and days.isdigit() and 0 < int(days) <= 36_500):
        return _back("/admin", error="expiry: a number of days from 1 to 36500, or empty")
    made = api_admin.create_key(ctx, name.strip() or "key", scopes, int(days) if days else None)
    response = _admin_page(request, ctx, new_key=made, msg=f"key {made['id']} created")
    response.headers["Cache-Control"] = "no-store"
    return response


@router.post("/admin/keys/{key_id}/revoke", response_model=None)
def admin_revoke_key(request: Request, key_id: Annotated[int, Path(ge=1, le=2**62)]) -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    try:
        api_admin.revoke_key(ctx, key_id)
    except TrawlError as e:
        return _back("/admin", error=str(e))
    return _back("/admin", message=f"key {key_id} revoked")


@router.post("/admin/sites", response_model=None)
def admin_add_site(request: Request, url: Annotated[str, Form(max_length=2048)]) -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    try:
        api_admin.add_site(request, api_admin.SiteIn(url=url))
    except (TrawlError, ValueError) as e:
        return _back("/admin", error=str(e))
    return _back("/admin", message=f"added {url}")


@router.post("/admin/sites/{host}/{action}", response_model=None)
def admin_site_action(request: Request, host: str, action: str) -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    try:
        if action in ("enable", "disable"):
            api_admin.set_enabled(ctx, host, action == "enable")
        elif action == "delete":
            pages = api_admin.delete_site(ctx, host)
            return _back("/admin", message=f"deleted {host} and its {pages} pages")
        else:
            return _back("/admin", error=f"unknown action {action!r}")
    except TrawlError as e:
        return _back("/admin", error=str(e))
    return _back("/admin", message=f"{host}: {action}d")


@router.post("/admin/crawl/start", response_model=None)
async def admin_start(
    request: Request,
    url: Annotated[str, Form(max_length=2048)] = "",
    scope: Annotated[str, Form(max_length=20)] = "",
    speed: Annotated[str, Form(max_length=20)] = "",
    delay: Annotated[str, Form(max_length=20)] = "",
    max_pages: Annotated[str, Form(max_length=20)] = "",
    max_depth: Annotated[str, Form(max_length=20)] = "",
    render: Annotated[str, Form(max_length=5)] = "",
    options: Annotated[str, Form(max_length=5)] = "",
) -> Response:
    """Start a crawl; a bad option shows the page again with the message, as a 4xx."""
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    form = {
        "scope": scope,
        "speed": speed,
        "delay": delay,
        "max_pages": max_pages,
        "max_depth": max_depth,
        "render": render,
    }
    try:
        chosen = _crawl_options(form, whole=bool(options))
        starts = api_admin.start_crawl(ctx, [url] if url.strip() else [], chosen)
    except (TrawlError, ValueError) as e:
        code = status_for(e) if isinstance(e, TrawlError) else 400
        return _admin_page(
            request,
            ctx,
            err=str(e)[:300],
            form={"url": url, **form},
            status_code=400 if code == 500 else code,
        )
    return _back("/admin", message="crawl started: " + " ".join(starts))


@router.post("/admin/crawl/stop", response_model=None)
async def admin_stop(request: Request) -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    stopped = ctx.crawls.stop()
    return _back("/admin", message="stopping the crawl" if stopped else "no crawl is running")


@router.post("/admin/evict", response_model=None)
def admin_evict(request: Request, apply: Annotated[str, Form(max_length=5)] = "") -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    dry_run = apply != "yes"
    try:
        result = api_admin.run_eviction(ctx, dry_run)
    except TrawlError as e:
        return _back("/admin", error=str(e))
    counts = ", ".join(f"{n} {rule}" for rule, n in result["counts"].items()) or "nothing"
    verb = "would evict" if dry_run else f"evicted {result['removed']} pages:"
    return _back("/admin", message=f"{verb} {counts}")


@router.get("/admin/metrics", response_class=HTMLResponse, response_model=None)
def admin_metrics(request: Request) -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    if not ctx.metrics.history:
        ctx.metrics.sample()
    latest = ctx.metrics.history[-1]
    return _page(request, "metrics.html", {"charts": CHARTS, "latest": latest})


# An SVG opened on its own is a document: it may style itself, and run nothing.
CHART_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'"


@router.get("/admin/metrics/{name}.svg", response_model=None)
def admin_metrics_chart(request: Request, name: str) -> Response:
    ctx = _admin(request)
    if not isinstance(ctx, Context):
        return ctx
    if name not in CHARTS:
        return _error_page(request, NotFound(f"no chart {name!r}"))
    if not ctx.metrics.history:
        ctx.metrics.sample()
    with ctx.store() as store:
        statuses = store.status_counts() if name == "statuses" else {}
    svg = metric_chart(name, list(ctx.metrics.history), statuses)
    headers = {"Content-Security-Policy": CHART_CSP, "Cache-Control": "no-store"}
    return Response(svg, media_type="image/svg+xml", headers=headers)
