"""Raters (and published judges) in files of their own, joined to the dialogs by id.

Annotation exports often come one file per annotator: ``expert1_ratings.csv``,
``expert2_ratings.csv``, ... each with an id column (or several: ``sp_id`` + ``rp_id``)
and one column per rated dimension. A ``format: raters`` spec names them::

    format: raters
    path: ${KUMAR2025}                 # the folder every file below is read from
    dialogs:                           # optional: without it the corpus is ratings only
      file: original_data/sample_epitome.csv
      context: seeker_post             # or transcript: full_conversation (+ roles)
      response: response_post
    id: [sp_id, rp_id]                 # id column(s) of every file (composite ids too)
    dimension: level_interpretations   # the rating column of every file
    scale: [0, 2]
    raters:                            # the people: the human rating is their aggregate
      expert1: annotations/epitome/expert1_ratings.csv
      expert2: annotations/epitome/expert2_ratings.csv
    judges:                            # published judges: compared, never the reference
      gpt-4o: {file: annotations/epitome/gpt_ratings.csv, id: sp_id}

A file entry is a path, or a mapping with ``file`` and any of ``id`` (its own id
columns: a part of the dialogs' id, such as ``sp_id`` alone, joins where it names one
dialog), ``column`` (default ``dimension``), ``scale`` (judges: default the raters'),
``sheet`` (``.xlsx``), ``read`` (``number``, ``json``: the cell holds a JSON object,
``text``: the cell holds a judge's raw answer with a fenced JSON block) and
``attribute`` (the key to take from the JSON object).

Nothing is lost silently. Ids in a rating file that are not among the dialogs
(``extra``), dialogs a file does not rate (``missing``), ids a partial key cannot
place (``ambiguous``), repeated ids, and every cell that is not a number (``unreadable``)
or lies outside the scale (``out of scale``) are counted per file, and each bad cell is
named by file, row and column. A bad rater cell makes its dialog invalid (the load fails,
or with ``on_invalid: skip`` leaves the dialog out, counted), unless the spec says
``bad_cells: missing``: then the cell counts as a missing rating, and the notes list it;
``bad_cells: as_published`` keeps an out-of-scale number at its published value (a
corpus's authors' arithmetic, `AS_PUBLISHED`), counted in the notes.
Ratings are never clipped onto the scale. ``missing_values: [0, NA]`` names cell values
that mean "not rated": they count as empty cells (counted per file).

One row per context with one column per responder (chatbot): ``responders:`` names the
columns, a list (the column names are the responders), a mapping (responder: column) or
a pattern with ``{responder}`` in it (``"{responder}_rating"``), in every file (a file
entry may give its own). A response's id is the context's id values and the responder's
name (``read: json`` or ``text`` without ``attribute`` takes the ``dimension``, so one
spec serves every attribute). ``own_replies: {judge: responder}`` leaves each judge's
ratings of its own model's replies out (self-preference), counted in the notes.

Ids are opaque: a sample id is its key's values joined with ``/`` for display, and no id
is ever split; the key itself (`RatedTable.keys`) is what groups responses by context and
responder. Two different keys that would show as the same id are an error.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._util.file_kind import file_problem
from ..._util.read import ReadError, table_file
from ...dialogs import Turn, dialog_id, end_with_bot, id_text
from ...errors import DatasetError
from ._files import inside_folder
from ._options import unescape_empathetic_dialogues
from ._problems import OUT_OF_SCALE, LoadReport, Located, RecordProblem
from ._ratings import Raters, parse_scale
from ._roles import role_map

UNREADABLE = "unreadable"
OUTSIDE = "out of scale"
READS = ("number", "json", "text")
BAD_CELLS = ("fail", "missing", "as_published")
AS_PUBLISHED = "as_published"
"""``bad_cells: as_published``: a rater's out-of-scale number (a 0 placeholder, a 6 on 1-5)
is kept at its published value, in the raters' aggregate and the people's means, as a
corpus's authors averaged it (so a published table reproduces); unreadable cells are
missing ratings. For published tables only (``compare --published``, ``reproduce``): a
load for ``inspect eval`` refuses it."""
RESPONDER = "responder"
"""The name of the responder's part of a response's key in a one-column-per-responder
spec (``responders:``)."""
PLACEHOLDER = "{responder}"
"""Where the responder's name stands in a ``responders:`` column pattern."""
ID_SEPARATOR = "/"
"""Joins the values of a composite id into a sample id: ``97keuy/e48xfwa``."""
NOTE_LIMIT = 20
"""Bad cells listed one by one in the notes (the rest are counted)."""

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class BadCell:
    """One cell that could not be used: file, spreadsheet row (header = row 1), column."""

    file: str
    row: int
    column: str
    kind: str
    value: str
    detail: str

    def __str__(self) -> str:
        return f"{self.file}: row {self.row}, column {self.column}: {self.detail}"


@dataclass
class Source:
    """One rating file: a rater's or a published judge's."""

    name: str
    file: Path
    id: tuple[str, ...]
    column: str
    scale: tuple[float, float]
    read: str = "number"
    attribute: str | None = None
    sheet: str | None = None
    judge: bool = False
    responders: ResponderColumns | None = None
    """One column per responder (``responders:``); None: one row per id, ``column``."""
    missing_values: tuple[Any, ...] = ()
    """Cell values that mean "not rated" (``missing_values:``)."""


