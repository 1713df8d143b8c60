"""Calibration faults (issue 25, items 3, 4, 11): maps that erase the judge, a retry after
the file changed, oversized files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspect_empathy.stats import calibration
from inspect_empathy.stats.calibration import Calibration, CalibrationError

BASE = {"format": "inspect-empathy-calibration", "version": 1, "n": 3, "fitted_on": ["a.eval"]}


def write(path: Path, method: str, parameters: dict[str, Any]) -> Path:
    path.write_text(json.dumps({**BASE, "method": method, "parameters": parameters}), "utf-8")
    return path


# --- 3. maps that cannot keep the judge's order -------------------------------------------


@pytest.mark.parametrize(
    ("method", "parameters", "value"),
    [
        ("shift", {"offset": 4.0}, "5"),
        ("shift", {"offset": -40.0}, "1"),
        ("linear", {"slope": 0.0, "intercept": 3.2}, "3.2"),
        ("linear", {"slope": 1.0, "intercept": 100.0}, "5"),
        ("isotonic", {"x": [1.0, 2.5, 5.0], "y": [3.0, 3.0, 3.0]}, "3"),
        ("isotonic", {"x": [2.0], "y": [2.5]}, "2.5"),
    ],
)
def test_a_map_with_one_value_on_1_5_is_refused_on_load(
    tmp_path: Path, method: str, parameters: dict[str, Any], value: str
) -> None:
    path = write(tmp_path / "flat.json", method, parameters)
    with pytest.raises(CalibrationError) as info:
        Calibration.from_json(path)
    message = str(info.value)
    assert message.startswith(f"calibration file {path}: refused: the {method} map")
    assert f"sends every judge score on 1-5 to {value}," in message
    assert "\n" not in message


def test_a_map_that_keeps_one_level_between_the_ends_loads(tmp_path: Path) -> None:
    loaded = Calibration.from_json(write(tmp_path / "ok.json", "shift", {"offset": 3.0}))
    assert loaded.apply(1.0) == pytest.approx(4.0) and loaded.apply(2.0) == 5.0


@pytest.mark.parametrize(
    ("method", "parameters"),
    [
        ("shift", {"offset": 3.9999999}),  # every score 5.0 to 7 digits
        ("shift", {"offset": 3.9}),
        ("shift", {"offset": -3.5}),
        ("linear", {"slope": 1e-8, "intercept": 3.0}),
        ("linear", {"slope": 0.2, "intercept": 2.0}),
        ("isotonic", {"x": [1.0, 5.0], "y": [3.0, 3.000001]}),
        ("isotonic", {"x": [1.0, 2.0, 5.0], "y": [2.5, 3.0, 3.4]}),
    ],
)
def test_a_near_constant_map_is_refused_naming_the_file(
    tmp_path: Path, method: str, parameters: dict[str, Any]
) -> None:
    """A map must keep the judge's scores distinguishable on 1-5: f(5) - f(1) >= 1 (one
    level of the scale). These squeeze the judge's whole range into less."""
    path = write(tmp_path / "near.json", method, parameters)
    with pytest.raises(CalibrationError) as info:
        Calibration.from_json(path)
    message = str(info.value)
    assert message.startswith(f"calibration file {path}: refused: the {method} map")
    assert "at least 1 level of the scale apart" in message and "\n" not in message
    with pytest.raises(CalibrationError, match="refused"):
        Calibration(method, parameters, n=5).to_json(tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()


_finite = st.floats(-6, 6, allow_nan=False)


@st.composite
def maps(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    method = draw(st.sampled_from(calibration.METHODS))
    if method == "shift":
        return method, {"offset": draw(_finite)}
    if method == "linear":
        return method, {"slope": draw(st.floats(0, 3)), "intercept": draw(_finite)}
    xs = sorted(draw(st.sets(st.floats(0, 6, allow_nan=False), min_size=1, max_size=5)))
    ys = sorted(draw(st.lists(st.floats(0, 6), min_size=len(xs), max_size=len(xs))))
    return method, {"x": xs, "y": ys}


@settings(max_examples=300, deadline=None)
@given(maps())
def test_a_map_loads_exactly_when_it_keeps_the_ends_a_level_apart(
    drawn: tuple[str, dict[str, Any]],
) -> None:
    """The rule, over generated maps: a map is accepted exactly when the calibrated
    scores of the judge's 1 and 5 lie at least one point apart; an accepted map keeps
    every pair of judge scores in order."""
    method, parameters = drawn
    record = {**BASE, "method": method, "parameters": parameters}
    low, high = (float(v) for v in np.clip(_ends(method, parameters), 1.0, 5.0))
    try:
        loaded = Calibration.from_dict(record, "m.json")
    except CalibrationError as error:
        assert high - low < 1.0 - 1e-12, str(error)
        assert str(error).startswith("m.json: refused: ")
        return
    assert high - low >= 1.0 - 1e-12
    assert loaded.apply(5.0) - loaded.apply(1.0) >= 1.0 - 1e-12
    grid = np.linspace(1, 5, 41)
    assert np.all(np.diff(loaded.apply_many(grid)) >= 0)


def _ends(method: str, parameters: dict[str, Any]) -> np.ndarray:
    """f(1), f(5) before clipping, computed here by hand (not by the module)."""
    ends = np.asarray([1.0, 5.0])
    if method == "shift":
        return ends + parameters["offset"]
    if method == "linear":
        return parameters["intercept"] + parameters["slope"] * ends
    return np.interp(ends, parameters["x"], parameters["y"])


def test_fit_refuses_a_judge_that_barely_predicts_the_humans() -> None:
    judge, human = [1.0, 2.0, 3.0, 4.0, 5.0], [3.0, 3.0, 3.5, 3.0, 3.5]
    with pytest.raises(CalibrationError, match="slope is 0.1: the judge's scores barely"):
        calibration.fit_calibration(judge, human, "linear")
    with pytest.raises(CalibrationError, match="human ratings rise only 0.5 over the judge"):
        calibration.fit_calibration(judge, human, "isotonic")


@pytest.mark.parametrize(
    ("method", "why"),
    [
        ("linear", "the least-squares slope is -0.9"),
        ("isotonic", "the human ratings never rise with the judge's scores"),
    ],
)
def test_fit_refuses_when_the_judge_ranks_opposite(method: str, why: str) -> None:
    judge, human = [2.0, 3.0, 4.0, 5.0], [4.0, 3.5, 2.0, 1.5]
    with pytest.raises(CalibrationError, match=f"no {method} map .* 4 dialog\\(s\\): {why}"):
        calibration.fit_calibration(judge, human, method)  # type: ignore[arg-type]


def test_fit_refuses_a_constant_judge_and_a_shift_past_the_scale() -> None:
    with pytest.raises(CalibrationError, match="every judge score is 3, so there is no order"):
        calibration.fit_calibration([3.0, 3.0, 3.0], [1.0, 2.0, 4.0], "linear")
    with pytest.raises(CalibrationError, match="human - judge is \\+4.*offset \\+4"):
        calibration.fit_calibration([1.0, 1.0], [5.0, 5.0], "shift")


def test_to_json_writes_no_flat_map(tmp_path: Path) -> None:
    flat = Calibration("linear", {"slope": 0.0, "intercept": 2.5}, n=4)
    out = tmp_path / "out.json"
    with pytest.raises(CalibrationError, match=f"calibration file {out}: refused"):
        flat.to_json(out)
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_isotonic_maps_keep_one_knot_per_level_edge() -> None:
    judge = [1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0]
    human = [1.0, 1.0, 1.0, 1.0, 4.0, 4.0, 4.0, 4.0, 4.0]
    fitted = calibration.fit_calibration(judge, human, "isotonic")
    assert fitted.parameters == {"x": [1.0, 2.5, 3.0, 5.0], "y": [1.0, 1.0, 4.0, 4.0]}


# --- 11. oversized calibration files --------------------------------------------------------


def test_an_oversized_file_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    path.write_bytes(b" " * (calibration.MAX_FILE_BYTES + 1))
    with pytest.raises(CalibrationError, match=f"calibration file {path}: too large \\(1048577"):
        Calibration.from_json(path)


def test_a_map_too_large_for_a_file_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(calibration, "MAX_FILE_BYTES", 300)
    big = Calibration(
        "shift", {"offset": 0.5}, n=9, fitted_on=tuple(f"{i}.eval" for i in range(50))
    )
    out = tmp_path / "big.json"
    with pytest.raises(CalibrationError, match="not written: the map is .* more than the 300"):
        big.to_json(out)
    assert not out.exists()


def test_provenance_holds_the_hash_and_a_small_map_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "c.json", "shift", {"offset": -0.5})
    loaded, record = calibration.load(path)
    assert record["sha256"] and record["bytes"] == path.stat().st_size
    assert record["parameters"] == {"offset": -0.5} and loaded.apply(3.0) == 2.5
    monkeypatch.setattr(calibration, "RECORD_MAP_BYTES", 100)
    _, record = calibration.load(path)
    assert "parameters" not in record and "fitted_on" not in record
    assert record["fitted_on_count"] == 1 and "parameters_omitted" in record


# --- 4. a retry after the file changed ------------------------------------------------------


def test_a_retry_uses_the_file_when_it_is_unchanged(tmp_path: Path) -> None:
    path = write(tmp_path / "c.json", "shift", {"offset": -0.5})
    _, recorded = calibration.load(path)
    legacy = {"file": str(path), **Calibration.from_json(path).as_dict()}  # no sha256
    for record in (recorded, legacy):
        used, provenance = calibration.for_retry(str(path), record)
        assert used is not None and used.parameters == {"offset": -0.5}
        assert provenance is not None and "retry" not in provenance


@pytest.mark.parametrize("change", ["rewritten", "deleted", "broken"])
def test_a_retry_after_the_file_changed_uses_the_original_map(tmp_path: Path, change: str) -> None:
    path = write(tmp_path / "c.json", "shift", {"offset": -0.5})
    _, recorded = calibration.load(path)
    if change == "rewritten":
        write(path, "shift", {"offset": 1.3})
    elif change == "deleted":
        path.unlink()
    else:
        path.write_text("{", "utf-8")
    used, provenance = calibration.for_retry(str(path), recorded)
    assert used is not None and used.apply(3.0) == 2.5
    assert provenance is not None and provenance["sha256"] == recorded["sha256"]
    assert "the map recorded in the retried log is used" in provenance["retry"]
    assert str(path) in provenance["retry"]


def test_a_retry_refuses_when_the_log_keeps_only_the_hash(tmp_path: Path) -> None:
    path = write(tmp_path / "c.json", "shift", {"offset": -0.5})
    _, recorded = calibration.load(path)
    del recorded["parameters"]
    write(path, "shift", {"offset": 1.3})
    with pytest.raises(CalibrationError) as info:
        calibration.for_retry(str(path), recorded)
    message = str(info.value)
    assert message.startswith(f"eval-retry: calibration file {path} changed since the run")
    assert "restore the original file or start a new run" in message and "\n" not in message


def test_a_retry_refuses_when_the_runs_disagree_on_having_a_map(tmp_path: Path) -> None:
    path = write(tmp_path / "c.json", "shift", {"offset": -0.5})
    assert calibration.for_retry(None, None) == (None, None)
    with pytest.raises(CalibrationError, match="scored with no calibration, the retry with"):
        calibration.for_retry(str(path), None)


def test_a_fresh_run_is_not_a_retry() -> None:
    assert calibration.retried_log_metadata() is None


def test_eval_retry_hands_the_task_the_original_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real ``eval_retry``: while Inspect re-creates the task, `retried_log_metadata`
    finds the retried log's metadata and `resolve` gives the original map."""
    from inspect_ai import eval, eval_retry
    from inspect_ai.model import get_model

    from inspect_empathy import tasks

    path = write(tmp_path / "c.json", "shift", {"offset": -0.5})
    seen: list[Any] = []
    provenance = tasks.calibration_provenance

    def spy(file: str | None, rubric: Any = None) -> Any:
        seen.append(calibration.resolve(file))
        return provenance(file, rubric)

    def fail(*args: Any) -> Any:
        raise RuntimeError("judge unreachable")

    monkeypatch.setattr(tasks, "calibration_provenance", spy)
    fixture = Path(__file__).parents[1] / "fixtures" / "reliability" / "dialogs.jsonl"
    task = tasks.empathy(dataset=str(fixture), calibration=str(path))
    model = get_model("mockllm/model", custom_outputs=fail)
    options: dict[str, Any] = {"log_dir": str(tmp_path / "logs"), "display": "none"}
    [log] = eval(task, model=model, fail_on_error=False, max_retries=0, **options)
    assert log.location and log.samples and all(s.error for s in log.samples)
    write(path, "shift", {"offset": 1.3})
    eval_retry(log.location, **options)
    fresh, retried = seen
    assert fresh[0].parameters == {"offset": -0.5} and "retry" not in fresh[1]
    assert retried[0].parameters == {"offset": -0.5}
    assert f"calibration file {path} changed" in retried[1]["retry"]
