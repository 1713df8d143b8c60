"""Generic ``csv`` / ``tsv``: one dialog per row, columns named by a mapping.

Mapping keys (all optional when the file uses the default column names):

- ``id``: id column (default ``id``; without one, ids are ``<file stem>-<row>``).
- ``transcript``: a column of ``LABEL: text`` lines (default ``transcript``), or
- ``context`` + ``response``: the dialog before the reply (``LABEL: text`` lines,
  or plain text for a single user turn) and the reply (defaults ``context``,
  ``response``).
- ``rating``: rating column (default ``rating`` when present; none: unrated). An
  empty cell leaves that dialog unrated (counted in the load summary's notes).
- ``roles``: label -> ``user`` or ``bot`` (e.g. ``{Seeker: user, Supporter: bot}``);
  without it the common labels are known (user, human, seeker, speaker, assistant,
  bot, ai, supporter, listener, ...).
- ``scale``: the rating scale, ``[min, max]`` or ``"1-3"`` (default 1-5), mapped
  linearly onto 1-5.
- ``metadata``: columns copied into sample metadata (default: all other columns).
- ``delimiter``: field separator (default ``,`` for csv, tab for tsv).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._rubric import Turn
from ..dialogs import DialogRecord
from ._validate import (
    DEFAULT_ROLES,
    EMPTY_DIALOG,
    MISSING_FIELD,
    NO_BOT_REPLY,
    UNREADABLE,
    DatasetError,
    LoadReport,
    Located,
    RecordProblem,
    add_turn,
    check_keys,
    parse_rating,
    parse_scale,
    parse_transcript,
    read_text,
    role_map,
)

BAD_CSV = "bad CSV"
KEYS = ("id", "transcript", "context", "response", "rating", "roles", "scale", "metadata",
        "delimiter")  # fmt: skip
FIELD_LIMIT = 2**31 - 1


def _looks_labelled(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    head, sep, _ = first.partition(":")
    return bool(sep) and head[:1].isalpha() and 0 < len(head.split()) <= 3


class RowMapper:
    """Builds dialog records from rows given as value lists in header order."""

    def __init__(self, header: Sequence[str], origin: str, mapping: Mapping[str, Any]) -> None:
        columns = {name.strip(): index for index, name in enumerate(header)}
        self.header = list(header)
        self.origin = origin
        self.roles = role_map(mapping.get("roles")) if mapping.get("roles") else DEFAULT_ROLES
        self.scale = parse_scale(mapping["scale"]) if mapping.get("scale") else (1.0, 5.0)

        def column(key: str, default: str | None) -> int | None:
            name = mapping.get(key)
            if name is None:
                return columns.get(default) if default is not None else None
            if str(name) not in columns:
                raise DatasetError(
                    f"{origin}: {key} column {name!r} is not in the header "
                    f"({', '.join(repr(c) for c in columns)})"
                )
            return columns[str(name)]

        self.id_col = column("id", "id")
        self.rating_col = column("rating", "rating")
        self.transcript_col = self.context_col = self.response_col = None
        if mapping.get("transcript") is not None:
            self.transcript_col = column("transcript", None)
        elif mapping.get("context") is not None or mapping.get("response") is not None:
            self.context_col = column("context", "context")
            self.response_col = column("response", "response")
        elif "transcript" in columns:
            self.transcript_col = columns["transcript"]
        else:
            self.context_col, self.response_col = columns.get("context"), columns.get("response")
        if self.transcript_col is None and (self.context_col is None or self.response_col is None):
            raise DatasetError(
                f"{origin}: no dialog columns: name a 'transcript' column, or 'context' "
                f"and 'response' columns (header: {', '.join(repr(c) for c in columns)})"
            )
        used = {self.id_col, self.rating_col, self.transcript_col, self.context_col,
                self.response_col}  # fmt: skip
        wanted = mapping.get("metadata")
        if wanted is None:
            self.meta_cols = [(n, i) for n, i in columns.items() if i not in used and n]
        else:
            names = [wanted] if isinstance(wanted, str) else list(wanted)
            missing = [n for n in names if n not in columns]
            if missing:
                raise DatasetError(f"{origin}: metadata columns not in the header: {missing}")
            self.meta_cols = [(n, columns[n]) for n in names]
        self.needed = max(i for i in used if i is not None) + 1
        if self.id_col is None:
            self.note = "no id column: sample ids are <file stem>-<row number>"
        else:
            self.note = ""
        self.stem = Path(origin).stem

    def missing(self, values: Sequence[str]) -> RecordProblem:
        cols = (self.id_col, self.transcript_col, self.context_col, self.response_col,
                self.rating_col)  # fmt: skip
        names = [self.header[i] for i in cols if i is not None and i >= len(values)]
        return RecordProblem(MISSING_FIELD, f"missing field(s) {', '.join(map(repr, names))}")

    def builder(self) -> Callable[[Sequence[str], int], DialogRecord]:
        """The per-row function (locals bound once: this is the hot path)."""
        id_col, rating_col = self.id_col, self.rating_col
        transcript_col, context_col, response_col = (
            self.transcript_col, self.context_col, self.response_col)  # fmt: skip
        needed, meta_cols, stem = self.needed, self.meta_cols, self.stem
        roles, scale, cache = self.roles, self.scale, {}  # type: dict[str, str]
        low, high = scale
        missing = self.missing

        def record(values: Sequence[str], row_number: int) -> DialogRecord:
            if len(values) < needed:
                raise missing(values)
            if id_col is not None:
                record_id = values[id_col].strip()
                if not record_id:
                    raise RecordProblem(MISSING_FIELD, "missing field 'id' (empty cell)")
            else:
                record_id = f"{stem}-{row_number}"
            if transcript_col is not None:
                text = values[transcript_col]
                if not text or text.isspace():
                    raise RecordProblem(EMPTY_DIALOG, "empty dialog")
                turns = parse_transcript(text, roles, cache)
            else:
                turns = _context_turns(values[context_col], values[response_col], roles, cache)  # type: ignore[index]
            if not turns:
                raise RecordProblem(EMPTY_DIALOG, "empty dialog")
            if turns[-1].role != "bot":
                raise RecordProblem(NO_BOT_REPLY, "dialog does not end with a bot turn")
            rating = None
            if rating_col is not None:
                raw = values[rating_col]
                try:
                    rating = float(raw)
                except ValueError:
                    rating = None
                if rating is None or not low <= rating <= high:
                    # an empty cell is an unrated dialog, like "rating": null in JSON
                    rating = parse_rating(raw, scale) if raw.strip() else None
            metadata = {n: values[i] for n, i in meta_cols if i < len(values) and values[i]}
            return DialogRecord(record_id, turns, rating, scale, metadata)

        return record


def _context_turns(
    context: str, reply: str, roles: Mapping[str, str], cache: dict[str, str]
) -> list[Turn]:
    context, reply = context.strip(), reply.strip()
    if not context and not reply:
        raise RecordProblem(EMPTY_DIALOG, "empty dialog")
    if not reply:
        raise RecordProblem(MISSING_FIELD, "missing field 'response' (empty cell)")
    if not context:
        raise RecordProblem(MISSING_FIELD, "missing field 'context' (empty cell)")
    if _looks_labelled(context):
        turns = parse_transcript(context, roles, cache)
    else:
        turns = [Turn("user", context)]
    add_turn(turns, "bot", reply)
    return turns


def csv_rows(path: Path, report: LoadReport, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """(line, values) for each non-blank row, header first; a broken file is reported."""
    if csv.field_size_limit() < FIELD_LIMIT:
        csv.field_size_limit(FIELD_LIMIT)
    if not path.is_file():
        read_text(path)  # raises the right DatasetError
    try:
        file = path.open(encoding="utf-8-sig", newline="")
    except OSError as ex:
        raise DatasetError(f"{path}: {UNREADABLE}: {ex.strerror or ex}") from ex
    with file:
        reader = csv.reader(file, delimiter=delimiter)
        line = 1
        try:
            for values in reader:
                start, line = line, reader.line_num + 1
                if values and any(values):
                    yield start, values
        except csv.Error as ex:
            report.problem(f"{path}:{reader.line_num}", BAD_CSV, f"bad CSV: {ex}")
        except UnicodeDecodeError as ex:
            raise DatasetError(
                f"{path}: {UNREADABLE}: not UTF-8 text (near line {line}: {ex.reason})"
            ) from ex


def load_table(
    path: Path, report: LoadReport, format: str = "csv", **mapping: Any
) -> Iterator[Located]:
    """Records from a CSV/TSV file, one dialog per row."""
    check_keys(format, mapping, KEYS)
    delimiter = str(mapping.pop("delimiter", "\t" if format == "tsv" else ","))
    rows = csv_rows(path, report, delimiter)
    first = next(rows, None)
    if first is None:
        return
    mapper = RowMapper(first[1], str(path), mapping)
    if mapper.note:
        report.note(mapper.note)
    build = mapper.builder()
    unrated = 0
    for row_number, (line, values) in enumerate(rows, start=1):
        try:
            record = build(values, row_number)
        except RecordProblem as ex:
            report.problem(f"{path}:{line}", ex.kind, ex.detail)
            continue
        if record.rating is None:
            unrated += 1
        yield f"{path}:{line}", record
    if unrated and mapper.rating_col is not None:
        report.note(f"{unrated} row(s) with an empty rating cell loaded unrated")


def load_rows(
    rows: Iterable[Mapping[str, Any]], report: LoadReport, origin: str, **mapping: Any
) -> Iterator[Located]:
    """Records from dict rows (e.g. a hub dataset) with the same mapping as a CSV."""
    check_keys("csv", mapping, KEYS)
    mapping.pop("delimiter", None)
    mapper: RowMapper | None = None
    build: Callable[[Sequence[str], int], DialogRecord] | None = None
    for row_number, row in enumerate(rows, start=1):
        if mapper is None or build is None:
            mapper = RowMapper(list(row), origin, mapping)
            build = mapper.builder()
        values = ["" if row.get(c) is None else str(row.get(c)) for c in mapper.header]
        where = f"{origin}: row {row_number}"
        try:
            yield where, build(values, row_number)
        except RecordProblem as ex:
            report.problem(where, ex.kind, ex.detail)