@dataclass
class SourceReport:
    """What joining one file found."""

    name: str
    file: str
    rows: int = 0
    joined: int = 0
    missing: int = 0
    extra: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)
    empty: int = 0
    marked_missing: int = 0
    bad: list[BadCell] = field(default_factory=list)
    absent_responders: list[str] = field(default_factory=list)
    sheet: str = ""
    """A workbook's note: the sheet read (and any hidden sheet passed over)."""

    def line(self) -> str:
        """One line for the load's notes."""
        kinds = Counter(cell.kind for cell in self.bad)
        parts = [f"{self.joined} of {self.rows} rows joined"]
        if self.missing:
            parts.append(f"{self.missing} dialog(s) not in this file (missing)")
        if self.extra:
            parts.append(
                f"{len(self.extra)} id(s) not among the dialogs (extra: {_few(self.extra)})"
            )
        if self.ambiguous:
            parts.append(f"{len(self.ambiguous)} partial id(s) naming several dialogs "
                         f"(not joined: {_few(self.ambiguous)})")  # fmt: skip
        if self.repeated:
            parts.append(f"{len(self.repeated)} repeated id(s) (first row kept: "
                         f"{_few(self.repeated)})")  # fmt: skip
        if self.empty:
            parts.append(f"{self.empty} empty cell(s)")
        if self.marked_missing:
            parts.append(f"{self.marked_missing} cell(s) marked missing (missing_values)")
        if self.absent_responders:
            parts.append(f"no column for responder(s) {_few(self.absent_responders)} (missing)")
        parts += [f"{n} {kind} cell(s)" for kind, n in sorted(kinds.items())]
        if self.sheet:
            parts.append(self.sheet)
        return f"{self.name} ({self.file}): " + "; ".join(parts)


def rater_bad_cells(table: RatedTable) -> list[BadCell]:
    """The raters' bad cells (unreadable or out of scale) of the rated ids."""
    return [cell for cells in table.rater_bad.values() for cell in cells]


def _few(items: Sequence[str], limit: int = 5) -> str:
    return ", ".join(items[:limit]) + (
        f" ... (+{len(items) - limit})" if len(items) > limit else ""
    )


@dataclass
class RatedTable:
    """Dialog ids, each rater's and judge's rating by id (raw, own scale), and the report."""

    ids: list[str]
    raters: dict[str, dict[str, float]]
    judges: dict[str, dict[str, float]]
    judge_bad: dict[str, dict[str, BadCell]]
    """Per judge, the dialogs whose cell was bad (the judge answered, unusably)."""
    rater_bad: dict[str, list[BadCell]]
    """Per dialog id, the raters' bad cells."""
    scale: tuple[float, float]
    judge_scales: dict[str, tuple[float, float]]
    sources: list[SourceReport]
    dimension: str
    aggregate: str = "median"
    records: list[Located] = field(default_factory=list)
    keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Each id's key: its id values (and responder), never split from the shown id."""
    as_published: list[BadCell] = field(default_factory=list)
    """Raters' out-of-scale cells kept at their published values (``bad_cells:
    as_published``)."""
    key_columns: tuple[str, ...] = ()
    """What each part of a key is: the id columns (and ``responder``)."""
    responder: str | None = None
    """The key part that names the responder (``responder:`` or ``responders:``), if any."""
    own_left_out: dict[str, int] = field(default_factory=dict)
    """Per judge, ratings of its own model's replies left out (``own_replies:``)."""
    own_replies: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per judge, the responders that are its own model (``own_replies:``)."""

    def notes(self) -> list[str]:
        """The per-file lines and the first bad cells, for the load's notes."""
        lines = [s.line() for s in self.sources]
        lines += [
            f"{judge}: {n} rating(s) of its own model's replies "
            f"({', '.join(self.own_replies[judge])}) left out (own_replies)"
            for judge, n in self.own_left_out.items()
        ]
        if self.as_published:
            values = Counter(cell.detail.split(" ", 1)[0] for cell in self.as_published)
            shown = ", ".join(f"{n} at {v}" for v, n in sorted(values.items(),
                                                              key=lambda i: float(i[0])))
            lines.append(
                f"{len(self.as_published)} rater cell(s) outside the scale "
                f"{self.scale[0]:g}-{self.scale[1]:g} kept at their published values "
                f"(bad_cells: as_published: {shown}): the raters' aggregate and the people's "
                "means include them, as the authors averaged them"
            )
        bad = [cell for s in self.sources for cell in s.bad if cell not in self.as_published]
        lines += [f"bad cell: {cell}" for cell in bad[:NOTE_LIMIT]]
        if len(bad) > NOTE_LIMIT:
            lines.append(f"... and {len(bad) - NOTE_LIMIT} more bad cell(s)")
        return lines


# --------------------------------------------------------------------------- spec


