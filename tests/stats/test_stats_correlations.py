"""The in-run correlations (numpy) against scipy.stats, and that they leave scipy unloaded."""

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from inspect_empathy.stats._agreement import average_ranks, kendall_tau_b, pearson, spearman


def _cases() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    cases = []
    for n in (2, 3, 9, 64, 500, 3001):
        cases.append((rng.normal(size=n), rng.normal(size=n)))  # no ties
        # judge-like scores on a 1-5 scale against half-point human ratings: many ties
        cases.append(
            (
                rng.integers(1, 6, n).astype(float),
                rng.integers(1, 6, n) + 0.5 * rng.integers(0, 2, n),
            )
        )
        x = np.round(rng.normal(3, 1, n), 1)
        cases.append((x, x + rng.integers(-1, 2, n)))  # ties in both and jointly
    return cases


@pytest.mark.parametrize("case", range(18))
def test_correlations_match_scipy(case: int) -> None:
    x, y = _cases()[case]
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        pytest.skip("constant vector: agreement() leaves correlations out")
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)


def test_average_ranks_match_rankdata() -> None:
    values = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0]
    assert list(average_ranks(values)) == list(stats.rankdata(values))


def test_reversed_order_is_minus_one() -> None:
    x = np.arange(100.0)
    assert kendall_tau_b(x, -x) == pytest.approx(-1.0)
    assert spearman(x, -x) == pytest.approx(-1.0)


@pytest.mark.slow
def test_in_run_metrics_do_not_import_scipy() -> None:
    """human_agreement runs inside every eval: importing scipy.stats there cost ~70 MB RSS."""
    code = (
        "import sys\n"
        "from inspect_ai.scorer import SampleScore, Score\n"
        "from inspect_empathy.stats.metrics import human_agreement\n"
        "scores = [SampleScore(score=Score(value=v), sample_id=i, "
        "sample_metadata={'human_rating': h}) for i, (v, h) in "
        "enumerate([(4.2, 5), (3.1, 3), (1.0, 1), (2.6, 2), (5.0, 4)])]\n"
        "result = human_agreement()(scores)\n"
        "assert 'kendall' in result and 'spearman' in result, result\n"
        "print(sorted(m for m in ('scipy', 'pandas') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
