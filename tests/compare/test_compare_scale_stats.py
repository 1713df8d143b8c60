"""The bootstraps at scale: a paired test is the difference of its two judges' bootstrap
distributions over the same draws, so each judge's is computed once for all its pairs, and
the result is exactly the joint bootstrap's."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspect_empathy.compare import stats, tables
from inspect_empathy.stats._agreement import BCA_MAX_N


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(3, 60),
    resamples=st.integers(1, 40),
    seed=st.integers(0, 2**32 - 1),
    data=st.data(),
)
def test_the_difference_of_two_judges_draws_is_the_joint_bootstrap(
    n: int, resamples: int, seed: int, data: st.DataObject
) -> None:
    levels = st.sampled_from([1.0, 1.5, 2.0, 3.0, 3.25, 4.0, 5.0])
    a, b, h = (np.array(data.draw(st.lists(levels, min_size=n, max_size=n))) for _ in range(3))

    # the joint bootstrap: the three columns resampled together, ranked per draw
    drawn = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    ra, rb, rh = (stats._Ranker(column).ranks(drawn) for column in (a, b, h))
    expected = stats._rho(ra, rh, n) - stats._rho(rb, rh, n)
    apart = stats.rho_draws(a, h, resamples, seed) - stats.rho_draws(b, h, resamples, seed)
    # the same draws; two ways of summing the ranks (`_PairRanks.rho`, `_rho`)
    np.testing.assert_allclose(apart, expected, rtol=0, atol=1e-12)


def judges_table(judges: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    human = rng.integers(1, 6, size=n).astype(float)
    frames = [
        pd.DataFrame(
            {
                "id": [f"d{i}" for i in range(n)],
                "judge": f"judge-{j}",
                "score": np.clip(human + rng.normal(0, 0.3 + 0.3 * j, size=n), 1, 5),
                "human": human,
            }
        )
        for j in range(judges)
    ]
    return pd.concat(frames, ignore_index=True)


def count_bootstraps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The (judge, human) bootstraps drawn from now on: 2 (columns) for each."""
    calls: list[int] = []
    real = stats.spearman_draws

    def counted(x, y, resamples, seed):  # noqa: ANN001, ANN202
        calls.append(2)
        return real(x, y, resamples, seed)

    monkeypatch.setattr(stats, "spearman_draws", counted)
    return calls


def test_each_judge_is_bootstrapped_once_for_all_its_pairs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = count_bootstraps(monkeypatch)
    stats._kept.clear()
    samples = judges_table(judges=5, n=BCA_MAX_N + 50)  # past BCa: the percentile bootstrap
    names = [f"judge-{j}" for j in range(5)]
    pairs = tables.pair_table(samples, names, resamples=60, seed=3)
    assert len(pairs) == len(list(itertools.combinations(names, 2))) == 10
    assert calls == [2] * 5  # one (judge, human) bootstrap per judge, not three columns a pair
    assert pairs["diff_low"].notna().all() and (pairs["diff_low"] <= pairs["diff"]).all()
    # a pair's figures depend on its two judges only
    fewer = tables.pair_table(samples, names[:3], resamples=60, seed=3).set_index(
        ["judge_a", "judge_b"]
    )
    shared = pairs.set_index(["judge_a", "judge_b"]).loc[fewer.index]
    pd.testing.assert_frame_equal(shared[fewer.columns].drop(columns="p_holm"),
                                  fewer.drop(columns="p_holm"), check_dtype=False)  # fmt: skip


