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

from ...dialogs import DialogRecord, Turn, id_text
from ._pandas_csv import PandasTable
from ._problems import LoadReport, Located, RecordBlock

RowMapper = Any
"""The file's `tabular.RowMapper` (not imported: tabular imports this module)."""

PYTHON_SPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""The characters `str.strip` removes (`str.isspace`): a turn must hold another one."""

_SPACE = "".join(f"\\x{{{ord(c):x}}}" for c in PYTHON_SPACE)
"""`PYTHON_SPACE` for a character class of an RE2 pattern."""

_LABEL = re.compile(r"[a-z][a-z0-9 _.'&/-]{0,39}")


class _Rows:
    """What the lazy records of a file share: the cells they are made from (let go once
    every record was read)."""

    __slots__ = ("table", "mapper", "ids", "numbers", "blank", "pending")

    def __init__(self, table: PandasTable, mapper: RowMapper, ids: list[str] | None,
                 numbers: Any, blank: Any) -> None:  # fmt: skip
        self.table: PandasTable | None = table
        self.mapper = mapper
        self.ids = ids
        self.numbers = numbers
        self.blank = blank
        self.pending = 0

    def id_list(self, table: PandasTable, start: int, stop: int) -> list[str]:
        """The ids of rows start:stop (a passing row's id cell needs no strip)."""
        if self.ids is None and self.mapper.id_col is not None:
            self.ids = table.column(self.mapper.id_col)
        if self.ids is not None:
            return self.ids[start:stop]
        return [f"{self.mapper.stem}-{number}" for number in range(start + 1, stop + 1)]

    def rating(self, index: int) -> float | None:
        if self.numbers is None or self.blank[index]:
            return None
        return float(self.numbers[index])

    def unrated(self, start: int, stop: int) -> int:
        return stop - start if self.blank is None else int(self.blank[start:stop].sum())

    def fill(self, record: LazyRecord, index: int) -> None:
        """Set the fields of the record of row ``index``."""
        table, mapper = self.table, self.mapper
        assert table is not None  # let go only when no record is left to read
        if self.ids is not None:
            record_id = self.ids[index]
        elif mapper.id_col is None:
            record_id = f"{mapper.stem}-{index + 1}"
        else:
            record_id = table.cell(mapper.id_col, index)
        _SLOTS["id"].__set__(record, record_id)
        text = table.cell(mapper.transcript_col, index)
        _SLOTS["turns"].__set__(record, known_turns(text, mapper.roles))
        _SLOTS["rating"].__set__(record, self.rating(index))
        _SLOTS["scale"].__set__(record, mapper.scale)
        metadata = {}
        for name, column in mapper.meta_cols:
            value = table.cell(column, index)
            if value:
                metadata[name] = value
        _SLOTS["metadata"].__set__(record, metadata)
        self.pending -= 1
        if not self.pending:
            self.table = self.ids = None  # every record read: the cells are not needed


_SLOTS = {name: getattr(DialogRecord, name) for name in DialogRecord.__slots__}
"""The slots of a record's fields (member descriptors), set without the properties."""

_TURNS, _SCALE = _SLOTS["turns"], _SLOTS["scale"]


def _field(name: str) -> property:
    """A field of a `LazyRecord`: its row's cells are read on first use of any field."""
    slot = _SLOTS[name]

    def get(self: LazyRecord) -> Any:
        self._fill()
        return slot.__get__(self)

    def set(self: LazyRecord, value: Any) -> None:
        self._fill()
        slot.__set__(self, value)

    return property(get, set, doc=f"The record's {name} (read from its row on first use).")


def lazy_row(record: DialogRecord) -> list[str] | None:
    """The cells of a `LazyRecord`'s row while it is not yet read (None otherwise), read
    without building the record."""
    if type(record) is not LazyRecord:
        return None
    index = _TURNS.__get__(record)
    if type(index) is not int:
        return None
    table = _SCALE.__get__(record).table
    return None if table is None else table.row(index)


class LazyRecord(DialogRecord):
    """The record of a CSV row that passed the column checks, read from the row when one
    of its fields is first used (the transcript split into turns, one per line).

    Until then its ``turns`` slot holds the row's index and its ``scale`` slot what the
    rows share; reading any field sets them all and makes the object a plain
    `DialogRecord` (same slots: no field goes through a property again). Equal to the
    `DialogRecord` with the same fields, shown, pickled and copied as one.
    """

    __slots__ = ()

    id = _field("id")  # type: ignore[assignment]
    turns = _field("turns")  # type: ignore[assignment]
    rating = _field("rating")  # type: ignore[assignment]
    scale = _field("scale")  # type: ignore[assignment]
    metadata = _field("metadata")  # type: ignore[assignment]

    def _fill(self) -> None:
        try:
            index = _TURNS.__get__(self)
        except AttributeError:
            return  # being made by __init__: the fields are set one by one
        if type(index) is int:
            _SCALE.__get__(self).fill(self, index)
            self.__class__ = DialogRecord

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DialogRecord):
            return NotImplemented
        return (self.id, self.turns, self.rating, self.scale, self.metadata) == (
            other.id, other.turns, other.rating, other.scale, other.metadata)  # fmt: skip

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        self._fill()
        return DialogRecord.__repr__(self).replace("LazyRecord(", "DialogRecord(", 1)

    def __reduce__(self) -> tuple[Any, ...]:
        return DialogRecord, (self.id, self.turns, self.rating, self.scale, self.metadata)


def known_turns(text: str, roles: Mapping[str, str]) -> list[Turn]:
    """The turns of a transcript that `transcript_pattern` matched: one per line."""
    return [
        Turn(roles[head.lower()], rest.strip())  # type: ignore[arg-type]
        for head, _, rest in map(str.partition, text.split("\n"), repeat(":"))
    ]


