"""Writing the judge comparison: terminal and Markdown tables, CSV, HTML with embedded plots.

Every text that comes from the logs (model names, emotions, ids, paths) is
untrusted: HTML-escaped in report.html, Markdown-escaped in the .md files, and
cells that a spreadsheet would run as a formula are neutralised in the CSVs.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._util.write import FORMULA_PREFIXES, neutralise  # noqa: F401  (re-exported)
from .comparison import LEVELS, JudgeComparison
from .formats import (  # noqa: F401  (re-exported: report.number, ... stay importable)
    DASH,
    _p_clause,
    markdown_escape,
    markdown_table,
    number,
    p_value,
    percent,
    plain_table,
    significant,
    with_ci,
)
from .tables import RECORDED, samples_wide

FLOOR = "floor"

Row = list[str]
Table = tuple[list[str], list[Row]]


# --- formatting ---------------------------------------------------------------------------


def judge_label(row: pd.Series) -> str:
    """A judge's name, marked when it is a baseline (a floor) or has low coverage."""
    marks = []
    if bool(row.get("baseline", False)):
        marks.append(FLOOR)
    if bool(row.get("low_coverage", False)):
        marks.append("low coverage")
    return str(row["judge"]) + (f" [{'; '.join(marks)}]" if marks else "")


HEADLINE_HEADER = "somers_d_all [95% CI]"
"""The headline's column: the figure the viewer's log list shows for each log."""


def headline_cell(row: pd.Series) -> str:
    """A judge's headline, ``somers_d_all``, with its interval."""
    return with_ci(row.get("somers_d_all"), row.get("somers_d_low"), row.get("somers_d_high"))


ICC_HEADER = "ICC C/A"
"""The judges table's ICC column, ICC(C,1) and ICC(A,1) in one cell (their CIs, and Kendall's
tau, are in judges.csv), so the table fits a 1400-pixel window."""


def icc_cell(row: pd.Series) -> str:
    """A judge's ICC(C,1) and ICC(A,1) in one cell (``0.97 / 0.79``)."""
    return f"{number(row.get('icc_c1'), 2)}/{number(row.get('icc_a1'), 2)}"


def judges_display(comparison: JudgeComparison) -> Table:
    """The per-judge table as display strings (agreement columns only with human ratings)."""
    human = comparison.has_human
    headers = ["rank", "judge"]
    if human:
        headers.append(HEADLINE_HEADER)
    left_out = _left_out(comparison)
    headers += ["method", "scored", "unscored", "errored"]
    headers += ["own replies left out"] if left_out else []
    headers.append("coverage")
    if human:
        headers += [f"Spearman [95% CI] (common n={comparison.common})"]
        headers += ["MAE [95% CI]", "QWK [95% CI]", ICC_HEADER]
        headers += ["within one", "own ρ (n)"]
    headers += ["mean score", "length ρ", "share 3-4"]
    rows = []
    for _, r in comparison.judges.iterrows():
        rank = DASH if pd.isna(r["rank"]) else str(r["rank"])
        row = [rank, judge_label(r)]
        if human:
            row.append(headline_cell(r))
        row.append(str(r["method"] or DASH))
        row += [str(r["scored"]), str(r["unscored"]), str(r["errored"])]
        row += [str(r["left_out"])] if left_out else []
        row.append(percent(r["coverage"]))
        if human:
            row.append(with_ci(r["spearman"], r["spearman_low"], r["spearman_high"]))
            row += [with_ci(r[k], r[f"{k}_low"], r[f"{k}_high"]) for k in ("mae", "qwk")]
            row.append(icc_cell(r))
            row.append(number(r["within_one"]))
            row.append(f"{number(r['spearman_own'])} ({r['n_own']})")
        row += [number(r["mean_score"], 2)]
        row += [number(r["length_spearman"]), number(r["share_3_4"], 2)]
        rows.append(row)
    return headers, rows


def _left_out(comparison: JudgeComparison) -> bool:
    """Whether some judge had dialogs left out by design (its own model's replies)."""
    table = comparison.judges
    return "left_out" in table and bool((table["left_out"] > 0).any())


def coverage_cell(row: pd.Series) -> str:
    """A judge's coverage, with the dialogs left out by design for it beside it."""
    left = row.get("left_out", 0)
    shown = percent(row["coverage"])
    return f"{shown} ({left} own left out)" if pd.notna(left) and left > 0 else shown


