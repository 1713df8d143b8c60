"""One QWK and one Krippendorff's alpha for the whole package, QWK undefined where a
rater has no variation (as Spearman is), never 0, and the headline's bootstrap statistic."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspect_empathy.compare import kappa
from inspect_empathy.stats import _agreement as _stats
from inspect_empathy.stats import humans

ratings = st.lists(st.integers(1, 5), min_size=2, max_size=40)


def _textbook_qwk(a: list[int], b: list[int]) -> float:
    """Cohen's quadratic weighted kappa written out pair by pair (the definition)."""
    n = len(a)
    observed = sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) / n
    expected = sum((x - y) ** 2 for x in a for y in b) / (n * n)
    return 1 - observed / expected


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_every_qwk_of_the_package_is_one_formula(data: st.DataObject) -> None:
    a = data.draw(ratings)
    b = data.draw(st.lists(st.integers(1, 5), min_size=len(a), max_size=len(a)))
    plain = _stats.quadratic_weighted_kappa(a, b)
    along = _stats.qwk_along(np.array(a), np.array(b))
    standard = kappa.standard_kappa(a, b, (1, 5))
    varied = len(set(a)) > 1 and len(set(b)) > 1
    if not varied:
        assert math.isnan(plain) and math.isnan(along) and math.isnan(standard)
        return
    expected = _textbook_qwk(a, b)
    assert plain == pytest.approx(expected, abs=1e-12)
    assert along == pytest.approx(expected, abs=1e-12)
    assert standard == pytest.approx(expected, abs=1e-12)
    if set(a) | set(b) == {1, 2, 3, 4, 5}:  # every category used: the paper's kappa too
        assert kappa.paper_kappa(a, b) == pytest.approx(expected, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.lists(st.integers(1, 5), min_size=3, max_size=40))
def test_qwk_is_undefined_when_people_all_gave_one_rating(level: int, judge: list[int]) -> None:
    human = [level] * len(judge)
    assert math.isnan(_stats.quadratic_weighted_kappa(judge, human))
    assert "qwk" not in _stats.agreement(judge, human)  # left out, like spearman
    assert math.isnan(kappa.kappa_test(judge, human, "standard", (1, 5))["kappa"])
    assert math.isnan(kappa.kappa_test(judge, human, "paper")["kappa"])
    row = humans.agreement_row("a", "b", np.array(judge, float), np.array(human, float), 0)
    assert math.isnan(row["qwk"])


def test_the_ceiling_uses_the_same_qwk_and_alpha() -> None:
    assert humans.qwk_along is _stats.qwk_along
    rng = np.random.default_rng(3)
    matrix = rng.integers(1, 6, size=(3, 30)).astype(float)
    frame = __import__("pandas").DataFrame(matrix.T, columns=["r1", "r2", "r3"])
    assert humans.ordinal_alpha(frame, resamples=0)["alpha"] == pytest.approx(
        _stats.krippendorff_alpha(matrix.tolist()), abs=1e-12
    )


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_the_headline_of_a_resample_is_somers_d_all_of_the_drawn_dialogs(
    data: st.DataObject,
) -> None:
    """The bootstrap's vectorised `somers_d_all` of a resample (each dialog's draw count)
    equals `somers_d_all` of the resampled arrays, unscored dialogs and ties included."""
    n = data.draw(st.integers(2, 25))
    human = data.draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
    judge = data.draw(
        st.lists(
            st.one_of(
                st.sampled_from([1.0, 2.0, 3.0, 4.0, 5.0]), st.floats(1, 5), st.just(math.nan)
            ),
            min_size=n,
            max_size=n,
        )
    )
    counts = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    x, h = np.array(judge), np.array(human, dtype=float)
    drawn = np.repeat(np.arange(n), counts)
    kept = drawn[np.isfinite(x[drawn])]
    expected = _stats.somers_d_all(x[kept], h[kept], len(drawn) - len(kept))
    [got] = _stats.somers_d_all_weighted(counts, x, h)
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-9)
