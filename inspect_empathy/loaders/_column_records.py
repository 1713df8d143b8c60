"""Dialog records from a plain CSV read column-wise: whole columns checked at once.

A one-dialog-per-row file with a ``transcript`` column that pandas read (`PandasTable`)
is checked column by column: every transcript against one regular expression (on
pandas' Arrow strings: RE2, no Python string per line), the ids stripped and compared
as a set, the ratings converted in one pass. A row passes when its transcript is only
``LABEL: text`` lines of known labels, the sides taking turns and the bot speaking
last, its id is new and not blank, and its rating is blank or a number on the scale.
Its record is a `LazyRecord`, which splits the transcript into turns when they are
first read (each line is already known to open a turn). Every other row is built by
the per-row `RowMapper` builder, which gives its record or its problem as before. So
the rows that pass give the records the per-row path gives, and the rows that do not
go through it: same records, same problems, same lines.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import repeat
from typing import Any

from ..dialogs import DialogRecord, Turn
from ._pandas_csv import PandasTable
from ._problems import LoadReport, Located, RecordBlock, RecordProblem

PYTHON_SPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""The characters `str.strip` removes (`str.isspace`): a turn must hold another one."""

_LABEL = re.compile(r"[a-z][a-z0-9 _.'&/-]{0,39}")

class _Rows:
    """What the lazy records of a file share: the cells they are made from."""

    __slots__ = ("table", "transcript", "ids", "ratings", "scale", "roles", "meta_cols")

    def __init__(self, table: PandasTable, mapper: Any, ids: list[str], ratings: list[Any]):
        self.table = table
        self.transcript: int = mapper.transcript_col
        self.ids = ids
        self.ratings = ratings
        self.scale = mapper.scale
        self.roles = mapper.roles
        self.meta_cols: list[tuple[str, int]] = mapper.meta_cols

    def fill(self, record: LazyRecord, index: int) -> None:
        """Set the fields of the record of row ``index``."""
        table = self.table
        arrow = table.arrow(self.transcript)
        text = table.column(self.transcript)[index] if arrow is None else arrow[index].as_py()
        _SLOTS["id"].__set__(record, self.ids[index])
        _SLOTS["turns"].__set__(record, known_turns(text, self.roles))
        _SLOTS["rating"].__set__(record, self.ratings[index])
        _SLOTS["scale"].__set__(record, self.scale)
        metadata = {}
        for name, column in self.meta_cols:
            arrow = table.arrow(column)
            value = table.column(column)[index] if arrow is None else arrow[index].as_py()
            if value:
                metadata[name] = value
        _SLOTS["metadata"].__set__(record, metadata)


_SLOTS = {name: getattr(DialogRecord, name) for name in DialogRecord.__slots__}
"""The slots of a record's fields (member descriptors), set without the properties."""


def _field(name: str) -> property:
    """A field of a `LazyRecord`: its row's cells are read on first use of any field."""
    slot = _SLOTS[name]

    def get(self: LazyRecord) -> Any:
        try:
            return slot.__get__(self)
        except AttributeError:
            self._fill()
            return slot.__get__(self)

    def set(self: LazyRecord, value: Any) -> None:
        self._fill()
        slot.__set__(self, value)

    return property(get, set, doc=f"The record's {name} (read from its row on first use).")


class LazyRecord(DialogRecord):
    """The record of a CSV row that passed the column checks: its fields are read from
    the row when one is first used (the transcript split into turns, one per line),
    then kept. Equal to the `DialogRecord` with the same fields, and shown as one.
    """

    __slots__ = ("_rows", "_index")

    id = _field("id")  # type: ignore[assignment]
    turns = _field("turns")  # type: ignore[assignment]
    rating = _field("rating")  # type: ignore[assignment]
    scale = _field("scale")  # type: ignore[assignment]
    metadata = _field("metadata")  # type: ignore[assignment]

    def _fill(self) -> None:
        try:
            rows = self._rows
        except AttributeError:
            return  # made by __init__ (dataclasses.replace, a copy): fields set directly
        if rows is not None:
            self._rows = None
            rows.fill(self, self._index)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DialogRecord):
            return NotImplemented
        return (self.id, self.turns, self.rating, self.scale, self.metadata) == (
            other.id, other.turns, other.rating, other.scale, other.metadata)  # fmt: skip

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return DialogRecord.__repr__(self).replace(type(self).__qualname__, "DialogRecord", 1)


def known_turns(text: str, roles: Mapping[str, str]) -> list[Turn]:
    """The turns of a transcript that `transcript_pattern` matched: one per line."""
    return [
        Turn(roles[head.lower()], rest.strip())  # type: ignore[arg-type]
        for head, _, rest in map(str.partition, text.split("\n"), repeat(":"))
    ]


def transcript_pattern(roles: Mapping[str, str]) -> str | None:
    """An RE2 (and Python) pattern matching the transcripts the per-row parser reads as
    one turn per line, or None if a side has no label it can spell.

    Lines are ``LABEL:text``: a label of ``roles`` in any ASCII case, at the line's start
    and right before its first colon; text with a character that is not whitespace, and
    no carriage return. The sides take turns and the bot speaks last.
    """
    sides: dict[str, list[str]] = {"user": [], "bot": []}
    for label, role in roles.items():
        if role in sides and _LABEL.fullmatch(label) and label == label.strip():
            sides[role].append("".join(_char(c) for c in label))
    if not sides["user"] or not sides["bot"]:
        return None
    space = "".join(f"\\x{{{ord(c):x}}}" for c in PYTHON_SPACE)
    text = f"[^\\n\\r]*[^{space}][^\\n\\r]*"
    user = f"(?:{'|'.join(sides['user'])}):{text}"
    bot = f"(?:{'|'.join(sides['bot'])}):{text}"
    return f"^(?:{user}\\n)?(?:{bot}\\n{user}\\n)*{bot}$"


