"""``format: raters``: rater and judge files joined to the dialogs by id, bad cells named."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from published_files import IDS, corpus, ratings

from inspect_empathy import load_dialogs
from inspect_empathy.dataset.loaders.raters import OUTSIDE, UNREADABLE, read_rated
from inspect_empathy.errors import DatasetError


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "published"
    monkeypatch.setenv("TOY_ROOT", str(root))
    return corpus(root)


def test_composite_ids_join_and_the_raters_median(toy: Path) -> None:
    dataset = load_dialogs(toy)
    assert [s.id for s in dataset] == [f"{s}/{r}" for s, r in IDS]
    first = dataset[0].metadata
    assert first["human_ratings"] == {"expert1": 0.0, "expert2": 0.0, "expert3": 1.0}
    assert first["human_rating_raw"] == 0.0 and tuple(first["human_rating_scale"]) == (0, 2)
    assert first["human_rating"] == 1.0  # 0 on 0-2 -> 1 on 1-5
    assert first["sp_id"] == "s1" and first["dimension"] == "level"
    notes = dataset.load_report.summary()["notes"]
    assert "path ${TOY_ROOT} read from" in notes[0]
    assert any(n.startswith("gpt (gpt_ratings.csv): 6 of 6 rows joined") for n in notes)


def test_missing_extra_repeated_and_ambiguous_ids_are_counted(toy: Path) -> None:
    root = toy.parent / "published"
    ann = root / "annotations" / "toy"
    # expert2 lacks s6/r6, rates an unknown dialog s9/r9, and repeats s1/r1
    ids = [*IDS[:5], ("s9", "r9"), ("s1", "r1")]
    ratings(ann / "expert2_ratings.csv", [0, 1, 2, 1, 0, 2, 2], ids)
    # two dialogs share sp_id s2: the partial-id judge file cannot place s2
    dialogs = root / "original_data" / "dialogs.csv"
    dialogs.write_text(
        dialogs.read_text(encoding="utf-8") + "s2,r7,Another post,Another reply\n",
        encoding="utf-8",
    )
    dataset = load_dialogs(toy)
    assert len(dataset) == 7
    notes = dataset.load_report.summary()["notes"]
    expert2 = next(n for n in notes if n.startswith("expert2"))
    assert "5 of 7 rows joined" in expert2
    assert "2 dialog(s) not in this file (missing)" in expert2  # s6/r6 and s2/r7
    assert "1 id(s) not among the dialogs (extra: s9/r9)" in expert2
    assert "1 repeated id(s) (first row kept: s1/r1)" in expert2
    gpt = next(n for n in notes if n.startswith("gpt"))
    assert "1 partial id(s) naming several dialogs (not joined: s2)" in gpt
    by_id = {s.id: s.metadata for s in dataset}
    assert by_id["s6/r6"]["raters_missing"] == ["expert2"]
    assert by_id["s1/r1"]["human_ratings"]["expert2"] == 0.0  # the first row, not the repeat


@pytest.mark.parametrize(
    ("cell", "kind", "detail"),
    [
        ("3", OUTSIDE, "3 is outside the scale 0-2"),
        ("-1", OUTSIDE, "-1 is outside the scale 0-2"),
        ("high", UNREADABLE, "'high' is not a number"),
        ("nan", UNREADABLE, "'nan' is not a finite number"),
    ],
)
def test_a_bad_rater_cell_fails_the_load_naming_file_row_column(
    toy: Path, cell: str, kind: str, detail: str
) -> None:
    ann = toy.parent / "published" / "annotations" / "toy"
    ratings(ann / "expert3_ratings.csv", [1, 1, cell, 2, 0, 1])
    with pytest.raises(DatasetError) as info:
        load_dialogs(toy)
    assert f"expert3_ratings.csv: row 4, column level: dialog s3/r3: rater file {detail}" in str(
        info.value
    )
    table = read_rated(toy.parent / "published", _mapping(toy))
    [source] = [s for s in table.sources if s.name == "expert3"]
    assert [(c.row, c.column, c.kind) for c in source.bad] == [(4, "level", kind)]


def test_bad_cells_missing_keeps_the_dialog_without_that_rating_and_says_so(toy: Path) -> None:
    ann = toy.parent / "published" / "annotations" / "toy"
    ratings(ann / "expert3_ratings.csv", [1, 1, 6, 2, "", 1])
    toy.write_text(toy.read_text(encoding="utf-8") + "bad_cells: missing\n", encoding="utf-8")
    dataset = load_dialogs(toy)
    assert len(dataset) == 6
    third = dataset[2].metadata
    assert third["raters_missing"] == ["expert3"] and "expert3" not in third["human_ratings"]
    notes = dataset.load_report.summary()["notes"]
    assert any("1 empty cell(s); 1 out of scale cell(s)" in n for n in notes)
    assert (
        "bad cell: expert3_ratings.csv: row 4, column level: 6 is outside the scale 0-2" in notes
    )


def test_skip_leaves_the_dialog_out_and_counts_it(toy: Path) -> None:
    ann = toy.parent / "published" / "annotations" / "toy"
    ratings(ann / "expert1_ratings.csv", [0, 1, 2, 2, 0, 9])
    dataset = load_dialogs(toy, on_invalid="skip")
    assert len(dataset) == 5
    assert dataset.load_report.summary()["skipped"] == {"rating outside the scale": 1}


def test_ratings_only_spec_points_at_compare(toy: Path) -> None:
    text = toy.read_text(encoding="utf-8")
    start = text.index("dialogs:")
    toy.write_text(text[:start] + text[text.index("id: [sp_id"):], encoding="utf-8")
    with pytest.raises(DatasetError, match="ratings only .* compare --published"):
        load_dialogs(toy)
    table = read_rated(toy.parent / "published", _mapping(toy))
    assert table.ids == [f"{s}/{r}" for s, r in IDS]
    assert table.judges["gemini"]["s2/r2"] == 2.0


def test_unset_root_variable_is_named(toy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOY_ROOT")
    with pytest.raises(DatasetError, match="needs the environment variable TOY_ROOT"):
        load_dialogs(toy)


def test_a_file_outside_the_folder_is_refused(toy: Path) -> None:
    toy.write_text(
        toy.read_text(encoding="utf-8").replace(
            "annotations/toy/crowd_ratings.csv", "../toy.yaml"
        ),
        encoding="utf-8",
    )
    with pytest.raises(DatasetError, match="outside the folder"):
        load_dialogs(toy)


def _mapping(spec: Path) -> dict:
    from inspect_empathy.dataset.loaders.spec import read_spec

    return read_spec(spec).mapping


XLSX = importlib.util.find_spec("openpyxl") is not None


@pytest.mark.skipif(not XLSX, reason="openpyxl is not installed (reading .xlsx needs it)")
def test_xlsx_json_cells_and_fenced_judge_text(tmp_path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "ratings"
    sheet.append(["context_id", "bot", "human", "judge_output"])
    rows = [
        (1, "A", {"empathy": 4, "fluency": 5}, 'Sure.\n```json\n{"empathy": 4}\n```'),
        (1, "B", {"empathy": 6, "fluency": 5}, '{"empathy": 2, "why": "curt"}'),
        (2, "A", "not json", "```json\n{\"empathy\": 7}\n```"),
        (2, "B", {"fluency": 3}, "I cannot rate this."),
    ]
    for context, bot, human, judge in rows:
        cell = json.dumps(human) if isinstance(human, dict) else human
        sheet.append([context, bot, cell, judge])
    book.save(tmp_path / "rated.xlsx")
    mapping = {
        "id": ["context_id", "bot"],
        "scale": [1, 5],
        "dimension": "empathy",
        "bad_cells": "missing",
        "raters": {"people": {"file": "rated.xlsx", "column": "human", "read": "json",
                              "attribute": "empathy"}},
        "judges": {"judge": {"file": "rated.xlsx", "column": "judge_output", "read": "text",
                             "attribute": "empathy"}},
    }  # fmt: skip
    table = read_rated(tmp_path, mapping)
    assert table.raters["people"] == {"1/A": 4.0}
    assert table.judges["judge"] == {"1/A": 4.0, "1/B": 2.0}
    bad = {(c.file, c.row, c.column, c.kind) for s in table.sources for c in s.bad}
    assert bad == {
        ("rated.xlsx", 3, "human", OUTSIDE),  # 6 on 1-5: never clipped to 5
        ("rated.xlsx", 4, "human", UNREADABLE),  # not JSON
        ("rated.xlsx", 5, "human", UNREADABLE),  # no attribute 'empathy'
        ("rated.xlsx", 4, "judge_output", OUTSIDE),
        ("rated.xlsx", 5, "judge_output", UNREADABLE),  # no JSON block
    }
    details = [c.detail for s in table.sources for c in s.bad]
    assert "no attribute 'empathy' (keys: fluency)" in details
