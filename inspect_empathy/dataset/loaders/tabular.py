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
  A column named like a key the plugin sets (``human_rating``, ``transcript``, ...)
  is an error: it could forge a rating.
- ``trailing_user``: ``cut`` cuts user turns after the last bot reply (counted;
  default ``error``); ``unescape``: ``empathetic_dialogues`` turns ``_comma_`` into ``,``.
- The dialect: ``delimiter`` (default ``,`` for csv, tab for tsv), ``quotechar``
  (default ``"``), ``escapechar`` (e.g. ``\\`` for ``\\"`` inside quotes; default
  none: quotes are doubled), ``na_values`` (cells read as missing, e.g.
  ``[NULL, NA]``; default: only empty cells), ``encoding`` (default UTF-8).
- ``layout: turns``: one row per turn (see `turns`).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...dialogs import (
    RESERVED_METADATA,
    RUBRIC_SCALE,
    TRAILING_KEY,
    DialogRecord,
    Turn,
    add_turn,
    bot_end,
    dialog_id,
    end_with_bot,
    ends_with_bot,
)
from ...errors import DatasetError
from ._column_records import column_records
from ._files import check_regular_file, undecodable_line
from ._options import TextOptions, check_keys
from ._pandas_csv import PandasTable, pandas_table
from ._problems import (
    EMPTY_DIALOG,
    MISSING_FIELD,
    RESERVED_KEY,
    UNREADABLE,
    LoadReport,
    Located,
    RecordBlock,
    RecordProblem,
)
from ._ratings import parse_rating, parse_scale, rater_metadata
from ._roles import DEFAULT_ROLES, role_map
from ._transcript import parse_transcript

BAD_CSV = "bad CSV"
DIALECT_KEYS = ("delimiter", "quotechar", "escapechar", "na_values", "encoding")
KEYS = ("id", "transcript", "context", "response", "rating", "ratings", "rater_aggregate",
        "roles", "scale", "metadata", "trailing_user", "unescape", *DIALECT_KEYS)  # fmt: skip
FIELD_LIMIT = 2**31 - 1