def _char(c: str) -> str:
    return f"[{c}{c.upper()}]" if c.isalpha() else f"\\x{{{ord(c):x}}}"


def matching_rows(table: PandasTable, column: int, pattern: str) -> Any:
    """Whether each cell of a column matches the pattern (RE2 on the Arrow strings), as
    a numpy array of booleans."""
    import pyarrow
    import pyarrow.compute

    arrow = table.arrow(column)
    if arrow is None:
        arrow = pyarrow.array(table.column(column), type=pyarrow.large_string())
    matched = pyarrow.compute.match_substring_regex(arrow, pattern)
    return matched.to_numpy(zero_copy_only=False)


def _rating(raw: str) -> float | None:
    try:
        return float(raw)
    except ValueError:
        return None if not raw.strip() else float("nan")


def column_ratings(cells: list[str], scale: tuple[float, float]) -> tuple[list[Any], Any]:
    """Each cell as the per-row builder reads it (a float, None for a blank cell), and
    whether that is fine (numpy booleans; not: no number, or off the scale: the row
    builder says which)."""
    import numpy

    low, high = scale
    try:
        values: list[Any] = list(map(float, cells))
    except ValueError:
        values = list(map(_rating, cells))
        numbers = numpy.array([low if v is None else v for v in values], dtype=float)
    else:
        numbers = numpy.array(values, dtype=float)
    return values, (numbers >= low) & (numbers <= high)  # NaN: False


def column_records(
    table: PandasTable,
    mapper: Any,
    origin: str,
    report: LoadReport,
) -> Iterator[Located | RecordBlock] | None:
    """The records of a table's rows in order: runs of rows that pass the column checks
    as `RecordBlock` s, the others one by one from the per-row builder (problems into the
    report); None when the mapping is not the transcript-column kind read here.

    ``mapper`` is the file's `tabular.RowMapper`.
    """
    import numpy

    if (mapper.transcript_col is None or mapper.raters is not None
            or mapper.text.unescape is not None):  # fmt: skip
        return None
    pattern = transcript_pattern(mapper.roles)
    if pattern is None:
        return None
    rows = len(table)
    try:
        passing = matching_rows(table, mapper.transcript_col, pattern)
    except Exception:  # noqa: BLE001 - no pyarrow, or a pattern RE2 refuses: row by row
        return None
    if mapper.id_col is None:
        ids = [f"{mapper.stem}-{number}" for number in range(1, rows + 1)]
    else:
        ids = list(map(str.strip, table.column(mapper.id_col)))
        if "" in set(ids) or len(set(ids)) != rows:
            seen: set[str] = set()
            fresh = [bool(i) and not (i in seen or seen.add(i)) for i in ids]  # type: ignore[func-returns-value]
            passing &= numpy.array(fresh, dtype=bool)
    if mapper.rating_col is None:
        ratings: list[Any] = [None] * rows
    else:
        ratings, fine = column_ratings(table.column(mapper.rating_col), mapper.scale)
        passing &= fine
    failing = numpy.flatnonzero(~passing).tolist()
    return _records(table, mapper, origin, report, failing, _Rows(table, mapper, ids, ratings))


def _records(
    table: PandasTable,
    mapper: Any,
    origin: str,
    report: LoadReport,
    failing: list[int],
    rows: _Rows,
) -> Iterator[Located | RecordBlock]:
    build: Callable[[Sequence[str], int], DialogRecord] = mapper.builder()
    unrated = 0
    start = 0
    for stop in [*failing, len(table)]:
        if stop > start:
            yield _block(rows, origin, start, stop)
            unrated += rows.ratings[start:stop].count(None)
        if stop < len(table):
            where = f"{origin}:{table.lines()[stop]}"
            try:
                record = build(table.row(stop), stop + 1)
            except RecordProblem as ex:
                report.problem(where, ex.kind, ex.detail)
            else:
                if record.rating is None:
                    unrated += 1
                mapper.text.count(report, record)
                yield where, record
        start = stop + 1
    mapper.text.summarise(report)
    if unrated and mapper.rating_col is not None:
        report.note(f"{unrated} row(s) with an empty rating cell loaded unrated")


def _block(rows: _Rows, origin: str, start: int, stop: int) -> RecordBlock:
    """The records of rows start:stop, which all passed (each read on first use)."""
    records = list(map(object.__new__, repeat(LazyRecord, stop - start)))
    deque(map(_ROWS.__set__, records, repeat(rows)), 0)
    deque(map(_INDEX.__set__, records, range(start, stop)), 0)

    def where(index: int) -> str:
        return f"{origin}:{rows.table.lines()[start + index]}"

    return RecordBlock(records, rows.ids[start:stop], where)  # type: ignore[arg-type]


_ROWS, _INDEX = LazyRecord._rows, LazyRecord._index  # type: ignore[attr-defined]
