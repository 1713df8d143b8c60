"""The fast read of a well-formed CSV/TSV file: pandas' C parser, rows as `csv_rows` gives them.

`pandas_rows` reads a file in the default dialect (UTF-8, ``"`` quotes doubled, no
escape character, no ``na_values``) with ``pandas.read_csv`` and hands back the same
(line, cells) rows as the ``csv`` module reader of `tabular.csv_rows`, or None when the
file is anything but plain: a lone carriage return (not in CR LF), a NUL byte, a quote
that is not at a cell's edge, blank or whitespace-only lines, rows of empty cells, rows
shorter or longer than the header, bytes that do not decode. None means "read it with
the ``csv`` module", which reports every problem with its line; so the fast read changes
no result and no error, only the time.

The checks are whole-file counts: every newline and every delimiter in the file must be
a row end, a cell boundary or a character inside a cell, so that no line was skipped or
cell padded, and each row's first line follows from the newlines inside earlier rows.
"""

from __future__ import annotations

import codecs
import io
import re
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, repeat
from operator import add
from pathlib import Path
from typing import Any

DELIMITERS = (",", "\t")

# a quote with a character on both sides that is neither a delimiter, a newline nor a
# quote: not a cell's opening or closing quote nor a doubled one (the csv module refuses
# or reads such a quote differently; leave the file to it)
_ODD_QUOTE = {
    d: re.compile(b'"(?<=[^' + d.encode() + b'\\n"]")(?=[^' + d.encode() + b'\\n"])')
    for d in DELIMITERS
}


_LONE_CR = re.compile(b"\r(?!\n)")


def pandas_rows(
    path: Path, delimiter: str, quotechar: str, escapechar: str | None, plain: bool
) -> Iterator[tuple[int, Sequence[str]]] | None:
    """(line, cells) for each row, header first, or None to read the file the slow way.

    ``plain`` says the dialect has no ``na_values`` and the UTF-8 encoding.
    """
    if not plain or delimiter not in DELIMITERS or quotechar != '"' or escapechar is not None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    if not data or b"\x00" in data or _ODD_QUOTE[delimiter].search(data):
        return None
    if b"\r" in data and _LONE_CR.search(data):
        return None  # a lone carriage return: a line break to the csv module, not to pandas
    import pandas

    try:
        frame = pandas.read_csv(
            io.BytesIO(data),
            header=None,
            dtype=object,  # the cells' own strings (dtype=str costs a conversion pass)
            na_filter=False,
            sep=delimiter,
            quotechar='"',
            doublequote=True,
            skip_blank_lines=True,
            engine="c",
            encoding="utf-8",
        )
    except Exception:  # noqa: BLE001 - any parse or decode error: the csv module reports it
        return None
    columns: list[list[Any]] = [frame[name].tolist() for name in frame.columns]
    rows = len(frame)
    del frame
    if not rows or _empty_rows(columns):
        return None  # a row of empty cells: the csv module skips it, pandas keeps it
    newlines = [list(map(str.count, column, repeat("\n"))) for column in columns]
    multiline = [counts for counts in newlines if any(counts)]
    inside = sum(sum(counts) for counts in multiline)
    ends = rows - (0 if data.endswith(b"\n") else 1)
    cells_sep = sum(sum(map(str.count, column, repeat(delimiter))) for column in columns)
    if data.count(b"\n") != ends + inside or data.count(delimiter.encode()) != (
        rows * (len(columns) - 1) + cells_sep
    ):
        return None  # skipped lines or padded rows
    del data
    return zip(_starts(rows, multiline), zip(*columns, strict=True), strict=True)


def _empty_rows(columns: list[list[str]]) -> bool:
    """Whether some row has only empty cells."""
    empty = [i for i, cell in enumerate(columns[0]) if not cell]
    for column in columns[1:]:
        if not empty:
            return False
        empty = [i for i in empty if not column[i]]
    return bool(empty)


def _starts(rows: int, multiline: list[list[int]]) -> Iterable[int]:
    """Each row's first line: one line per row plus the newlines inside earlier rows."""
    if not multiline:
        return range(1, rows + 1)
    inside = multiline[0] if len(multiline) == 1 else list(map(sum, zip(*multiline, strict=True)))
    return map(add, range(1, rows + 1), accumulate(inside, initial=0))