def _looks_labelled(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    head, sep, _ = first.partition(":")
    return bool(sep) and head[:1].isalpha() and 0 < len(head.split()) <= 3


class RowMapper:
    """Builds dialog records from rows given as value lists in header order."""

    def __init__(
        self,
        header: Sequence[str],
        origin: str,
        mapping: Mapping[str, Any],
        header_where: str | None = None,
        text: TextOptions | None = None,
    ) -> None:
        where = header_where or origin
        columns = header_columns(header, where)
        self.header = list(header)
        self.origin = origin
        self.text = text or TextOptions.from_mapping(mapping)
        self.roles = role_map(mapping.get("roles")) if mapping.get("roles") else DEFAULT_ROLES
        self.scale = parse_scale(mapping["scale"]) if mapping.get("scale") else RUBRIC_SCALE

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
        self.raters = self.text.raters
        self.rater_cols: list[tuple[str, int]] = []
        if self.raters is None:
            self.rating_col = column("rating", "rating")
        else:
            self.rating_col = None
            absent = [name for name in self.raters.names if name not in columns]
            if absent:
                raise DatasetError(
                    f"{where}: ratings column(s) {', '.join(map(repr, absent))} not in the header"
                    f" ({', '.join(repr(c) for c in columns)})"
                )
            self.rater_cols = [(name, columns[name]) for name in self.raters.names]
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
                self.response_col, *(i for _, i in self.rater_cols)}  # fmt: skip
        wanted = mapping.get("metadata")
        if wanted is None:
            self.meta_cols = [(n, i) for n, i in columns.items() if i not in used and n]
        else:
            names = [wanted] if isinstance(wanted, str) else list(wanted)
            missing = [n for n in names if n not in columns]
            if missing:
                raise DatasetError(f"{origin}: metadata columns not in the header: {missing}")
            self.meta_cols = [(n, columns[n]) for n in names]
        reserved = [n for n, _ in self.meta_cols if n in RESERVED_METADATA]
        if reserved:
            raise DatasetError(
                f"{where}: {RESERVED_KEY}: column(s) "
                f"{', '.join(map(repr, reserved))} would be copied into metadata under a key "
                "only the plugin may set; rename them, or list the columns to keep with "
                "metadata: [...]"
            )
        self.width = len(header)
        self.needed = max(i for i in used if i is not None) + 1
        if self.id_col is None:
            self.note = "no id column: sample ids are <file stem>-<row number>"
        else:
            self.note = ""
        self.stem = Path(origin).stem

    def missing(self, values: Sequence[str]) -> RecordProblem:
        cols = (self.id_col, self.transcript_col, self.context_col, self.response_col,
                self.rating_col, *(i for _, i in self.rater_cols))  # fmt: skip
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
        missing, width = self.missing, self.width
        unescape, cut_user = self.text.unescape, self.text.cut_trailing_user
        raters, rater_cols = self.raters, self.rater_cols

        def record(values: Sequence[str], row_number: int) -> DialogRecord:
            if len(values) < needed:
                raise missing(values)
            if len(values) > width:
                raise extra_cells(values, width)
            if id_col is not None:
                if not values[id_col].strip():
                    raise RecordProblem(MISSING_FIELD, "missing field 'id' (empty cell)")
                record_id = dialog_id(values[id_col])
            else:
                record_id = f"{stem}-{row_number}"
            if transcript_col is not None:
                text = values[transcript_col]
                if not text or text.isspace():
                    raise RecordProblem(EMPTY_DIALOG, "empty dialog")
                if unescape is not None:
                    text = unescape(text)
                turns = parse_transcript(text, roles, cache)
            else:
                context, reply = values[context_col], values[response_col]  # type: ignore[index]
                if unescape is not None:
                    context, reply = unescape(context), unescape(reply)
                turns = _context_turns(context, reply, roles, cache)
            cut = 0
            if not ends_with_bot(turns):
                # read the labels again only now, for the error message
                seen: list[str] = []
                if transcript_col is not None and not bot_end(turns):
                    parse_transcript(text, roles, cache, seen)
                cut = end_with_bot(turns, cut_user, seen)
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
            if raters is not None:
                cells = {n: values[i] if i < len(values) else "" for n, i in rater_cols}
                rating, present, absent = raters.combine(cells, scale)
                rater_metadata(metadata, present, absent)
            if cut:
                metadata[TRAILING_KEY] = cut
            return DialogRecord(record_id, turns, rating, scale, metadata)

        return record

    def row_record(
        self,
        build: Callable[[Sequence[str], int], DialogRecord],
        values: Sequence[str],
        number: int,
        where: str,
        report: LoadReport,
    ) -> DialogRecord | None:
        """The record of one row (``build``: `builder`), counted for the load summary, or
        None with its problem reported at ``where``."""
        try:
            record = build(values, number)
        except RecordProblem as ex:
            report.problem(where, ex.kind, ex.detail)
            return None
        self.text.count(report, record)
        return record

    def finish(self, report: LoadReport, unrated: int) -> None:
        """The load summary's counts once every row was read (``unrated``: rows loaded
        without a rating)."""
        self.text.summarise(report)
        if unrated and self.rating_col is not None:
            report.note(f"{unrated} row(s) with an empty rating cell loaded unrated")
        if unrated and self.raters is not None:
            report.note(f"{unrated} row(s) with no rater's rating loaded unrated")


def header_columns(header: Sequence[str], where: str) -> dict[str, int]:
    """Column name -> index; a name given twice is an error (else the last would win)."""
    columns: dict[str, int] = {}
    for index, name in enumerate(header):
        name = name.strip()
        if name in columns and name:
            raise DatasetError(
                f"{where}: {BAD_CSV}: column {name!r} appears twice in the header "
                f"(columns {columns[name] + 1} and {index + 1})"
            )
        columns[name] = index
    return columns


