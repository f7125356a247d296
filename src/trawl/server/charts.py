"""The metrics page's charts: SVG drawn on the server by pygal, no JavaScript."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import pygal
from pygal.style import CleanStyle

from trawl.server.metrics import Sample

_SIZE = {"width": 640, "height": 260, "explicit_size": True}


def _line(title: str, samples: Sequence[Sample], series: Mapping[str, Sequence[float]]) -> str:
    chart = pygal.Line(
        title=title,
        style=CleanStyle,
        show_dots=len(samples) < 40,
        x_label_rotation=0,
        show_minor_x_labels=False,
        js=[],  # no script from elsewhere: the page works offline
        disable_xml_declaration=True,
        **_SIZE,
    )
    labels = [time.strftime("%H:%M:%S", time.localtime(s.at)) for s in samples]
    chart.x_labels = labels
    chart.x_labels_major = labels[:: max(1, len(labels) // 6)]
    for name, values in series.items():
        chart.add(name, list(values))
    return str(chart.render(is_unicode=True))


CHARTS = ("latency", "queries", "crawl", "statuses", "index")


def metric_chart(name: str, samples: Sequence[Sample], statuses: Mapping[int, int]) -> str:
    """One chart of the metrics page, as an SVG document (``name`` from CHARTS).

    The page shows each as an image: pygal's SVG carries an inline script and
    styles, which an image never runs and the page's CSP need not allow."""
    if name == "statuses":
        bars = pygal.Bar(
            title="Pages by HTTP status",
            style=CleanStyle,
            js=[],
            disable_xml_declaration=True,
            **_SIZE,
        )
        for status, count in sorted(statuses.items()):
            bars.add(str(status) if status else "no response", count)
        return str(bars.render(is_unicode=True))
    lines: dict[str, tuple[str, dict[str, list[float]]]] = {
        "latency": (
            "Query latency (ms)",
            {
                "p50": [s.latency_p50_ms for s in samples],
                "p95": [s.latency_p95_ms for s in samples],
            },
        ),
        "queries": ("Queries per interval", {"queries": [s.queries for s in samples]}),
        "crawl": (
            "Crawl rate (pages/s)",
            {"pages/s": [s.crawl_pages_per_second for s in samples]},
        ),
        "index": ("Index size (documents)", {"documents": [s.index_documents for s in samples]}),
    }
    title, series = lines[name]
    return _line(title, samples, series)


REPORT_CHARTS = ("status", "depth", "response_time")
# Response time buckets (seconds): the last bar counts the pages past the last bound.
RESPONSE_BOUNDS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0)


def _bars(title: str, bars: Sequence[tuple[str, int]], x_title: str) -> str:
    chart = pygal.Bar(
        title=title,
        style=CleanStyle,
        show_legend=False,
        x_title=x_title,
        y_title="pages",
        js=[],
        disable_xml_declaration=True,
        **_SIZE,
    )
    chart.x_labels = [label for label, _ in bars]
    chart.add("pages", [count for _, count in bars])
    return str(chart.render(is_unicode=True))


def report_chart(
    name: str,
    statuses: Mapping[int, int],
    depths: Mapping[int, int],
    response_times: Sequence[int],
) -> str:
    """One chart of the SEO report (``name`` from REPORT_CHARTS), as an SVG document."""
    if name == "status":
        bars = [(f"{s:03d}" if s else "no response", n) for s, n in sorted(statuses.items())]
        return _bars("Pages by HTTP status", bars, "status")
    if name == "depth":
        return _bars("Pages by depth", [(str(d), n) for d, n in sorted(depths.items())], "clicks")
    labels = [f"≤ {b * 1000:g} ms" for b in RESPONSE_BOUNDS]
    labels.append(f"> {RESPONSE_BOUNDS[-1] * 1000:g} ms")
    return _bars("Pages by response time", list(zip(labels, response_times, strict=True)), "")
