"""The column-wise CSV read (`_column_records`) gives the records, problems and lines of the
per-row builder and of the ``csv`` module reader, on hostile files; and it is taken."""

from __future__ import annotations

import copy
import csv
import dataclasses
import io
import pickle
import random
from pathlib import Path
from typing import Any

import pyarrow
import pyarrow.compute
import pytest

from inspect_empathy import DatasetError, load_dialogs
from inspect_empathy.dataset._dataset import _unique
from inspect_empathy.dataset.loaders import tabular
from inspect_empathy.dataset.loaders._column_records import (
    DECIMAL,
    PYTHON_SPACE,
    LazyRecord,
    known_turns,
    transcript_pattern,
)
from inspect_empathy.dataset.loaders._problems import LoadReport, RecordBlock
from inspect_empathy.dataset.loaders._roles import role_map
from inspect_empathy.dataset.loaders._transcript import parse_transcript
from inspect_empathy.dialogs import DialogRecord, Turn

ROLES = {"Seeker": "user", "Supporter": "bot"}
MAPPING: dict[str, Any] = {"roles": ROLES, "scale": [1, 3]}

# transcripts the per-row parser reads in every way it can: one turn per line (the shape
# the column check passes) and everything else (which it must leave to the row builder)
TRANSCRIPTS = [
    "Seeker: hi\nSupporter: hello",
    'Seeker: he said "hi", twice\nSupporter: ""quoted""',
    "Supporter: a bot turn alone",
    "Seeker: x\nSupporter: y\nSeeker: z\nSupporter: w",
    "SEEKER: upper\nsupporter: lower",
    "sEeKeR: mixed\nSuPpOrTeR: case",
    "Seeker:no space\nSupporter:\tafter a tab",
    "Seeker: a: colon\nSupporter: b:c",
    "Seeker: \u00a0nbsp first\nSupporter: trailing nbsp\u00a0",
    "Seeker: line\u2028separator\nSupporter: next\x85line",
    "Seeker: café ünïcödé 🙂\nSupporter: 日本語",
    "Seeker: hi\r\nSupporter: crlf inside",
    "Seeker: a\nSeeker: same side\nSupporter: b",
    "Seeker: a\nSupporter: b\nSupporter: same side",
    "Seeker: a\ncontinued\nSupporter: b",
    "Seeker: a\n\nSupporter: blank line",
    "Seeker: a\nSupporter: b\n",
    "  Seeker: indented\nSupporter: b",
    "Seeker: a\n  Supporter: indented",
    "Seeker : space before colon\nSupporter: b",
    "Seeker: a\nSupporter: b\nSeeker: trailing user",
    "Seeker: only the user",
    "Seeker:   \nSupporter: empty user turn",
    "Seeker: a\nSupporter: \u3000",
    "Seeker: a\nSupporter:",
    "Robot: unknown\nSupporter: b",
    "Seeker: a\nNote: an unknown label\nSupporter: b",
    "no label at all",
    "Seeker: a\nSupporter: b\nnot a label",
    "",
    "   ",
    "Seeker: a\nHelper bot: b",
    "Seekers: plural\nSupporter: b",
    "Seeker\u00a0: nbsp label\nSupporter: b",
]
RATINGS = ["1", "2", "3", "2.5", "", "  ", "4", "0", "x", "nan", "inf", "-1", " 2 ", "2.",
           "+2", "2_0", "1e0", "\uff12", "3.0000000000000001", "1.999999999999999999"]  # fmt: skip
IDS = ["a", "b", "a", " c ", "c", "", "  ", "d\ne", "é", "a "]


def write(path: Path, header: list[str], rows: list[list[str]], delimiter: str = ",",
          lineterminator: str = "\r\n") -> Path:  # fmt: skip
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator=lineterminator)
    writer.writerow(header)
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8", newline="")
    return path


def hostile_rows(seed: int, count: int = 120) -> list[list[str]]:
    """Rows mixing the transcripts, ratings and ids above (clean rows in between)."""
    rng = random.Random(seed)
    rows = []
    for i in range(count):
        if i % 3 == 0:
            rows.append([f"clean-{i}", "Seeker: fine\nSupporter: good", "2", f"m{i}"])
            continue
        rows.append([rng.choice(IDS) + ("" if rng.random() < 0.3 else f"-{i}"),
                     rng.choice(TRANSCRIPTS), rng.choice(RATINGS),
                     rng.choice(["", "meta", " "]) or "x"])  # fmt: skip
    return rows


