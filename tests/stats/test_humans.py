"""The human ceiling: every figure recomputed here independently with scipy, sklearn
and krippendorff on the three-rater fixture (30 dialogs, some raters missing)."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from inspect_empathy.stats import humans

FIXTURE = Path(__file__).parents[1] / "fixtures" / "humans" / "three_raters.csv"
RATERS = ["rater_a", "rater_b", "rater_c"]
RESAMPLES = 200


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return pd.read_csv(FIXTURE, index_col="dialog_id")


@pytest.fixture(scope="module")
def ratings(table: pd.DataFrame) -> pd.DataFrame:
    return table[RATERS]


def half_up(values: pd.Series | np.ndarray) -> np.ndarray:
    """Independent half-up rounding (numpy's round is half-to-even)."""
    return np.floor(np.asarray(values, dtype=float) + 0.5).astype(int)


def sk_qwk(a: pd.Series | np.ndarray, b: pd.Series | np.ndarray) -> float:
    return cohen_kappa_score(half_up(a), half_up(b), weights="quadratic", labels=[1, 2, 3, 4, 5])


def test_fixture_has_missing_and_fractional_ratings(ratings: pd.DataFrame) -> None:
    # the properties the tests below rely on
    assert ratings.isna().sum().tolist() == [1, 1, 2]
    assert (ratings["rater_c"] % 1 == 0.5).sum() >= 5
    assert (half_up(ratings["rater_c"].dropna()) != np.round(ratings["rater_c"].dropna())).any()


def test_pairs_equal_scipy_and_sklearn(ratings: pd.DataFrame) -> None:
    pairs = humans.rater_pairs(ratings, resamples=0)
    assert list(zip(pairs["rater_a"], pairs["rater_b"], strict=True)) == list(
        itertools.combinations(RATERS, 2)
    )
    for row in pairs.itertuples():
        both = ratings[[row.rater_a, row.rater_b]].dropna()
        assert row.n == len(both)
        expected = stats.spearmanr(both[row.rater_a], both[row.rater_b]).statistic
        assert row.spearman == pytest.approx(expected, abs=1e-12)
        assert row.qwk == pytest.approx(sk_qwk(both[row.rater_a], both[row.rater_b]), abs=1e-12)
    # missing raters: a pair is computed on the dialogs both rated, none dropped beyond that
    assert pairs["n"].tolist() == [28, 28, 27]


@pytest.mark.parametrize("aggregate", ["median", "mean"])
def test_rater_vs_rest_equals_leave_one_rater_out(ratings: pd.DataFrame, aggregate: str) -> None:
    rest = humans.rater_vs_rest(ratings, aggregate=aggregate, resamples=0)
    assert rest["rater_a"].tolist() == RATERS
    assert set(rest["rater_b"]) == {"rest"}
    for row in rest.itertuples():
        others = ratings.drop(columns=[row.rater_a])
        target = others.median(axis=1) if aggregate == "median" else others.mean(axis=1)
        keep = ratings[row.rater_a].notna() & others.notna().any(axis=1)
        x, y = ratings.loc[keep, row.rater_a], target[keep]
        assert row.n == keep.sum()
        assert row.spearman == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
        assert row.qwk == pytest.approx(sk_qwk(x, y), abs=1e-12)


def test_aggregate_default_is_median() -> None:
    # three raters 1, 2, 5: median 2, mean 8/3; the rest of a rater is the other two
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [2.0, 4.0], "c": [5.0, np.nan]}, index=["p", "q"])
    assert humans.aggregate_ratings(df).tolist() == [2.0, 3.0]
    assert humans.aggregate_ratings(df, "mean").tolist() == pytest.approx([8 / 3, 3.0])
    ratings = humans.validate_ratings(df)
    assert humans.rest_of(ratings, "c").tolist() == [1.5, 3.0]
    with pytest.raises(ValueError, match="'median' or 'mean'"):
        humans.aggregate_ratings(df, "mode")  # type: ignore[arg-type]


def test_missing_raters_are_kept_and_counted(ratings: pd.DataFrame) -> None:
    present = humans.raters_present(ratings)
    assert present["d20"] == 1  # rated by rater_b only
    assert present.value_counts().to_dict() == {3: 27, 2: 2, 1: 1}
    summary = humans.ceiling_summary(ratings)
    assert summary["dialogs"] == 30
    assert summary["dialogs_missing_raters"] == 3
    # d20 has one rater: it takes part in no pair and in no rater-vs-rest row
    rest = humans.rater_vs_rest(ratings, resamples=0).set_index("rater_a")["n"]
    assert rest["rater_b"] == 28  # 29 dialogs rated by rater_b, minus d20


