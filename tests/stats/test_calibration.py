"""Cross-fitted calibration: the maps equal independent fits (numpy, sklearn), a dialog
never takes part in the map that predicts it, and maps survive a JSON round trip."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import cohen_kappa_score

from inspect_empathy.stats import calibration
from inspect_empathy.stats.calibration import Calibration

FIXTURE = Path(__file__).parents[1] / "fixtures" / "humans" / "three_raters.csv"
RATERS = ["rater_a", "rater_b", "rater_c"]


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    df = pd.read_csv(FIXTURE, index_col="dialog_id")
    df["human"] = df[RATERS].median(axis=1)
    return df


def large(n: int = 120, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """A judge shifted up and compressed, beyond the leave-one-out size (k-fold)."""
    rng = np.random.default_rng(seed)
    human = np.clip(np.round(rng.uniform(1, 5, n) * 2) / 2, 1, 5)
    judge = np.clip(2.2 + 0.6 * human + rng.normal(0, 0.4, n), 1, 5).round(2)
    return judge, human


def independent_fit(x: np.ndarray, y: np.ndarray, method: str):  # noqa: ANN201
    """The map fitted here without the module: numpy and sklearn."""
    if method == "shift":
        offset = np.mean(y - x)
        return lambda s: np.clip(s + offset, 1, 5)
    if method == "linear":
        slope, intercept = np.polyfit(x, y, 1)
        if slope < 0:
            slope, intercept = 0.0, np.mean(y)
        return lambda s: np.clip(intercept + slope * s, 1, 5)
    model = IsotonicRegression(out_of_bounds="clip").fit(x, y)
    return lambda s: np.clip(model.predict(np.atleast_1d(s)), 1, 5)


@pytest.mark.parametrize("method", calibration.METHODS)
def test_fit_equals_independent_fit(table: pd.DataFrame, method: str) -> None:
    for judge in ("judge_x", "judge_y"):
        keep = table[judge].notna()
        x, y = table.loc[keep, judge].to_numpy(), table.loc[keep, "human"].to_numpy()
        fitted = calibration.fit_calibration(table[judge], table["human"], method)
        assert fitted.n == keep.sum()
        grid = np.linspace(0.5, 5.5, 41)
        np.testing.assert_allclose(fitted.apply_many(grid), independent_fit(x, y, method)(grid))
        assert fitted.apply(float(x[0])) == pytest.approx(independent_fit(x, y, method)(x[:1])[0])


def test_shift_and_linear_parameters() -> None:
    judge = np.array([2.0, 3.0, 4.0, 5.0])
    human = np.array([1.0, 2.0, 3.5, 3.5])
    assert calibration.fit_calibration(judge, human).parameters == {"offset": -1.0}
    assert calibration.fit_calibration(judge, human, "linear").parameters["slope"] > 0


def test_pava_fallback_equals_scipy() -> None:
    rng = np.random.default_rng(1)
    y, w = rng.normal(size=60), rng.uniform(0.5, 3, 60)
    expected = calibration.pool_adjacent_violators(y, w)
    np.testing.assert_allclose(calibration._pava(y, w), expected)
    assert np.all(np.diff(expected) >= -1e-12)
    assert not np.all(np.diff(y) >= 0)


@pytest.mark.parametrize("method", calibration.METHODS)
def test_maps_are_monotone_and_clipped(table: pd.DataFrame, method: str) -> None:
    fitted = calibration.fit_calibration(table["judge_x"], table["human"], method)
    grid = np.linspace(1, 5, 81)
    mapped = fitted.apply_many(grid)
    assert np.all(np.diff(mapped) >= -1e-12)
    assert mapped.min() >= 1 and mapped.max() <= 5
    assert math.isnan(fitted.apply(math.nan))
    shifted = calibration.fit_calibration([1.0, 2.0], [4.0, 5.0])
    assert shifted.apply(4.0) == 5.0


@pytest.mark.parametrize("method", calibration.METHODS)
def test_leave_one_out_equals_fits_without_the_dialog(table: pd.DataFrame, method: str) -> None:
    keep = table["judge_y"].notna()
    x, y = table.loc[keep, "judge_y"].to_numpy(), table.loc[keep, "human"].to_numpy()
    predicted = calibration.cross_fitted(x, y, method)
    for i in range(len(x)):
        others = np.arange(len(x)) != i
        assert predicted[i] == pytest.approx(independent_fit(x[others], y[others], method)(x[i]))


@pytest.mark.parametrize("method", calibration.METHODS)
def test_cross_fitting_never_sees_the_dialog_it_predicts_loo(
    table: pd.DataFrame, method: str
) -> None:
    # n = 30: leave-one-out. Turn one dialog's human rating into its opposite extreme:
    # its own prediction must not move, while predictions that used it do.
    x, y = table["judge_x"].to_numpy(), table["human"].to_numpy()
    target = int(np.argmax(x))  # the highest judge score: it matters to every map
    changed = y.copy()
    changed[target] = 1.0 if y[target] > 3 else 5.0
    before = calibration.cross_fitted(x, y, method)
    after = calibration.cross_fitted(x, changed, method)
    assert after[target] == before[target]
    others = np.arange(len(x)) != target
    moved = after[others] != before[others]
    assert moved.any()
    if method != "isotonic":  # shift and linear: every other dialog's map used it
        inside = (before[others] > 1) & (before[others] < 5)
        assert moved[inside].all()


def test_an_in_sample_fit_would_see_it(table: pd.DataFrame) -> None:
    # the counterpart of the test above: without cross-fitting the dialog moves its own
    # prediction, so that test would catch a leak
    x, y = table["judge_x"].to_numpy(), table["human"].to_numpy()
    target = int(np.argmax(x))
    changed = y.copy()
    changed[target] = 1.0
    before = calibration.fit_calibration(x, y).apply(x[target])
    after = calibration.fit_calibration(x, changed).apply(x[target])
    assert after != before


@pytest.mark.parametrize("method", calibration.METHODS)
def test_cross_fitting_never_sees_the_dialog_it_predicts_k_fold(method: str) -> None:
    judge, human = large()
    folds = calibration.fold_assignment(len(judge), folds=10, seed=0)
    assert sorted(np.bincount(folds).tolist()) == [12] * 10
    target = int(np.argmax(judge))
    changed = human.copy()
    changed[target] = 1.0
    before = calibration.cross_fitted(judge, human, method, folds=10, seed=0)
    after = calibration.cross_fitted(judge, changed, method, folds=10, seed=0)
    same_fold = folds == folds[target]
    # the dialog's fold (itself included) is predicted by a map fitted without it
    np.testing.assert_array_equal(after[same_fold], before[same_fold])
    assert (after[~same_fold] != before[~same_fold]).any()
    if method != "isotonic":  # every other fold's map used it (bar values clipped to 1-5)
        inside = ~same_fold & (before > 1) & (before < 5)
        assert (after[inside] != before[inside]).all()
    # and each fold's predictions equal a fit on the other folds
    for fold in range(10):
        held = folds == fold
        fit = independent_fit(judge[~held], human[~held], method)
        np.testing.assert_allclose(before[held], fit(judge[held]))


def test_folds_are_seeded_and_leave_one_out_when_small() -> None:
    np.testing.assert_array_equal(calibration.fold_assignment(50, 10), np.arange(50))
    np.testing.assert_array_equal(calibration.fold_assignment(60, 60), np.arange(60))
    a, b = calibration.fold_assignment(120, 10, seed=1), calibration.fold_assignment(120, 10, 2)
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(a, calibration.fold_assignment(120, 10, seed=1))
    with pytest.raises(ValueError, match="at least 2 folds"):
        calibration.fold_assignment(120, 1)


def test_missing_pairs_are_not_predicted(table: pd.DataFrame) -> None:
    predicted = calibration.cross_fitted(table["judge_y"], table["human"])
    assert np.isnan(predicted).tolist() == table["judge_y"].isna().tolist()
    with pytest.raises(ValueError, match="at least 2 dialogs .* found 1"):
        calibration.cross_fitted([3.0, np.nan], [2.0, 4.0])


def test_calibrated_agreement(table: pd.DataFrame) -> None:
    result = calibration.calibrated_agreement(
        table["judge_x"], table["human"], "shift", resamples=200
    )
    x, y = table["judge_x"].to_numpy(), table["human"].to_numpy()
    oof = calibration.cross_fitted(x, y, "shift")

    def qwk(a: np.ndarray, b: np.ndarray) -> float:
        a, b = (np.floor(np.asarray(v) + 0.5).astype(int) for v in (a, b))
        return cohen_kappa_score(a, b, weights="quadratic", labels=[1, 2, 3, 4, 5])

    assert result["method"] == "shift" and result["n"] == 30
    assert result["mae"] == pytest.approx(np.mean(np.abs(x - y)))
    assert result["qwk"] == pytest.approx(qwk(x, y))
    assert result["mae_calibrated"] == pytest.approx(np.mean(np.abs(oof - y)))
    assert result["qwk_calibrated"] == pytest.approx(qwk(oof, y))
    # the fixture's judge_x sits about one point high: calibration helps it
    assert result["qwk_calibrated"] > result["qwk"] + 0.1
    assert result["mae_calibrated"] < result["mae"]
    for name in ("mae", "qwk", "mae_calibrated", "qwk_calibrated"):
        assert result[f"{name}_low"] < result[name] < result[f"{name}_high"]


def test_json_round_trip(tmp_path: Path, table: pd.DataFrame) -> None:
    for method in calibration.METHODS:
        fitted = calibration.fit_calibration(
            table["judge_x"], table["human"], method, fitted_on=["a.eval", "b.eval"]
        )
        path = tmp_path / f"{method}.json"
        text = fitted.to_json(path)
        assert json.loads(path.read_text()) == json.loads(text)
        loaded = Calibration.from_json(path)
        assert loaded == fitted
        assert loaded.fitted_on == ("a.eval", "b.eval") and loaded.n == 30
        assert loaded.created == fitted.created != ""
        grid = np.linspace(1, 5, 17)
        np.testing.assert_array_equal(loaded.apply_many(grid), fitted.apply_many(grid))


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


GOOD = {"format": "inspect-empathy-calibration", "version": 1, "method": "shift"}
GOOD |= {"parameters": {"offset": -0.5}, "n": 30, "fitted_on": ["x.eval"]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", r":1: bad JSON: Expecting property name"),
        ([1, 2], r"expected a JSON object"),
        ({**GOOD, "format": "other"}, r"not an inspect-empathy calibration"),
        ({**GOOD, "version": 2}, r"version 2 is not supported"),
        ({k: v for k, v in GOOD.items() if k != "parameters"}, r"missing key\(s\) parameters"),
        ({**GOOD, "method": "spline"}, r"unknown method 'spline'"),
        ({**GOOD, "parameters": {"shift": 1}}, r"shift parameters must be exactly offset"),
        ({**GOOD, "parameters": {"offset": "1"}}, r"must be finite numbers"),
        (
            {**GOOD, "method": "linear", "parameters": {"slope": -1, "intercept": 5}},
            r"slope must not be negative",
        ),
        (
            {**GOOD, "method": "isotonic", "parameters": {"x": [1, 2], "y": [3, 2]}},
            r"y must not decrease",
        ),
        ({**GOOD, "n": 0}, r"n must be a positive integer"),
        ({**GOOD, "fitted_on": "x.eval"}, r"fitted_on must be a list"),
    ],
)
def test_bad_calibration_files_are_named(tmp_path: Path, data: object, message: str) -> None:
    path = _write(tmp_path / "calibration.json", data)
    with pytest.raises(ValueError, match=rf"calibration file {path}.*{message}"):
        Calibration.from_json(path)


def test_good_file_loads_and_missing_file_is_named(tmp_path: Path) -> None:
    loaded = Calibration.from_json(_write(tmp_path / "ok.json", GOOD))
    assert loaded.apply(4.0) == 3.5
    missing = tmp_path / "nowhere.json"
    with pytest.raises(ValueError, match=rf"calibration file {missing}: no such file"):
        Calibration.from_json(missing)


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="one of shift, linear, isotonic, not 'spline'"):
        calibration.fit_calibration([1.0], [1.0], "spline")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="judge score 6 .*outside the 1-5 scale"):
        calibration.fit_calibration([6.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="same length"):
        calibration.cross_fitted([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="no dialog has both"):
        calibration.fit_calibration([np.nan], [3.0])


def test_series_are_paired_by_dialog_id(table: pd.DataFrame) -> None:
    judge, human = table["judge_x"], table["human"]
    shuffled = human.sample(frac=1, random_state=0)
    assert not shuffled.index.equals(judge.index)
    predicted = calibration.cross_fitted(judge, shuffled)
    assert isinstance(predicted, pd.Series) and predicted.index.equals(judge.index)
    np.testing.assert_array_equal(predicted, calibration.cross_fitted(judge.to_numpy(), human))
    for method in calibration.METHODS:
        fitted = calibration.fit_calibration(judge, shuffled, method)
        assert fitted.parameters == calibration.fit_calibration(judge, human, method).parameters
    with pytest.raises(ValueError, match="cover different dialogs: d30"):
        calibration.cross_fitted(judge, human.drop("d30"))


def test_docs_worked_example_matches_the_code(table: pd.DataFrame) -> None:
    # every number of docs/humans-and-calibration.md's worked example, recomputed
    from inspect_empathy.stats import humans

    doc = (Path(__file__).parents[2] / "docs" / "humans-and-calibration.md").read_text("utf-8")
    ratings = table[RATERS]

    def ci(row: dict | pd.Series, key: str) -> str:
        return f"{row[key]:.2f} [{row[key + '_low']:.2f}, {row[key + '_high']:.2f}]"

    rows = [humans.humans_table(ratings)]
    rows += [humans.judge_vs_aggregate(table[j], ratings) for j in ("judge_x", "judge_y")]
    for row in pd.concat(rows).to_dict("records"):
        line = f"| {row['rater_a']} | {row['rater_b']} | {row['n']} | "
        assert line + f"{ci(row, 'spearman')} | {ci(row, 'qwk')} |" in doc
    alpha = humans.ordinal_alpha(ratings)
    assert f"Ordinal alpha is {ci(alpha, 'alpha')} over the 29 dialogs" in doc
    human = humans.aggregate_ratings(ratings)
    for judge in ("judge_x", "judge_y"):
        for method in calibration.METHODS:
            r = calibration.calibrated_agreement(table[judge], human, method)
            line = f"| {judge} | {method} | {r['n']} | {ci(r, 'mae')} → {ci(r, 'mae_calibrated')} "
            assert line + f"| {ci(r, 'qwk')} → {ci(r, 'qwk_calibrated')} |" in doc
    offset = calibration.fit_calibration(table["judge_x"], human).parameters["offset"]
    assert f"({offset:.2f} fitted on all 30 dialogs" in doc
    # in-sample against cross-fitted, for judge_x
    x, y = table["judge_x"].to_numpy(), human.to_numpy()
    figures = {"in": ([], []), "cross": ([], [])}
    for method in calibration.METHODS:
        fitted = calibration.fit_calibration(x, y, method).apply_many(x)
        for key, mapped in (("in", fitted), ("cross", calibration.cross_fitted(x, y, method))):
            qwk = cohen_kappa_score(
                np.floor(mapped + 0.5).astype(int),
                np.floor(y + 0.5).astype(int),
                weights="quadratic",
                labels=[1, 2, 3, 4, 5],
            )
            figures[key][0].append(f"{qwk:.3f}")
            figures[key][1].append(f"{np.mean(np.abs(mapped - y)):.3f}")
    flat = " ".join(doc.split())
    summary = humans.ceiling_summary(ratings)
    assert (
        f"median pairwise QWK of {summary['pair_qwk_median']:.2f}, Spearman "
        f"{summary['pair_spearman_median']:.2f}, and median rater-vs-rest QWK "
        f"{summary['rest_qwk_median']:.3f}, Spearman {summary['rest_spearman_median']:.3f}."
    ) in flat
    (in_qwk, in_mae), (cross_qwk, cross_mae) = figures["in"], figures["cross"]
    assert f"QWK {' / '.join(in_qwk)} and MAE {' / '.join(in_mae)} (shift" in flat
    assert f"QWK {' / '.join(cross_qwk)} and MAE {' / '.join(cross_mae)}." in flat


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 40), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_counted_mae_and_qwk_are_those_of_the_resampled_arrays(
    n: int, seed: int, data: st.DataObject
) -> None:
    """Past `BCA_MAX_N` dialogs the MAE and QWK intervals are read from draw counts: each
    resample's figures equal MAE and QWK of the arrays the counts stand for."""
    from inspect_empathy.stats._agreement import quadratic_weighted_kappa, round_score
    from inspect_empathy.stats._resample import resample_counts

    score = st.one_of(st.sampled_from([1.0, 2.5, 3.0, 4.0, 5.0]), st.floats(1, 5))
    x = np.array(data.draw(st.lists(score, min_size=n, max_size=n)))
    y = np.array(data.draw(st.lists(st.integers(1, 5), min_size=n, max_size=n)), dtype=float)
    mae, qwk = calibration._counted_draws(x, y, 10, seed)
    for row, counts in enumerate(resample_counts(n, 10, seed)):
        drawn = np.repeat(np.arange(n), counts)
        assert mae[row] == pytest.approx(np.mean(np.abs(x[drawn] - y[drawn])), abs=1e-12)
        expected = quadratic_weighted_kappa(round_score(x[drawn]), round_score(y[drawn]))
        assert qwk[row] == pytest.approx(expected, abs=1e-12, nan_ok=True)