def plain(record: DialogRecord) -> tuple:
    """A record's fields, whatever its class."""
    turns = [(turn.role, turn.content) for turn in record.turns]
    return (record.id, turns, record.rating, record.scale, record.metadata)


def load_three_ways(
    path: Path, monkeypatch: pytest.MonkeyPatch, **mapping: Any
) -> list[tuple[list, dict, list, int]]:
    """(records, summary, problems, lazy records) loaded column-wise, with pandas row by
    row, and with the csv module."""
    results = []
    for way in ("columns", "pandas rows", "csv module"):
        with monkeypatch.context() as patch:
            if way == "pandas rows":
                patch.setattr(tabular, "column_records", lambda *args: None)
            elif way == "csv module":
                patch.setattr(tabular, "read_table", lambda *args, **kwargs: None)
            dataset = load_dialogs(path, on_invalid="skip", **mapping)
            records = dataset.records
            lazy = sum(isinstance(r, LazyRecord) for r in records)
            report = dataset.load_report
            assert report is not None
            results.append((
                [plain(r) for r in records], report.summary(),
                [(p.where, p.kind, p.detail) for p in report.problems], lazy,
            ))  # fmt: skip
            try:
                load_dialogs(path, **mapping)
            except DatasetError as ex:
                results[-1][1]["error"] = str(ex)
    return results


@pytest.mark.parametrize("seed", range(6))
def test_hostile_csv_gives_the_same_records_problems_and_lines_every_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    path = write(tmp_path / "hostile.csv", ["id", "transcript", "rating", "note"],
                 hostile_rows(seed))  # fmt: skip
    assert tabular.read_table(path, tabular.Dialect()) is not None  # pandas reads it
    columns, rows, module = load_three_ways(path, monkeypatch, **MAPPING)
    assert columns[:3] == rows[:3] == module[:3] and "error" in columns[1]
    assert columns[3] >= 40 and rows[3] == module[3] == 0  # the column path was taken
    assert len(columns[2]) > 10  # and problems were found, with their lines


@pytest.mark.parametrize(
    ("name", "header", "mapping"),
    [
        ("no id column", ["transcript", "rating"], MAPPING),
        ("no rating column", ["id", "transcript"], MAPPING),
        ("default roles", ["id", "transcript", "rating"], {"scale": "1-3"}),
        ("cut trailing user", ["id", "transcript", "rating"], {**MAPPING, "trailing_user": "cut"}),
        ("chosen metadata", ["id", "transcript", "rating", "note", "x"],
         {**MAPPING, "metadata": ["x"]}),
        ("tsv", ["id", "transcript", "rating"], MAPPING),
        ("lf line ends", ["id", "transcript", "rating"], MAPPING),
    ],
)  # fmt: skip
def test_variants_give_the_same_records_and_problems_every_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, header: list[str],
    mapping: dict[str, Any],
) -> None:  # fmt: skip
    rng = random.Random(name)
    transcripts = [t.replace("Seeker", "User").replace("Supporter", "Assistant")
                   if "roles" not in mapping else t for t in TRANSCRIPTS]  # fmt: skip
    cells = {
        "id": lambda i: rng.choice(IDS) + f"-{i}" if i % 5 else f"r{i}",
        "transcript": lambda i: transcripts[i % len(transcripts)] if i % 2 else
        ("Seeker: ok\nSupporter: yes" if "roles" in mapping else "User: ok\nBot: yes"),
        "rating": lambda i: rng.choice(RATINGS),
        "note": lambda i: rng.choice(["", "n"]),
        "x": lambda i: rng.choice(["", "x"]),
    }  # fmt: skip
    rows = [[cells[column](i) for column in header] for i in range(90)]
    suffix = ".tsv" if name == "tsv" else ".csv"
    path = write(tmp_path / f"variant{suffix}", header, rows, "\t" if name == "tsv" else ",",
                 "\n" if name == "lf line ends" else "\r\n")  # fmt: skip
    columns, by_row, module = load_three_ways(path, monkeypatch, **mapping)
    assert columns[:3] == by_row[:3] == module[:3]
    assert columns[3] >= 10  # the column path was taken


