"""Several raters per dialog: ``ratings: [col, ...]`` and ``rater_aggregate`` (issue 16, 1)."""

import json
from pathlib import Path

import pytest
from loader_helpers import FIXTURES

from inspect_empathy import DatasetError, load_dialogs
from inspect_empathy.dataset._dataset import skipped_summary

RATERS = FIXTURES / "raters"


def test_each_rater_kept_and_the_median_is_the_human_rating() -> None:
    dataset = load_dialogs(RATERS / "three_raters.yaml")
    samples = {s.id: s.metadata for s in dataset}
    assert samples["d1"]["human_ratings"] == {"ann_a": 5.0, "ann_b": 4.0, "ann_c": 5.0}
    assert samples["d1"]["human_rating"] == 5.0
    assert samples["d2"]["human_rating"] == 2.0
    # a missing rater: the two present are kept, their median (mean of the middle two) used
    assert samples["d3"]["human_ratings"] == {"ann_a": 3.0, "ann_c": 2.0}
    assert samples["d3"]["raters_missing"] == ["ann_b"]
    assert samples["d3"]["human_rating"] == 2.5
    # nobody rated d4: unrated, all three missing
    assert samples["d4"]["human_rating"] is None
    assert samples["d4"]["raters_missing"] == ["ann_a", "ann_b", "ann_c"]
    assert "raters_missing" not in samples["d1"]
    # rater columns are not copied again as plain metadata
    assert "ann_a" not in samples["d1"]
    summary = skipped_summary(dataset)
    assert summary["adjusted"]["dialogs with some raters missing"] == 2
    assert "rater 'ann_b': no rating for 2 dialog(s)" in summary["notes"]
    assert "1 row(s) with no rater's rating loaded unrated" in summary["notes"]


def test_mean_aggregate() -> None:
    samples = {s.id: s.metadata for s in load_dialogs(RATERS / "three_raters_mean.yaml")}
    assert samples["d2"]["human_rating"] == pytest.approx(7 / 3)
    assert samples["d1"]["human_rating"] == pytest.approx(14 / 3)


def test_rater_ratings_are_validated_with_the_rater_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text('id,transcript,a,b\nx,"User: hi\nBot: yo",3,9\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad.csv:2: rating 'b' '9' is outside the scale 1-5"):
        load_dialogs(path, ratings=["a", "b"])
    with pytest.raises(DatasetError, match=r"ratings column\(s\) 'c' not in the header"):
        load_dialogs(path, ratings=["a", "c"])
    with pytest.raises(DatasetError, match="rater_aggregate must be 'median' or 'mean'"):
        load_dialogs(path, ratings=["a", "b"], rater_aggregate="mode")
    with pytest.raises(DatasetError, match="either rating"):
        load_dialogs(path, ratings=["a"], rating="b")


def test_a_column_named_human_ratings_cannot_forge_them(tmp_path: Path) -> None:
    path = tmp_path / "forged.csv"
    path.write_text('id,transcript,a,human_ratings\nx,"User: hi\nBot: yo",3,{}\n', "utf-8")
    with pytest.raises(DatasetError, match="reserved metadata key: column"):
        load_dialogs(path, ratings=["a"])


def test_jsonl_raters(tmp_path: Path) -> None:
    turns = [{"role": "user", "content": "hi"}, {"role": "bot", "content": "hello"}]
    path = tmp_path / "r.jsonl"
    path.write_text(
        json.dumps({"id": "a", "turns": turns, "r1": 2, "r2": 4, "r3": None}) + "\n", "utf-8"
    )
    sample = load_dialogs(path, ratings=["r1", "r2", "r3"], scale=[1, 5])[0]
    assert sample.metadata["human_ratings"] == {"r1": 2.0, "r2": 4.0}
    assert sample.metadata["raters_missing"] == ["r3"]
    assert sample.metadata["human_rating"] == 3.0


def test_turn_layout_raters(tmp_path: Path) -> None:
    path = tmp_path / "turns.csv"
    path.write_text(
        "dialog,speaker,text,r1,r2\n"
        "d,user,I feel low.,,\n"
        "d,bot,I'm sorry.,2,3\n"
        "d,user,Thanks.,,\n"
        "d,bot,Anytime.,,5\n",
        encoding="utf-8",
    )
    samples = {s.id: s.metadata for s in load_dialogs(path, layout="turns", ratings=["r1", "r2"])}
    assert samples["d-2"]["human_ratings"] == {"r1": 2.0, "r2": 3.0}
    assert samples["d-2"]["human_rating"] == 2.5
    assert samples["d-4"]["human_ratings"] == {"r2": 5.0}
    assert samples["d-4"]["raters_missing"] == ["r1"]


def test_empathetic_dialogues_exposes_both_raters() -> None:
    fixtures = FIXTURES
    samples = {s.id: s for s in load_dialogs(fixtures / "empathetic_dialogues.csv")}
    proud = next(s for s in samples.values() if s.metadata["human_rating"] == 4.5)
    assert proud.metadata["human_ratings"] == {"first": 5.0, "second": 4.0}
