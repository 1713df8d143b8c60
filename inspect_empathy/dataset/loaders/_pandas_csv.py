"""The fast read of a well-formed CSV/TSV file: pandas' C parser, the cells `csv_rows` gives.

`pandas_table` reads a file in the default dialect (UTF-8, ``"`` quotes doubled, no
escape character, no ``na_values``) with ``pandas.read_csv`` and hands back its columns
(`PandasTable`: the same cells as the ``csv`` module reader of `tabular.csv_rows`, and
each row's first line), or None when the file is anything but plain: a lone carriage
return (not in CR LF), a NUL byte, a quote that is not at a cell's edge, blank or
whitespace-only lines, rows of empty cells, rows shorter or longer than the header, bytes
that do not decode, a column pandas does not read as text. None means "read it with the
``csv`` module", which reports every problem with its line; so the fast read changes no
result and no error, only the time. `PandasTable.rows` gives it as (line, cells) rows.

pandas reads every line (``skip_blank_lines=False``: a blank line is a row of empty
cells, which the ``csv`` module would skip, so the file is refused), so each row's first
line follows from the newlines inside earlier rows. A row shorter than the header comes
padded with empty cells; if any row ends in an empty cell, every delimiter in the file
must be a cell boundary or a character inside a cell (a whole-file count, on the bytes
of pandas' Arrow string columns when it keeps them, pandas 3, else on Python strings).
"""

from __future__ import annotations

import codecs
import io
import mmap
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import suppress
from itertools import accumulate, repeat
from operator import add
from pathlib import Path
from typing import Any

DELIMITERS = (",", "\t")

# a quote with a character on both sides that is neither a delimiter, a line break nor a
# quote: not a cell's opening or closing quote nor a doubled one (the csv module refuses
# or reads such a quote differently; leave the file to it). A carriage return counts as a
# line break: the one of CR LF line ends (a lone one refuses the file anyway)
_ODD_QUOTE = {
    d: re.compile(b'"(?<=[^' + d.encode() + b'\\r\\n"]")(?=[^' + d.encode() + b'\\r\\n"])')
    for d in DELIMITERS
}


_LONE_CR = re.compile(b"\r(?!\n)")


class PandasTable:
    """A plain CSV file's header and body columns, as pandas read them (checked).

    A column's cells of every row after the header come as Python strings from
    `column` (converted on first use when pandas kept them as Arrow strings), or as
    the pyarrow array from `arrow` (None for Python strings). Each row's first line in
    the file comes from `lines`.
    """

    def __init__(self, header: list[str], body: list[Any], rows: int) -> None:
        self.header = header
        self._body = body
        self._rows = rows
        self._lines: list[int] | None = None

    def __len__(self) -> int:
        return self._rows

    @property
    def width(self) -> int:
        return len(self.header)

    def arrow(self, index: int) -> Any:
        """Column ``index`` as a pyarrow string array, or None if it is held as a list."""
        body = self._body[index]
        return None if isinstance(body, list) else body

    def column(self, index: int) -> list[str]:
        """Column ``index``'s cells (Python strings)."""
        body = self._body[index]
        if not isinstance(body, list):
            body = self._body[index] = body.to_pylist()
        return body  # type: ignore[no-any-return]

    def cell(self, column: int, index: int) -> str:
        """Column ``column``'s cell in row ``index``."""
        return _cell(self._body[column], index)

    def row(self, index: int) -> list[str]:
        """Row ``index``'s cells (counted from the first row after the header)."""
        return [_cell(cells, index) for cells in self._body]

    def lines(self) -> list[int]:
        """Each body row's first line (the header's lines counted), computed on first use."""
        if self._lines is None:
            header_lines = 1 + sum(cell.count("\n") for cell in self.header)
            counts = (_newlines(self.column(j)) for j in range(self.width))
            multiline = [c for c in counts if any(c)]
            self._lines = [line + header_lines + 1 for line in _starts(len(self), multiline)]
        return self._lines

    def rows(self) -> Iterator[tuple[int, Sequence[str]]]:
        """(line, cells) for each row, header first."""
        yield 1, self.header
        columns = [self.column(j) for j in range(self.width)]
        yield from zip(self.lines(), zip(*columns, strict=True), strict=True)


def pandas_table(
    path: Path,
    delimiter: str,
    quotechar: str,
    escapechar: str | None,
    plain: bool,
    arrow: bool = True,
) -> PandasTable | None:
    """The checked columns of a plain file, or None to read the file the slow way.

    ``plain`` says the dialect has no ``na_values`` and the UTF-8 encoding. The checks
    read the file mapped into memory (no copy); pandas reads it from the open file.
    ``arrow``: keep text columns as pandas 3 keeps them, in Arrow arrays (half the read
    time), for a reader of whole columns; else as Python strings, for a reader of every
    cell (converting Arrow columns would hold each cell twice for a moment).
    """
    if not plain or delimiter not in DELIMITERS or quotechar != '"' or escapechar is not None:
        return None
    try:
        file = path.open("rb")
    except OSError:
        return None
    with file:
        try:
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # ValueError: an empty file
            return None
        try:
            if mapped[: len(codecs.BOM_UTF8)] == codecs.BOM_UTF8:
                data = mapped[len(codecs.BOM_UTF8) :]
                return _checked_table(io.BytesIO(data), data, delimiter, arrow)
            return _checked_table(file, mapped, delimiter, arrow)
        finally:
            with suppress(BufferError):  # a view still held: the mapping closes when freed
                mapped.close()


