"""The comparison tables: judges (ranked on the common set), pairs, bias, histograms, emotions."""

from __future__ import annotations

import itertools
import math
import sys
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..stats._agreement import (
    agreement,
    icc,
    krippendorff_alpha,
    somers_d_all,
    somers_d_all_ci,
)
from . import ceiling, stats
from .comparison import DEFAULT_CALIBRATION, HUMAN, LEFT_OUT, JudgeComparison, is_baseline
from .prices import Prices, check_prices, sample_costs

if TYPE_CHECKING:
    from tqdm import tqdm

    from .logs import LoadedScores


def _methods(methods: pd.Series) -> str:
    counts = methods.dropna().astype(str).value_counts()
    if counts.empty:
        return ""
    if len(counts) == 1:
        return str(counts.index[0])
    return ", ".join(f"{m} {n}" for m, n in counts.items())


def wide_scores(samples: pd.DataFrame, judges: list[str]) -> pd.DataFrame:
    """Scores as dialogs (rows: id) x judges (columns), NaN where not scored."""
    wide = samples.pivot(index="id", columns="judge", values="score")
    return wide.reindex(columns=judges)


def human_ratings(samples: pd.DataFrame) -> pd.Series:
    """The human rating of each dialog (id), where any log has one."""
    return samples.dropna(subset=["human"]).groupby("id")["human"].first()


def common_dialogs(samples: pd.DataFrame, judges: list[str]) -> pd.Index:
    """Dialogs every judge that scored anything scored and humans rated: the ranking set.

    A dialog some judge left out by design (``comparison.LEFT_OUT``: its own model's reply)
    is outside it too, so that every judge is compared on the same dialogs."""
    wide = wide_scores(samples, judges)
    active = [j for j in judges if wide[j].notna().any()]
    rated = human_ratings(samples)
    both = wide[active].dropna().index if active else wide.index[:0]
    return both.intersection(rated.index)


