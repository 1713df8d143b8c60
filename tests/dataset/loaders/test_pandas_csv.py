"""The fast paths of loading (pandas' CSV read, known transcript lines) give what the slow
paths give, and are taken for plain files."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from inspect_empathy import load_dialogs
from inspect_empathy.dataset._dataset import DatasetError, skipped_summary
from inspect_empathy.dataset._samples import record_to_sample
from inspect_empathy.dataset.loaders import tabular
from inspect_empathy.dataset.loaders._pandas_csv import pandas_table
from inspect_empathy.dataset.loaders._problems import LoadReport
from inspect_empathy.dataset.loaders._roles import role_map
from inspect_empathy.dataset.loaders._transcript import parse_transcript
from inspect_empathy.dialogs import DialogRecord


def pandas_rows(
    path: Path, delimiter: str, quotechar: str, escapechar: str | None, plain: bool
) -> Iterator[tuple[int, Sequence[str]]] | None:
    """The pandas read's (line, cells) rows, header first, or None (the slow way)."""
    table = pandas_table(path, delimiter, quotechar, escapechar, plain, arrow=False)
    return None if table is None else table.rows()


PLAIN = (
    'id,transcript,rating\r\n'
    'a,"Seeker: hi\nSupporter: hello, there\nSupporter: ""quoted"" too",2\r\n'
    'b,"Seeker: one\nSupporter: two",\r\n'
    'c,"Seeker: x",3\r\n'
)

# files the csv module reads differently from pandas, or refuses: the fast read must step aside
ODD = {
    "lone carriage return": 'id,transcript\ra,"User: x\nBot: y"\n',
    "quote inside a cell": 'id,transcript\na,"User: x"y\nBot: z"\n',
    "space after a closing quote": 'id,transcript\na,"User: x\nBot: y" \n',
    "blank line": 'id,transcript\n\na,"User: x\nBot: y"\n',
    "whitespace line": 'id,transcript\n  \na,"User: x\nBot: y"\n',
    "row of empty cells": 'id,transcript\n,\na,"User: x\nBot: y"\n',
    "short row": 'id,transcript,rating\na,"User: x\nBot: y"\n',
    "long row": 'id,transcript\na,"User: x\nBot: y",3\n',
    "unclosed quote": 'id,transcript\na,"User: x\nBot: y\n',
    "NUL byte": 'id,transcript\na,"User: x\x00\nBot: y"\n',
}


def slow_rows(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list, list]:
    with monkeypatch.context() as patch:
        patch.setattr(tabular, "read_table", lambda *args, **kwargs: None)
        report = LoadReport(str(path), "csv")
        rows = [(line, list(values)) for line, values in tabular.csv_rows(path, report)]
    return rows, [str(p) for p in report.problems]


def test_plain_csv_is_read_by_pandas_with_the_csv_modules_rows_and_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "plain.csv"
    path.write_bytes(b"\xef\xbb\xbf" + PLAIN.encode())
    fast = pandas_rows(path, ",", '"', None, True)
    assert fast is not None
    rows = [(line, list(values)) for line, values in fast]
    assert rows == slow_rows(path, monkeypatch)[0]
    assert [line for line, _ in rows] == [1, 2, 5, 7]
    assert rows[1][1][1] == 'Seeker: hi\nSupporter: hello, there\nSupporter: "quoted" too'