def cost_display(comparison: JudgeComparison) -> Table:
    """What a scored dialog cost each judge, beside its Spearman (rank order): calls,
    input, output and reasoning tokens, and the cost with prices. A table of its own, so
    that the judges table keeps to the report's width."""
    headers = ["rank", "judge"]
    if comparison.has_human:
        headers.append(HEADLINE_HEADER)
    headers += ["calls/ dialog", "input tok/ dialog", "output tok/ dialog", "reasoning tok/ dialog"]
    headers += ["cost/ dialog"] if comparison.prices else []
    rows = []
    for _, r in comparison.judges.iterrows():
        row = [DASH if pd.isna(r["rank"]) else str(r["rank"]), judge_label(r)]
        if comparison.has_human:
            row.append(headline_cell(r))
        row += [number(r.get("calls_per_dialog"), 1), number(r.get("input_tokens_per_dialog"), 0)]
        row += [number(r.get("output_tokens_per_dialog"), 1)]
        row += [number(r.get("reasoning_tokens_per_dialog"), 0)]
        if comparison.prices:
            row.append(significant(r.get("cost_per_dialog")))
        rows.append(row)
    return headers, rows


def cost_lines(comparison: JudgeComparison) -> list[str]:
    """One finding: what each judge spent per scored dialog beside its agreement, so that
    the agreement an extra token buys can be read off."""
    judges = comparison.judges
    if judges.empty or "input_tokens_per_dialog" not in judges:
        return []
    parts = []
    for _, r in judges.iterrows():
        tokens = r["input_tokens_per_dialog"] + r["output_tokens_per_dialog"]
        if number(tokens) == DASH:
            continue
        calls = r["calls_per_dialog"]
        shown = number(calls, 0 if float(calls).is_integer() else 1)
        text = f"{r['judge']} {shown} call{'' if calls == 1 else 's'}, {tokens:,.0f} tokens"
        if comparison.prices:
            text += f", cost {significant(r.get('cost_per_dialog'))}"
        if comparison.has_human:
            text += f" (Somers' D all {number(r['somers_d_all'])})"
        parts.append(text)
    if not parts:
        return []
    # chatbots compared: the judges are their graders, whose spending is not the chatbots'
    chatbots = comparison.replies is not None and not comparison.replies.empty
    who = "The grader spent" if chatbots else "Spent"
    return [f"{who} per scored dialog: " + "; ".join(parts) + "."]


def calibrated_display(comparison: JudgeComparison) -> Table:
    """MAE and QWK of each judge raw and cross-fitted-calibrated, on the common set."""
    method = comparison.calibration_method
    headers = ["judge", "n", "MAE [95% CI]", f"MAE calibrated ({method}) [95% CI]"]
    headers += ["QWK [95% CI]", f"QWK calibrated ({method}) [95% CI]"]
    rows = []
    for _, r in comparison.judges.iterrows():
        rows.append(
            [
                judge_label(r),
                str(r["n_common"]),
                *(
                    with_ci(r[k], r[f"{k}_low"], r[f"{k}_high"])
                    for k in ("mae", "mae_calibrated", "qwk", "qwk_calibrated")
                ),
            ]
        )
    return headers, rows


def humans_display(comparison: JudgeComparison) -> Table:
    """The human ceiling (``humans.csv``) as display strings."""
    headers = ["rater A", "rater B", "n", "Spearman [95% CI]", "QWK [95% CI]"]
    rows = []
    table = comparison.humans if comparison.humans is not None else pd.DataFrame()
    for _, r in table.iterrows():
        rows.append(
            [
                str(r["rater_a"]),
                str(r["rater_b"]),
                str(r["n"]),
                with_ci(r["spearman"], r["spearman_low"], r["spearman_high"]),
                with_ci(r["qwk"], r["qwk_low"], r["qwk_high"]),
            ]
        )
    return headers, rows


def beside_display(comparison: JudgeComparison) -> Table:
    """Each rater against the rest followed by each judge against the same target on the
    same dialogs (the rest of that rater), then each judge against all raters."""
    headers = ["who", "against", "n", "Spearman [95% CI]", "QWK [95% CI]"]
    if comparison.humans is None or comparison.beside is None:
        return headers, []
    rest = comparison.humans[comparison.humans["rater_b"] == "rest"]
    beside = comparison.beside

    def cells(r: pd.Series, who: str) -> Row:
        return [
            who,
            str(r["rater_b"]),
            str(r["n"]),
            with_ci(r["spearman"], r["spearman_low"], r["spearman_high"]),
            with_ci(r["qwk"], r["qwk_low"], r["qwk_high"]),
        ]

    rows = []
    for _, r in rest.iterrows():
        rows.append(cells(r, f"rater {r['rater_a']}"))
        for _, j in beside[beside["rater_b"] == f"rest of {r['rater_a']}"].iterrows():
            rows.append(cells(j, f"judge {j['rater_a']}"))
    for _, j in beside[beside["rater_b"] == "all raters"].iterrows():
        rows.append(cells(j, f"judge {j['rater_a']}"))
    return headers, rows