def extra_cells(values: Sequence[str], width: int) -> RecordProblem:
    """A row with more cells than the header (they would be dropped)."""
    hint = ""
    if any('\\"' in value for value in values):
        hint = "; quotes escaped with a backslash? set escapechar: '\\'"
    return RecordProblem(
        BAD_CSV, f"row has {len(values)} cells, the header {width}: cells beyond it{hint}"
    )


def _context_turns(
    context: str,
    reply: str,
    roles: Mapping[str, str],
    cache: dict[str, str],
    seen: list[str] | None = None,
) -> list[Turn]:
    context, reply = context.strip(), reply.strip()
    if not context and not reply:
        raise RecordProblem(EMPTY_DIALOG, "empty dialog")
    if not reply:
        raise RecordProblem(MISSING_FIELD, "missing field 'response' (empty cell)")
    if not context:
        raise RecordProblem(MISSING_FIELD, "missing field 'context' (empty cell)")
    if _looks_labelled(context):
        turns = parse_transcript(context, roles, cache, seen)
    else:
        turns = [Turn("user", context)]
    add_turn(turns, "bot", reply)
    return turns


YAML_NULLS = ("NULL", "null", "Null")


@dataclass(frozen=True)
class Dialect:
    """How a CSV/TSV file is written: the spec's dialect keys."""

    delimiter: str = ","
    quotechar: str = '"'
    escapechar: str | None = None
    na_values: frozenset[str] = frozenset()
    encoding: str = "utf-8-sig"

    @classmethod
    def from_mapping(cls, mapping: dict[str, Any], format: str = "csv") -> Dialect:
        """The dialect keys of a mapping (removed from it), checked."""
        delimiter = mapping.pop("delimiter", "\t" if format == "tsv" else ",")
        quotechar = mapping.pop("quotechar", '"')
        escapechar = mapping.pop("escapechar", None)
        for key, value in (("delimiter", delimiter), ("quotechar", quotechar),
                           ("escapechar", escapechar)):  # fmt: skip
            if value is not None and (not isinstance(value, str) or len(value) != 1):
                raise DatasetError(f"{key} must be one character, not {value!r}")
        na = mapping.pop("na_values", None)
        if na is None:
            na_values: frozenset[str] = frozenset()
        elif isinstance(na, str):
            na_values = frozenset({na})
        elif isinstance(na, list | tuple):
            # YAML reads an unquoted NULL / null as no value: take it as those spellings
            na_values = frozenset(
                text for v in na for text in ((str(v),) if v is not None else YAML_NULLS)
            )
        else:
            raise DatasetError(f"na_values must be a list of cell texts, not {na!r}")
        encoding = str(mapping.pop("encoding", None) or "utf-8-sig")
        if encoding.replace("-", "").replace("_", "").lower() == "utf8":
            encoding = "utf-8-sig"
        try:
            "".encode(encoding)
        except LookupError:
            raise DatasetError(f"unknown encoding {encoding!r}") from None
        return cls(delimiter, quotechar, escapechar, na_values, encoding)


