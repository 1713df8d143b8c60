"""Issue 49.13: one call for notebooks (`score_dialogs`: Inspect's ``eval()``, its log read by
``inspect_ai.analysis.samples_df``, one row per dialog) and a per-sample pass or fail
(`empathy_scorer(threshold=...)`) for suites that gate on samples."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from inspect_ai import Epochs, Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.solver import generate

import inspect_empathy
from inspect_empathy import empathy_mean, empathy_scorer, score_dialogs
from inspect_empathy.errors import OptionError

DIALOGS = Path(__file__).parent / "fixtures" / "viewer" / "dialogs.jsonl"
JUDGE = "empathy_baseline/lexicon"


def records() -> list[dict]:
    return [json.loads(line) for line in DIALOGS.read_text("utf-8").splitlines() if line][:3]


def test_score_dialogs_is_a_frame_of_the_logged_scores(tmp_path: Path) -> None:
    frame = score_dialogs(records(), model=JUDGE, threshold=3, log_dir=str(tmp_path))
    assert "score_dialogs" in inspect_empathy.__all__
    assert list(frame.columns[:7]) == [
        "id", "score", "distribution", "method", "unscored_reason", "human_rating", "passed"
    ]  # fmt: skip
    log = read_eval_log(frame["log"][0])
    assert log.status == "success" and log.eval.task.endswith("empathy")
    by_id = {str(s.id): s for s in log.samples or []}
    assert sorted(frame["id"]) == sorted(by_id) == [r["id"] for r in records()]
    for row in frame.to_dict("records"):
        score = by_id[row["id"]].scores["empathy_scorer"]  # type: ignore[index]
        assert row["score"] == pytest.approx(score.value)
        assert row["distribution"] == score.metadata["distribution"]
        assert row["method"] == "logprobs" and row["unscored_reason"] is None
        assert row["human_rating"] == by_id[row["id"]].metadata["human_rating"]
        assert row["passed"] == (math.floor(row["score"] + 0.5) >= 3)
        assert row["answer"] == score.answer


def test_score_dialogs_takes_a_path_and_task_arguments(tmp_path: Path) -> None:
    frame = score_dialogs(DIALOGS, model=JUDGE, limit=2, log_dir=str(tmp_path),
                          method="samples", completions=4)  # fmt: skip
    assert len(frame) == 2 and set(frame["method"]) == {"samples"}
    assert "passed" not in frame
    with pytest.raises(OptionError, match="threshold"):
        score_dialogs(DIALOGS, model=JUDGE, threshold=6)


def own_task(threshold: float | None, epochs: int = 1) -> Task:
    dataset = [
        Sample(input="I failed my driving test again.", id="a"),
        Sample(input="My dog died this morning.", id="b"),
    ]
    return Task(dataset=dataset, solver=generate(),
                scorer=empathy_scorer(model=JUDGE, threshold=threshold),
                epochs=Epochs(epochs, empathy_mean()))  # fmt: skip


def test_a_threshold_marks_each_sample_pass_or_fail(tmp_path: Path) -> None:
    [log] = eval(own_task(3, epochs=2), model="empathy_baseline/length",
                 log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "success", log.error
    for sample in log.samples or []:
        score = sample.scores["empathy_scorer"]  # type: ignore[index]
        passed = math.floor(float(score.value) + 0.5) >= 3
        assert score.metadata["passed"] is passed and score.metadata["threshold"] == 3
        assert score.explanation.startswith("pass" if passed else "fail")
    [reduction] = log.reductions or []
    for reduced in reduction.samples:
        assert reduced.metadata["passed"] is (math.floor(float(reduced.value) + 0.5) >= 3)


def test_without_a_threshold_nothing_changes(tmp_path: Path) -> None:
    [log] = eval(own_task(None), model="empathy_baseline/length", log_dir=str(tmp_path),
                 display="none")  # fmt: skip
    for sample in log.samples or []:
        score = sample.scores["empathy_scorer"]  # type: ignore[index]
        assert "passed" not in score.metadata and "threshold" not in score.metadata
    with pytest.raises(OptionError, match="threshold"):
        empathy_scorer(threshold=0)
