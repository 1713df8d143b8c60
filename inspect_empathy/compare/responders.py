"""Response-level corpora: many responders (chatbots) per context, each response rated by
people and by judges.

Beside per-response agreement, three questions matter there, answered per judge by
`responder_table`:

- **bias**: the judge's mean score minus the people's mean rating (on 1-5), with a 95%
  bootstrap CI over contexts (a context's responses are resampled together);
- **ranking**: Spearman, across responders, of each responder's mean judge score against
  its mean human rating (does the judge put the chatbots in the people's order?). Its 95%
  interval is Fisher's z interval with two sources of error added: which responders
  (Bonett and Wright's variance of a Spearman's z over the responders, (1 + rho^2/2) /
  (R - 3), for R responders) and which contexts (the variance of z over bootstrap
  resamples of the contexts, a context's responses together). It holds the estimate
  inside, where a percentile interval of ~10 responders' discrete ranks puts it on the
  edge; with fewer than 4 responders there is no interval;
- **ICC on the responder means**: ICC(C,1), ICC(A,1), ICC(C,k), ICC(A,k) (`_agreement.icc`,
  McGraw & Wong's intervals) of each responder's mean judge score and mean rating by people,
  the responders the targets and judge and people the two raters (as MentalBench-Align
  reports them);
- **calibrated bias**: the bias a calibration map (``shift``, ``linear`` or ``isotonic``)
  leaves on contexts it was not fitted on: the map is fitted on a random half of the
  contexts (seeded) and its bias measured on the other half, with a 95% bootstrap CI over
  the held-out contexts. It is not 0 by construction: a map that does not carry over
  (the judge's bias differing between contexts, too few contexts to pin the offset down)
  shows as a held-out bias away from 0 or a wide interval; the interval is about the
  uncertainty of the map's offset. The map is fitted so that its scores, clipped onto
  1-5, have the people's mean on the contexts it is fitted on (a shift that pushes
  scores past 5 gets the clipped mass back);
- ``calibrated_bias_crossfit``: the same map cross-fitted over every context
  (leave-one-context-out up to 50 contexts, else 10 folds), each fold's offset the other
  folds' mean difference: its held-out residuals sum to about 0 whatever the data (within
  0.01 of 0), so it checks the clipping, not the map, and is not shown in the report.

Input: a DataFrame with ``context``, ``responder``, ``human`` (1-5) and one column per
judge (1-5, NaN where unscored). A spec names the responders with ``responder: <id
column>`` (the other id columns are the context) or ``responders:`` (one column per
responder); `published_responders` builds the frame from the spec's keys (ids are never
split).

The bootstrap draws the contexts' counts once per resample (a resamples x contexts
matrix) and every statistic is a weighted sum over per-context (and per-context and
responder) totals: no resampled table is built.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import optimize, stats

from ..stats._agreement import icc
from ..stats._resample import resample_counts
from ..stats.calibration import _apply, _fit
from .stats import percentile_interval

COLUMNS = [
    "judge", "responses", "contexts", "responders", "mean_judge", "mean_human",
    "bias", "bias_low", "bias_high",
    "calibrated_bias", "calibrated_bias_low", "calibrated_bias_high",
    "calibrated_bias_contexts", "calibrated_bias_crossfit",
    "ranking_spearman", "ranking_low", "ranking_high",
    "icc_c1", "icc_c1_low", "icc_c1_high", "icc_a1", "icc_a1_low", "icc_a1_high",
    "icc_ck", "icc_ck_low", "icc_ck_high", "icc_ak", "icc_ak_low", "icc_ak_high",
    "own_left_out",
]  # fmt: skip

RANKING_INTERVAL = (
    "Fisher z interval: Bonett-Wright variance over the responders plus the bootstrap "
    "variance over contexts (each context resampled with all its responses)"
)
"""What the ranking interval accounts for (printed under the table)."""

LIMIT = 0.995
"""|rho| beyond which Fisher's z is taken at this value (z of +-1 is infinite)."""

PEOPLE_COLUMNS = ["responder", "responses", "contexts", "mean_human", "low", "high"]
"""Columns of `people_means`: each responder's mean rating by people with its CI."""