def judge_table(
    samples: pd.DataFrame,
    resamples: int,
    seed: int,
    bar: tqdm | None = None,
    calibration_method: str = DEFAULT_CALIBRATION,
    prices: Prices | None = None,
) -> tuple[pd.DataFrame, int]:
    """One row per judge, ranked by its headline, ``somers_d_all``.

    ``somers_d_all`` (with ``somers_d_low`` / ``somers_d_high``, a percentile bootstrap
    over dialogs) is the figure the viewer's log list shows for each log: Somers' D of the
    judge's scores on the human ratings over every rated dialog compared, a dialog it left
    unscored or errored counting as ordered against people in each of its pairs, so that
    skipping hard dialogs cannot raise it. Returns the table and the size of the common
    set. The other agreement columns (``spearman`` ... ``within_one``) are computed on
    the dialogs every judge scored and humans rated; ``spearman_own`` / ``n_own`` are on
    the judge's own scored dialogs. ``dialogs`` are the dialogs the judge was to score: every
    compared dialog but those left out by design for it (``left_out``: a published judge's
    ratings of its own model's replies, ``own_replies``), which are outside its
    ``coverage`` and its headline, neither scored nor counted against it. ``coverage`` is
    scored / dialogs; ``low_coverage`` marks a judge below the best covered one.
    ``icc_c1`` / ``icc_a1`` / ``icc_ck`` / ``icc_ak`` (each with ``_low`` / ``_high``) are
    the intraclass correlations of the judge and the people's rating as two raters of each
    common dialog (`_agreement.icc`: consistency and absolute agreement, single and average
    measures, McGraw & Wong's intervals).
    ``mae_calibrated`` / ``qwk_calibrated`` (with CIs, beside the raw ``mae`` / ``qwk`` and
    their CIs) are cross-fitted on the same common dialogs with ``calibration_method`` (see
    ``ceiling.calibrated_columns``).
    Beside Spearman, what a scored dialog cost (`cost_columns`): calls, input, output and
    reasoning tokens, and with ``prices`` the cost.
    """
    judges = list(dict.fromkeys(samples["judge"]))
    costs = sample_costs(samples, prices) if prices is not None else recorded_costs(samples)
    dialogs = samples["id"].nunique()
    common = common_dialogs(samples, judges)
    human = human_ratings(samples)
    wide = wide_scores(samples, judges)
    rows = []
    for judge, group in samples.groupby("judge", sort=False):
        status = group["status"].value_counts()
        scored = group[group["status"] == "scored"]
        completed = group[~group["status"].isin(["errored", LEFT_OUT])]
        left_out = pd.Index(group.loc[group["status"] == LEFT_OUT, "id"].unique())
        row: dict[str, Any] = {
            "judge": judge,
            "model": group["model"].iloc[0],
            "baseline": is_baseline(str(group["model"].iloc[0])),
            "method": _methods((scored if len(scored) else group)["method"]),
            "dialogs": dialogs - len(left_out),
            "scored": int(status.get("scored", 0)),
            "unscored": int(status.get("unscored", 0)),
            "errored": int(status.get("errored", 0)),
            "left_out": len(left_out),
        }
        row["coverage"] = row["scored"] / row["dialogs"] if row["dialogs"] else math.nan
        # a judge that scored nothing is outside the common set (`common_dialogs`): no
        # agreement on it, rather than its NaN scores ranked
        mine = common if row["scored"] else common[:0]
        x = wide.loc[mine, judge].to_numpy(float)
        h = human.reindex(mine).to_numpy(float)
        metrics = agreement(x, h) if len(mine) else {}
        row["n_common"] = len(mine)
        # one seed for every judge: the judges of the same dialogs share their draws
        row |= headline_columns(
            wide[judge],
            human.drop(left_out, errors="ignore"),
            resamples,
            stats.seed_for("headline", seed=seed),
        )
        row["spearman"] = metrics.get("spearman", math.nan)
        # the pairs' seed: a pair with a judge that scored only the common dialogs reuses
        # this bootstrap (`stats.rho_draws`) instead of drawing its own
        low, high = stats.spearman_ci(x, h, resamples, stats.seed_for("pairs", seed=seed))
        row["spearman_low"], row["spearman_high"] = low, high
        row |= cost_columns(group, row["scored"], costs)
        for key in ("kendall", "pearson", "mae", "rmse", "qwk", "exact", "within_one"):
            row[key] = metrics.get(key, math.nan)
        # the judge and the people's rating as two raters of each common dialog
        row |= {k: v for k, v in icc(np.column_stack([x, h])).items() if k != "icc_n"}
        row |= ceiling.calibrated_columns(str(judge), x, h, calibration_method, resamples, seed)
        own = scored.dropna(subset=["human"])
        row["n_own"] = len(own)
        xo, ho = own["score"].to_numpy(float), own["human"].to_numpy(float)
        row["spearman_own"] = float(stats.spearman(xo, ho)) if stats.varied(xo, ho) else math.nan
        row["mean_score"] = float(scored["score"].mean()) if len(scored) else math.nan
        row["tokens_per_sample"] = float(completed["tokens"].mean()) if len(completed) else 0.0
        row["length_spearman"] = _length_rho(scored["score"], scored["reply_words"])
        row["share_3_4"] = stats.level_shares(scored["score"].to_numpy(float))["share_3_4"]
        row["logs"] = group["log"].nunique()
        rows.append(row)
        if bar is not None:
            bar.update()
    table = pd.DataFrame(rows)
    if table.empty:
        return table, len(common)
    table["low_coverage"] = table["coverage"] < table["coverage"].max()
    table = table.sort_values(
        ["somers_d_all", "spearman", "qwk", "mae", "coverage"],
        ascending=[False, False, False, True, False],
        na_position="last",
        kind="stable",
    ).reset_index(drop=True)
    # a rank only where there is agreement to rank by (none without human ratings)
    ranks = pd.array(range(1, len(table) + 1), dtype="Int64") if len(common) else pd.NA
    table.insert(0, "rank", ranks)
    # the headline first after the judge's name (judges.csv, summary.json): what the
    # viewer's log list shows for each log
    first = ["rank", "judge", "somers_d_all", "somers_d_low", "somers_d_high"]
    table = table[first + [c for c in table.columns if c not in first]]
    return table, len(common)