def test_the_pairs_reuse_the_judge_tables_bootstraps(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two judges that scored every dialog: the judge table draws each judge's bootstrap
    on the common dialogs, and their pair draws none of its own."""
    from fixture_logs import JUDGES_JSONL, LENGTH, LEXICON, run_judges

    from inspect_empathy.compare import load_scores

    run_judges(tmp_path, JUDGES_JSONL, [LEXICON, LENGTH])
    loaded = load_scores(tmp_path)
    monkeypatch.setattr(stats, "BCA_MAX_N", 0)  # the percentile bootstrap at 30 dialogs
    drawn = count_bootstraps(monkeypatch)
    during: dict[str, int] = {}
    real_pairs = tables.pair_table

    def pairs(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        before = len(drawn)
        table = real_pairs(*args, **kwargs)
        during["pairs"] = len(drawn) - before
        return table

    monkeypatch.setattr(tables, "pair_table", pairs)
    stats._kept.clear()
    comparison = tables.build_comparison(loaded, resamples=50, seed=0)
    assert len(comparison.pairs) == 1 and comparison.common == 30
    assert during["pairs"] == 0


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(3, 40),
    seed=st.integers(0, 2**32 - 1),
    many_levels=st.booleans(),
    data=st.data(),
)
def test_spearman_from_draw_counts_is_spearman_of_the_resampled_arrays(
    n: int, seed: int, many_levels: bool, data: st.DataObject
) -> None:
    """`spearman_draws` reads each resample from its draw counts alone: it equals scipy's
    Spearman of the arrays the counts stand for, ties in either variable included, with
    ``y`` of few levels or of many."""
    from scipy import stats as scipy_stats

    from inspect_empathy.stats._resample import resample_counts

    ties = st.sampled_from([1.0, 2.0, 2.5, 3.0, 4.0, 5.0])
    x = np.array(data.draw(st.lists(st.one_of(ties, st.floats(1, 5)), min_size=n, max_size=n)))
    levels = st.floats(0, 200) if many_levels else ties
    y = np.array(data.draw(st.lists(levels, min_size=n, max_size=n)))
    got = stats.spearman_draws(x, y, 12, seed)
    for row, counts in enumerate(resample_counts(n, 12, seed)):
        drawn = np.repeat(np.arange(n), counts)
        if np.ptp(x[drawn]) == 0 or np.ptp(y[drawn]) == 0:
            assert np.isnan(got[row])
        else:
            expected = scipy_stats.spearmanr(x[drawn], y[drawn]).statistic
            assert got[row] == pytest.approx(expected, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(3, 300), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_spearman_by_cells_is_spearman_dialog_by_dialog(
    n: int, seed: int, data: st.DataObject
) -> None:
    """Scores of few values (integers, averages of a few samples) are read by cells of
    score and rating (`_CellRanks`): the very floats the dialog by dialog sums give."""
    from inspect_empathy.stats._resample import resample_counts

    few = st.sampled_from([1.0, 2.0, 2.5, 3.0, 4.0, 5.0])
    x = np.array(data.draw(st.lists(st.one_of(few, few, st.floats(1, 5)), min_size=n, max_size=n)))
    y = np.array(data.draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 4.0, 5.0]), min_size=n,
                                    max_size=n)))  # fmt: skip
    counts = resample_counts(n, 20, seed)
    rows = stats._PairRanks(x, y).rows(counts)
    by_dialog = stats._PairRanks(x, y).rho(counts, rows)
    by_cell = stats._CellRanks(x, y).rho(counts, rows)
    np.testing.assert_array_equal(by_cell, by_dialog)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(120, 300), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_somers_by_table_is_somers_dialog_by_dialog(n: int, seed: int, data: st.DataObject) -> None:
    """The headline's bootstrap reads few distinct scores as a table of score groups and
    rating levels: the very floats the dialog by dialog sums give, unscored dialogs too."""
    from inspect_empathy.stats._agreement import _SomersPlan
    from inspect_empathy.stats._resample import resample_counts

    scores = st.sampled_from([1.0, 2.0, 3.0, 4.0, 5.0, float("nan")])
    x = np.array(data.draw(st.lists(scores, min_size=n, max_size=n)))
    y = np.array(data.draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, 4.5]), min_size=n,
                                    max_size=n)))  # fmt: skip
    counts = resample_counts(n, 20, seed)
    plan = _SomersPlan(x, y)
    assert plan.table is not None or np.isnan(x).sum() > n - 100
    by_table = plan(counts)
    plan.table = None
    np.testing.assert_array_equal(by_table, plan(counts))