def ceiling_lines(comparison: JudgeComparison) -> list[str]:
    """The ceiling in a sentence or two (or why there is none)."""
    if comparison.humans is None:
        return [comparison.humans_note] if comparison.humans_note else []
    rest = comparison.humans[comparison.humans["rater_b"] == "rest"]
    alpha = comparison.human_alpha or {}
    lines = [
        comparison.humans_note,
        f"Raters against the rest: Spearman {number(rest['spearman'].min())} to "
        f"{number(rest['spearman'].max())}, QWK {number(rest['qwk'].min())} to "
        f"{number(rest['qwk'].max())}; raters' Krippendorff's α (ordinal) "
        f"{with_ci(alpha.get('alpha'), alpha.get('alpha_low'), alpha.get('alpha_high'))}.",
    ]
    for _, r in comparison.judges.iterrows():
        if "vs_rest_qwk" in r:
            lines.append(
                f"{r['judge']} against the rest of each rater (median): Spearman "
                f"{number(r['vs_rest_spearman'])}, QWK {number(r['vs_rest_qwk'])}."
            )
    return lines


def pairs_display(comparison: JudgeComparison) -> Table:
    """The pairwise table as display strings."""
    human = comparison.has_human
    headers = ["judge A", "judge B", "n"]
    if human:
        headers += ["ρ A", "ρ B", "Δρ (A−B) [95% CI]", "p", "p (Holm)", "significant (Holm)"]
    headers += ["inter-judge ρ", "inter-judge α"]
    rows = []
    for _, r in comparison.pairs.iterrows():
        row = [str(r["judge_a"]), str(r["judge_b"]), str(r["n_human" if human else "n_common"])]
        if human:
            row += [number(r["spearman_a"]), number(r["spearman_b"])]
            row += [with_ci(r["diff"], r["diff_low"], r["diff_high"]), p_value(r["p_value"])]
            row += [p_value(r["p_holm"]), "yes" if r["significant"] else "no"]
        row += [number(r["judge_spearman"]), number(r["judge_alpha"])]
        rows.append(row)
    return headers, rows


def bias_display(comparison: JudgeComparison) -> Table:
    headers = ["rater", "n", "ρ(score, reply words) [95% CI]", "mean reply words"]
    rows = [
        [
            str(r["rater"]),
            str(r["n"]),
            with_ci(r["length_spearman"], r["low"], r["high"]),
            number(r["mean_reply_words"], 1),
        ]
        for _, r in comparison.length_bias.iterrows()
    ]
    return headers, rows


def histogram_display(comparison: JudgeComparison) -> Table:
    headers = ["rater", "n", *[f"{k}" for k in LEVELS], "3-4"]
    rows = [
        [str(r["rater"]), str(r["n"])]
        + [number(r[f"share_{k}"], 2) for k in LEVELS]
        + [number(r["share_3_4"], 2)]
        for _, r in comparison.histograms.iterrows()
    ]
    return headers, rows


def emotion_display(comparison: JudgeComparison) -> Table:
    human = comparison.has_human
    headers = ["emotion", "judge", "n", "mean score"]
    if human:
        headers += ["mean human", "Spearman [95% CI]", "MAE"]
    rows = []
    for _, r in comparison.emotions.iterrows():
        row = [str(r["emotion"]), str(r["judge"]), str(r["n"]), number(r["mean_score"], 2)]
        if human:
            row += [
                number(r["mean_human"], 2),
                with_ci(r["spearman"], r["spearman_low"], r["spearman_high"]),
                number(r["mae"]),
            ]
        rows.append(row)
    return headers, rows


def replies_display(comparison: JudgeComparison) -> Table:
    """Response mode: the reply models side by side per grader, with what each reply model
    itself spent per scored dialog (its calls, input + output tokens, and the cost where
    known; the grader's is in the judges' cost table)."""
    headers = ["dataset", "grader", "rank", "reply model", "dialogs", "scored"]
    headers += ["mean score [95% CI]", "share ≥ 4 [95% CI]", "calls/ reply", "tok/ reply"]
    frame = comparison.replies if comparison.replies is not None else pd.DataFrame()
    costs = frame["reply_cost_per_dialog"] if "reply_cost_per_dialog" in frame else None
    priced = costs is not None and bool(costs.notna().any())
    headers += ["cost/ reply"] if priced else []
    rows = []
    for _, r in frame.iterrows():
        row = [
            str(r["dataset"]),
            str(r["grader"]),
            str(r.get("rank", DASH)),
            str(r["reply_model"]),
            str(r["dialogs"]),
            str(r["scored"]),
            with_ci(r["mean_score"], r.get("mean_low"), r.get("mean_high"), 2),
            with_ci(r["share_ge_4"], r.get("share_ge_4_low"), r.get("share_ge_4_high"), 2),
            number(r.get("reply_calls_per_dialog"), 1),
            number(r.get("reply_tokens_per_dialog"), 0),
        ]
        if priced:
            row.append(significant(r.get("reply_cost_per_dialog")))
        rows.append(row)
    return headers, rows


