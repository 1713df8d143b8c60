"""Response mode: the replying models compared under one grader.

Response-mode logs have no human rating of the model's replies, so no agreement to rank
graders by. What they measure is the replying models: each reply model's mean score and
share of replies scored >= 4 (a score that rounds to 4 or 5), with 95% bootstrap CIs
over dialogs, and for each pair of reply models graded by the same grader on the same
prompts (same sample id and dialog) a paired test. Reply models are never compared across
graders or datasets.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

GE_4 = 3.5
"""A score counts as >= 4 when it rounds (half up) to 4 or 5."""
GROUP = ["dataset", "grader"]


def reply_scores(rows: pd.DataFrame) -> pd.DataFrame | None:
    """One row per response-mode dataset, grader, reply model and dialog (epochs averaged):
    the score and a hash of the prompt dialog (replies are paired on it); None without
    response-mode rows."""
    import hashlib

    response = rows[rows["mode"] == "response"]
    if response.empty:
        return None
    keys = ["dataset", "judge_model", "reply_model", "id"]
    table = response.groupby(keys, sort=True).agg(
        score=("score", "mean"), dialog=("dialog", "first")
    )
    table = table.reset_index().rename(columns={"judge_model": "grader"})
    table["prompt"] = table["dialog"].map(
        lambda d: hashlib.sha256(str(d).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    )
    return table.drop(columns=["dialog"])


def _draws(n: int, resamples: int, seed: int) -> np.ndarray:
    import numpy as np

    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def reply_table(scores: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """Per dataset, grader and reply model: dialogs, scored, mean score and share >= 4 with
    95% percentile-bootstrap CIs over the scored dialogs; ``rank`` by mean within the
    grader (1 = highest)."""
    import pandas as pd

    from .stats import percentile_interval, seed_for

    rows = []
    for (dataset, grader, model), group in scores.groupby(
        ["dataset", "grader", "reply_model"], sort=True
    ):
        x = group["score"].dropna().to_numpy(float)
        row: dict[str, Any] = {
            "dataset": dataset,
            "grader": grader,
            "reply_model": model,
            "dialogs": group["id"].nunique(),
            "scored": len(x),
            "mean_score": float(x.mean()) if len(x) else math.nan,
            "share_ge_4": float((x >= GE_4).mean()) if len(x) else math.nan,
        }
        mean_ci = share_ci = (math.nan, math.nan)
        if len(x) >= 2 and resamples > 0:
            drawn = x[_draws(len(x), resamples, seed_for(str(grader), str(model), seed=seed))]
            mean_ci = percentile_interval(drawn.mean(axis=1))
            share_ci = percentile_interval((drawn >= GE_4).mean(axis=1))
        row["mean_low"], row["mean_high"] = mean_ci
        row["share_ge_4_low"], row["share_ge_4_high"] = share_ci
        rows.append(row)
    table = pd.DataFrame(rows)
    table = table.sort_values([*GROUP, "mean_score"], ascending=[True, True, False])
    table["rank"] = table.groupby(GROUP).cumcount() + 1
    columns = ["dataset", "grader", "rank", "reply_model", "dialogs", "scored", "mean_score"]
    columns += ["mean_low", "mean_high", "share_ge_4", "share_ge_4_low", "share_ge_4_high"]
    return table[columns].reset_index(drop=True)


def reply_pairs(scores: pd.DataFrame, resamples: int, seed: int) -> pd.DataFrame:
    """Each pair of reply models under one grader, on the prompts both were scored on.

    Paired by sample id and prompt dialog (a prompt that differs between the two logs is
    left out). ``diff`` is mean A minus mean B (A the higher-ranked), ``share_diff`` the same
    for the share >= 4, each with a 95% paired-bootstrap CI (a resample keeps a prompt's two
    scores together); ``p_value`` is the two-sided studentised test of "no difference" in
    mean (`stats.studentised_p`: ``diff`` over the SD of its paired-bootstrap resamples,
    against the standard normal, as the judges' paired test), and ``p_holm`` Holm-adjusts
    it over the pairs of the same grader; ``p_wilcoxon`` is the Wilcoxon signed-rank
    test's.
    """
    import numpy as np
    import pandas as pd
    from scipy.stats import wilcoxon

    from .stats import holm, percentile_interval, seed_for, studentised_p

    table = reply_table(scores, 0, seed)
    rows = []
    for (dataset, grader), models in table.groupby(GROUP, sort=True):
        order = list(models["reply_model"])
        mine = scores[(scores["dataset"] == dataset) & (scores["grader"] == grader)]
        wide = mine.dropna(subset=["score"]).set_index(["id", "prompt", "reply_model"])["score"]
        wide = wide.unstack("reply_model")
        first = len(rows)
        for a, b in itertools.combinations(order, 2):
            both = wide[[a, b]].dropna()
            x, y = both[a].to_numpy(float), both[b].to_numpy(float)
            row: dict[str, Any] = {"dataset": dataset, "grader": grader, "model_a": a}
            row |= {"model_b": b, "n": len(both)}
            d = x - y
            s = (x >= GE_4).astype(float) - (y >= GE_4).astype(float)
            row["diff"] = float(d.mean()) if len(d) else math.nan
            row["share_diff"] = float(s.mean()) if len(s) else math.nan
            row |= dict.fromkeys(["diff_low", "diff_high", "share_low", "share_high"], math.nan)
            row["p_value"] = row["p_wilcoxon"] = math.nan
            if len(d) >= 2 and resamples > 0:
                idx = _draws(len(d), resamples, seed_for(str(grader), a, b, seed=seed))
                draws = d[idx].mean(axis=1)
                row["diff_low"], row["diff_high"] = percentile_interval(draws)
                row["share_low"], row["share_high"] = percentile_interval(s[idx].mean(axis=1))
                row["p_value"] = studentised_p(row["diff"], draws)
            if len(d) and np.any(d != 0):
                row["p_wilcoxon"] = float(wilcoxon(x, y).pvalue)
            rows.append(row)
        adjusted = holm([r["p_value"] for r in rows[first:]])
        for row, p in zip(rows[first:], adjusted, strict=True):
            row["p_holm"] = p
            row["significant"] = bool(p < 0.05)
    return pd.DataFrame(rows)


def reply_pairs_display(comparison: Any) -> tuple[list[str], list[list[str]]]:
    """The paired tests of the reply models as display strings."""
    from .formats import p_value, with_ci

    headers = ["dataset", "grader", "reply model A", "reply model B", "n"]
    headers += ["mean A − B [95% CI]", "share ≥ 4 A − B [95% CI]", "p", "p (Holm)"]
    headers += ["p (Wilcoxon)", "significant (Holm)"]
    rows = []
    frame = comparison.reply_pairs
    for _, r in (frame.iterrows() if frame is not None else iter(())):
        rows.append(
            [
                str(r["dataset"]),
                str(r["grader"]),
                str(r["model_a"]),
                str(r["model_b"]),
                str(r["n"]),
                with_ci(r["diff"], r["diff_low"], r["diff_high"]),
                with_ci(r["share_diff"], r["share_low"], r["share_high"], 2),
                p_value(r["p_value"]),
                p_value(r["p_holm"]),
                p_value(r["p_wilcoxon"]),
                "yes" if r["significant"] else "no",
            ]
        )
    return headers, rows


def reply_findings(comparison: Any) -> list[str]:
    """Response mode in a sentence per grader: the reply models by mean score, with CIs."""
    from .formats import percent, with_ci

    table = comparison.replies
    if table is None or "mean_low" not in table:
        return []
    lines = []
    for (dataset, grader), group in table.groupby(GROUP, sort=True):
        shown = "; ".join(
            f"{r['reply_model']} {with_ci(r['mean_score'], r['mean_low'], r['mean_high'], 2)}"
            f" (≥ 4: {percent(r['share_ge_4'])})"
            for _, r in group.iterrows()
        )
        lines.append(f"Reply models graded by {grader} on {dataset} (mean score): {shown}.")
    return lines