@dataclass(frozen=True)
class ResponderColumns:
    """The columns of a file that hold one responder each (``responders:``): fixed
    (responder -> column name) or a pattern with ``{responder}`` in it."""

    fixed: tuple[tuple[str, str], ...] = ()
    pattern: str | None = None

    @classmethod
    def parse(cls, value: Any, where: str) -> ResponderColumns:
        """From a list of columns, a mapping responder: column, or a ``{responder}`` pattern."""
        if isinstance(value, str):
            if value.count(PLACEHOLDER) != 1:
                raise DatasetError(
                    f"{where}: a column pattern needs {PLACEHOLDER} once, where the "
                    f"responder's name stands, not {value!r}; or list the columns"
                )
            return cls(pattern=value)
        if isinstance(value, list | tuple) and value and all(
            isinstance(v, str) and v.strip() for v in value
        ):
            pairs = tuple((v.strip(), v.strip()) for v in value)
        elif isinstance(value, Mapping) and value and all(
            isinstance(k, str) and k.strip() and isinstance(v, str) and v.strip()
            for k, v in value.items()
        ):
            pairs = tuple((k.strip(), v.strip()) for k, v in value.items())
        else:
            raise DatasetError(
                f"{where}: responders must list the responder columns, map each responder "
                f"to its column, or be a pattern with {PLACEHOLDER}, not {value!r}"
            )
        for kind, items in (("responder", [k for k, _ in pairs]),
                            ("column", [c for _, c in pairs])):  # fmt: skip
            twice = sorted({i for i in items if items.count(i) > 1})
            if twice:
                raise DatasetError(f"{where}: {kind} {', '.join(map(repr, twice))} named twice")
        return cls(fixed=pairs)

    def find(
        self, header: Sequence[str], path: Path, skip: Sequence[str] = ()
    ) -> tuple[dict[str, int], list[str]]:
        """(responder -> column index, responders of a fixed list with no column here); a
        pattern never matches the ``skip`` columns (the file's id and context columns)."""
        if self.pattern is None:
            found = {r: header.index(c) for r, c in self.fixed if c in header}
            absent = [r for r, c in self.fixed if c not in header]
            if not found:
                raise DatasetError(
                    f"{path}: none of the responder columns "
                    f"{', '.join(repr(c) for _, c in self.fixed)} "
                    f"(columns: {', '.join(h for h in header if h)})"
                )
            return found, absent
        head, _, tail = self.pattern.partition(PLACEHOLDER)
        found = {}
        for index, name in enumerate(header):
            if name in skip:
                continue
            if len(name) > len(head) + len(tail) and name.startswith(head) and name.endswith(tail):
                responder = name[len(head) : len(name) - len(tail)]
                if responder in found:
                    raise DatasetError(f"{path}: two columns for responder {responder!r}")
                found[responder] = index
        if not found:
            raise DatasetError(
                f"{path}: no column matches the responders pattern {self.pattern!r} "
                f"(columns: {', '.join(h for h in header if h)})"
            )
        return found, []


def _missing_values(value: Any, where: str) -> tuple[Any, ...]:
    if value is None:
        return ()
    values = value if isinstance(value, list | tuple) else [value]
    for v in values:
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            raise DatasetError(f"{where}: missing_values lists cell values (numbers or "
                               f"text), not {v!r}")  # fmt: skip
    return tuple(values)


def _marked_missing(value: Any, marks: tuple[Any, ...]) -> bool:
    """Whether a cell (or JSON attribute) value is one of ``missing_values``."""
    if not marks or value is None or isinstance(value, bool):
        return False
    text = str(value).strip()
    try:
        number: float | None = float(text)
    except ValueError:
        number = None
    for mark in marks:
        if isinstance(mark, str):
            if text == mark.strip():
                return True
        elif number is not None and number == float(mark):
            return True
    return False


def _columns(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str) and value.strip():
        return (value.strip(),)
    if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value)
    raise DatasetError(f"{where}: id must be a column name or a list of them, not {value!r}")


def _inside(root: Path, path: Any, where: str) -> Path:
    real = inside_folder(root, path, where, "file")  # the one path rule (loaders/_files.py)
    problem = file_problem(real)[1]
    if problem:
        raise DatasetError(f"{where}: {real} {problem}")
    return real


def _sources(
    root: Path, entries: Any, key: str, mapping: Mapping[str, Any], scale: tuple[float, float]
) -> list[Source]:
    if entries is None:
        return []
    if not isinstance(entries, Mapping) or not entries:
        raise DatasetError(f"{key} must map each name to its file, not {entries!r}")
    default_id = mapping.get("id")
    dimension = mapping.get("dimension")
    wide = mapping.get("responders")
    marks = _missing_values(mapping.get("missing_values"), "missing_values")
    out = []
    for name, entry in entries.items():
        where = f"{key}.{name}"
        entry = {"file": entry} if isinstance(entry, str) else entry
        if not isinstance(entry, Mapping):
            raise DatasetError(f"{where}: a file path or a mapping with 'file', not {entry!r}")
        unknown = set(entry) - {"file", "id", "column", "scale", "read", "attribute", "sheet",
                                "responders", "missing_values"}
        if unknown:
            raise DatasetError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        columns = entry.get("responders", wide)
        if entry.get("responders") is not None and wide is None:
            raise DatasetError(f"{where}: responders needs the spec's own responders: too")
        if columns is not None and "column" in entry:
            raise DatasetError(f"{where}: give responders (one column per responder) or "
                               "column, not both")  # fmt: skip
        column = entry.get("column", dimension) if columns is None else str(dimension or "")
        if columns is None and (not isinstance(column, str) or not column):
            raise DatasetError(f"{where}: name the rating column (column, or the spec's dimension)")
        read = str(entry.get("read", "number"))
        if read not in READS:
            raise DatasetError(f"{where}: read must be one of {', '.join(READS)}, not {read!r}")
        attribute = entry.get("attribute")
        if read != "number" and not attribute:
            if columns is None or not isinstance(dimension, str) or not dimension:
                raise DatasetError(f"{where}: read: {read} needs the attribute to take")
            attribute = dimension  # one column per responder: the dimension names it
        own = entry.get("scale")
        out.append(
            Source(
                name=str(name),
                file=_inside(root, entry.get("file"), where),
                id=_columns(entry.get("id", default_id), where),
                column=column,
                scale=parse_scale(own, f"{where}.scale") if own is not None else scale,
                read=read,
                attribute=str(attribute) if attribute else None,
                sheet=str(entry["sheet"]) if entry.get("sheet") else None,
                judge=key == "judges",
                responders=None if columns is None
                else ResponderColumns.parse(columns, f"{where}.responders"),
                missing_values=_missing_values(entry["missing_values"], f"{where}")
                if "missing_values" in entry else marks,
            )
        )
    return out


