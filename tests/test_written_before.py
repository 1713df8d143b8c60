"""A log and a calibration map written before the concept packages (the flat 0.1 layout,
``fixtures/written_before/``) still read: the names the log records resolve, compare finds
the headline the log holds, the map refits to the same parameters and applies to a new run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.log import headline_metric, read_eval_log
from inspect_ai.util import registry_create

from inspect_empathy import compare_logs, empathy
from inspect_empathy.compare.fit import calibrate_logs
from inspect_empathy.stats.calibration import load
from inspect_empathy.stats.metrics import UNCALIBRATED_KEY

FIXTURES = Path(__file__).parent / "fixtures" / "written_before"
[LOG] = FIXTURES.glob("*.eval")
MAP = FIXTURES / "calibration.json"


def test_the_names_the_log_records_resolve() -> None:
    log = read_eval_log(LOG)
    assert log.eval.task == "inspect_empathy/empathy"
    [scorer] = log.eval.scorers or []
    assert registry_create("scorer", f"inspect_empathy/{scorer.name}")
    ours = [m.name for m in scorer.metrics or [] if m.name.startswith("inspect_empathy/")]
    assert len(ours) >= 10
    for name in ours:
        assert callable(registry_create("metric", name)), name


def test_compare_reads_the_headline_the_log_holds() -> None:
    headline = headline_metric(read_eval_log(LOG))
    assert headline is not None and headline.name == "somers_d_all"
    [row] = compare_logs(LOG, resamples=0).judges.to_dict("records")
    assert row["judge"] == "empathy_baseline/lexicon"
    assert row["dialogs"] == row["scored"] == 16
    assert row["somers_d_all"] == pytest.approx(headline.metric.value, abs=1e-12)


def test_the_map_reads_and_refits_to_the_same_parameters() -> None:
    written = json.loads(MAP.read_text("utf-8"))
    calibration, _ = load(MAP)
    assert (calibration.method, calibration.parameters) == (
        written["method"], written["parameters"]
    )
    refit, judge = calibrate_logs(LOG)
    assert judge == written["judge"] and refit.method == written["method"]
    assert refit.parameters == pytest.approx(written["parameters"], abs=1e-12)
    assert refit.fitted_on == tuple(written["fitted_on"])


def test_the_map_applies_to_a_new_run(tmp_path: Path) -> None:
    calibration, _ = load(MAP)
    [log] = eval(empathy(calibration=str(MAP)), model="empathy_baseline/lexicon", limit=4,
                 log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "success"
    for sample in log.samples or []:
        score = (sample.scores or {})["empathy_scorer"]
        own = (score.metadata or {})[UNCALIBRATED_KEY]
        assert math.isfinite(own)
        assert score.value == pytest.approx(calibration.apply(own))