def csv_rows(
    path: Path, report: LoadReport, delimiter: str | Dialect = ",", fast: bool = True
) -> Iterator[tuple[int, Sequence[str]]]:
    """(line, values) for each non-blank row, header first; a broken file is reported.

    A well-formed file in the default dialect is read by pandas' C parser
    (`_pandas_csv.pandas_table`), anything else by the ``csv`` module: same rows
    (``fast=False``: the ``csv`` module only, for a file pandas was already refused).

    Only regular files are opened. A parse error ends the read with a problem at its
    line; cells listed in the dialect's ``na_values`` read as empty (missing).
    """
    dialect = delimiter if isinstance(delimiter, Dialect) else Dialect(delimiter)
    if csv.field_size_limit() < FIELD_LIMIT:
        csv.field_size_limit(FIELD_LIMIT)
    check_regular_file(path)
    table = read_table(path, dialect, arrow=False) if fast else None
    if table is not None:
        yield from table.rows()
        return
    try:
        file = path.open(encoding=dialect.encoding, newline="")
    except OSError as ex:
        raise DatasetError(f"{path}: {UNREADABLE}: {ex.strerror or ex}") from ex
    na = dialect.na_values
    with file:
        reader = csv.reader(
            file,
            delimiter=dialect.delimiter,
            quotechar=dialect.quotechar,
            escapechar=dialect.escapechar,
            doublequote=True,
            strict=True,
        )
        line = 1
        skipped = 0
        try:
            for values in reader:
                start, line = line, reader.line_num + 1
                if values and any(values):
                    if na:
                        values = ["" if v.strip() in na else v for v in values]
                    yield start, values
                else:
                    skipped += 1
        except csv.Error as ex:
            hint = ""
            if dialect.escapechar is None and "expected after" in str(ex):
                hint = " (quotes escaped with a backslash? set escapechar: '\\')"
            report.problem(
                f"{path}:{reader.line_num}", BAD_CSV, f"bad CSV: {ex}{hint}; the rest of the "
                "file was not read"
            )
        except UnicodeDecodeError as ex:
            raise DatasetError(
                undecodable_line(path, dialect.encoding)
                or f"{path}: {UNREADABLE}: cannot decode ({ex.reason})"
            ) from ex
        if skipped:
            report.note(f"{path}: {skipped} blank line(s) or row(s) of only empty cells skipped")


def read_table(path: Path, dialect: Dialect, arrow: bool = True) -> PandasTable | None:
    """A plain file's columns read by pandas (`_pandas_csv.pandas_table`), or None."""
    return pandas_table(path, dialect.delimiter, dialect.quotechar, dialect.escapechar,
                        not dialect.na_values and dialect.encoding == "utf-8-sig",
                        arrow)  # fmt: skip


def load_table(
    path: Path, report: LoadReport, format: str = "csv", **mapping: Any
) -> Iterator[Located | RecordBlock]:
    """Records from a CSV/TSV file, one dialog per row (``layout: turns``: `turns.load_turns`).

    A plain file with a transcript column is checked column-wise
    (`_column_records.column_records`), any other row by row: same records and problems.
    """
    check_keys(format, mapping, KEYS)
    dialect = Dialect.from_mapping(mapping, format)
    check_regular_file(path)
    table = read_table(path, dialect)
    rows: Iterator[tuple[int, Sequence[str]]] = (
        table.rows() if table is not None else csv_rows(path, report, dialect, fast=False)
    )
    first = next(rows, None)  # the header
    if first is None:
        return
    mapper = RowMapper(first[1], str(path), mapping, f"{path}:{first[0]}")
    if mapper.note:
        report.note(mapper.note)
    if table is not None:
        located = column_records(table, mapper, str(path), report)
        if located is not None:
            yield from located
            return
    build = mapper.builder()
    unrated = 0
    for row_number, (line, values) in enumerate(rows, start=1):
        where = f"{path}:{line}"
        record = mapper.row_record(build, values, row_number, where, report)
        if record is not None:
            unrated += record.rating is None
            yield where, record
    mapper.finish(report, unrated)


def load_rows(
    rows: Iterable[Mapping[str, Any]], report: LoadReport, origin: str, **mapping: Any
) -> Iterator[Located]:
    """Records from dict rows (e.g. a hub dataset) with the same mapping as a CSV."""
    check_keys("csv", mapping, KEYS)
    for key in DIALECT_KEYS:
        mapping.pop(key, None)
    mapper: RowMapper | None = None
    build: Callable[[Sequence[str], int], DialogRecord] | None = None
    for row_number, row in enumerate(rows, start=1):
        if mapper is None or build is None:
            mapper = RowMapper(list(row), origin, mapping)
            build = mapper.builder()
        values = ["" if row.get(c) is None else str(row.get(c)) for c in mapper.header]
        where = f"{origin}: row {row_number}"
        record = mapper.row_record(build, values, row_number, where, report)
        if record is not None:
            yield where, record
    if mapper is not None:
        mapper.finish(report, unrated=0)  # hub rows: no note on unrated ones