def _compared(records: Any) -> str:
    """A compared log's cell, with what it holds more than once (`checks.Repeats.note`)."""
    return f"yes ({records})" if isinstance(records, str) and records else "yes"


def _ranked_chatbots(comparison: JudgeComparison) -> set[str]:
    """The reply models of the chatbot ranking (response mode; empty without one)."""
    replies = comparison.replies
    if replies is None or replies.empty:
        return set()
    return {str(model) for model in replies["reply_model"]}


def _set_apart(comparison: JudgeComparison, row: pd.Series) -> str:
    """Why a log is left out of everything compared (empty: it is in): a response-mode log
    left out of the judges' comparison (it grades other replies) is still in the chatbot
    ranking, so it is compared."""
    why = str(row["set_apart"] or "")
    if why.startswith("it grades other replies") and str(row.get("reply_model")) in (
        _ranked_chatbots(comparison)
    ):
        return ""
    return why


def logs_display(comparison: JudgeComparison) -> Table:
    headers = ["judge(s)", "mode", "dataset", "status", "samples", "errored", "compared", "log"]
    rows = []
    for _, r in comparison.logs.iterrows():
        why = _set_apart(comparison, r)
        if why:
            compared = f"no: {why}"
        elif r["set_apart"]:
            compared = "yes (chatbots; its replies are not the judges')"
        else:
            compared = _compared(r.get("records"))
        rows.append([
            str(r["judges"]) or DASH,
            str(r["mode"]) + (f" (replies: {r['reply_model']})" if r["reply_model"] else ""),
            f"{r['dataset']}@{r['fingerprint']}",
            str(r["status"]),
            str(r["samples"]),
            str(r["errored"]),
            compared,
            str(r["log"]),
        ])  # fmt: skip
    return headers, rows


# --- Markdown -----------------------------------------------------------------------------

# --- findings -----------------------------------------------------------------------------


def headline(comparison: JudgeComparison) -> list[str]:
    """One-sentence findings: the ranking, coverage, floors, the top judge's tests."""
    judges = comparison.judges
    if judges.empty:
        return ["No judge scored any dialog."]
    lines: list[str] = []
    dialogs = comparison.samples["id"].nunique()
    rated = comparison.samples.dropna(subset=["human"])["id"].nunique()
    lines.append(
        f"{len(judges)} judge(s), {dialogs} dialog(s) of {comparison.dataset}, "
        f"{rated} with human ratings."
    )
    contenders = judges[~judges["baseline"]]
    floors = judges[judges["baseline"]]
    if comparison.has_human:
        own = ""
        if _left_out(comparison):
            own = (
                " (less the replies of each judge's own model, left out by design and not "
                "counted against it: "
                + ", ".join(f"{r['judge']} {r['left_out']}" for _, r in judges.iterrows()
                            if r["left_out"] > 0)
                + ")"
            )  # fmt: skip
        lines.append(
            f"Ranked by Somers' D all (the viewer's headline) over the {rated} rated "
            f"dialog(s){own}, a dialog a judge did not score counting against it; Spearman, "
            f"QWK and MAE beside it are on the {comparison.common} dialog(s) every judge "
            "scored."
        )
        below = _below_floors(contenders, floors)
        lines[:0] = [
            f"Below the offline floor: {name} (Somers' D all {number(value)}) agrees with "
            "the humans less than " + ", ".join(
                f"{f['judge']} ({number(f['somers_d_all'])})" for _, f in beaten.iterrows()
            ) + ": an offline baseline beats it."
            for name, value, beaten in below
        ]  # fmt: skip
        top = contenders.iloc[0] if len(contenders) else None
        if top is not None and number(top["somers_d_all"]) != DASH:
            title = (
                "Highest-ranked model judge, below an offline floor"
                if top["judge"] in {name for name, _, _ in below}
                else "Best agreement with humans"
            )
            lines.append(
                f"{title}: {top['judge']} (Somers' D all "
                f"{headline_cell(top)}; Spearman "
                f"{with_ci(top['spearman'], top['spearman_low'], top['spearman_high'])}, "
                f"QWK {number(top['qwk'])}, coverage {percent(top['coverage'])})."
            )
            for _, pair in comparison.pairs.iterrows():
                if top["judge"] not in (pair["judge_a"], pair["judge_b"]):
                    continue
                if number(pair["diff"]) == DASH:
                    continue
                verdict = "significant" if pair["significant"] else "not significant"
                lines.append(
                    f"{pair['judge_a']} vs {pair['judge_b']}: Δρ = "
                    f"{with_ci(pair['diff'], pair['diff_low'], pair['diff_high'])}, "
                    f"p {_p_clause(pair['p_value'])}, Holm-adjusted p "
                    f"{_p_clause(pair['p_holm'])} ({verdict}; n={pair['n_human']})."
                )
        elif top is None:
            lines.append(
                "Only offline baselines (floors, not contenders): no model judge to announce."
            )
        for _, floor in floors.iterrows():
            lines.append(
                f"Floor: {floor['judge']} is an offline baseline (Somers' D all "
                f"{number(floor['somers_d_all'])}, Spearman {number(floor['spearman'])}); a "
                "model judge should beat it."
            )
    else:
        from .replying import reply_findings

        lines.append("No human ratings: inter-judge agreement only.")
        # the chatbots compared are the answer: their ranking comes first
        lines[:0] = reply_findings(comparison)
    for _, row in judges[judges["errored"] > 0].iterrows():
        lines.append(
            f"{row['judge']}: {row['errored']} dialog(s) errored (infrastructure, not the "
            "judge): see the warnings for the log to retry with inspect eval-retry."
        )
    if len(judges) >= 2:
        lines.append(
            f"Inter-judge Krippendorff's α (ordinal, all judges): {number(comparison.alpha)}."
        )
    lines.extend(cost_lines(comparison))
    set_apart = sum(bool(_set_apart(comparison, r)) for _, r in comparison.logs.iterrows())
    if set_apart:
        lines.append(f"{set_apart} log(s) set apart, not compared (see Logs for why).")
    return lines


