"""Response-level corpora: many responders (chatbots) per context, each response rated by
people and by judges.

Beside per-response agreement, three questions matter there, answered per judge by
`responder_table`:

- **bias**: the judge's mean score minus the people's mean rating (on 1-5), with a 95%
  bootstrap CI over contexts (a context's responses are resampled together);
- **ranking**: Spearman, across responders, of each responder's mean judge score against
  its mean human rating (does the judge put the chatbots in the people's order?), with a
  bootstrap CI over contexts;
- **calibrated bias**: the bias left after a cross-fitted calibration (``shift``,
  ``linear`` or ``isotonic``) fitted without the context being predicted
  (leave-one-context-out up to 50 contexts, else 10 folds of contexts), with its CI.

Input: a DataFrame with ``context``, ``responder``, ``human`` (1-5) and one column per
judge (1-5, NaN where unscored). A spec names the responder with ``responder: <id column>``
(the other id columns are the context); `published_responders` builds the frame from it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ..calibration import _apply, _fit
from .stats import percentile_interval

COLUMNS = [
    "judge", "responses", "contexts", "responders", "mean_judge", "mean_human",
    "bias", "bias_low", "bias_high",
    "calibrated_bias", "calibrated_bias_low", "calibrated_bias_high",
    "ranking_spearman", "ranking_low", "ranking_high",
]  # fmt: skip


def _context_folds(contexts: np.ndarray, seed: int) -> np.ndarray:
    unique = np.unique(contexts)
    if len(unique) <= 50:
        return np.searchsorted(unique, contexts)
    order = np.random.default_rng(seed).permutation(len(unique))
    fold_of = np.empty(len(unique), dtype=int)
    for fold, members in enumerate(np.array_split(order, 10)):
        fold_of[members] = fold
    return fold_of[np.searchsorted(unique, contexts)]


def calibrated_by_context(
    judge: np.ndarray, human: np.ndarray, contexts: np.ndarray, method: str, seed: int = 0
) -> np.ndarray:
    """Each response's score mapped by a calibration fitted without its context's fold."""
    folds = _context_folds(contexts, seed)
    out = np.full(len(judge), np.nan)
    for fold in np.unique(folds):
        held = folds == fold
        if (~held).sum() < 2:
            continue
        params = _fit(judge[~held], human[~held], method)
        out[held] = np.clip(_apply(params, method, judge[held]), 1, 5)
    return out


def _ranking(frame: pd.DataFrame) -> float:
    means = frame.groupby("responder")[["j", "h"]].mean()
    if len(means) < 3 or means["j"].nunique() < 2 or means["h"].nunique() < 2:
        return math.nan
    return float(stats.spearmanr(means["j"], means["h"]).statistic)


def responder_table(
    frame: pd.DataFrame,
    judges: Sequence[str],
    method: str = "shift",
    resamples: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per judge: bias, calibrated bias and responder ranking, with CIs (module doc)."""
    rows = []
    for judge in judges:
        data = pd.DataFrame({
            "context": frame["context"].astype(str), "responder": frame["responder"].astype(str),
            "j": frame[judge].astype(float), "h": frame["human"].astype(float),
        }).dropna()  # fmt: skip
        row: dict[str, object] = dict.fromkeys(COLUMNS, math.nan)
        row |= {"judge": judge, "responses": len(data), "contexts": data["context"].nunique(),
                "responders": data["responder"].nunique()}  # fmt: skip
        if len(data) < 2:
            rows.append(row)
            continue
        contexts = data["context"].to_numpy()
        data["c"] = calibrated_by_context(
            data["j"].to_numpy(), data["h"].to_numpy(), contexts, method, seed
        )
        row["mean_judge"], row["mean_human"] = data["j"].mean(), data["h"].mean()
        row["bias"] = float((data["j"] - data["h"]).mean())
        row["calibrated_bias"] = float((data["c"] - data["h"]).dropna().mean())
        row["ranking_spearman"] = _ranking(data)
        if resamples > 0:
            groups = [g for _, g in data.groupby("context", sort=True)]
            rng = np.random.default_rng(seed)
            bias, cal, rank = [], [], []
            for _ in range(resamples):
                drawn = pd.concat([groups[i] for i in rng.integers(0, len(groups), len(groups))])
                bias.append(float((drawn["j"] - drawn["h"]).mean()))
                cal.append(float((drawn["c"] - drawn["h"]).dropna().mean()))
                rank.append(_ranking(drawn))
            row["bias_low"], row["bias_high"] = percentile_interval(bias)
            row["calibrated_bias_low"], row["calibrated_bias_high"] = percentile_interval(cal)
            row["ranking_low"], row["ranking_high"] = percentile_interval(rank)
        rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def published_responders(pub: object, extra: dict[str, pd.Series] | None = None) -> pd.DataFrame:
    """The ``responder_table`` input from a published spec with ``responder: <id column>``:
    the responder is that id column, the context the others; human = the raters' aggregate
    and judges mapped onto 1-5 (``extra``: Inspect judges' 1-5 scores by sample id)."""
    from ..dialogs import normalise_rating
    from ..loaders.raters import ID_SEPARATOR
    from .published import _aggregate

    mapping, table = pub.mapping, pub.table  # type: ignore[attr-defined]
    id_cols = [mapping["id"]] if isinstance(mapping["id"], str) else list(mapping["id"])
    responder = mapping.get("responder")
    if responder not in id_cols:
        raise ValueError(f"responder must name one of the id columns {id_cols}, not {responder!r}")
    position = id_cols.index(responder)
    parts = [sid.split(ID_SEPARATOR) for sid in table.ids]
    frame = pd.DataFrame({
        "context": [ID_SEPARATOR.join(p[:position] + p[position + 1:]) for p in parts],
        "responder": [p[position] for p in parts],
    }, index=table.ids)  # fmt: skip
    human = _aggregate(table, table.ids)
    frame["human"] = [normalise_rating(v, table.scale) if pd.notna(v) else math.nan for v in human]
    for name, values in table.judges.items():
        scale = table.judge_scales[name]
        frame[name] = [normalise_rating(values[i], scale) if i in values else math.nan
                       for i in table.ids]  # fmt: skip
    for name, scores in (extra or {}).items():
        frame[name] = scores.reindex(table.ids).astype(float).to_numpy()
    return frame