# --------------------------------------------------------------------------- files


def read_rows(
    path: Path, sheet: str | None = None, notes: list[str] | None = None
) -> tuple[list[str], list[list[Any]]]:
    """(header, rows) of a CSV, TSV or XLSX file, read by the one table reader
    (`_util.read.table_file`); cells as read (text, or numbers in XLSX). The sheet read
    of a workbook is named in ``notes``."""
    try:
        table = table_file(path, sheet)
    except ReadError as ex:
        raise DatasetError(str(ex)) from None
    if table.note and notes is not None:
        notes.append(table.note)
    if table.sheet and any(v is None for row in table.rows for v in row):
        _mark_uncached_formulas(path, table.sheet, table.rows)
    return table.header, table.rows


@dataclass(frozen=True)
class UncachedFormula:
    """An .xlsx cell holding a formula whose value was never saved (the workbook was written
    by a program that does not compute formulas): there is no value to read. As an id it
    is an empty cell; as a rating, an unreadable one (`read_cell` names the formula)."""

    formula: str

    def __str__(self) -> str:
        return ""


def _mark_uncached_formulas(path: Path, sheet: str, rows: list[list[Any]]) -> None:
    """Put an `UncachedFormula` where a cell read as empty holds a formula (the workbook
    read again for its formulas, only when some cell was empty)."""
    import openpyxl

    book = openpyxl.load_workbook(path, read_only=True, data_only=False)
    try:
        formulas_of = book[sheet].iter_rows(min_row=2, values_only=True)  # rows: no header
        for row, formulas in zip(rows, formulas_of, strict=False):
            for column, formula in enumerate(formulas[: len(row)]):
                if row[column] is None and isinstance(formula, str) and formula.startswith("="):
                    row[column] = UncachedFormula(formula)
    finally:
        book.close()


def _index(header: list[str], names: Sequence[str], path: Path) -> list[int]:
    missing = [n for n in names if n not in header]
    if missing:
        raise DatasetError(
            f"{path}: no column {', '.join(map(repr, missing))} "
            f"(columns: {', '.join(h for h in header if h)})"
        )
    return [header.index(n) for n in names]


def _key(row: list[Any], columns: list[int]) -> tuple[str, ...] | None:
    values = []
    for c in columns:
        cell = row[c] if c < len(row) else None
        text = "" if cell is None else _id_text(cell)
        if not text:
            return None
        values.append(text)
    return tuple(values)


def _id_text(cell: Any) -> str:
    """An id cell by the one id rule (`dialogs.dialog_id`), "" when blank. A workbook's
    number cell reads as Excel shows it: a whole number as its digits (``7``, even stored
    as ``7.0``); a fraction is refused (a RecordProblem), as a JSON id's would be."""
    if isinstance(cell, float) and cell.is_integer():
        return str(int(cell))  # an xlsx number id
    if isinstance(cell, float):
        return dialog_id(cell)  # refused
    return id_text(str(cell))


class MarkedMissing(Exception):
    """A cell holds one of the spec's ``missing_values``: not rated."""


def read_cell(cell: Any, source: Source) -> float | None:
    """The rating in one cell, None when empty; RecordProblem(kind, detail) when unusable,
    `MarkedMissing` when the cell (or its attribute) is one of ``missing_values``.

    Out-of-scale values raise with kind ``out of scale`` and are never clipped.
    """
    if isinstance(cell, UncachedFormula):
        raise RecordProblem(
            UNREADABLE,
            f"a formula ({_short(cell.formula)}) with no saved value: open the workbook in a "
            "spreadsheet program and save it, so that its values are stored",
        )
    if cell is None or (isinstance(cell, str) and not cell.strip()):
        return None
    value: Any = cell
    if source.read in ("json", "text"):
        value = _attribute(cell, source)
        if value is None:
            return None
    if _marked_missing(value, source.missing_values):
        raise MarkedMissing
    if isinstance(value, bool):
        raise RecordProblem(UNREADABLE, f"{value!r} is not a number")
    try:
        number = float(value if isinstance(value, int | float) else str(value).strip())
    except ValueError:
        raise RecordProblem(UNREADABLE, f"{_short(value)!r} is not a number") from None
    if not math.isfinite(number):
        raise RecordProblem(UNREADABLE, f"{_short(value)!r} is not a finite number")
    low, high = source.scale
    if number < low or number > high:
        raise RecordProblem(OUTSIDE, f"{number:g} is outside the scale {low:g}-{high:g}")
    return number