def _below_floors(
    contenders: pd.DataFrame, floors: pd.DataFrame
) -> list[tuple[str, float, pd.DataFrame]]:
    """Each model judge whose headline (``somers_d_all``) is below an offline floor's:
    its name, its headline and the floors above it (highest first)."""
    below = []
    for _, row in contenders.iterrows():
        value = row["somers_d_all"]
        if pd.isna(value):
            continue
        beaten = floors[floors["somers_d_all"].notna() & (floors["somers_d_all"] > value)]
        if len(beaten):
            below.append((str(row["judge"]), float(value), beaten.sort_values(
                "somers_d_all", ascending=False)))  # fmt: skip
    return below


TERMINAL_WIDTH = 100
"""What ``compare`` prints fits this many columns; the wide tables are in the report."""


def _fitted(table: Table, shrink: int, width: int = TERMINAL_WIDTH) -> str:
    """``plain_table`` of ``table`` within ``width`` columns, column ``shrink`` (a judge's
    name) cut short with an ellipsis where the table would be wider."""
    headers, rows = table
    text = plain_table(headers, rows)
    over = max(len(line) for line in text.splitlines()) - width
    if over <= 0:
        return text
    longest = max(len(str(c)) for c in [headers[shrink], *(r[shrink] for r in rows)])
    keep = max(8, longest - over)

    def cut(cell: str) -> str:
        return cell if len(cell) <= keep else cell[: keep - 1] + "…"

    return plain_table(headers, [[*r[:shrink], cut(r[shrink]), *r[shrink + 1 :]] for r in rows])


def terminal_judges(comparison: JudgeComparison) -> Table:
    """The judges as a terminal shows them: the headline first, then Spearman on the
    common set, coverage and what a scored dialog cost (or its tokens)."""
    human = comparison.has_human
    headers = ["#", "judge"]
    if human:
        headers += [HEADLINE_HEADER, "Spearman"]
    headers += ["coverage", "cost/dialog" if comparison.prices else "tok/dialog"]
    rows = []
    for _, r in comparison.judges.iterrows():
        row = [DASH if pd.isna(r["rank"]) else str(r["rank"]), judge_label(r)]
        if human:
            row += [headline_cell(r), number(r["spearman"])]
        row.append(coverage_cell(r))
        if comparison.prices:
            row.append(significant(r.get("cost_per_dialog")))
        else:
            tokens = r.get("input_tokens_per_dialog", math.nan)
            tokens += r.get("output_tokens_per_dialog", math.nan)
            row.append(number(tokens, 0))
        rows.append(row)
    return headers, rows


