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
a rater, at the raters' numbers of dialogs, by simulation under the observed raters' joint
distribution (`simulated_power`): a latent model fitted to the raters (each dialog's
level, the spread between dialogs, between raters of a dialog and between the raters'
own leniencies, on the rounded and clipped scale, with the observed pattern of who rated
what) draws the raters and one more exchangeable rater who plays the judge, and the
whole test (the same leave-one-out alignment, t-tests, Benjamini-Yekutieli and 0.5
winning rate) is run on a few hundred replicates. The raters' tests share the judge, so
they are not independent: the older figure that treated them as independent
(`pass_power`, noncentral t per rater) was too high with 4-5 close raters (0.67 stated,
0.53 simulated). benchmarks/error_rates.py shows the stated power against the pass rate
across 3-6 raters and 30-300 dialogs. ``n_for_80`` is the dialogs per rater it needs for
80% (`pass_power`'s independent-raters search: optimistic, a lower bound). With 3 raters
and 50 dialogs the power is often near a coin toss: a FAIL there says little.

Only dialogs with at least two raters (and a judge score) count, and a rater with fewer
than ``min_dialogs`` (30) of them is left out, as in the paper's code. A rater whose
per-dialog differences are all equal (no variance: the t-test is undefined) gets p = 0
when that difference is below epsilon and p = 1 otherwise (the paper's code would give
NaN, a loss).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
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
POWER_REPLICATES = 400
"""Simulated tests behind the stated ``power`` (`simulated_power`; Monte Carlo SE <= 0.025)."""
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
    ratings: np.ndarray | None = field(default=None, repr=False)
    """The raters' ratings the test used (dialogs x raters, NaN where not rated): what
    ``power`` simulates from; None: the independent-raters figure (`pass_power`)."""
    min_dialogs: int = MIN_DIALOGS
    _power: float | None = field(default=None, repr=False)

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
        if self.ratings is None:
            return pass_power(self.raters["n"], self.raters["ties"], self.epsilon, self.q)
        if self._power is None:
            self._power = _kept_power(self.ratings, self.epsilon, self.q, self.min_dialogs)
        return self._power

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


def _rounded(values: np.ndarray) -> np.ndarray:
    return np.clip(np.floor(values + 0.5), 1.0, 5.0)


def _draw(
    mean: float, between: float, within: float, offsets: np.ndarray, shape: tuple[int, ...],
    rng: np.random.Generator,
) -> np.ndarray:
    """Ratings (... x dialogs x raters) of the latent model: round(mean + offset_r +
    sqrt(between) z_i + sqrt(within) e_ir), clipped onto 1-5."""
    level = mean + math.sqrt(max(between, 0.0)) * rng.standard_normal(shape[:-1])[..., None]
    noise = math.sqrt(max(within, 0.0)) * rng.standard_normal(shape)
    return _rounded(level + offsets + noise)


def _moments(values: np.ndarray) -> tuple[float, float]:
    """The variance of the dialogs' mean ratings and the mean within-dialog variance
    (dialogs with two or more ratings)."""
    with np.errstate(invalid="ignore", divide="ignore"), warnings_off():
        within = float(np.nanmean(np.nanvar(values, axis=-1, ddof=1)))
        between = float(np.nanvar(np.nanmean(values, axis=-1), ddof=1))
    return between, within


@contextmanager
def warnings_off() -> Iterator[None]:
    """Empty slices' and all-NaN rows' warnings off (they give NaN, handled after)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def fit_raters(ratings: np.ndarray, seed: int = 0) -> tuple[float, float, float, float]:
    """The latent model of `_draw` fitted to ``ratings`` (dialogs x raters, NaN where not
    rated): mean, between- and within-dialog variances and the variance of a rater's
    offset (the raters' mean ratings' spread less its sampling noise), the variances
    adjusted (a few fixed-point steps on a large
    simulated set) so that the rounded, clipped ratings have the observed between- and
    within-dialog variances."""
    values = np.asarray(ratings, float)
    rated = values[(~np.isnan(values)).sum(axis=1) >= 2]
    mean = float(np.nanmean(rated))
    offsets = np.nan_to_num(np.nanmean(rated, axis=0) - mean)
    centred = rated - offsets
    target_between, target_within = _moments(centred)
    raters = values.shape[1]
    # the spread of the raters' offsets less their own sampling noise (within / dialogs
    # rated): the variance of a rater's offset in the raters' population
    noise = float(np.mean(target_within / np.maximum((~np.isnan(rated)).sum(axis=0), 1)))
    spread = float(np.sum(offsets**2)) / max(1, len(offsets) - 1)
    target_between -= target_within / raters  # the means' own noise
    between, within = max(target_between, 0.01), max(target_within, 0.01)
    rng = np.random.default_rng(seed)
    for _ in range(4):
        drawn = _draw(mean, between, within, np.zeros(raters), (4000, raters), rng)
        got_between, got_within = _moments(drawn)
        got_between -= got_within / raters
        if got_within > 0:
            within *= target_within / got_within
        if got_between > 0:
            between *= max(target_between, 0.0) / got_between
    return mean, between, within, max(0.0, spread - noise)


def simulated_power(
    ratings: np.ndarray, epsilon: float = DEFAULT_EPSILON, q: float = DEFAULT_Q,
    min_dialogs: int = MIN_DIALOGS, replicates: int = POWER_REPLICATES, seed: int = 0,
) -> float:
    """Chance the test passes for a judge exactly as good as a rater, under the observed
    raters' joint distribution (module doc): ``ratings`` (dialogs x raters, NaN where not
    rated) fit `fit_raters`; each replicate draws the dialogs' ratings by the raters and by
    one more rater of the same model (the judge), each with an offset drawn from the
    raters' population, keeps who rated which dialog as observed, and runs the whole test
    (`_passes`)."""
    values = np.asarray(ratings, float)
    present = ~np.isnan(values)
    keep = present.sum(axis=1) >= 2
    values, present = values[keep], present[keep]
    if values.shape[1] < 2 or not len(values):
        return math.nan
    mean, between, within, offset_var = fit_raters(values, seed)
    rng = np.random.default_rng([seed, 2])
    n, m = values.shape
    passes = 0
    batch = max(1, min(replicates, 2_000_000 // max(1, n * (m + 1) * m)))
    for start in range(0, replicates, batch):
        rows = min(batch, replicates - start)
        # every replicate draws its raters and its judge from the raters' population
        offsets = math.sqrt(offset_var) * rng.standard_normal((rows, 1, m + 1))
        drawn = _draw(mean, between, within, offsets, (rows, n, m + 1), rng)
        raters = np.where(present, drawn[..., :m], np.nan)
        passes += int(_passes(raters, drawn[..., m], epsilon, q, min_dialogs).sum())
    return passes / replicates


_POWERS: dict[tuple[Any, ...], float] = {}
"""`simulated_power` by ratings, epsilon, q and least dialogs: it depends on the raters
only, so every judge of the same dialogs shares one simulation."""


def _kept_power(ratings: np.ndarray, epsilon: float, q: float, min_dialogs: int) -> float:
    import hashlib

    values = np.ascontiguousarray(ratings, dtype=float)
    key = (hashlib.blake2b(values.tobytes(), digest_size=16).digest(), values.shape,
           epsilon, q, min_dialogs)  # fmt: skip
    if key not in _POWERS:
        if len(_POWERS) >= 256:
            _POWERS.pop(next(iter(_POWERS)))
        _POWERS[key] = simulated_power(values, epsilon, q, min_dialogs)
    return _POWERS[key]


def _passes(
    raters: np.ndarray, judge: np.ndarray, epsilon: float, q: float, min_dialogs: int
) -> np.ndarray:
    """Whether the test passes (`alt_test`'s statistics, vectorised) for each replicate:
    ``raters`` replicates x dialogs x raters (NaN where not rated), ``judge`` replicates x
    dialogs."""
    from scipy import stats

    replicates, _, m = raters.shape
    p = np.full((replicates, m), np.nan)
    tested = np.zeros(m, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"), warnings_off():
        for j in range(m):
            mine = ~np.isnan(raters[0, :, j])  # who rated what is the same in every replicate
            if mine.sum() < min_dialogs:
                continue
            tested[j] = True
            others = np.delete(raters[:, mine], j, axis=2)
            rater = -np.sqrt(np.nanmean((others - raters[:, mine, j, None]) ** 2, axis=2))
            judged = -np.sqrt(np.nanmean((others - judge[:, mine, None]) ** 2, axis=2))
            d = (rater >= judged).astype(float) - (judged >= rater).astype(float)
            count = d.shape[1]
            mean, sd = d.mean(axis=1), d.std(axis=1, ddof=1)
            t = (mean - epsilon) / (sd / math.sqrt(count))
            p[:, j] = np.where(sd > 0, stats.t.cdf(t, count - 1), np.where(mean < epsilon, 0, 1))
    p = p[:, tested]
    k = p.shape[1]
    if not k:
        return np.zeros(replicates, dtype=bool)
    harmonic = float(np.sum(1.0 / np.arange(1, k + 1)))
    below = np.sort(p, axis=1) <= np.arange(1, k + 1) / k * q / harmonic
    wins = (below * np.arange(1, k + 1)).max(axis=1)
    return wins / k >= 0.5


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
    return AltTest(table, float(epsilon), float(q), skipped, values, min_dialogs)


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
