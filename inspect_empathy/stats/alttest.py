"""The alternative-annotator test: could this judge stand in for one of the raters?

Calderon, Reichart and Dror, "The Alternative Annotator Test for LLM-as-a-Judge: How to
Statistically Justify Replacing Human Annotators with LLMs" (ACL 2025,
https://aclanthology.org/2025.acl-long.782/; their code: github.com/nitaytech/AltTest,
``alt_test_example.ipynb``). Leave one rater out at a time. On each dialog that rater
rated, score how well the judge and the left-out rater each agree with the *remaining*
raters (here, as in the paper for ordinal scales, the negative RMSE between one rating
and the remaining raters' ratings). ``judge_wins`` is the share of dialogs where the
judge agrees at least as well as the rater (rho_f), ``rater_wins`` the share where the
rater agrees at least as well as the judge (rho_h; ties count for both). The judge beats
rater j when a one-sided one-sample t-test on the per-dialog differences (1[rater >=
judge] - 1[judge >= rater]) rejects H0: rho_h - rho_f >= epsilon, with the
Benjamini-Yekutieli procedure at ``q`` across raters. epsilon is the cost-benefit margin
granted to the judge for being cheaper (the paper's default 0.2, for expert raters; 0.15
for skilled raters, 0.1 for crowd workers). The *winning rate* is the share of raters
the judge beats; it passes when the winning rate is at least 0.5. The *advantage
probability* (the mean of rho_f over raters) compares judges with each other, higher
is better, whatever epsilon.

What the test can see: ``power`` is the chance it passes for a judge *exactly as good as*
a rater (each rater's per-dialog differences centred on 0, with the share of ties this
judge and rater had), at each rater's number of dialogs; ``n_for_80`` the dialogs per rater
it needs for 80%. With 3 raters and 50 dialogs it is often near a coin toss: a FAIL there
says little. Computed by simulating the raters' t statistics (noncentral t, as if the
raters were independent) through Benjamini-Yekutieli and the 0.5 winning rate.

Only dialogs with at least two raters (and a judge score) count, and a rater with fewer
than ``min_dialogs`` (30) of them is left out, as in the paper's code. A rater whose
per-dialog differences are all equal (no variance: the t-test is undefined) gets p = 0
when that difference is below epsilon and p = 1 otherwise (the paper's code would give
NaN, a loss).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

DEFAULT_EPSILON = 0.2
"""The paper's default margin (its code's ``alt_test(epsilon=0.2)``; for expert raters)."""
DEFAULT_Q = 0.05
"""False discovery rate of the Benjamini-Yekutieli procedure across raters."""
MIN_DIALOGS = 30
"""Least dialogs (with a judge score and another rater) a rater needs to be tested."""
MIN_RATERS = 3
"""Least raters for the test to be reported (the paper recommends three or more)."""
POWER_SIMULATIONS = 4000
"""Simulated tests behind ``power`` and ``n_for_80`` (Monte Carlo SE below 0.01)."""
POWER_TARGET = 0.8
MAX_DIALOGS = 100_000
"""``n_for_80`` beyond this is reported as NaN (out of reach)."""

RATER_COLUMNS = [
    "judge",
    "rater",
    "n",
    "judge_wins",
    "rater_wins",
    "advantage",
    "t",
    "p_value",
    "ties",
    "won",
]
"""Columns of ``alt_test.csv``: one row per judge and left-out rater."""


@dataclass
class AltTest:
    """One judge's alternative-annotator test."""

    raters: pd.DataFrame
    """One row per tested rater (`RATER_COLUMNS`, without ``judge``)."""
    epsilon: float = DEFAULT_EPSILON
    q: float = DEFAULT_Q
    skipped: list[str] = field(default_factory=list)
    """Raters left out, each with why."""

    @property
    def tested(self) -> int:
        return len(self.raters)

    @property
    def wins(self) -> int:
        return int(self.raters["won"].sum()) if self.tested else 0

    @property
    def winning_rate(self) -> float:
        return self.wins / self.tested if self.tested else math.nan

    @property
    def passed(self) -> bool | None:
        return None if not self.tested else self.winning_rate >= 0.5

    @property
    def advantage_probability(self) -> float:
        return float(self.raters["judge_wins"].mean()) if self.tested else math.nan

    @property
    def power(self) -> float:
        """Chance of passing for a judge exactly as good as a rater (module doc)."""
        if not self.tested:
            return math.nan
        return pass_power(self.raters["n"], self.raters["ties"], self.epsilon, self.q)

    @property
    def n_for_80(self) -> float:
        """Dialogs per rater for 80% power (NaN past `MAX_DIALOGS`)."""
        if not self.tested:
            return math.nan
        return dialogs_for_power(self.raters["ties"], self.epsilon, self.q)

    def summary(self) -> dict[str, float | int | bool | None]:
        return {
            "alt_epsilon": self.epsilon,
            "alt_raters": self.tested,
            "alt_wins": self.wins,
            "alt_winning_rate": self.winning_rate,
            "alt_passed": self.passed,
            "alt_advantage_probability": self.advantage_probability,
            "alt_power": self.power,
            "alt_n_for_80": self.n_for_80,
        }


