"""Dataset loaders: one module per source format, all mapping onto `DialogRecord`.

Each loader is ``load(path, report, **mapping) -> Iterator[(where, DialogRecord)]``:
it yields the valid records with where they came from and puts every invalid
record into the `LoadReport`; `inspect_empathy.dataset.load_dialogs` decides
whether problems fail the load or are skipped.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ...errors import DatasetError
from . import empathetic_dialogues, empathetic_exchanges, epitome, esconv, ieval
from ._files import check_regular_file
from ._problems import LoadReport, Located, RecordBlock
from .jsonl import load_json, load_jsonl, parse_json_file
from .raters import load_raters
from .spec import SPEC_SUFFIXES, is_spec_object
from .tabular import load_table
from .transcript import load_transcript
from .turns import load_turns, parse_layout

Loader = Callable[..., Iterator[Located | RecordBlock]]


def _rows_or_turns(format: str, load_rows: Loader) -> Loader:
    """The loader of a row format: one dialog per row (CSV/TSV row, JSONL line), or one turn
    per row with ``layout: turns``."""

    def load(path: Path, report: LoadReport, **mapping: Any) -> Iterator[Located | RecordBlock]:
        if mapping.get("layout") is not None and parse_layout(mapping.pop("layout")) == "turns":
            yield from load_turns(path, report, format, **mapping)
        else:
            yield from load_rows(path, report, **mapping)

    return load


def _table(format: str) -> Loader:
    def load(path: Path, report: LoadReport, **mapping: Any) -> Iterator[Located | RecordBlock]:
        return load_table(path, report, format, **mapping)

    return _rows_or_turns(format, load)


FORMATS: dict[str, Loader] = {
    "jsonl": _rows_or_turns("jsonl", load_jsonl),
    "json": load_json,
    "csv": _table("csv"),
    "tsv": _table("tsv"),
    "transcript": load_transcript,
    "empathetic_exchanges": empathetic_exchanges.load_empathetic_exchanges,
    "ieval": ieval.load_ieval,
    "esconv": esconv.load_esconv,
    "epitome": epitome.load_epitome,
    "empathetic_dialogues": empathetic_dialogues.load_empathetic_dialogues,
    "raters": load_raters,
}
"""Format name -> loader."""

ALIASES = {
    "ndjson": "jsonl",
    "txt": "transcript",
    "text": "transcript",
    "ee": "empathetic_exchanges",
    "empatheticexchanges": "empathetic_exchanges",
    "ed": "empathetic_dialogues",
    "esconv_star": "esconv",
}

JSON_FORMATS = ("json", "ieval", "esconv")
"""Formats whose loader takes an already parsed JSON document (``data=``)."""


def normalise_format(format: str | None) -> str | None:
    """A known format name (aliases resolved, case and dashes ignored), or None to infer."""
    if format is None:
        return None
    name = str(format).strip().lower().replace("-", "_")
    if name in ("", "auto", "none"):
        return None
    name = ALIASES.get(name, name)
    if name not in FORMATS:
        raise DatasetError(f"unknown format {format!r} (formats: {', '.join(FORMATS)})")
    return name


def _header(path: Path) -> set[str]:
    check_regular_file(path)
    try:
        with path.open(encoding="utf-8-sig", newline="") as file:
            line = file.readline()
    except (OSError, UnicodeDecodeError):
        return set()  # the loader reports it
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    return {name.strip() for name in next(csv.reader([line], delimiter=delimiter), [])}


def infer_format(path: Path) -> tuple[str, Any]:
    """(format, parsed JSON or None) for a path, from its suffix and content.

    The returned format may be ``spec``; a parsed JSON document is handed on so
    that a large file is not parsed twice.
    """
    if path.is_dir():
        if any((path / name).is_file() for name in epitome.DIMENSIONS.values()):
            return "epitome", None
        raise DatasetError(f"{path}: is a folder; only EPITOME's three CSV files load from one")
    suffix = path.suffix.lower()
    if suffix in SPEC_SUFFIXES:
        return "spec", None
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl", None
    if suffix == ".json":
        report = LoadReport(str(path), "json")
        data = parse_json_file(path, report)
        if data is None:
            raise DatasetError(report.error_message())
        if is_spec_object(data):
            return "spec", data
        if ieval.looks_like(data):
            return "ieval", data
        if esconv.looks_like(data):
            return "esconv", data
        return "json", data
    if suffix in (".csv", ".tsv"):
        header = _header(path)
        if empathetic_exchanges.HEADER_SIGNATURE <= header:
            return "empathetic_exchanges", None
        if epitome.HEADER_SIGNATURE <= header:
            return "epitome", None
        if empathetic_dialogues.HEADER_SIGNATURE <= header:
            return "empathetic_dialogues", None
        return suffix[1:], None
    if suffix in (".txt", ".transcript", ""):
        return "transcript", None
    raise DatasetError(
        f"{path}: cannot tell the format from the name; pass format= one of {', '.join(FORMATS)}"
    )


__all__ = [
    "ALIASES",
    "FORMATS",
    "JSON_FORMATS",
    "DatasetError",
    "LoadReport",
    "infer_format",
    "normalise_format",
]
