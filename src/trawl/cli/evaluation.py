"""trawl eval: ranking measured on judged queries."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from trawl.cli.common import (
    ConfigOpt,
    DataOpt,
    app,
    fail,
    load_settings,
)
from trawl.errors import TrawlError
from trawl.settings import Settings

eval_app = typer.Typer(no_args_is_help=True, help="Measure ranking on judged queries.")
app.add_typer(eval_app, name="eval")
SplitOpt = Annotated[str, typer.Option("--split", help="Which qrels file: qrels/SPLIT.tsv.")]


def _print_metrics(name: str, metrics: dict[str, float]) -> None:
    for key, value in metrics.items():
        typer.echo(f"{name} {key} {value:.4f}")
    typer.echo(json.dumps(metrics))  # the last line: one JSON object, for scripts


def _beir_eval(folder: Path, split: str) -> Callable[[Settings], dict[str, float]]:
    from trawl.evaluation.collections import read_beir
    from trawl.evaluation.runner import evaluate_collection

    collection = read_beir(folder, split)
    return lambda s: evaluate_collection(collection, s)


def _smart_eval(folder: Path) -> Callable[[Settings], dict[str, float]]:
    from trawl.evaluation.collections import read_smart
    from trawl.evaluation.runner import evaluate_collection

    collection = read_smart(folder)
    return lambda s: evaluate_collection(collection, s)


def _golden_eval(file: Path, half: str | None) -> Callable[[Settings], dict[str, float]]:
    from trawl.evaluation.golden import HALVES, evaluate_golden

    chosen = next((h for h in HALVES if h == half), None)
    if half is not None and chosen is None:
        raise fail(f"--half must be one of {', '.join(HALVES)}")
    return lambda s: evaluate_golden(file, s, chosen)


def _print_golden_queries(file: Path, settings: Settings, half: str | None) -> None:
    from trawl.evaluation.golden import golden_per_query, read_golden_set

    golden = [q for q in read_golden_set(file) if half is None or q.half == half]
    scores = golden_per_query(golden, settings)
    for q in golden:
        rr = scores[q.qid]["mrr"]
        rank = f"{round(1 / rr)}" if rr else "-"
        typer.echo(f"{rank:>3} {q.half[:3]} {q.category or '-':<12} {q.text}")


HalfOpt = Annotated[
    str | None,
    typer.Option("--half", help="Only the golden set's tuning or reporting half (default both)."),
]


@eval_app.command("beir")
def eval_beir(
    folder: Annotated[Path, typer.Argument(help="A BEIR folder: corpus.jsonl, queries, qrels/.")],
    split: SplitOpt = "test",
    config: ConfigOpt = None,
) -> None:
    """Index a BEIR collection in a temporary index; nDCG@10, Recall@100, MRR@10."""
    try:
        _print_metrics(folder.name, _beir_eval(folder, split)(load_settings(config)))
    except TrawlError as e:
        raise fail(e) from None


@eval_app.command("smart")
def eval_smart(
    folder: Annotated[Path, typer.Argument(help="A Cranfield, CISI or CACM folder.")],
    config: ConfigOpt = None,
) -> None:
    """Index a SMART-format collection in a temporary index; the same metrics as beir."""
    try:
        _print_metrics(folder.name, _smart_eval(folder)(load_settings(config)))
    except TrawlError as e:
        raise fail(e) from None


@eval_app.command("golden")
def eval_golden(
    file: Annotated[Path, typer.Argument(help="TSV: query<TAB>url[ url...]<TAB>category.")],
    data: DataOpt = None,
    config: ConfigOpt = None,
    half: HalfOpt = None,
    per_query: Annotated[
        bool, typer.Option("--per-query", help="First, each query's rank of its first answer.")
    ] = False,
) -> None:
    """Run a golden set against a crawled data folder; MRR, hits@1, hits@10, also per half
    (tuning, reporting) and per category."""
    try:
        settings = load_settings(config, data=data)
        if per_query:
            _print_golden_queries(file, settings, half)
        _print_metrics(file.stem, _golden_eval(file, half)(settings))
    except TrawlError as e:
        raise fail(e) from None


@eval_app.command("sweep")
def eval_sweep(
    param: Annotated[str, typer.Option("--param", help="The setting to vary.")],
    values: Annotated[str, typer.Option("--values", help="Comma-separated values.")],
    beir: Annotated[Path | None, typer.Option("--beir", help="A BEIR folder.")] = None,
    smart: Annotated[Path | None, typer.Option("--smart", help="A SMART folder.")] = None,
    golden: Annotated[Path | None, typer.Option("--golden", help="A golden TSV file.")] = None,
    split: Annotated[
        str | None,
        typer.Option(
            "--split", help="Which qrels file: qrels/SPLIT.tsv (default: train, else dev, test)."
        ),
    ] = None,
    data: DataOpt = None,
    config: ConfigOpt = None,
    half: HalfOpt = "tuning",
) -> None:
    """Rerun one evaluation (--beir, --smart or --golden) per value; print a table.

    A golden set is swept on its tuning half unless --half says otherwise, a BEIR
    folder on its train (else dev) split unless --split does: what is reported is not
    tuned on."""
    from trawl.evaluation.collections import tuning_split
    from trawl.evaluation.sweep import sweep

    chosen = [x for x in (beir, smart, golden) if x is not None]
    if len(chosen) != 1:
        raise fail("name exactly one of --beir, --smart, --golden")
    try:
        settings = load_settings(config, data=data)
        if beir is not None:
            chosen_split = split or tuning_split(beir)
            typer.echo(f"{beir.name}: split {chosen_split}", err=True)
            evaluation = _beir_eval(beir, chosen_split)
        elif smart is not None:
            evaluation = _smart_eval(smart)
        else:
            evaluation = _golden_eval(chosen[0], half)
        rows = sweep(evaluation, settings, param, [v.strip() for v in values.split(",")])
    except TrawlError as e:
        raise fail(e) from None
    keys = list(rows[0][1]) if rows else []
    typer.echo("\t".join([param, *keys]))
    for value, metrics in rows:
        typer.echo("\t".join([value, *(f"{metrics[k]:.4f}" for k in keys)]))
    typer.echo(json.dumps(dict(rows)))
