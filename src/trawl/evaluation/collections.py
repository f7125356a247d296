"""Judged test collections read from disk: BEIR folders and SMART-format classics.

Each reader returns documents (id, title, text), queries (id -> text) and
qrels (query id -> doc id -> gain). The SMART quirks are those listed in
shared/data/ir/README: Cranfield numbers its judged queries by position and
grades 1 (best) to 4 with -1 for none; CACM's query file ends with a
sentinel ``.I 0``; CISI and CACM judgments are binary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trawl.errors import TrawlError


class CollectionError(TrawlError):
    """A folder that is not a collection we can read."""


@dataclass(frozen=True, slots=True)
class Collection:
    name: str
    docs: list[tuple[str, str, str]]  # (id, title, text)
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


_INTEGER = re.compile(r"-?[0-9]+")
# BEIR's splits other than test, in the order a tuning run takes them: what a sweep tunes
# on must not be what is reported (SciFact: 809 train claims, 300 test).
TUNING_SPLITS = ("train", "dev")


def tuning_split(folder: Path) -> str:
    """The BEIR split to tune on: train, else dev; test when the folder has neither."""
    found = (s for s in TUNING_SPLITS if (folder / "qrels" / f"{s}.tsv").is_file())
    return next(found, "test")


def read_beir(folder: Path, split: str = "test") -> Collection:
    corpus, queries_file = folder / "corpus.jsonl", folder / "queries.jsonl"
    qrels_file = folder / "qrels" / f"{split}.tsv"
    for needed in (corpus, queries_file, qrels_file):
        if not needed.is_file():
            raise CollectionError(f"{folder} is not a BEIR folder: {needed.name} missing")
    docs = [
        (str(d["_id"]), d.get("title") or "", d.get("text") or "")
        for d in _json_lines(corpus, "_id")
    ]
    qrels: dict[str, dict[str, int]] = {}
    for number, line in _lines(qrels_file):
        row = line.split("\t") if line.strip() else []
        if not row or (number == 1 and len(row) >= 3 and not _INTEGER.fullmatch(row[2])):
            continue  # a blank line, or the header
        if len(row) < 3:
            raise CollectionError(f"{qrels_file}:{number}: expected query, document and score")
        qrels.setdefault(row[0], {})[row[1]] = _integer(row[2], qrels_file, number)
    queries = {
        str(q["_id"]): str(q["text"])
        for q in _json_lines(queries_file, "_id", "text")
        if str(q["_id"]) in qrels
    }
    # Judgments of a query the queries file lacks would score as a query that found
    # nothing: left out, as BEIR's own evaluation leaves out queries it did not run.
    qrels = {q: judged for q, judged in qrels.items() if q in queries}
    return Collection(folder.name, docs, queries, qrels)


def _json_lines(path: Path, *keys: str) -> Iterator[dict[str, Any]]:
    """The objects of a JSON-lines file, each holding ``keys``; a bad line is an error
    naming it."""
    for number, line in _lines(path):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            raise CollectionError(f"{path}:{number}: not JSON ({e.msg})") from None
        if not isinstance(value, dict) or any(key not in value for key in keys):
            raise CollectionError(f"{path}:{number}: expected an object with {', '.join(keys)}")
        yield value


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """The lines of a UTF-8 file, numbered from 1, without their line ends; text that
    is not UTF-8 is an error naming its line (read as bytes, so the number is right)."""
    with path.open("rb") as f:
        for number, raw in enumerate(f, 1):
            try:
                yield number, raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                raise CollectionError(f"{path}:{number}: not UTF-8 text") from None


def _integer(text: str, path: Path, number: int) -> int:
    if not _INTEGER.fullmatch(text):
        raise CollectionError(f"{path}:{number}: {text!r} is not a whole number")
    return int(text)


_SMART_FIELD = re.compile(r"^\.([A-Z])(?:\s+(\S+))?\s*$")


def _smart_records(path: Path) -> list[tuple[str, dict[str, str]]]:
    records: list[tuple[str, dict[str, str]]] = []
    current: dict[str, list[str]] = {}
    field = ""
    ident = ""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        found = _SMART_FIELD.match(line)
        if found and found.group(1) == "I":
            if ident:
                records.append((ident, {k: " ".join(v).strip() for k, v in current.items()}))
            ident, current, field = (found.group(2) or "").strip(), {}, ""
        elif found:
            field = found.group(1)
            current.setdefault(field, [])
        elif field:
            current[field].append(line)
    if ident:
        records.append((ident, {k: " ".join(v).strip() for k, v in current.items()}))
    return records


def read_smart(folder: Path) -> Collection:
    """Cranfield, CISI or CACM, recognised by their file names."""
    names = {p.name for p in folder.iterdir()} if folder.is_dir() else set()
    if "cran.all.1400" in names:
        return _smart(folder, "cran.all.1400", "cran.qry", "cranqrel", by_position=True)
    if "CISI.ALL" in names:
        return _smart(folder, "CISI.ALL", "CISI.QRY", "CISI.REL", by_position=False)
    if "cacm.all" in names:
        return _smart(folder, "cacm.all", "query.text", "qrels.text", by_position=False)
    raise CollectionError(f"{folder}: no Cranfield, CISI or CACM files found")


def _smart(folder: Path, docs_file: str, queries_file: str, qrels_file: str, *,
           by_position: bool) -> Collection:  # fmt: skip
    docs = [
        (ident, fields.get("T", ""), fields.get("W", ""))
        for ident, fields in _smart_records(folder / docs_file)
    ]
    queries = {}
    for position, (ident, fields) in enumerate(_smart_records(folder / queries_file), 1):
        if ident == "0" or not fields.get("W"):
            continue  # CACM's sentinel
        number = position if by_position else _integer(ident, folder / queries_file, position)
        queries[str(number)] = fields["W"]
    qrels: dict[str, dict[str, int]] = {}
    judgments = folder / qrels_file
    for number, line in enumerate(judgments.read_text(errors="replace").splitlines(), 1):
        parts = line.split()
        if len(parts) < 3:
            continue
        if not all(_INTEGER.fullmatch(p) for p in parts[:3]):
            raise CollectionError(f"{judgments}:{number}: expected query, document and grade")
        query, doc = str(int(parts[0])), str(int(parts[1]))
        if by_position:  # Cranfield: grade 1 (complete answer) .. 4, -1 no judgment
            grade = int(parts[2])
            if grade < 1:
                continue
            gain = 5 - grade
        else:
            gain = 1
        qrels.setdefault(query, {})[doc] = gain
    queries = {q: t for q, t in queries.items() if q in qrels}
    return Collection(folder.name, docs, queries, qrels)