def test_odd_files_fall_back_with_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = "Seeker: a\nSupporter: b"
    for name, text in {
        "blank line at the end": f'id,transcript\na,"{good}"\n\n',
        "blank line inside": f'id,transcript\na,"{good}"\n\nb,"{good}"\n',
        "short row": f'id,transcript,rating\na,"{good}",1\nb,"{good}"\n',
        "whitespace line": f'id,transcript\na,"{good}"\n  \nb,"{good}"\n',
        "BOM": f'\ufeffid,transcript\na,"{good}"\nb,"{good}"\na,"{good}"\n',
        "lone carriage return": f'id,transcript\na,"{good}"\nb,"Seeker: x\rSupporter: y"\n',
        "row of empty cells": f'id,transcript\na,"{good}"\n,\nb,"{good}"\n',
    }.items():
        path = tmp_path / f"{name}.csv"
        path.write_text(text, encoding="utf-8", newline="")
        columns, by_row, module = load_three_ways(path, monkeypatch, roles=ROLES)
        assert columns[:3] == by_row[:3] == module[:3], name


def test_an_empty_last_cell_without_padding_keeps_the_fast_read(tmp_path: Path) -> None:
    path = write(tmp_path / "unrated.csv", ["id", "transcript", "rating"],
                 [["a", "Seeker: x\nSupporter: y", ""], ["b", "Seeker: x\nSupporter: y", "2"]])
    table = tabular.read_table(path, tabular.Dialect())
    assert table is not None and table.column(2) == ["", "2"]
    dataset = load_dialogs(path, **MAPPING)
    assert all(isinstance(r, LazyRecord) for r in dataset.records)
    assert [r.rating for r in dataset.records] == [None, 2.0]


def test_pattern_matches_only_what_the_parser_reads_as_one_turn_a_line() -> None:
    roles = role_map(ROLES)
    pattern = transcript_pattern(roles)
    assert pattern is not None
    texts = TRANSCRIPTS + [t.replace("\n", "\nSupporter: x\n") for t in TRANSCRIPTS]
    matched = pyarrow.compute.match_substring_regex(pyarrow.array(texts), pattern).to_pylist()
    assert 8 <= sum(matched) < len(texts)
    for text, match in zip(texts, matched, strict=True):
        if not match:
            continue
        turns = parse_transcript(text, roles, {})
        assert known_turns(text, roles) == turns, text
        assert len(turns) == text.count("\n") + 1 and turns[-1].role == "bot"


def test_python_space_is_what_str_strip_removes() -> None:
    spaces = "".join(c for c in map(chr, range(0x110000)) if c.isspace())
    assert PYTHON_SPACE == spaces


def test_arrow_reads_plain_decimal_ratings_as_float_does() -> None:
    rng = random.Random(7)
    cells = [f"{rng.randrange(10**rng.randint(1, 15))}" + (
             f".{rng.randrange(10**15):0{rng.randint(1, 15)}d}"[:rng.randint(2, 16)]
             if rng.random() < 0.8 else "") for _ in range(5000)]  # fmt: skip
    array = pyarrow.array(cells)
    assert all(pyarrow.compute.match_substring_regex(array, DECIMAL).to_pylist())
    cast = pyarrow.compute.cast(array, pyarrow.float64()).to_pylist()
    assert cast == [float(cell) for cell in cells]


def lazy_dataset(tmp_path: Path) -> Any:
    path = write(tmp_path / "lazy.csv", ["id", "transcript", "rating", "note"],
                 [["a", "Seeker: hi \nSupporter:  there", "3", "n"]])
    return load_dialogs(path, **MAPPING)


def test_a_lazy_record_is_the_record_the_row_builder_makes(tmp_path: Path) -> None:
    eager = DialogRecord("a", [Turn("user", "hi"), Turn("bot", "there")], 3.0, (1.0, 3.0),
                         {"note": "n"})  # fmt: skip
    record = lazy_dataset(tmp_path).records[0]
    assert type(record) is LazyRecord
    assert eager == record and record == eager and not record != eager
    assert type(record) is DialogRecord  # read: a plain record from now on
    assert repr(lazy_dataset(tmp_path).records[0]) == repr(eager)
    assert pickle.loads(pickle.dumps(lazy_dataset(tmp_path).records[0])) == eager
    assert type(copy.copy(lazy_dataset(tmp_path).records[0])) is DialogRecord
    assert record != dataclasses.replace(eager, rating=2.0)
    assert pickle.loads(pickle.dumps(record)) == eager
    assert copy.deepcopy(record) == eager
    assert dataclasses.replace(record, rating=1.0).rating == 1.0
    assert dataclasses.asdict(record) == dataclasses.asdict(eager)