def test_large_samples_take_the_counted_intervals(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4)
    human = rng.integers(1, 6, size=60).astype(float)
    judge = np.clip(human + rng.normal(0, 0.8, size=60), 1, 5)
    monkeypatch.setattr(calibration, "BCA_MAX_N", 50)
    got = calibration.calibrated_agreement(judge, human, "shift", resamples=200, seed=1)
    mae, qwk = calibration._counted_draws(judge, human, 200, 1)
    assert [got["mae_low"], got["mae_high"]] == pytest.approx(np.percentile(mae, [2.5, 97.5]))
    finite = qwk[np.isfinite(qwk)]
    assert [got["qwk_low"], got["qwk_high"]] == pytest.approx(np.percentile(finite, [2.5, 97.5]))
    assert got["mae_low"] <= got["mae"] <= got["mae_high"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('"offset": 0.5, "offset": 3.0', r"key 'offset' given twice in one object \(0.5, then 3"),
        ('"offset": NaN', r"NaN is not a number JSON allows"),
    ],
)
def test_a_key_given_twice_or_nan_is_refused(tmp_path: Path, text: str, message: str) -> None:
    """Issue 48.5: ``"offset": 0.5, "offset": 3.0`` applied the last value (3.0 added to
    every score). The one JSON reader refuses a repeated key and NaN, naming the file."""
    body = json.dumps({k: v for k, v in GOOD.items() if k != "parameters"})
    path = tmp_path / "twice.json"
    path.write_text(body[:-1] + ', "parameters": {' + text + "}}", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"calibration file {path}: bad JSON: {message}"):
        Calibration.from_json(path)