def terminal_pairs(comparison: JudgeComparison) -> Table:
    """Each pair of judges, as a terminal shows it: Δρ with its CI and Holm's p."""
    headers = ["judges", "n", "Δρ [95% CI]", "Holm p"]
    rows = [
        [
            f"{p['judge_a']} vs {p['judge_b']}",
            str(p["n_human"]),
            with_ci(p["diff"], p["diff_low"], p["diff_high"]),
            p_value(p["p_holm"]),
        ]
        for _, p in comparison.pairs.iterrows()
    ]
    return headers, rows


def terminal_text(comparison: JudgeComparison) -> str:
    """What ``inspect-empathy compare`` prints, within 100 columns: findings, the judges
    (headline first), the pairs and the human ceiling in a sentence or two; every other
    table is in the report (``--out``)."""
    import textwrap

    findings = [
        textwrap.fill(line, TERMINAL_WIDTH, subsequent_indent="  ", break_long_words=False)
        for line in headline(comparison)
    ]
    parts = [
        "\n".join(findings),
        "",
        "Judges (ranked):" if comparison.common else "Judges (not ranked: no human ratings):",
        _fitted(terminal_judges(comparison), 1),
    ]
    if not comparison.pairs.empty and comparison.has_human:
        parts += ["", "Pairs (same dialogs):", _fitted(terminal_pairs(comparison), 0)]
    if comparison.has_human:
        ceiling = [
            textwrap.fill(line, TERMINAL_WIDTH, subsequent_indent="  ", break_long_words=False)
            for line in ceiling_lines(comparison)
            if line
        ]
        parts += ["", *ceiling] if ceiling else []
    parts += [
        "",
        textwrap.fill(
            "More in the report (--out DIR): every column of each judge, what a scored dialog "
            "cost, length bias, calibration, the human ceiling, self-consistency, the "
            "dialogs judges and people disagree on.",
            TERMINAL_WIDTH,
        ),
    ]
    return "\n".join(parts)


# --- files --------------------------------------------------------------------------------


METHOD_NOTE = (
    "Ranking: judges are ranked by their headline, Somers' D all, the figure the viewer's "
    "log list shows for each log: of the pairs of rated dialogs people rated differently, "
    "the share the judge orders as people did minus the share it orders the other way, "
    "over every rated dialog compared, a dialog the judge did not score counting as "
    "ordered the other way in each of its pairs (so skipping hard dialogs cannot raise it; "
    "CI: 95% percentile bootstrap over dialogs). Spearman, MAE, QWK and ICC are on the "
    "common set, the dialogs every judge scored and humans rated (n in the header); "
    "'own ρ' (Spearman) is on "
    "the judge's own scored dialogs and is not comparable across judges of different "
    "coverage. Coverage: scored / dialogs, the dialogs the judge was to score: a published "
    "judge's ratings of its own model's replies that its spec leaves out (own_replies) are "
    "not among them, neither scored nor counted against it in coverage or Somers' D all, and "
    "are counted in 'own replies left out'; the common set leaves out every reply some judge "
    "left out, so that all judges are compared on the same dialogs. Errored: the sample "
    "failed (infrastructure; "
    "inspect eval-retry re-runs it); unscored: the judge answered without a usable score. "
    "Spearman CIs: 95% bootstrap over dialogs, BCa up to 1,000 dialogs and percentile beyond "
    "({resamples} resamples; seed {seed} "
    "combined with the judge's or pair's names, so a pair's figures do not change when "
    "other judges are added). Δρ: paired bootstrap over the dialogs both judges scored and "
    "humans rated (a resample keeps a dialog's two scores and its human rating together); p "
    "is two-sided, studentised (the difference over its bootstrap standard error, against "
    "the normal); Holm "
    "adjusts the p-values for the k(k−1)/2 pairs tested, and 'significant' means Holm p < "
    "0.05 (the CIs are not adjusted). QWK, exact and within-one use scores rounded half up "
    "to 1-5. ICC(C,1) / ICC(A,1): intraclass correlations (two-way, McGraw & Wong) of the "
    "judge and the people's rating as two raters of each common dialog, consistency (a "
    "constant offset is not held against the judge) and absolute agreement (it is); judges.csv "
    "holds their 95% CIs (McGraw & Wong's F intervals) and the average measures "
    "ICC(C,k) / ICC(A,k). α: ordinal Krippendorff's alpha. Length ρ: Spearman of the score "
    "against the "
    "judged reply's length in words. Share 3-4: scores rounded to 3 or 4. Baselines "
    "(empathy_baseline/*) are offline floors, not contenders. Calibrated MAE / QWK: each "
    "dialog's score mapped onto the human scale by a map ({method}) fitted without it "
    "(cross-fitted on the common set: leave-one-out up to 50 dialogs, else 10 folds), beside "
    "the raw figures; their CIs hold the out-of-fold predictions fixed. Human ceiling (with "
    "several raters): each rater pair and each rater against the aggregate of the others; "
    "a judge against the rest of rater R uses the same target and dialogs as R against the "
    "rest, so the two rows compare like with like. Calls and tokens per scored dialog: "
    "everything the judge spent on the compared dialogs (every epoch; unscored and errored "
    "dialogs too: they were billed) divided by the dialogs it scored, from the logs' model "
    "events (a grader's calls only, never the reply model's); input includes cached input, "
    "output includes reasoning."
)


