"""Issue 48.4, 48.6, 48.11, 48.12: rater tables read by the one table reader
(`_util.read.table_file`): the first visible sheet, named; a row whose cell count is not the
header's refused, never read by position; a workbook that inflates past the bound refused
unread; one delimiter rule; a cell's CR LF read as LF."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest

from inspect_empathy._util.read import ReadError, csv_table, xlsx_table
from inspect_empathy.dataset.loaders.raters import read_rated
from inspect_empathy.errors import DatasetError

openpyxl = pytest.importorskip("openpyxl")


def mapping(file: str, **entry: Any) -> dict[str, Any]:
    return {"id": "id", "scale": [1, 5], "dimension": "empathy",
            "raters": {"ann": {"file": file, "column": "rating", **entry}}}  # fmt: skip


def test_a_hidden_first_sheet_is_never_read_silently(tmp_path: Path) -> None:
    """A workbook whose first sheet is hidden (all 1.0) was read from it, the notes naming
    no sheet: the first visible sheet is read, and the notes name it and the hidden one."""
    book = openpyxl.Workbook()
    hidden = book.active
    hidden.title = "scratch"
    hidden.append(["id", "rating"])
    hidden.append(["d1", 1])
    hidden.sheet_state = "hidden"
    shown = book.create_sheet("final")
    shown.append(["id", "rating"])
    shown.append(["d1", 4])
    book.save(tmp_path / "rated.xlsx")
    table = read_rated(tmp_path, mapping("rated.xlsx"))
    assert table.raters["ann"] == {"d1": 4.0}
    [line] = [s.line() for s in table.sources]
    assert "sheet 'final' read (hidden sheet(s) 'scratch' not read)" in line
    # named in the spec, a hidden sheet is read, and said so
    named = read_rated(tmp_path, mapping("rated.xlsx", sheet="scratch"))
    assert named.raters["ann"] == {"d1": 1.0}


def test_a_row_with_more_cells_than_the_header_is_named_not_read_by_position(
    tmp_path: Path,
) -> None:
    """A backslash-escaped quote shifts a row's cells: its rating 1 was read as the 2 of
    the next column. The row is named with its line, and nothing is read by position."""
    (tmp_path / "r.csv").write_text(
        'id,text,rating\nd1,"fine",4\nd2,"she said \\"no, thanks\\" and left",1\n', "utf-8"
    )
    with pytest.raises(DatasetError, match=r"r.csv:3: bad CSV: .*a quote escaped with a backslash"):
        read_rated(tmp_path, mapping("r.csv"))
    (tmp_path / "r.csv").write_text("id,text,rating\nd1,fine,4\nd2,no, thanks,1\n", "utf-8")
    with pytest.raises(DatasetError, match=r"r.csv:3: row has 4 cells, the header 3: not read "
                                           r"by position"):  # fmt: skip
        read_rated(tmp_path, mapping("r.csv"))


def test_one_delimiter_rule_respects_quotes(tmp_path: Path) -> None:
    """A ``;``-separated file with a comma in a quoted header cell said ``no column 'id'``
    while listing it; a cell saved by Excel keeps no CR LF."""
    path = tmp_path / "r.csv"
    path.write_bytes(b'id;"rating";"note, free"\r\nd1;4;"two\r\nlines"\r\n')
    table = csv_table(path)
    assert table.header == ["id", "rating", "note, free"]
    assert table.rows == [["d1", "4", "two\nlines"]]
    assert read_rated(tmp_path, mapping("r.csv")).raters["ann"] == {"d1": 4.0}


def test_a_workbook_that_inflates_past_the_bound_is_refused_unread(tmp_path: Path) -> None:
    """A small .xlsx that inflates to gigabytes was read without a bound."""
    path = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/worksheets/sheet1.xml", b" " * 5_000_000)
    assert path.stat().st_size < 100_000
    with pytest.raises(ReadError, match=r"bomb.xlsx: the workbook inflates to 5000000 bytes"):
        xlsx_table(path, max_bytes=1_000_000)