def _context_folds(contexts: np.ndarray, seed: int) -> np.ndarray:
    unique = np.unique(contexts)
    if len(unique) <= 50:
        return np.searchsorted(unique, contexts)
    order = np.random.default_rng(seed).permutation(len(unique))
    fold_of = np.empty(len(unique), dtype=int)
    for fold, members in enumerate(np.array_split(order, 10)):
        fold_of[members] = fold
    return fold_of[np.searchsorted(unique, contexts)]


def _unclipped(params: dict, method: str, scores: np.ndarray) -> np.ndarray:
    if method == "shift":
        return scores + params["offset"]
    if method == "linear":
        return params["intercept"] + params["slope"] * scores
    return _apply(params, method, scores)  # isotonic: within the people's range already


def _mean_offset(mapped: np.ndarray, target: float) -> float:
    """The offset t for which the mean of clip(mapped + t, 1, 5) is ``target``."""

    def gap(t: float) -> float:
        return float(np.clip(mapped + t, 1.0, 5.0).mean()) - target

    low, high = 1.0 - float(mapped.max()), 5.0 - float(mapped.min())
    if gap(low) >= 0:
        return low
    if gap(high) <= 0:
        return high
    return float(optimize.brentq(gap, low, high, xtol=1e-10))


def calibrated_by_context(
    judge: np.ndarray, human: np.ndarray, contexts: np.ndarray, method: str, seed: int = 0
) -> np.ndarray:
    """Each response's score mapped by a calibration fitted without its context's fold,
    the map's clipped scores holding the people's mean where it was fitted (module doc)."""
    folds = _context_folds(contexts, seed)
    out = np.full(len(judge), np.nan)
    for fold in np.unique(folds):
        held = folds == fold
        if (~held).sum() < 2:
            continue
        params, offset = _fitted_map(judge[~held], human[~held], method)
        out[held] = np.clip(_unclipped(params, method, judge[held]) + offset, 1.0, 5.0)
    return out


def _fitted_map(x: np.ndarray, y: np.ndarray, method: str) -> tuple[dict, float]:
    """The map fitted on ``x``, ``y`` and the offset that makes its clipped scores hold
    the mean of ``y`` there (module doc)."""
    params = _fit(x, y, method)
    return params, _mean_offset(_unclipped(params, method, x), float(y.mean()))