def _checked_table(source: Any, data: Any, delimiter: str, arrow: bool) -> PandasTable | None:
    """The table pandas reads from ``source``, whose bytes are ``data``, or None."""
    if not len(data) or data.find(b"\x00") >= 0 or _ODD_QUOTE[delimiter].search(data):
        return None
    if data.find(b"\r") >= 0 and _LONE_CR.search(data):
        return None  # a lone carriage return: a line break to the csv module, not to pandas
    import pandas

    try:
        # with types inferred, pandas 3 keeps text in Arrow arrays; a column read as
        # numbers or booleans is refused below
        frame = pandas.read_csv(
            source,
            header=None,
            dtype=None if arrow else object,
            na_filter=False,
            keep_default_na=False,
            low_memory=False,  # one type per column, not one per chunk
            sep=delimiter,
            quotechar='"',
            doublequote=True,
            skip_blank_lines=False,  # a blank line: a row of empty cells, refused
            engine="c",
            encoding="utf-8",
            compression=None,
        )
    except Exception:  # noqa: BLE001 - any parse or decode error: the csv module reports it
        return None
    rows = len(frame)
    if not rows or not all(_is_text(dtype) for dtype in frame.dtypes):
        return None
    header = [frame[name].iloc[0] for name in frame.columns]
    body = [_body(frame[name].iloc[1:]) for name in frame.columns]
    del frame
    if not any(header) or _empty_rows(body):
        return None  # a row of empty cells: the csv module skips it, pandas keeps it
    # a row shorter than the header comes padded with empty cells: only a row whose last
    # cell is empty can be one; then every delimiter must be a cell boundary or in a cell
    if _has_empty(body[-1]) and _count(data, delimiter) != (
        rows * (len(body) - 1)
        + sum(_count_in(cells, delimiter) for cells in body)
        + sum(h.count(delimiter) for h in header)
    ):
        return None  # padded rows
    return PandasTable(header, body, rows - 1)


def _is_text(dtype: Any) -> bool:
    """Whether pandas kept a column as text (Python or Arrow strings), not numbers."""
    import pandas

    return isinstance(dtype, pandas.StringDtype) or str(dtype) == "object"


def _body(series: Any) -> Any:
    """A column's cells: the pyarrow string array pandas keeps (no copy), or a list."""
    import pandas

    dtype = series.dtype
    if isinstance(dtype, pandas.StringDtype) and dtype.storage == "pyarrow":
        import pyarrow

        array = pyarrow.array(series.array)
        if isinstance(array, pyarrow.ChunkedArray):
            array = array.chunk(0) if array.num_chunks == 1 else array.combine_chunks()
        if not array.null_count and (
            pyarrow.types.is_string(array.type) or pyarrow.types.is_large_string(array.type)
        ):
            return array
    return series.tolist()


def _count_in(cells: Any, char: str) -> int:
    """How often an ASCII character occurs in a column's cells."""
    if isinstance(cells, list):
        return sum(map(str.count, cells, repeat(char)))
    return _count(_utf8_bytes(cells), char)


def _count(data: Any, char: str) -> int:
    """How often an ASCII character occurs in bytes (numpy: twice as fast as bytes.count)."""
    import numpy

    if not isinstance(data, numpy.ndarray):
        data = numpy.frombuffer(data, dtype=numpy.uint8)
    return int(numpy.count_nonzero(data == ord(char)))


def _has_empty(cells: Any) -> bool:
    """Whether some cell of a column is empty."""
    if isinstance(cells, list):
        return "" in cells
    import pyarrow.compute

    return bool(pyarrow.compute.any(pyarrow.compute.equal(cells, "")).as_py())


def _utf8_bytes(array: Any) -> Any:
    """The UTF-8 bytes of all cells of an Arrow string array, one after another (a numpy
    view of the array's buffer, not a copy)."""
    import numpy
    import pyarrow

    _, offsets, values = array.buffers()
    if values is None:
        return numpy.zeros(0, dtype=numpy.uint8)
    width = numpy.int64 if pyarrow.types.is_large_string(array.type) else numpy.int32
    bounds = numpy.frombuffer(offsets, dtype=width)[array.offset : array.offset + len(array) + 1]
    return numpy.frombuffer(values, dtype=numpy.uint8)[int(bounds[0]) : int(bounds[-1])]


def _newlines(column: list[str]) -> list[int]:
    return list(map(str.count, column, repeat("\n")))


def _empty_rows(body: list[Any]) -> bool:
    """Whether some row has only empty cells."""
    first = body[0]
    if isinstance(first, list):
        empty = [i for i, cell in enumerate(first) if not cell]
    else:
        import pyarrow.compute

        empty = pyarrow.compute.indices_nonzero(pyarrow.compute.equal(first, "")).to_pylist()
    for cells in body[1:]:
        if not empty:
            return False
        empty = [i for i in empty if not _cell(cells, i)]
    return bool(empty)


def _cell(cells: Any, index: int) -> str:
    return cells[index] if isinstance(cells, list) else cells[index].as_py()  # type: ignore[no-any-return]


def _starts(rows: int, multiline: list[list[int]]) -> Iterable[int]:
    """Each row's first line counted from 0: one line per row plus the newlines inside
    earlier rows."""
    if not multiline:
        return range(rows)
    inside = multiline[0] if len(multiline) == 1 else list(map(sum, zip(*multiline, strict=True)))
    return map(add, range(rows), accumulate(inside, initial=0))