def test_alpha_equals_krippendorff(ratings: pd.DataFrame) -> None:
    data = np.where(ratings.isna(), np.nan, half_up(ratings.fillna(3))).T.astype(float)
    expected = krippendorff.alpha(
        reliability_data=data, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5]
    )
    result = humans.ordinal_alpha(ratings, resamples=RESAMPLES)
    assert result["alpha"] == pytest.approx(expected, abs=1e-12)
    assert result["n"] == 29
    assert result["alpha_low"] < result["alpha"] < result["alpha_high"]


def test_cis_bracket_the_estimate_and_are_seeded(ratings: pd.DataFrame) -> None:
    first = humans.humans_table(ratings, resamples=RESAMPLES, seed=3)
    again = humans.humans_table(ratings, resamples=RESAMPLES, seed=3)
    other = humans.humans_table(ratings, resamples=RESAMPLES, seed=4)
    pd.testing.assert_frame_equal(first, again)
    assert not first["qwk_low"].equals(other["qwk_low"])
    for name in ("spearman", "qwk"):
        assert (first[f"{name}_low"] < first[name]).all()
        assert (first[name] < first[f"{name}_high"]).all()
        assert (first[f"{name}_high"] <= 1).all()
    no_ci = humans.humans_table(ratings, resamples=0)
    assert no_ci[["spearman_low", "qwk_high"]].isna().all().all()
    pd.testing.assert_series_equal(no_ci["qwk"], first["qwk"])


def test_ci_matches_scipy_bootstrap(ratings: pd.DataFrame) -> None:
    both = ratings[["rater_a", "rater_b"]].dropna()
    x, y = both["rater_a"].to_numpy(), both["rater_b"].to_numpy()
    row = humans.agreement_row("a", "b", x, y, resamples=RESAMPLES, seed=7)
    expected = stats.bootstrap(
        (x, y),
        lambda a, b: stats.spearmanr(a, b).statistic,
        n_resamples=RESAMPLES,
        paired=True,
        vectorized=False,
        method="BCa",
        rng=np.random.default_rng(7),
    ).confidence_interval
    assert row["spearman_low"] == pytest.approx(expected.low, abs=1e-9)
    assert row["spearman_high"] == pytest.approx(expected.high, abs=1e-9)


def test_humans_table_columns(ratings: pd.DataFrame) -> None:
    result = humans.humans_table(ratings, resamples=0)
    assert list(result.columns) == [
        "rater_a",
        "rater_b",
        "n",
        "spearman",
        "spearman_low",
        "spearman_high",
        "qwk",
        "qwk_low",
        "qwk_high",
    ]
    assert len(result) == 3 + 3
    assert result["rater_b"].tolist()[3:] == ["rest"] * 3


@pytest.mark.parametrize("judge_name", ["judge_x", "judge_y"])
def test_judge_on_the_same_footing(table: pd.DataFrame, judge_name: str) -> None:
    ratings, judge = table[RATERS], table[judge_name]
    result = humans.judge_vs_aggregate(judge, ratings, resamples=0)
    assert result["rater_a"].unique().tolist() == [judge_name]
    assert result["rater_b"].tolist() == [f"rest of {r}" for r in RATERS] + ["all raters"]
    rest = humans.rater_vs_rest(ratings, resamples=0)
    for rater, row, rater_row in zip(
        RATERS, result.iloc[:3].itertuples(), rest.itertuples(), strict=True
    ):
        others = ratings.drop(columns=[rater])
        keep = ratings[rater].notna() & others.notna().any(axis=1)
        # same dialogs as the rater's own row against the rest (less those unscored)
        assert rater_row.n == keep.sum()
        keep &= judge.notna()
        x, y = judge[keep], others.median(axis=1)[keep]
        assert row.n == keep.sum()
        assert row.spearman == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
        assert row.qwk == pytest.approx(sk_qwk(x, y), abs=1e-12)
    everyone = result.iloc[-1]
    keep = judge.notna()
    assert everyone["n"] == keep.sum()
    assert everyone["qwk"] == pytest.approx(sk_qwk(judge[keep], ratings.median(axis=1)[keep]))
    summary = humans.judge_summary(judge, ratings)
    assert summary["rest_qwk_median"] == pytest.approx(result["qwk"].iloc[:3].median())