def transcript_pattern(roles: Mapping[str, str]) -> str | None:
    """An RE2 pattern matching transcripts the per-row parser reads as one turn per line
    (only such; others it may read so too), or None if a side has no label it can spell.

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
    text = f"[^\\n\\r]*[^{_SPACE}][^\\n\\r]*"
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


DECIMAL = r"^[0-9]{1,15}(?:\.[0-9]{1,15})?$"
"""Rating cells read by Arrow's cast: plain decimals, which it and `float` round alike."""


def column_ratings(table: PandasTable, column: int, scale: tuple[float, float]) -> Any:
    """(numbers, blank, fine) for a rating column: each cell as a float as the per-row
    builder reads it, whether it is blank (unrated), and whether it is fine (blank, or a
    number on the scale; not: the row builder says why). numpy arrays."""
    import numpy

    low, high = scale
    arrow = table.arrow(column)
    if arrow is not None:
        import pyarrow
        import pyarrow.compute as pc

        plain = pc.match_substring_regex(arrow, DECIMAL)
        numbers = pc.cast(pc.if_else(plain, arrow, "0"), pyarrow.float64()).to_numpy()
        plain = plain.to_numpy(zero_copy_only=False)
        blank = pc.equal(arrow, "").to_numpy(zero_copy_only=False)
        fine = blank | (plain & (numbers >= low) & (numbers <= high))
        return numbers, blank, fine
    try:
        values: list[Any] = list(map(float, table.column(column)))
    except ValueError:
        values = list(map(_rating, table.column(column)))
    blank = numpy.array([value is None for value in values], dtype=bool)
    numbers = numpy.array([low if v is None else v for v in values], dtype=float)
    return numbers, blank, blank | ((numbers >= low) & (numbers <= high))  # NaN: False


TRIMMED = f"(?s)^[^{_SPACE}](?:.*[^{_SPACE}])?$"
"""Id cells that `str.strip` leaves as they are, and not blank."""


def column_ids(table: PandasTable, column: int) -> tuple[list[str] | None, Any]:
    """(ids or None, fine) for an id column: the ids as Python strings by the one id rule
    (`dialogs.dialog_id`) when they had to be read (else None: each passing row's cell is
    its id, stripped and in NFC already), and whether each is fine (not
    blank, not seen in an earlier row; not: the row builder and duplicate check say so)."""
    import numpy

    arrow = table.arrow(column)
    if arrow is not None:
        import pyarrow.compute as pc

        trimmed = pc.match_substring_regex(arrow, TRIMMED).to_numpy(zero_copy_only=False)
        if (trimmed.all() and pc.count_distinct(arrow).as_py() == len(arrow)
                and (pc.all(pc.string_is_ascii(arrow)).as_py()
                     or pc.all(pc.equal(pc.utf8_normalize(arrow, form="NFC"), arrow)).as_py())):
            return None, trimmed  # ids as the one id rule writes them (NFC, stripped)
    ids = [id_text(cell) for cell in table.column(column)]
    unique = set(ids)
    if "" not in unique and len(unique) == len(ids):
        return ids, numpy.ones(len(ids), dtype=bool)
    seen: set[str] = set()
    fresh = [bool(i) and not (i in seen or seen.add(i)) for i in ids]  # type: ignore[func-returns-value]
    return ids, numpy.array(fresh, dtype=bool)


def column_records(
    table: PandasTable,
    mapper: RowMapper,
    origin: str,
    report: LoadReport,
) -> Iterator[Located | RecordBlock] | None:
    """The records of a table's rows in order: runs of rows that pass the column checks
    as `RecordBlock` s, the others one by one from the per-row builder (problems into the
    report); None when the mapping is not the transcript-column kind read here.

    """
    import numpy

    if (mapper.transcript_col is None or mapper.raters is not None
            or mapper.text.unescape is not None):  # fmt: skip
        return None
    pattern = transcript_pattern(mapper.roles)
    if pattern is None:
        return None
    try:
        passing = matching_rows(table, mapper.transcript_col, pattern)
        ids, fine = (None, True) if mapper.id_col is None else column_ids(table, mapper.id_col)
        passing &= fine
        numbers = blank = None
        if mapper.rating_col is not None:
            numbers, blank, fine = column_ratings(table, mapper.rating_col, mapper.scale)
            passing &= fine
    except ImportError:
        return None  # no pyarrow: row by row
    failing = numpy.flatnonzero(~passing).tolist()
    rows = _Rows(table, mapper, ids, numbers, blank)
    return _records(table, mapper, origin, report, failing, rows)


def _records(
    table: PandasTable,
    mapper: RowMapper,
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
            unrated += rows.unrated(start, stop)
        if stop < len(table):
            where = f"{origin}:{table.lines()[stop]}"
            record = mapper.row_record(build, table.row(stop), stop + 1, where, report)
            if record is not None:
                unrated += record.rating is None
                yield where, record
        start = stop + 1
    mapper.finish(report, unrated)


def _block(rows: _Rows, origin: str, start: int, stop: int) -> RecordBlock:
    """The records of rows start:stop, which all passed (each read on first use)."""
    records = list(map(object.__new__, repeat(LazyRecord, stop - start)))
    deque(map(_TURNS.__set__, records, range(start, stop)), 0)
    deque(map(_SCALE.__set__, records, repeat(rows)), 0)
    rows.pending += stop - start
    table = rows.table
    assert table is not None

    def where(index: int) -> str:
        return f"{origin}:{table.lines()[start + index]}"

    def ids() -> list[str]:
        return rows.id_list(table, start, stop)

    return RecordBlock(records, ids, where)  # type: ignore[arg-type]