def _short(value: Any, limit: int = 60) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _attribute(cell: Any, source: Source) -> Any:
    """The attribute's value in a cell holding a JSON object (``read: json``) or a judge's
    raw answer (``read: text``: the fenced JSON block, else the first JSON object in the
    text that has the attribute). A Python dict literal (``{'empathy': 4}``, as a
    stringified dict is written) reads as its JSON twin. ``attribute: a.b`` reads a nested
    object's key when the object has no key ``a.b`` itself."""
    text = str(cell)
    if source.read == "text":
        fenced = _FENCE.search(text)
        if fenced is not None:
            text = fenced.group(1)
        elif "{" in text and "}" in text:
            found = _first_object(text, source.attribute)
            if found is not None:
                return _lookup(found, source.attribute, text)
            text = text[text.index("{") : text.rindex("}") + 1]
        else:
            raise RecordProblem(UNREADABLE, f"no JSON block in the text {_short(cell)!r}")
    return _lookup(_object(text), source.attribute, text)


def _object(text: str) -> dict:
    """The JSON object (or Python dict literal) that is the whole text."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        data = _dict_literal(text)
        if data is None:
            raise RecordProblem(UNREADABLE, f"bad JSON {_short(text)!r}") from None
    if not isinstance(data, dict):
        raise RecordProblem(UNREADABLE, f"the JSON is not an object: {_short(text)!r}")
    return data


def _dict_literal(text: str) -> dict | None:
    """A Python dict literal of plain values (``{'empathy': 4}``), or None."""
    import ast

    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")) or len(stripped) > 100_000:
        return None
    try:
        value = ast.literal_eval(stripped)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def _first_object(text: str, attribute: str | None) -> dict | None:
    """The first JSON object in ``text`` that holds ``attribute`` (None: none does)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            value = None
        if isinstance(value, dict) and _has(value, attribute):
            return value
        start = text.find("{", start + 1)
    return None


def _has(data: dict, attribute: str | None) -> bool:
    try:
        _lookup(data, attribute, "")
    except RecordProblem:
        return False
    return True


def _lookup(data: dict, attribute: str | None, text: str) -> Any:
    if attribute in data:
        return data[attribute]
    value: Any = data
    if attribute and "." in attribute:
        for part in attribute.split("."):
            if not isinstance(value, dict) or part not in value:
                break
            value = value[part]
        else:
            return value
    raise RecordProblem(
        UNREADABLE, f"no attribute {attribute!r} (keys: {', '.join(map(str, data))})"
    )


# --------------------------------------------------------------------------- join


def _read_source(
    source: Source,
    keys: dict[tuple[str, ...], str] | None,
    dialog_id: tuple[str, ...] | None,
    found: dict[str, tuple[str, ...]],
) -> tuple[dict[str, float], dict[str, BadCell], SourceReport]:
    """A file's ratings by dialog id, its bad cells by dialog id, and its report.

    ``keys`` maps the dialogs' full keys to ids (None: ratings only, every id is taken,
    its key recorded in ``found``). A one-column-per-responder file gives one response
    per row and responder column, keyed by the row's id values and the responder.
    """
    read: list[str] = []
    header, rows = read_rows(source.file, source.sheet, read)
    id_cols = _index(header, source.id, source.file)
    report = SourceReport(source.name, source.file.name, rows=0, sheet=" ".join(read))
    if source.responders is not None:
        by_responder, report.absent_responders = source.responders.find(
            header, source.file, source.id
        )
        cells = list(by_responder.items())
        own_id = (*source.id, RESPONDER)
    else:
        (value_col,) = _index(header, [source.column], source.file)
        cells = [("", value_col)]
        own_id = source.id
    lookup: dict[tuple[str, ...], str | None] = {}
    if keys is not None and dialog_id is not None:
        if not set(own_id) <= set(dialog_id):
            raise DatasetError(
                f"{source.file}: id {list(source.id)} is not part of the dialogs' id "
                f"{[c for c in dialog_id if c != RESPONDER]}"
            )
        positions = [dialog_id.index(c) for c in own_id]
        for key, sid in keys.items():
            part = tuple(key[p] for p in positions)
            lookup[part] = None if part in lookup else sid  # None: names several dialogs
    values: dict[str, float] = {}
    bad: dict[str, BadCell] = {}
    seen: set[str] = set()
    wide = source.responders is not None
    for number, row in enumerate(rows, start=2):
        if not any(c is not None and str(c).strip() for c in row):
            continue
        try:
            row_key = _key(row, id_cols)
        except RecordProblem as ex:
            report.rows += len(cells)
            report.bad.append(BadCell(source.file.name, number, "/".join(source.id), UNREADABLE,
                                      "", ex.detail))  # fmt: skip
            continue
        if row_key is None:
            report.rows += len(cells)
            formulas = [c.formula for c in row if isinstance(c, UncachedFormula)]
            why = f" (a formula with no saved value: {formulas[0]})" if formulas else ""
            report.bad.append(BadCell(source.file.name, number, "/".join(source.id), UNREADABLE,
                                      "", "empty id" + why))  # fmt: skip
            continue
        for responder, value_col in cells:
            report.rows += 1
            key = (*row_key, responder) if wide else row_key
            shown = ID_SEPARATOR.join(key)
            if keys is None:
                sid: str | None = _claim(found, shown, key, source.file)
            elif key not in lookup:
                report.extra.append(shown)
                continue
            else:
                sid = lookup[key]
                if sid is None:
                    report.ambiguous.append(shown)
                    continue
            if sid in seen:
                report.repeated.append(shown)
                continue
            seen.add(sid)
            report.joined += 1
            cell = row[value_col] if value_col < len(row) else None
            column = header[value_col]
            try:
                value = read_cell(cell, source)
            except MarkedMissing:
                report.marked_missing += 1
                continue
            except RecordProblem as ex:
                found_cell = BadCell(
                    source.file.name, number, column, ex.kind, _short(cell), ex.detail
                )
                report.bad.append(found_cell)
                bad[sid] = found_cell
                continue
            if value is None:
                report.empty += 1
                continue
            values[sid] = value
    if keys is not None:
        report.missing = len(set(keys.values()) - seen)
    return values, bad, report