def pass_power(
    n: Any, ties: Any, epsilon: float = DEFAULT_EPSILON, q: float = DEFAULT_Q,
    simulations: int = POWER_SIMULATIONS, seed: int = 0,
) -> float:
    """Chance the test passes when the judge is exactly as good as each rater: rater j's
    per-dialog differences have mean 0 and variance 1 - ties[j] over n[j] dialogs, its t
    statistic is noncentral t, and the raters' p-values go through Benjamini-Yekutieli
    (independent raters assumed); passing is a winning rate of at least 0.5."""
    from scipy import stats

    n = np.asarray(n, dtype=float)
    ties = np.asarray(ties, dtype=float)
    m = len(n)
    if m == 0:
        return math.nan
    rng = np.random.default_rng(seed)
    p = np.zeros((simulations, m))
    for j in range(m):
        sd = math.sqrt(max(0.0, 1.0 - ties[j]))
        if sd == 0 or n[j] < 2:
            p[:, j] = 0.0 if sd == 0 else 1.0  # all ties: mean 0 < epsilon (see alt_test)
            continue
        t = stats.nct.rvs(n[j] - 1, -epsilon * math.sqrt(n[j]) / sd, size=simulations,
                          random_state=rng)  # fmt: skip
        p[:, j] = stats.t.cdf(t, n[j] - 1)
    harmonic = float(np.sum(1.0 / np.arange(1, m + 1)))
    below = np.sort(p, axis=1) <= np.arange(1, m + 1) / m * q / harmonic
    wins = (below * np.arange(1, m + 1)).max(axis=1)
    return float(np.mean(wins / m >= 0.5))