def headline_columns(
    scores: pd.Series, human: pd.Series, resamples: int, seed: int
) -> dict[str, float]:
    """``somers_d_all`` of one judge's ``scores`` (by dialog, NaN where not scored) over
    every dialog of ``human`` (the rated ones), with its bootstrap interval."""
    x = scores.reindex(human.index).to_numpy(float)
    h = human.to_numpy(float)
    scored = np.isfinite(x)
    value = somers_d_all(x[scored], h[scored], int((~scored).sum())) if len(h) else math.nan
    low, high = somers_d_all_ci(x, h, resamples, seed) if len(h) else (math.nan, math.nan)
    return {"somers_d_all": value, "somers_d_low": low, "somers_d_high": high}


PER_DIALOG = ("calls", "input_tokens", "output_tokens", "reasoning_tokens")
"""The judge's spending columns of a sample row (``logs``), shown per scored dialog."""


RECORDED = "the costs Inspect recorded in the logs"
"""What ``JudgeComparison.prices`` says when the cost comes from the logs, not a file."""


def recorded_costs(samples: pd.DataFrame) -> pd.Series | None:
    """What Inspect recorded each row cost (runs with ``--model-cost-config``, or models
    whose price Inspect knows), or None where no row has a recorded cost. A judge with
    calls and no recorded cost on some row gets NaN there (never a partial sum); an offline
    baseline without one costs 0."""
    if "recorded_cost" not in samples or not samples["recorded_cost"].notna().any():
        return None
    free = samples["model"].map(lambda m: is_baseline(str(m))) & samples["recorded_cost"].isna()
    return samples["recorded_cost"].where(~free, 0.0)


def cost_columns(group: pd.DataFrame, scored: int, costs: pd.Series | None) -> dict[str, float]:
    """What the judge spent on all its dialogs (every epoch, unscored and errored ones
    too: they were billed) divided by the dialogs it scored: ``calls_per_dialog``,
    ``input_tokens_per_dialog``, ... and ``cost_per_dialog`` with prices. NaN where the
    logs say nothing (published judges; calls of a log without events) or nothing was
    scored."""
    columns: dict[str, float] = {}
    spent = [(name, group[name] if name in group else None) for name in PER_DIALOG]
    if costs is not None:
        spent.append(("cost", costs.reindex(group.index)))
    for name, values in spent:
        total = values.sum(min_count=1) if values is not None else math.nan
        columns[f"{name}_per_dialog"] = float(total) / scored if scored else math.nan
    return columns


def _length_rho(score: pd.Series, words: pd.Series) -> float:
    both = pd.DataFrame({"s": score, "w": words}).dropna()
    s, w = both["s"].to_numpy(float), both["w"].to_numpy(float)
    return float(stats.spearman(s, w)) if stats.varied(s, w) else math.nan