def _claim(
    found: dict[str, tuple[str, ...]], sid: str, key: tuple[str, ...], where: Path | str
) -> str:
    """Record that ``sid`` shows ``key``; two keys showing as one id are an error (ids are
    opaque: joined, never split, so they must not collide)."""
    other = found.setdefault(sid, key)
    if other != key:
        raise DatasetError(
            f"{where}: the ids {list(other)} and {list(key)} both read as {sid!r} (id values "
            f"are joined with {ID_SEPARATOR!r}): rename one, or use one id column"
        )
    return sid


def _dialog_records(
    root: Path,
    spec: Mapping[str, Any],
    id_cols: tuple[str, ...],
    report: LoadReport,
    responders: Any = None,
) -> tuple[dict[tuple[str, ...], str], dict[str, tuple[str, list[Turn], dict[str, Any]]]]:
    """The dialogs file: full keys -> sample ids, and each id's (where, turns, metadata).

    With ``responders`` (the spec's), a row is a context and ``response`` names the reply
    columns, one per responder (a ``{responder}`` pattern or a mapping): one dialog per
    row and responder, keyed by the row's id values and the responder.
    """
    if not isinstance(spec, Mapping) or "file" not in spec:
        raise DatasetError(f"dialogs must be a mapping with 'file', not {spec!r}")
    path = _inside(root, spec["file"], "dialogs")
    header, rows = read_rows(path, spec.get("sheet"), report.notes)
    id_index = _index(header, _columns(spec.get("id", id_cols), "dialogs"), path)
    roles = role_map(spec.get("roles"))
    unescape = spec.get("unescape") == "empathetic_dialogues"
    cut = spec.get("trailing_user") == "cut"
    replies: list[tuple[str, list[int]]]
    if responders is not None:
        if "transcript" in spec:
            raise DatasetError("dialogs: with responders, give context and response (the "
                               "reply columns, one per responder), not transcript")  # fmt: skip
        (context_col,) = _index(header, [spec.get("context", "context")], path)
        reply = ResponderColumns.parse(spec.get("response"), "dialogs.response")
        skip = [header[i] for i in (*id_index, context_col)]
        by_responder, absent = reply.find(header, path, skip)
        if absent:
            raise DatasetError(f"{path}: no reply column for responder(s) {', '.join(absent)}")
        replies = [(r, [context_col, c]) for r, c in by_responder.items()]
    elif "transcript" in spec:
        replies = [("", _index(header, [spec["transcript"]], path))]
    else:
        replies = [("", _index(
            header, [spec.get("context", "context"), spec.get("response", "response")], path
        ))]  # fmt: skip
    keys: dict[tuple[str, ...], str] = {}
    found: dict[str, tuple[str, ...]] = {}
    dialogs: dict[str, tuple[str, list[Turn], dict[str, Any]]] = {}
    from ._transcript import parse_transcript

    for number, row in enumerate(rows, start=2):
        where = f"{path}: row {number}"
        try:
            row_key = _key(row, id_index)
        except RecordProblem as ex:
            report.problem(where, ex.kind, ex.detail)
            continue
        if row_key is None:
            if any(c is not None and str(c).strip() for c in row):
                report.problem(where, "missing field", "empty id cell")
            continue
        for responder, text_cols in replies:
            key = (*row_key, responder) if responders is not None else row_key
            sid = _claim(found, ID_SEPARATOR.join(key), key, path)
            if key in keys:
                report.exclude("repeated dialog rows (the first row of an id is kept)")
                continue
            texts = [str(row[c]) if c < len(row) and row[c] is not None else "" for c in text_cols]
            if responders is not None and not texts[-1].strip():
                report.exclude("empty reply cells (that responder has no reply in that context)")
                continue
            if unescape:
                texts = [unescape_empathetic_dialogues(t) for t in texts]
            try:
                if len(texts) == 1:
                    turns = parse_transcript(texts[0], roles)
                else:
                    turns = [Turn("user", texts[0].strip()), Turn("bot", texts[1].strip())]
                    turns = [t for t in turns if t.content]
                cut_count = end_with_bot(turns, cut)
            except RecordProblem as ex:
                report.problem(f"{where}, column {header[text_cols[-1]]}" if responder else where,
                               ex.kind, ex.detail)  # fmt: skip
                continue
            keys[key] = sid
            metadata: dict[str, Any] = dict(zip(id_cols, row_key, strict=False))
            if responders is not None:
                metadata[RESPONDER] = responder
            if cut_count:
                metadata["trailing_user_turns_cut"] = cut_count
                report.adjust("trailing user turns cut")
            dialogs[sid] = (where, turns, metadata)
    return keys, dialogs