def test_judge_x_ranks_like_a_person_but_sits_off_scale(table: pd.DataFrame) -> None:
    # the fixture's story (docs/humans-and-calibration.md): judge_x is shifted up by ~1
    ceiling = humans.ceiling_summary(table[RATERS])
    judge = humans.judge_summary(table["judge_x"], table[RATERS])
    assert judge["rest_spearman_median"] > ceiling["rest_spearman_median"]
    assert judge["rest_qwk_median"] < ceiling["rest_qwk_median"]


def test_ceiling_summary_is_the_tables_medians(ratings: pd.DataFrame) -> None:
    summary = humans.ceiling_summary(ratings)
    pairs = humans.rater_pairs(ratings, resamples=0)
    rest = humans.rater_vs_rest(ratings, resamples=0)
    assert summary["raters"] == 3
    assert summary["pair_qwk_median"] == pytest.approx(pairs["qwk"].median())
    assert summary["pair_spearman_median"] == pytest.approx(pairs["spearman"].median())
    assert summary["rest_qwk_median"] == pytest.approx(rest["qwk"].median())
    assert summary["alpha"] == pytest.approx(humans.ordinal_alpha(ratings, resamples=0)["alpha"])
    assert all(isinstance(v, float) for v in summary.values())


def test_undefined_figures_are_nan_not_errors() -> None:
    # a constant rater: Spearman undefined; QWK 0 or undefined, never an exception
    df = pd.DataFrame({"a": [3.0, 3, 3, 3], "b": [1.0, 2, 4, 5]})
    row = humans.rater_pairs(df, resamples=50).iloc[0]
    assert row["n"] == 4
    assert math.isnan(row["spearman"]) and math.isnan(row["spearman_low"])
    # no dialog rated by both
    df = pd.DataFrame({"a": [3.0, np.nan], "b": [np.nan, 4.0]})
    row = humans.rater_pairs(df, resamples=50).iloc[0]
    assert row["n"] == 0 and math.isnan(row["qwk"])
    assert math.isnan(humans.ordinal_alpha(df)["alpha"])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (7, r"rater 'b', dialog 'q': 7 is outside the 1-5 scale"),
        ("good", r"rater 'b', dialog 'q': 'good' is not a number"),
        (0.5, r"rater 'b', dialog 'q': 0.5 is outside"),
    ],
)
def test_bad_ratings_are_named(value: object, message: str) -> None:
    df = pd.DataFrame({"a": [1, 2], "b": [3, value]}, index=["p", "q"], dtype=object)
    with pytest.raises(ValueError, match=message):
        humans.rater_pairs(df)


def test_input_shape_errors() -> None:
    with pytest.raises(ValueError, match="1 rater column.*need at least 2"):
        humans.rater_pairs(pd.DataFrame({"a": [1.0]}))
    with pytest.raises(ValueError, match="repeated: a"):
        humans.rater_pairs(pd.DataFrame([[1.0, 2.0]], columns=["a", "a"]))
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [2.0, 3.0]}, index=["p", "q"])
    with pytest.raises(ValueError, match="judge 'j': 1 dialog.*not in the ratings: z"):
        humans.judge_vs_aggregate(pd.Series([3.0], index=["z"], name="j"), df)
    with pytest.raises(ValueError, match="judge 'j', dialog 'p': 9.0 is outside"):
        humans.judge_vs_aggregate(pd.Series([9.0], index=["p"], name="j"), df)


def test_ratings_frame_from_per_dialog_ratings(ratings: pd.DataFrame) -> None:
    per_dialog = {
        dialog: {rater: (None if pd.isna(v) else v) for rater, v in row.items()}
        for dialog, row in ratings.to_dict("index").items()
    }
    del per_dialog["d20"]["rater_a"]  # an absent key is a missing rating too
    frame = humans.ratings_frame(per_dialog)
    pd.testing.assert_frame_equal(frame, ratings, check_names=False)
    with pytest.raises(ValueError, match="rater 'b', dialog 'q': 6 is outside"):
        humans.ratings_frame({"p": {"a": 1}, "q": {"b": 6}})
    late = humans.ratings_frame({"p": {"a": 1}, "q": {"b": 2, "a": 3}})
    assert list(late.columns) == ["a", "b"] and math.isnan(late.loc["p", "b"])