def held_out_half(contexts: int, seed: int) -> np.ndarray:
    """Which contexts (codes 0..contexts-1) are held out: a random half (the larger half
    fitted on when odd), the same for every judge of a corpus and seed."""
    held = np.zeros(contexts, dtype=bool)
    held[np.random.default_rng([seed, 50]).permutation(contexts)[: contexts // 2]] = True
    return held


def held_out_bias(
    judge: np.ndarray, human: np.ndarray, context: np.ndarray, method: str, held: np.ndarray
) -> np.ndarray:
    """Each held-out response's calibrated score minus its rating (NaN elsewhere), the map
    fitted on the responses of the contexts not ``held`` (codes of ``context``)."""
    out = np.full(len(judge), np.nan)
    test = held[context]
    if test.all() or not test.any() or (~test).sum() < 2:
        return out
    params, offset = _fitted_map(judge[~test], human[~test], method)
    mapped = np.clip(_unclipped(params, method, judge[test]) + offset, 1.0, 5.0)
    out[test] = mapped - human[test]
    return out


def _ranking(judge_means: np.ndarray, human_means: np.ndarray) -> np.ndarray:
    """Spearman across responders (columns) of each row's means (NaN where undefined:
    fewer than 3 responders with both means, or no variation)."""
    j, h = np.atleast_2d(judge_means), np.atleast_2d(human_means)
    out = np.full(j.shape[0], np.nan)
    both = np.isfinite(j) & np.isfinite(h)
    for pattern in np.unique(both, axis=0):
        rows = (both == pattern).all(axis=1)
        if pattern.sum() < 3:
            continue
        rj = stats.rankdata(j[rows][:, pattern], axis=1)
        rh = stats.rankdata(h[rows][:, pattern], axis=1)
        rj -= rj.mean(axis=1, keepdims=True)
        rh -= rh.mean(axis=1, keepdims=True)
        var = (rj * rj).sum(axis=1) * (rh * rh).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[rows] = np.where(var > 0, (rj * rh).sum(axis=1) / np.sqrt(var), np.nan)
    return out


def ranking_interval(rho: float, draws: np.ndarray, responders: int) -> tuple[float, float]:
    """95% interval of a ranking Spearman over ``responders`` (module doc): Fisher's z with
    Bonett-Wright's variance plus the variance of z over the bootstrap ``draws``."""
    if not math.isfinite(rho) or responders < 4:
        return math.nan, math.nan
    z = math.atanh(min(max(rho, -LIMIT), LIMIT))
    drawn = np.arctanh(np.clip(draws[np.isfinite(draws)], -LIMIT, LIMIT))
    var = (1 + rho * rho / 2) / (responders - 3)
    if len(drawn) > 1:
        var += float(drawn.var(ddof=1))
    half = 1.959963984540054 * math.sqrt(var)
    low, high = math.tanh(z - half), math.tanh(z + half)
    return min(low, rho), max(high, rho)  # |rho| past LIMIT: the bound on its side is rho


def _totals(codes: np.ndarray, values: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group: the sum of the finite values and their count."""
    finite = np.isfinite(values)
    sums = np.bincount(codes[finite], weights=values[finite], minlength=size)
    return sums, np.bincount(codes[finite], minlength=size).astype(float)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1),
                        np.nan)  # fmt: skip


def responder_table(
    frame: pd.DataFrame,
    judges: Sequence[str],
    method: str = "shift",
    resamples: int = 1000,
    seed: int = 0,
    left_out: Mapping[str, int] | None = None,
) -> pd.DataFrame:
    """One row per judge: bias, calibrated bias and responder ranking, with CIs (module
    doc); ``left_out``: each judge's ratings of its own replies left out (a count)."""
    rows = []
    for judge in judges:
        data = pd.DataFrame({
            "context": frame["context"].astype(str), "responder": frame["responder"].astype(str),
            "j": frame[judge].astype(float), "h": frame["human"].astype(float),
        }).dropna()  # fmt: skip
        row: dict[str, object] = dict.fromkeys(COLUMNS, math.nan)
        row |= {"judge": judge, "responses": len(data), "contexts": data["context"].nunique(),
                "responders": data["responder"].nunique(),
                "own_left_out": (left_out or {}).get(judge, 0)}  # fmt: skip
        if len(data) < 2:
            rows.append(row)
            continue
        context, contexts = pd.factorize(data["context"], sort=True)
        responder, responders = pd.factorize(data["responder"], sort=True)
        j, h = data["j"].to_numpy(float), data["h"].to_numpy(float)
        c = calibrated_by_context(j, h, context, method, seed)
        row["mean_judge"], row["mean_human"] = float(j.mean()), float(h.mean())
        row["bias"] = float((j - h).mean())
        row["calibrated_bias_crossfit"] = (
            float(np.nanmean(c - h)) if np.isfinite(c).any() else math.nan
        )
        held = held_out_half(len(contexts), seed)
        residual = (held_out_bias(j, h, context, method, held) if len(contexts) >= 4
                    else np.full(len(j), np.nan))  # fmt: skip
        row["calibrated_bias_contexts"] = int(held.sum()) if len(contexts) >= 4 else 0
        if np.isfinite(residual).any():
            row["calibrated_bias"] = float(np.nanmean(residual))
        n_c, n_r = len(contexts), len(responders)
        cell = context * n_r + responder
        sj, nj = _totals(cell, j, n_c * n_r)
        sh, _ = _totals(cell, h, n_c * n_r)
        per_responder = nj.reshape(n_c, n_r).sum(axis=0)
        judge_means = sj.reshape(n_c, n_r).sum(axis=0) / per_responder
        human_means = sh.reshape(n_c, n_r).sum(axis=0) / per_responder
        rho = _ranking(judge_means, human_means)[0]
        row["ranking_spearman"] = float(rho)
        row |= {k: v for k, v in icc(np.column_stack([judge_means, human_means])).items()
                if k != "icc_n"}  # fmt: skip
        if resamples > 0:
            counts = resample_counts(n_c, resamples, seed).astype(float)
            diff_sum, diff_n = _totals(context, j - h, n_c)
            row["bias_low"], row["bias_high"] = percentile_interval(
                _ratio(counts @ diff_sum, counts @ diff_n))
            if np.isfinite(residual).any():  # resampling the held-out contexts only
                cal_sum, cal_n = _totals(context, residual, n_c)
                on = np.flatnonzero(held)
                drawn = resample_counts(len(on), resamples, seed + 1).astype(float)
                row["calibrated_bias_low"], row["calibrated_bias_high"] = percentile_interval(
                    _ratio(drawn @ cal_sum[on], drawn @ cal_n[on]))
            n_drawn = counts @ nj.reshape(n_c, n_r)
            ranks = _ranking(_ratio(counts @ sj.reshape(n_c, n_r), n_drawn),
                             _ratio(counts @ sh.reshape(n_c, n_r), n_drawn))  # fmt: skip
            row["ranking_low"], row["ranking_high"] = ranking_interval(float(rho), ranks, n_r)
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def people_means(frame: pd.DataFrame, resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Each responder's mean rating by people (1-5), with a 95% bootstrap CI over contexts
    (a context's responses resampled together): what a people-only corpus says first."""
    data = frame[["context", "responder", "human"]].dropna()
    context, contexts = pd.factorize(data["context"].astype(str), sort=True)
    responder, responders = pd.factorize(data["responder"].astype(str), sort=True)
    n_c, n_r = len(contexts), len(responders)
    h = data["human"].to_numpy(float)
    sums, counts = _totals(context * n_r + responder, h, n_c * n_r)
    sums, counts = sums.reshape(n_c, n_r), counts.reshape(n_c, n_r)
    low = high = np.full(n_r, np.nan)
    if resamples > 0 and n_c > 1:
        drawn = resample_counts(n_c, resamples, seed).astype(float)
        means = _ratio(drawn @ sums, drawn @ counts)
        bounds = [percentile_interval(means[:, r]) for r in range(n_r)]
        low, high = np.array([b[0] for b in bounds]), np.array([b[1] for b in bounds])
    return pd.DataFrame({
        "responder": list(responders), "responses": counts.sum(axis=0).astype(int),
        "contexts": (counts > 0).sum(axis=0), "mean_human": sums.sum(axis=0) / counts.sum(axis=0),
        "low": low, "high": high,
    }, columns=PEOPLE_COLUMNS)  # fmt: skip


def _context_label(parts: tuple[str, ...]) -> str:
    """A context's label from its key's parts: the part itself, or the parts as a JSON
    list (two contexts never share a label, whatever their ids hold)."""
    return parts[0] if len(parts) == 1 else json.dumps(list(parts), ensure_ascii=False)


def published_responders(pub: object, extra: dict[str, pd.Series] | None = None) -> pd.DataFrame:
    """The ``responder_table`` input from a published spec that names its responders: the
    responder is that part of each id's key, the context the other parts (read from the
    table's keys: ids are never split); human = the raters' aggregate and judges mapped
    onto 1-5 (``extra``: Inspect judges' 1-5 scores by sample id)."""
    from ..dialogs import normalise_rating
    from .published import _aggregate, people_rating

    table = pub.table  # type: ignore[attr-defined]
    if table.responder is None:
        raise ValueError("the spec names no responders (responder: or responders:)")
    position = table.key_columns.index(table.responder)
    keys = [table.keys[sid] for sid in table.ids]
    frame = pd.DataFrame({
        "context": [_context_label(k[:position] + k[position + 1:]) for k in keys],
        "responder": [k[position] for k in keys],
    }, index=pd.Index(table.ids, dtype=object))  # fmt: skip
    human = _aggregate(table, table.ids)
    frame["human"] = [people_rating(v, table.scale) if pd.notna(v) else math.nan for v in human]
    for name, values in table.judges.items():
        scale = table.judge_scales[name]
        frame[name] = [normalise_rating(values[i], scale) if i in values else math.nan
                       for i in table.ids]  # fmt: skip
    for name, scores in (extra or {}).items():
        frame[name] = scores.reindex(table.ids).astype(float).to_numpy()
    return frame