def _file_level_responders(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    """A spec without its own ``responders:`` whose every rater and judge file names its
    responders' columns (``responders:`` in each file's entry) is read one column per
    responder, as if the spec said ``responders: "{responder}"``: each file's own entry
    says which of its columns are which responders. Where only some files name theirs, the
    others have no responder to read: say what to add."""
    if mapping.get("responders") is not None or mapping.get("responder") is not None:
        return mapping
    entries = [(f"{key}.{name}", entry) for key in ("raters", "judges")
               for name, entry in (mapping.get(key) or {}).items()
               if isinstance(mapping.get(key), Mapping)]  # fmt: skip
    named = [where for where, entry in entries
             if isinstance(entry, Mapping) and entry.get("responders") is not None]  # fmt: skip
    if not named:
        return mapping
    if len(named) == len(entries):
        return {**mapping, "responders": "{" + RESPONDER + "}"}
    others = [where for where, _ in entries if where not in named]
    raise DatasetError(
        f"{', '.join(named)} name(s) responder columns but {', '.join(others)} do(es) not: "
        "give the spec a top-level responders: (the responders' columns every file shares, "
        "e.g. responders: [bot_a, bot_b], or a pattern such as \"{responder}_score\") or a "
        "responders: in every file's entry"
    )


def read_rated(
    root: Path | str, mapping: Mapping[str, Any], report: LoadReport | None = None
) -> RatedTable:
    """Join the dialogs (if any), the raters' files and the judges' files of a spec."""
    root = Path(root)
    report = report or LoadReport(str(root), "raters")
    known = {"dialogs", "id", "dimension", "dimensions", "scale", "raters", "judges",
             "rater_aggregate", "bad_cells", "reproduce", "unit", "responder", "responders",
             "own_replies", "missing_values"}  # fmt: skip
    unknown = set(mapping) - known
    if unknown:
        raise DatasetError(f"format raters does not take {', '.join(sorted(unknown))} "
                           f"(keys: {', '.join(sorted(known))})")  # fmt: skip
    if not root.is_dir():
        raise DatasetError(f"{root}: format raters reads its files from a folder: path must be one")
    if mapping.get("id") is None:
        raise DatasetError("format raters needs id: the id column(s) of the rating files")
    id_cols = _columns(mapping["id"], "id")
    mapping = _file_level_responders(mapping)
    wide = mapping.get("responders")
    if wide is not None and mapping.get("responder") is not None:
        raise DatasetError("give responder (an id column: one row per response) or responders "
                           "(one column per responder), not both")  # fmt: skip
    if wide is not None:
        ResponderColumns.parse(wide, "responders")
        if RESPONDER in id_cols:
            raise DatasetError(f"with responders, no id column may be called {RESPONDER!r}")
    responder = RESPONDER if wide is not None else mapping.get("responder")
    if responder is not None and responder not in (*id_cols, RESPONDER):
        raise DatasetError(f"responder must name one of the id columns {list(id_cols)}, "
                           f"not {responder!r}")  # fmt: skip
    key_columns = (*id_cols, RESPONDER) if wide is not None else id_cols
    scale = parse_scale(mapping.get("scale", [1, 5]))
    aggregate = str(mapping.get("rater_aggregate") or "median")
    if aggregate not in ("median", "mean"):
        raise DatasetError(f"rater_aggregate must be 'median' or 'mean', not {aggregate!r}")
    bad_cells = str(mapping.get("bad_cells", "fail"))
    if bad_cells not in BAD_CELLS:
        raise DatasetError(f"bad_cells must be one of {', '.join(BAD_CELLS)}, not {bad_cells!r}")
    raters = _sources(root, mapping.get("raters"), "raters", mapping, scale)
    judges = _sources(root, mapping.get("judges"), "judges", mapping, scale)
    if not raters and not judges:
        raise DatasetError("format raters needs raters (and/or judges): name their files")
    twice = sorted({s.name for s in raters} & {s.name for s in judges})
    if twice:
        raise DatasetError(f"{', '.join(twice)}: named both a rater and a judge")
    own = _own_replies(mapping.get("own_replies"), judges, responder)
    keys: dict[tuple[str, ...], str] | None = None
    dialogs: dict[str, tuple[str, list[Turn], dict[str, Any]]] = {}
    if mapping.get("dialogs") is not None:
        keys, dialogs = _dialog_records(root, mapping["dialogs"], id_cols, report, wide)
    table = RatedTable([], {}, {}, {}, {}, scale, {}, [], str(mapping.get("dimension") or ""),
                       aggregate, key_columns=key_columns, responder=responder)  # fmt: skip
    ids: dict[str, None] = dict.fromkeys(keys.values()) if keys is not None else {}
    found: dict[str, tuple[str, ...]] = {}
    for source in raters + judges:
        values, bad, sreport = _read_source(
            source, keys, key_columns if keys is not None else None, found
        )
        table.sources.append(sreport)
        if source.judge:
            table.judges[source.name] = values
            table.judge_bad[source.name] = bad
            table.judge_scales[source.name] = source.scale
        else:
            table.raters[source.name] = values
            for sid, cell in bad.items():
                if bad_cells == AS_PUBLISHED and cell.kind == OUTSIDE:
                    values[sid] = float(cell.detail.split(" ", 1)[0])
                    table.as_published.append(cell)
                    continue
                table.rater_bad.setdefault(sid, []).append(cell)
            if keys is None:
                ids.update(dict.fromkeys([*values, *bad]))
    if keys is None and not raters:
        for values in table.judges.values():
            ids.update(dict.fromkeys(values))
    table.ids = list(ids)
    table.keys = {sid: key for key, sid in keys.items()} if keys is not None else {
        sid: found[sid] for sid in table.ids
    }  # fmt: skip
    _leave_out_own(table, own)
    if keys is not None:
        if table.as_published:
            raise DatasetError(
                f"bad_cells: as_published keeps {len(table.as_published)} rater cell(s) "
                f"outside the scale (first: {table.as_published[0]}): that reproduces a "
                "published table (inspect-empathy compare --published, reproduce), but a "
                "load for inspect eval needs ratings on the scale: use bad_cells: missing, "
                "or list the placeholder values under missing_values"
            )
        table.records = list(_records(table, dialogs, bad_cells, report))
    return table


def _own_replies(
    value: Any, judges: Sequence[Source], responder: str | None
) -> dict[str, tuple[str, ...]]:
    """``own_replies: {judge: responder or [responders]}`` checked against the spec."""
    if value is None:
        return {}
    if responder is None:
        raise DatasetError("own_replies needs the responders: responder (an id column) or "
                           "responders (one column per responder)")  # fmt: skip
    if not isinstance(value, Mapping) or not value:
        raise DatasetError(f"own_replies must map each judge to its own responder(s), not "
                           f"{value!r}")  # fmt: skip
    names = {s.name for s in judges}
    own: dict[str, tuple[str, ...]] = {}
    for judge, mine in value.items():
        if str(judge) not in names:
            raise DatasetError(f"own_replies names {judge!r}, not one of the judges "
                               f"({', '.join(sorted(names)) or 'none'})")  # fmt: skip
        items = mine if isinstance(mine, list | tuple) else [mine]
        if not items or not all(isinstance(i, str | int) and str(i).strip() for i in items):
            raise DatasetError(f"own_replies.{judge}: name its responder(s), not {mine!r}")
        own[str(judge)] = tuple(id_text(str(i)) for i in items)
    return own


def _leave_out_own(table: RatedTable, own: Mapping[str, tuple[str, ...]]) -> None:
    """Leave each judge's ratings of its own responders' replies out, counted. A named
    responder that rated nothing in the corpus is an error (a misspelt name would leave
    nothing out)."""
    if not own:
        return
    assert table.responder is not None
    position = table.key_columns.index(table.responder)
    responder_of = {sid: key[position] for sid, key in table.keys.items()}
    present = set(responder_of.values())
    for judge, mine in own.items():
        unknown = [m for m in mine if m not in present]
        if unknown:
            raise DatasetError(
                f"own_replies.{judge}: no responder {', '.join(map(repr, unknown))} in the "
                f"corpus (responders: {_few(sorted(present), 12)})"
            )
        values, bad = table.judges[judge], table.judge_bad[judge]
        gone = [sid for sid in [*values, *bad] if responder_of.get(sid) in mine]
        for sid in gone:
            values.pop(sid, None)
            bad.pop(sid, None)
        table.own_replies[judge] = mine
        table.own_left_out[judge] = len(gone)


def _records(
    table: RatedTable,
    dialogs: Mapping[str, tuple[str, list[Turn], dict[str, Any]]],
    bad_cells: str,
    report: LoadReport,
) -> Iterator[Located]:
    from ...dialogs import DialogRecord

    raters = Raters(tuple(table.raters), table.aggregate) if table.raters else None
    for sid, (where, turns, metadata) in dialogs.items():
        bad = table.rater_bad.get(sid, [])
        if bad and bad_cells == "fail":
            for cell in bad:
                kind = OUT_OF_SCALE if cell.kind == OUTSIDE else "rating not numeric"
                report.problem(f"{cell.file}: row {cell.row}, column {cell.column}", kind,
                               f"dialog {sid}: rater file {cell.detail}")  # fmt: skip
            continue
        rating = None
        metadata = dict(metadata)
        if table.dimension:
            metadata["dimension"] = table.dimension
        if raters is not None:
            values = {name: table.raters[name].get(sid) for name in raters.names}
            rating, present, missing = raters.combine(values, table.scale)
            if present:
                metadata["human_ratings"] = present
            if missing:
                metadata["raters_missing"] = missing
                report.adjust("dialogs with some raters missing")
        yield where, DialogRecord(sid, list(turns), rating, table.scale, metadata)


def load_raters(path: Path, report: LoadReport, **mapping: Any) -> Iterator[Located]:
    """The ``raters`` format's loader: the dialogs with their raters' ratings joined by id."""
    if mapping.get("dialogs") is None:
        raise DatasetError(
            "this spec has ratings only (no dialogs: the texts are not public): compare its "
            "published judges with `inspect-empathy compare --published SPEC`"
        )
    table = read_rated(path, mapping, report)
    for note in table.notes():
        report.note(note)
    yield from table.records