def pair_table(
    samples: pd.DataFrame,
    judges: list[str],
    resamples: int,
    seed: int,
    bar: tqdm | None = None,
) -> pd.DataFrame:
    """One row per pair of judges (better-ranked first), on the dialogs both scored.

    With human ratings: difference in Spearman with its paired bootstrap CI, the
    raw p-value and the Holm-adjusted one over all pairs. Always: inter-judge
    Spearman and ordinal Krippendorff's alpha. A pair's figures depend only on
    its two judges: the dialogs are in id order and every pair's resamples are
    drawn from one seed (they depend on the number of dialogs only), so adding a
    judge leaves them as they were.
    """
    wide = wide_scores(samples, judges).sort_index()
    human = human_ratings(samples).reindex(wide.index)
    position = {j: i for i, j in enumerate(judges)}
    rows = []
    for first, second in itertools.combinations(sorted(judges), 2):
        both = wide[[first, second]].dropna()
        x1, x2 = both[first].to_numpy(float), both[second].to_numpy(float)
        rated = both.assign(human=human.reindex(both.index)).dropna()
        y1, y2, h = (rated[c].to_numpy(float) for c in (first, second, "human"))
        # one seed for every pair: each judge's bootstrap is drawn once (`stats.rho_draws`)
        diff = stats.paired_difference(y1, y2, h, resamples, stats.seed_for("pairs", seed=seed))
        rho1 = float(stats.spearman(y1, h)) if stats.varied(y1, h) else math.nan
        rho2 = float(stats.spearman(y2, h)) if stats.varied(y2, h) else math.nan
        a, b = (first, second) if position[first] < position[second] else (second, first)
        if a != first:  # shown better-ranked first: the difference changes sign
            diff = {
                "diff": -diff["diff"],
                "diff_low": -diff["diff_high"],
                "diff_high": -diff["diff_low"],
                "p_value": diff["p_value"],
            }
            rho1, rho2 = rho2, rho1
        alpha = krippendorff_alpha([list(x1), list(x2)]) if len(both) else None
        rows.append(
            {
                "judge_a": a,
                "judge_b": b,
                "n_common": len(both),
                "judge_spearman": float(stats.spearman(x1, x2))
                if stats.varied(x1, x2)
                else math.nan,
                "judge_alpha": math.nan if alpha is None else alpha,
                "mean_diff": float(np.mean(both[a] - both[b])) if len(both) else math.nan,
                "n_human": len(rated),
                "spearman_a": rho1,
                "spearman_b": rho2,
                **diff,
            }
        )
        if bar is not None:
            bar.update()
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table["p_holm"] = stats.holm(table["p_value"].tolist())
    table["significant"] = table["p_holm"] < 0.05
    table["ci_excludes_0"] = (table["diff_low"] > 0) | (table["diff_high"] < 0)
    order = table["judge_a"].map(position) * len(judges) + table["judge_b"].map(position)
    return table.loc[order.sort_values(kind="stable").index].reset_index(drop=True)


def overall_alpha(samples: pd.DataFrame, judges: list[str]) -> float:
    """Ordinal Krippendorff's alpha over all judges (NaN with fewer than two)."""
    if len(judges) < 2:
        return math.nan
    wide = wide_scores(samples, judges)
    matrix = [[None if pd.isna(v) else float(v) for v in wide[j]] for j in judges]
    alpha = krippendorff_alpha(matrix)
    return math.nan if alpha is None else alpha


def length_bias(
    samples: pd.DataFrame, judges: list[str], resamples: int, seed: int, bar: tqdm | None = None
) -> pd.DataFrame:
    """Spearman of score against reply length (words) per judge and for the humans."""
    per_dialog = samples.groupby("id").agg(
        human=("human", "first"), reply_words=("reply_words", "first")
    )
    sources = [(j, samples[samples["judge"] == j][["score", "reply_words"]]) for j in judges]
    sources.append((HUMAN, per_dialog.rename(columns={"human": "score"})))
    rows = []
    for name, frame in sources:
        both = frame.dropna()
        s, w = both["score"].to_numpy(float), both["reply_words"].to_numpy(float)
        rho = float(stats.spearman(s, w)) if stats.varied(s, w) else math.nan
        # one seed for every rater: raters of the same dialogs share their draws
        low, high = stats.spearman_ci(s, w, resamples, stats.seed_for("length", seed=seed))
        rows.append(
            {
                "rater": name,
                "n": len(both),
                "length_spearman": rho,
                "low": low,
                "high": high,
                "mean_reply_words": float(w.mean()) if len(w) else math.nan,
            }
        )
        if bar is not None:
            bar.update()
    return pd.DataFrame(rows)


