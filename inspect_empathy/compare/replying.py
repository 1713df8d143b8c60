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

    from .prices import Prices

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


SPENT = ("calls", "input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens",
         "cache_write_tokens")  # fmt: skip
"""What a reply model spent (`reply_spending`), beside its ``recorded_cost``."""


def reply_spending(rows: pd.DataFrame, logs: pd.DataFrame) -> pd.DataFrame | None:
    """Per response-mode dataset, grader and reply model: what the reply model spent in the
    logs of that grader (each log's header, `logs.REPLY_SPENT`: its calls outside every
    empathy scorer, on all the log's samples), summed over the logs; NaN where a log says
    nothing (no events), ``recorded_cost`` NaN unless Inspect priced every call. The
    grader's own calls are the judges' (``cost_columns``). None without response-mode rows."""
    import pandas as pd

    response = rows[rows["mode"] == "response"]
    if response.empty:
        return None
    pairs = response[["key", "dataset", "judge_model", "reply_model"]].drop_duplicates()
    spent = logs.set_index("key")[[f"reply_{name}" for name in (*SPENT, "recorded_cost")]]
    spent.columns = [*SPENT, "recorded_cost"]
    merged = pairs.join(spent, on="key").drop(columns=["key"])
    table = merged.groupby(["dataset", "judge_model", "reply_model"], sort=True).agg(
        # NaN where any of the logs does not know (sum(min_count) would hide it)
        lambda values: float(values.sum()) if values.notna().all() else float("nan")
    )
    return pd.DataFrame(table.reset_index()).rename(columns={"judge_model": "grader"})


def _draws(n: int, resamples: int, seed: int) -> np.ndarray:
    import numpy as np

    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def reply_table(
    scores: pd.DataFrame,
    resamples: int,
    seed: int,
    spent: pd.DataFrame | None = None,
    prices: Prices | None = None,
) -> pd.DataFrame:
    """Per dataset, grader and reply model: dialogs, scored, mean score and share >= 4 with
    95% percentile-bootstrap CIs over the scored dialogs; ``rank`` by mean within the
    grader (1 = highest). With ``spent`` (`reply_spending`), what the reply model spent per
    scored dialog (``reply_calls_per_dialog``, ``reply_tokens_per_dialog``: input + output,
    ``reply_cost_per_dialog``: at ``prices`` where the file prices the model, else what
    Inspect recorded); the grader's spending is the judges' table's."""
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
        row |= _spent_per_dialog(spent, (dataset, grader, model), len(x), prices)
        rows.append(row)
    table = pd.DataFrame(rows)
    table = table.sort_values([*GROUP, "mean_score"], ascending=[True, True, False])
    table["rank"] = table.groupby(GROUP).cumcount() + 1
    columns = ["dataset", "grader", "rank", "reply_model", "dialogs", "scored", "mean_score"]
    columns += ["mean_low", "mean_high", "share_ge_4", "share_ge_4_low", "share_ge_4_high"]
    columns += list(SPENT_COLUMNS)
    return table[columns].reset_index(drop=True)


SPENT_COLUMNS = ("reply_calls_per_dialog", "reply_input_tokens_per_dialog",
                 "reply_output_tokens_per_dialog", "reply_tokens_per_dialog",
                 "reply_cost_per_dialog")  # fmt: skip
"""`reply_table`'s columns of what the reply model spent per scored dialog."""


def _spent_per_dialog(
    spent: pd.DataFrame | None, key: tuple[Any, Any, Any], scored: int, prices: Prices | None
) -> dict[str, float]:
    """A reply model's `SPENT_COLUMNS`: what it spent in the grader's logs over the dialogs
    scored (every sample it replied to was billed, scored or not)."""
    nan = math.nan
    out = dict.fromkeys(SPENT_COLUMNS, nan)
    if spent is None or not scored:
        return out
    dataset, grader, model = key
    mine = (spent["dataset"] == dataset) & (spent["grader"] == grader)
    found = spent[mine & (spent["reply_model"] == model)]
    if found.empty:
        return out
    s = found.iloc[0]
    out["reply_calls_per_dialog"] = s["calls"] / scored
    out["reply_input_tokens_per_dialog"] = s["input_tokens"] / scored
    out["reply_output_tokens_per_dialog"] = s["output_tokens"] / scored
    out["reply_tokens_per_dialog"] = (s["input_tokens"] + s["output_tokens"]) / scored
    price = prices.models.get(str(model)) if prices is not None else None
    if price is not None and math.isfinite(s["input_tokens"]):
        cost = price.cost(s["input_tokens"], s["output_tokens"], s["reasoning_tokens"],
                          s["cache_read_tokens"], s["cache_write_tokens"])  # fmt: skip
    else:
        cost = s["recorded_cost"]
    out["reply_cost_per_dialog"] = float(cost) / scored
    return out


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


def _spent_clause(row: Any, significant: Any) -> str:
    """``, 41 tokens a reply`` (and ``, cost 0.0012``): what the reply model spent per
    scored dialog, where the logs say."""
    tokens = row.get("reply_tokens_per_dialog", math.nan)
    if not isinstance(tokens, float | int) or not math.isfinite(tokens):
        return ""
    clause = f", {tokens:,.0f} tokens a reply"
    cost = row.get("reply_cost_per_dialog", math.nan)
    if isinstance(cost, float | int) and math.isfinite(cost):
        clause += f", cost {significant(cost)}"
    return clause


def reply_findings(comparison: Any) -> list[str]:
    """Response mode in a sentence per grader: the reply models by mean score, with CIs,
    and what a reply cost each (tokens, and the cost where known)."""
    from .formats import percent, significant, with_ci

    table = comparison.replies
    if table is None or "mean_low" not in table:
        return []
    lines = []
    for (dataset, grader), group in table.groupby(GROUP, sort=True):
        shown = "; ".join(
            f"{r['reply_model']} {with_ci(r['mean_score'], r['mean_low'], r['mean_high'], 2)}"
            f" (≥ 4: {percent(r['share_ge_4'])}{_spent_clause(r, significant)})"
            for _, r in group.iterrows()
        )
        lines.append(f"Reply models graded by {grader} on {dataset} (mean score): {shown}.")
    return lines