def dialogs_for_power(
    ties: Any, epsilon: float = DEFAULT_EPSILON, q: float = DEFAULT_Q,
    target: float = POWER_TARGET,
) -> float:
    """The least dialogs per rater (the same for every rater) at which `pass_power`
    reaches ``target``; NaN when not within `MAX_DIALOGS`."""
    ties = np.asarray(ties, dtype=float)

    def power(n: int) -> float:
        return pass_power(np.full(len(ties), n), ties, epsilon, q)

    low, high = 2, 4
    while power(high) < target:
        low, high = high, high * 2
        if high > MAX_DIALOGS:
            return math.nan
    while high - low > max(1, low // 50):  # to within 2%
        middle = (low + high) // 2
        low, high = (low, middle) if power(middle) >= target else (middle, high)
    return float(high)


def by_rejections(p_values: np.ndarray, q: float = DEFAULT_Q) -> np.ndarray:
    """Which hypotheses the Benjamini-Yekutieli step-up procedure rejects at FDR ``q``.

    The k smallest p-values are rejected for the largest k with p_(k) <= k q / (m H_m),
    H_m = 1 + 1/2 + ... + 1/m. NaN p-values are never rejected (and count in m).
    """
    p = np.asarray(p_values, float)
    m = len(p)
    rejected = np.zeros(m, dtype=bool)
    if m == 0:
        return rejected
    harmonic = float(np.sum(1.0 / np.arange(1, m + 1)))
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    thresholds = np.arange(1, m + 1) / m * q / harmonic
    below = np.flatnonzero(p[order] <= thresholds)
    if len(below):
        rejected[order[: below[-1] + 1]] = True
    return rejected


def _neg_rmse(prediction: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Per dialog: minus the root mean squared difference between ``prediction`` and the
    present (non-NaN) ratings of ``others`` (dialogs x raters)."""
    squared = (others - prediction[:, None]) ** 2
    return -np.sqrt(np.nanmean(squared, axis=1))


def _one_sided_p(differences: np.ndarray, epsilon: float) -> tuple[float, float]:
    """t and p of the one-sample t-test of mean(differences) < epsilon."""
    from scipy import stats

    n = len(differences)
    mean = float(differences.mean())
    sd = float(differences.std(ddof=1)) if n > 1 else 0.0
    if sd == 0:
        return (-math.inf, 0.0) if mean < epsilon else (math.inf, 1.0)
    t = (mean - epsilon) / (sd / math.sqrt(n))
    return t, float(stats.t.cdf(t, n - 1))


def alt_test(
    judge: pd.Series,
    ratings: pd.DataFrame,
    epsilon: float = DEFAULT_EPSILON,
    q: float = DEFAULT_Q,
    min_dialogs: int = MIN_DIALOGS,
) -> AltTest:
    """The alternative-annotator test of ``judge`` (scores indexed by dialog) against
    the raters of ``ratings`` (dialogs x raters, NaN where a rater did not rate).

    Dialogs count where the judge scored and at least two raters rated; see the
    module docstring for the statistics.
    """
    if not 0 <= epsilon < 1:
        raise ValueError(f"alt-test epsilon must be in [0, 1), not {epsilon!r}")
    frame = ratings.astype(float)
    scores = pd.to_numeric(judge, errors="coerce").astype(float).reindex(frame.index)
    keep = scores.notna() & (frame.notna().sum(axis=1) >= 2)
    frame, scores = frame[keep], scores[keep]
    values = frame.to_numpy(float)
    f = scores.to_numpy(float)
    rows, skipped = [], []
    for column, rater in enumerate(frame.columns):
        mine = ~np.isnan(values[:, column])
        n = int(mine.sum())
        if n < min_dialogs:
            skipped.append(
                f"{rater}: {n} dialog(s) with the judge and another rater, < {min_dialogs}"
            )
            continue
        others = np.delete(values[mine], column, axis=1)
        rater_score = _neg_rmse(values[mine, column], others)
        judge_score = _neg_rmse(f[mine], others)
        judge_wins = judge_score >= rater_score
        rater_wins = rater_score >= judge_score
        differences = rater_wins.astype(float) - judge_wins.astype(float)
        t, p = _one_sided_p(differences, epsilon)
        rows.append(
            {
                "rater": str(rater),
                "n": n,
                "judge_wins": float(judge_wins.mean()),
                "rater_wins": float(rater_wins.mean()),
                "advantage": float(judge_wins.mean() - rater_wins.mean()),
                "t": t,
                "p_value": p,
                "ties": float((differences == 0).mean()),
            }
        )
    table = pd.DataFrame(rows, columns=RATER_COLUMNS[1:-1])
    table["won"] = by_rejections(table["p_value"].to_numpy(float), q) if len(table) else []
    table["won"] = table["won"].astype(bool)
    return AltTest(table, float(epsilon), float(q), skipped)


def judges_alt_test(
    wide: pd.DataFrame,
    ratings: pd.DataFrame | None,
    judges: list[str],
    on: pd.Index,
    epsilon: float = DEFAULT_EPSILON,
    q: float = DEFAULT_Q,
) -> tuple[pd.DataFrame | None, dict[str, dict[str, float | int | bool | None]], str]:
    """The test for each judge on the dialogs ``on`` (the comparison's common set).

    Returns the per-rater table (`RATER_COLUMNS`, judges in the given order), each
    judge's summary (``alt_*`` columns of ``judges.csv``) and a note; the table is None
    (and the note says why) with fewer than `MIN_RATERS` raters or no rater tested.
    """
    if ratings is None or ratings.shape[1] < MIN_RATERS:
        raters = 0 if ratings is None else ratings.shape[1]
        why = (
            f"no alternative-annotator test: it needs {MIN_RATERS} or more raters per "
            f"dialog set (the data has {raters})"
        )
        return None, {}, why[0].upper() + why[1:] + "."
    ratings = ratings.loc[ratings.index.intersection(on)]
    frames, summaries, skipped = [], {}, []
    for judge in judges:
        result = alt_test(wide[judge].reindex(ratings.index), ratings, epsilon, q)
        summaries[judge] = result.summary()
        frames.append(result.raters.assign(judge=judge))
        skipped += [f"{judge}: {s}" for s in result.skipped]
    table = pd.concat(frames, ignore_index=True)[RATER_COLUMNS] if frames else None
    if table is None or table.empty:
        why = "; ".join(skipped) or "no judge"
        return None, summaries, f"No alternative-annotator test: no rater could be tested ({why})."
    note = (
        f"Alternative-annotator test (Calderon et al., ACL 2025): epsilon {epsilon:g}, "
        f"Benjamini-Yekutieli at q = {q:g} across raters, alignment = negative RMSE to the "
        f"remaining raters, on the {len(ratings)} common dialogs the raters rated"
    )
    if skipped:
        note += "; not tested: " + "; ".join(skipped)
    return table, summaries, note + "."