def histogram_table(samples: pd.DataFrame, judges: list[str]) -> pd.DataFrame:
    """Share of scores at each level 1-5 per judge and for the humans."""
    rows = []
    for judge in judges:
        values = samples.loc[samples["judge"] == judge, "score"].to_numpy(float)
        rows.append(
            {"rater": judge, "n": int(np.isfinite(values).sum()), **stats.level_shares(values)}
        )
    human = human_ratings(samples).to_numpy(float)
    if len(human):
        rows.append({"rater": HUMAN, "n": len(human), **stats.level_shares(human)})
    return pd.DataFrame(rows)


def emotion_table(
    samples: pd.DataFrame, judges: list[str], resamples: int, seed: int, bar: tqdm | None = None
) -> pd.DataFrame:
    """Per emotion and judge: n, mean score, mean human, Spearman with a 95% CI, MAE.

    Empty when no dialog has an ``emotion`` in its metadata. Groups are small
    (often ~15 dialogs): read the CI before the point estimate.
    """
    if "emotion" not in samples or samples["emotion"].isna().all():
        return pd.DataFrame()
    rows = []
    scored = samples[samples["status"] == "scored"].dropna(subset=["emotion"])
    for (emotion, judge), group in scored.groupby(["emotion", "judge"], sort=True):
        rated = group.dropna(subset=["human"])
        x, h = rated["score"].to_numpy(float), rated["human"].to_numpy(float)
        low, high = stats.spearman_ci(
            # a seed per emotion: the judges of the same dialogs share their draws
            x,
            h,
            resamples,
            stats.seed_for("emotion", str(emotion), seed=seed),
        )
        rows.append(
            {
                "emotion": emotion,
                "judge": judge,
                "n": len(group),
                "n_human": len(rated),
                "mean_score": float(group["score"].mean()),
                "mean_human": float(rated["human"].mean()) if len(rated) else math.nan,
                "spearman": float(stats.spearman(x, h)) if stats.varied(x, h) else math.nan,
                "spearman_low": low,
                "spearman_high": high,
                "mae": float(np.mean(np.abs(x - h))) if len(rated) else math.nan,
            }
        )
    if bar is not None:
        bar.update()
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    order = {j: i for i, j in enumerate(judges)}
    return table.sort_values(
        ["emotion", "judge"], key=lambda c: c.map(order) if c.name == "judge" else c
    ).reset_index(drop=True)


def samples_wide(comparison: JudgeComparison) -> pd.DataFrame:
    """Joined dialogs: human rating, reply length, emotion, one score column per judge, then
    ``unscored_reason: <judge>`` per judge (why it has no score: the judge's reason, or
    ``errored: ...``; empty where scored) and the texts: ``reply`` (the rated reply) and
    ``dialog`` (the dialog as ``user:`` / ``bot:`` lines)."""
    samples = comparison.samples
    names = comparison.judge_names
    wide = wide_scores(samples, names)
    extra = samples.groupby("id").agg(
        human=("human", "first"), reply_words=("reply_words", "first"), emotion=("emotion", "first")
    )
    errored = ("errored: " + samples["error"].fillna("")).where(samples["status"] == "errored")
    unscored = samples["status"].isin(["unscored", LEFT_OUT])
    why = samples["unscored_reason"].where(unscored).fillna(errored)
    reasons = samples.assign(why=why).pivot(index="id", columns="judge", values="why")
    reasons = reasons.reindex(columns=names).rename(columns=lambda j: f"unscored_reason: {j}")
    texts = samples.groupby("id").agg(reply=("reply", "first"), dialog=("dialog", "first"))
    return extra.join(wide, how="outer").join(reasons).join(texts).reset_index()


