"""The human-ceiling metric in a judge-mode log, equal to stats/humans.py on the same ratings."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import eval

from inspect_empathy.dialogs import normalise_rating
from inspect_empathy.stats.humans import ceiling_summary, judge_summary, ratings_frame
from inspect_empathy.tasks import empathy

SPEC = Path(__file__).parents[1] / "fixtures" / "loaders" / "raters" / "three_raters.yaml"
RELIABILITY = Path(__file__).parents[1] / "fixtures" / "reliability" / "dialogs.jsonl"


def test_ceiling_metrics_equal_the_humans_module(tmp_path: Path) -> None:
    [log] = eval(
        empathy(dataset=str(SPEC)),
        model="empathy_baseline/lexicon",
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.results is not None and log.samples
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    per_dialog, judge = {}, {}
    for sample in log.samples:
        scale = sample.metadata["human_rating_scale"]
        per_dialog[str(sample.id)] = {
            r: normalise_rating(v, (scale[0], scale[1]))
            for r, v in sample.metadata["human_ratings"].items()
            if v is not None
        }
        judge[str(sample.id)] = float(sample.scores["empathy_scorer"].value)  # type: ignore[index,arg-type]
    frame = ratings_frame(per_dialog)
    ceiling, standing = ceiling_summary(frame), judge_summary(pd.Series(judge), frame)
    expected = {
        "humans_alpha": ceiling["alpha"],
        "humans_pair_qwk": ceiling["pair_qwk_median"],
        "humans_rest_qwk": ceiling["rest_qwk_median"],
        "judge_rest_qwk": standing["rest_qwk_median"],
        "judge_rest_spearman": standing["rest_spearman_median"],
    }
    for name, value in expected.items():
        if math.isnan(value):
            assert name not in metrics or math.isnan(metrics[name])
        else:
            assert metrics[name] == pytest.approx(value), name
    assert 0 < len(frame.columns) == 3


def test_no_ceiling_without_several_raters(tmp_path: Path) -> None:
    [log] = eval(
        empathy(dataset=str(RELIABILITY)),
        model="empathy_baseline/lexicon",
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.results is not None
    assert not any(k.startswith("humans_") for k in log.results.scores[0].metrics)