def report_context(comparison: JudgeComparison, images: dict[str, str]) -> dict[str, Any]:
    """What the report templates (``templates/report.{html,md}.j2``) get: display strings only.

    ``tables`` holds the tables the report shows (name -> headers and rows; a table the
    comparison does not have is absent); ``images`` maps a plot's name to what the
    template shows (a file name in Markdown, base64 PNG data in HTML).
    """
    tables: dict[str, Table] = {"judges": judges_display(comparison)}
    tables["cost"] = cost_display(comparison)
    if not comparison.pairs.empty:
        tables["pairs"] = pairs_display(comparison)
    if comparison.has_human:
        from .disagreements import disagreements_display

        tables["disagreements"] = disagreements_display(comparison)
        tables["calibrated"] = calibrated_display(comparison)
        if comparison.humans is not None:
            tables["humans"] = humans_display(comparison)
            tables["beside"] = beside_display(comparison)
    tables["bias"] = bias_display(comparison)
    tables["histograms"] = histogram_display(comparison)
    if not comparison.emotions.empty:
        tables["emotions"] = emotion_display(comparison)
    if comparison.replies is not None:
        from .replying import reply_pairs_display

        tables["replies"] = replies_display(comparison)
        if comparison.reply_pairs is not None and not comparison.reply_pairs.empty:
            tables["reply_pairs"] = reply_pairs_display(comparison)
    tables["logs"] = logs_display(comparison)
    chatbots = comparison.replies is not None and not comparison.replies.empty
    return {
        "title": "Chatbot comparison (response mode)" if chatbots else "Judge comparison",
        "chatbots": chatbots,
        "findings": headline(comparison),
        "ranked": bool(comparison.common),
        "tables": tables,
        "ceiling": ceiling_lines(comparison) if comparison.has_human else [],
        "extra": _selfcheck_sections(comparison),
        "images": images,
        "note": METHOD_NOTE.format(
            resamples=comparison.resamples,
            seed=comparison.seed,
            method=comparison.calibration_method,
        ),
        "warnings": list(comparison.warnings),
        "cost_note": cost_note(comparison),
    }


def cost_note(comparison: JudgeComparison) -> str:
    """Where the cost per scored dialog comes from (empty without one)."""
    if not comparison.prices:
        return ""
    if comparison.prices == RECORDED:
        return (
            "Cost per scored dialog: what Inspect recorded each call cost (runs with "
            "--model-cost-config, or models whose price Inspect knows); offline baselines 0."
        )
    return (
        f"Cost per scored dialog from the prices in {comparison.prices} (per million "
        "tokens; reasoning tokens at their own price where the file gives one, else at "
        "the output price)."
    )


def _selfcheck_sections(comparison: JudgeComparison) -> list[Any]:
    from .selfcheck import sections

    return sections(comparison) + list(getattr(comparison, "published_sections", []))


def markdown_report(comparison: JudgeComparison, images: dict[str, Path]) -> str:
    """The whole comparison as one Markdown document (``templates/report.md.j2``; images
    linked relatively)."""
    from .templating import render

    context = report_context(comparison, {name: path.name for name, path in images.items()})
    return render("report.md.j2", **context)


def html_report(comparison: JudgeComparison, images: dict[str, Path]) -> str:
    """A self-contained HTML page (``templates/report.html.j2``): findings, tables and the
    PNG plots embedded as base64."""
    from .templating import render

    data = {n: base64.b64encode(p.read_bytes()).decode("ascii") for n, p in images.items()}
    return render("report.html.j2", **report_context(comparison, data))