def build_comparison(
    loaded: LoadedScores,
    resamples: int,
    seed: int,
    progress: bool = False,
    calibration_method: str = DEFAULT_CALIBRATION,
    alt_epsilon: float = 0.2,
    prices: Prices | None = None,
) -> JudgeComparison:
    """Every table of the comparison from the rows ``logs.load_scores`` read
    (``alt_epsilon``: the alternative-annotator test's margin, `alttest`; ``prices``: the
    price file, which must price every compared judge model, `prices.check_prices`)."""
    from tqdm.auto import tqdm

    samples = loaded.samples
    if prices is not None:
        check_prices(prices, samples)
    warnings = list(loaded.warnings)
    judges = samples["judge"].nunique()
    total = judges + judges * (judges - 1) // 2 + judges + 2
    with tqdm(
        total=total, desc="bootstrapping", unit="table", disable=not progress, file=sys.stderr
    ) as bar:
        table, common = judge_table(samples, resamples, seed, bar, calibration_method, prices)
        names = list(table["judge"])
        ceiling_ = human_ceiling(samples, names, resamples, seed)
        if ceiling_.beside is not None:
            medians = [ceiling.ceiling_medians(ceiling_.beside, j) for j in names]
            table = table.join(pd.DataFrame(medians, index=table.index))
        pairs = pair_table(samples, names, resamples, seed, bar)
        bias = length_bias(samples, names, resamples, seed, bar)
        emotions = emotion_table(samples, names, resamples, seed, bar)
    if samples["human"].notna().any():
        for _, row in table[table["low_coverage"]].iterrows():
            if not row["scored"]:
                warnings.append(
                    f"{row['judge']} scored none of the {row['dialogs']} dialogs: no agreement "
                    "to rank it by; it is listed last, and the others are ranked without it"
                )
                continue
            warnings.append(
                f"{row['judge']} scored {row['scored']} of {row['dialogs']} dialogs "
                f"(coverage {row['coverage']:.0%}, below the best covered judge): it is ranked "
                f"on the {common} dialogs every judge scored, not on its own subset"
            )
        if common < 10 and len(table) > 0:
            warnings.append(
                f"only {common} dialog(s) were scored by every judge and rated by humans: "
                "the ranking rests on very few dialogs"
            )
    from .selfcheck import judge_extras

    wide = wide_scores(samples, names)
    extras = judge_extras(samples, table, wide, common_dialogs(samples, names), alt_epsilon)
    replies, reply_pairs = loaded.replies, None
    if loaded.reply_scores is not None:
        from .replying import reply_pairs as pairs_of_replies
        from .replying import reply_table

        replies = reply_table(loaded.reply_scores, resamples, seed, loaded.reply_spent, prices)
        reply_pairs = pairs_of_replies(loaded.reply_scores, resamples, seed)
    return JudgeComparison(
        reply_pairs=reply_pairs,
        judges=extras.judges,
        alt_test=extras.alt_test,
        alt_note=extras.alt_note,
        pairs=pairs,
        length_bias=bias,
        histograms=histogram_table(samples, names),
        emotions=emotions,
        samples=samples,
        alpha=overall_alpha(samples, names),
        logs=loaded.logs,
        resamples=resamples,
        seed=seed,
        common=common,
        dataset=loaded.dataset,
        warnings=warnings,
        replies=replies,
        humans=ceiling_.humans,
        beside=ceiling_.beside,
        human_alpha=ceiling_.alpha,
        humans_note=ceiling_.note,
        calibration_method=calibration_method,
        prices=(
            prices.file
            if prices is not None
            else RECORDED
            if recorded_costs(samples) is not None
            else ""
        ),
    )


def human_ceiling(
    samples: pd.DataFrame, judges: list[str], resamples: int, seed: int
) -> ceiling.Ceiling:
    """The raters' ceiling and each judge beside it on the common dialogs (see ``ceiling``)."""
    wide = wide_scores(samples, judges)
    common = common_dialogs(samples, judges)
    return ceiling.human_ceiling(
        samples, wide, common, human_ratings(samples), judges, resamples, seed
    )