def test_setting_a_field_first_keeps_the_other_fields(tmp_path: Path) -> None:
    record = lazy_dataset(tmp_path).records[0]
    record.turns = [Turn("bot", "replaced")]
    assert (record.id, record.turns, record.rating) == ("a", [Turn("bot", "replaced")], 3.0)
    other = lazy_dataset(tmp_path).records[0]
    other.metadata["extra"] = 1
    assert other.metadata == {"note": "n", "extra": 1}


def test_samples_of_lazy_records_match_the_row_builders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "s.csv", ["id", "transcript", "rating", "note"], hostile_rows(3)[:40])
    fast = load_dialogs(path, on_invalid="skip", **MAPPING)
    with monkeypatch.context() as patch:
        patch.setattr(tabular, "column_records", lambda *args: None)
        slow = load_dialogs(path, on_invalid="skip", **MAPPING)
    assert any(isinstance(r, LazyRecord) for r in fast.records)
    def fields(sample: Any) -> tuple:  # message ids are new on every build
        messages = [(m.role, m.text) for m in sample.input]
        return sample.id, messages, sample.target, sample.metadata

    assert [fields(s) for s in fast] == [fields(s) for s in slow]


def block(ids: list[str], where: str) -> RecordBlock:
    records = [DialogRecord(i, [Turn("bot", "x")]) for i in ids]
    return RecordBlock(records, ids, lambda index: f"{where}:{index + 1}")


def test_unique_takes_blocks_whole_and_checks_repeated_ids() -> None:
    report = LoadReport("f", "csv")
    located = [block(["a", "b"], "A"), ("L:9", DialogRecord("c", [Turn("bot", "x")])),
               block(["b", "d"], "B"), ("L:10", DialogRecord("a", [Turn("bot", "x")]))]
    records = _unique(located, report, check_text=False)
    assert [r.id for r in records] == ["a", "b", "c", "d"]
    assert [str(p) for p in report.problems] == [
        "B:1: duplicate id 'b' (first at A:2)", "L:10: duplicate id 'a' (first at A:1)"]


def test_unique_checks_each_record_of_a_block_when_asked_to_check_text() -> None:
    report = LoadReport("f", "csv")
    bad = RecordBlock([DialogRecord("a", [Turn("bot", "\ud800")])], ["a"], lambda i: "A:1")
    assert _unique([bad], report, check_text=True) == []
    assert [str(p) for p in report.problems] == [
        "A:1: turn 1 holds invalid Unicode (a lone surrogate escape)"]


def test_repeated_clean_ids_are_reported_as_the_row_builder_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [[f"d{i % 7}", "Seeker: x\nSupporter: y", "2"] for i in range(20)]
    path = write(tmp_path / "repeated.csv", ["id", "transcript", "rating"], rows)
    columns, by_row, module = load_three_ways(path, monkeypatch, **MAPPING)
    assert columns[:3] == by_row[:3] == module[:3]
    assert columns[3] == 7 and len(columns[2]) == 13
    assert columns[2][0] == (f"{path}:16", "duplicate id", f"duplicate id 'd0' (first at {path}:2)")


@pytest.mark.parametrize("seed", range(2))
def test_cells_held_as_python_strings_give_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """As with pandas 2, which keeps text as Python strings, not Arrow arrays."""
    from inspect_empathy.dataset.loaders import _pandas_csv

    path = write(tmp_path / "hostile.csv", ["id", "transcript", "rating", "note"],
                 hostile_rows(seed))  # fmt: skip
    arrow = load_three_ways(path, monkeypatch, **MAPPING)[0]
    with monkeypatch.context() as patch:
        patch.setattr(_pandas_csv, "_body", lambda series: series.tolist())
        table = tabular.read_table(path, tabular.Dialect())
        assert table is not None and table.arrow(1) is None
        lists = load_three_ways(path, monkeypatch, **MAPPING)[0]
    assert lists[:3] == arrow[:3] and lists[3] >= arrow[3] >= 40  # float() reads more cells


def test_a_file_given_twice_reports_each_repeat_quickly(tmp_path: Path) -> None:
    """The second copy's rows name the first copy's lines (looked up, not searched for)."""
    rows = [[f"r{i}", "Seeker: x\nSupporter: y", "2"] for i in range(20_000)]
    path = write(tmp_path / "twice.csv", ["id", "transcript", "rating"], rows + rows)
    dataset = load_dialogs(path, on_invalid="skip", **MAPPING)
    report = dataset.load_report
    assert report is not None and len(dataset) == 20_000 and len(report.problems) == 20_000
    assert str(report.problems[-1]) == (
        f"{path}:80000: duplicate id 'r19999' (first at {path}:40000)")