@pytest.mark.parametrize("name", sorted(ODD))
def test_odd_csv_is_left_to_the_csv_module(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "odd.csv"
    path.write_bytes(ODD[name].encode())
    assert pandas_rows(path, ",", '"', None, True) is None
    # and csv_rows still gives the csv module's rows and problems
    report = LoadReport(str(path), "csv")
    rows = [(line, list(values)) for line, values in tabular.csv_rows(path, report)]
    assert (rows, [str(p) for p in report.problems]) == slow_rows(path, monkeypatch)


def test_other_dialects_are_left_to_the_csv_module(tmp_path: Path) -> None:
    path = tmp_path / "plain.csv"
    path.write_text(PLAIN, encoding="utf-8")
    assert pandas_rows(path, ";", '"', None, True) is None
    assert pandas_rows(path, ",", "'", None, True) is None
    assert pandas_rows(path, ",", '"', "\\", True) is None
    assert pandas_rows(path, ",", '"', None, False) is None


def test_load_gives_the_same_records_and_problems_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "mixed.csv"
    path.write_text(
        PLAIN + 'd,"Seeker: only the user",2\r\ne,"Robot: hi\nSupporter: x",2\r\n'
        'b,"Seeker: dup\nSupporter: dup",1\r\n',
        encoding="utf-8",
    )
    fast = load_dialogs(path, on_invalid="skip")
    with monkeypatch.context() as patch:
        patch.setattr(tabular, "read_table", lambda *args, **kwargs: None)
        slow = load_dialogs(path, on_invalid="skip")
    assert fast.records == slow.records and len(fast) == 2
    assert fast.load_report is not None and slow.load_report is not None
    assert fast.load_report.summary() == slow.load_report.summary()
    assert [p.where for p in fast.load_report.problems] == [
        f"{path}:7", f"{path}:8", f"{path}:9", f"{path}:11"
    ]


@pytest.mark.parametrize(
    "text",
    [
        "User: a\nBot: b",
        "User: a\nUser: a2\nBot: b\nBot: b2",
        "User: a\ncontinued\nBot: b",
        "User: a\n\nBot: b",
        "User: a\r\nBot: b",
        "  User: a\nBot: b",
        "User: a\nUser b\nBot: b",
    ],
)
def test_known_lines_parse_as_the_full_parser(text: str) -> None:
    roles = role_map(None)
    warm: dict[str, str] = {}
    parse_transcript("User: x\nBot: y\n  User: z", roles, warm)  # labels now cached
    assert warm and parse_transcript(text, roles, warm) == parse_transcript(text, roles, {})


def test_known_lines_keep_errors(tmp_path: Path) -> None:
    roles, cache = role_map(None), {"User": "user", "Bot": "bot"}
    from inspect_empathy.dataset.loaders._problems import RecordProblem

    for text in ("User: a\nBot:   ", "User: a\nRobot: b", "User a\nBot: b"):
        with pytest.raises(RecordProblem) as fast:
            parse_transcript(text, roles, cache)
        with pytest.raises(RecordProblem) as full:
            parse_transcript(text, roles, {})
        assert str(fast.value) == str(full.value)


def test_message_ids_are_set_and_unique() -> None:
    from inspect_empathy.judge._rubric import Turn

    record = DialogRecord("r", [Turn("user", "a"), Turn("bot", "b")], 3.0)
    ids = [m.id for _ in range(3) for m in record_to_sample(record).input]  # type: ignore[union-attr]
    assert all(isinstance(i, str) and i for i in ids) and len(set(ids)) == len(ids)


def test_cells_stay_text_as_the_csv_module_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cells.tsv"
    path.write_text("a\tb\tc\td\te\tf\nTrue\t1e5\tnan\tNULL\t007\t  x \n", encoding="utf-8")
    fast = pandas_rows(path, "\t", '"', None, True)
    assert fast is not None
    rows = [(line, list(values)) for line, values in fast]
    assert rows[1] == (2, ["True", "1e5", "nan", "NULL", "007", "  x "])
    with monkeypatch.context() as patch:
        patch.setattr(tabular, "read_table", lambda *args, **kwargs: None)
        report = LoadReport(str(path), "tsv")
        slow = [(line, list(values)) for line, values in tabular.csv_rows(path, report, "\t")]
    assert rows == slow


def _chats(tmp_path: Path, gap: str) -> Path:
    path = tmp_path / "chats.csv"
    path.write_text(
        'id,transcript,rating\na,"User: hi\nBot: hello",3\n' + gap + 'b,"User: x\nBot: y",4\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(("gap", "count"), [("", 0), ("\n", 1), (",,\n", 1), ("\n,,\n\n", 3)])
def test_blank_lines_and_empty_rows_are_counted_not_silently_dropped(
    tmp_path: Path, gap: str, count: int
) -> None:
    path = _chats(tmp_path, gap)
    data = load_dialogs(path)
    assert [r.id for r in data.records] == ["a", "b"]
    expected = [f"{path}: {count} blank line(s) or row(s) of only empty cells skipped"]
    assert skipped_summary(data)["notes"] == (expected if count else [])


def test_a_line_of_spaces_is_a_record_problem_not_a_blank_line(tmp_path: Path) -> None:
    path = _chats(tmp_path, "  \n")
    with pytest.raises(DatasetError, match=r"chats.csv:4: missing field"):
        load_dialogs(path)