# --- CSV and JSON -------------------------------------------------------------------------


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell (and column name) neutralised (numbers unchanged)."""
    safe = frame.copy()
    for column in safe.columns:
        if safe[column].dtype == object or pd.api.types.is_string_dtype(safe[column]):
            safe[column] = safe[column].map(neutralise)
    safe.columns = [neutralise(str(c)) for c in safe.columns]
    return safe


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    """Write ``frame`` as CSV, safe to open in a spreadsheet.

    Rows end in CRLF (RFC 4180), so that a cell holding a CR or LF is quoted and
    every CSV reader gets the same rows and cells back.
    """
    safe_frame(frame).to_csv(path, index=False, float_format="%.6g", lineterminator="\r\n")
    return path


def to_jsonable(value: Any) -> Any:
    """NaN-free, JSON-ready copy of a scalar (for summaries)."""
    if isinstance(value, float | np.floating):
        return None if not math.isfinite(float(value)) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return value


def summary(comparison: JudgeComparison) -> dict[str, Any]:
    """A JSON-ready summary: judges, pairs, alpha, the compared dataset and warnings."""

    def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
        return [
            {k: to_jsonable(v) for k, v in row.items()} for row in frame.to_dict(orient="records")
        ]

    return {
        "dataset": comparison.dataset,
        "common": comparison.common,
        "judges": records(comparison.judges),
        "pairs": records(comparison.pairs),
        "alpha": to_jsonable(comparison.alpha),
        "calibration_method": comparison.calibration_method,
        "humans": None if comparison.humans is None else records(comparison.humans),
        "judges_vs_humans": None if comparison.beside is None else records(comparison.beside),
        "human_alpha": None
        if comparison.human_alpha is None
        else {k: to_jsonable(v) for k, v in comparison.human_alpha.items()},
        "humans_note": comparison.humans_note,
        "alt_test": None if comparison.alt_test is None else records(comparison.alt_test),
        "alt_note": comparison.alt_note,
        "resamples": comparison.resamples,
        "seed": comparison.seed,
        "prices": comparison.prices or None,
        "set_apart": records(
            comparison.logs.loc[comparison.logs["set_apart"] != "", ["log", "set_apart"]]
        ),
        "warnings": comparison.warnings,
    }


def write_all(comparison: JudgeComparison, out: Path, plots: bool = True) -> dict[str, Path]:
    """Write tables (CSV + Markdown), plots (PNG), report.md, report.html and summary.json.

    The files are written aside and swapped in as ``out`` once all are written
    (``folder.write_folder``): ``out`` holds this comparison's files only, or, when
    writing fails (CompareError), the earlier report as it was. A plot that fails is
    left out with a warning.
    """
    from .folder import write_folder

    written = write_folder(out, lambda folder: write_files(comparison, folder, plots))
    return {name: Path(out) / path.name for name, path in written.items()}


def write_files(comparison: JudgeComparison, out: Path, plots: bool = True) -> dict[str, Path]:
    """Write every report file into the existing folder ``out``; returns them by name."""
    written: dict[str, Path] = {}
    tables: dict[str, tuple[pd.DataFrame, Callable[[JudgeComparison], Table] | None]] = {
        "judges": (comparison.judges, judges_display),
        "pairs": (comparison.pairs, pairs_display),
        "length_bias": (comparison.length_bias, bias_display),
        "histograms": (comparison.histograms, histogram_display),
        "emotions": (comparison.emotions, emotion_display),
        "logs": (comparison.logs, None),
    }
    if comparison.replies is not None:
        tables["replies"] = (comparison.replies, replies_display)
    if comparison.has_human:
        from .disagreements import disagreements

        tables["disagreements"] = (disagreements(comparison), None)
    if comparison.reply_pairs is not None and not comparison.reply_pairs.empty:
        from .replying import reply_pairs_display

        tables["reply_pairs"] = (comparison.reply_pairs, reply_pairs_display)
    if comparison.alt_test is not None:
        from .selfcheck import alt_display

        tables["alt_test"] = (comparison.alt_test, alt_display)
    if comparison.humans is not None and comparison.beside is not None:
        tables["humans"] = (comparison.humans, humans_display)
        tables["judges_vs_humans"] = (comparison.beside, beside_display)
    for name, (frame, display) in tables.items():
        if frame.empty and name in ("pairs", "emotions"):
            continue
        written[f"{name}.csv"] = write_csv(frame, out / f"{name}.csv")
        if display is not None:
            path = out / f"{name}.md"
            path.write_text(markdown_table(*display(comparison)) + "\n", encoding="utf-8")
            written[f"{name}.md"] = path
    written["samples.csv"] = write_csv(samples_wide(comparison), out / "samples.csv")
    images: dict[str, Path] = {}
    if plots:
        from .plots import write_plots

        images = write_plots(comparison, out)
        written.update({path.name: path for path in images.values()})
    report_md = out / "report.md"
    report_md.write_text(markdown_report(comparison, images), encoding="utf-8")
    report_html = out / "report.html"
    report_html.write_text(html_report(comparison, images), encoding="utf-8")
    written["report.md"], written["report.html"] = report_md, report_html
    path = out / "summary.json"
    path.write_text(json.dumps(summary(comparison), indent=2), encoding="utf-8")
    written["summary.json"] = path
    return written
