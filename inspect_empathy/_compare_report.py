"""Writing the judge comparison: terminal and Markdown tables, CSV, HTML with embedded plots."""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from . import _compare_stats as cs

if TYPE_CHECKING:
    from .compare import JudgeComparison

DASH = "–"

Row = list[str]
Table = tuple[list[str], list[Row]]


# --- formatting ---------------------------------------------------------------------------


def number(value: Any, digits: int = 3) -> str:
    """A float with ``digits`` decimals; a dash for NaN / missing."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return DASH
    try:
        if pd.isna(value):
            return DASH
    except (TypeError, ValueError):
        pass
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return f"{float(value):.{digits}f}"


def with_ci(value: Any, low: Any, high: Any, digits: int = 3) -> str:
    """``0.455 [0.306, 0.588]``, or the value alone without a CI."""
    text = number(value, digits)
    if text == DASH or number(low) == DASH or number(high) == DASH:
        return text
    return f"{text} [{number(low, digits)}, {number(high, digits)}]"


def p_value(value: Any) -> str:
    if number(value) == DASH:
        return DASH
    return "<0.001" if float(value) < 0.001 else f"{float(value):.3f}"


def _p_clause(value: Any) -> str:
    text = p_value(value)
    return text.replace("<", "< ") if text.startswith("<") else f"= {text}"


def judges_display(comparison: JudgeComparison) -> Table:
    """The per-judge table as display strings (agreement columns only with human ratings)."""
    human = comparison.has_human
    headers = ["rank", "judge model", "method", "scored", "unscored"]
    if human:
        headers += ["Spearman [95% CI]", "Kendall", "Pearson", "MAE", "QWK", "within-one"]
    headers += ["mean score", "tokens/sample", "length ρ", "share 3-4"]
    rows = []
    for _, r in comparison.judges.iterrows():
        row = [str(r["rank"]), str(r["judge"]), str(r["method"] or DASH)]
        row += [str(r["scored"]), str(r["unscored"])]
        if human:
            row.append(with_ci(r["spearman"], r["spearman_low"], r["spearman_high"]))
            row += [number(r[k]) for k in ("kendall", "pearson", "mae", "qwk", "within_one")]
        row += [number(r["mean_score"], 2), number(r["tokens_per_sample"], 0)]
        row += [number(r["length_spearman"]), number(r["share_3_4"], 2)]
        rows.append(row)
    return headers, rows


def pairs_display(comparison: JudgeComparison) -> Table:
    """The pairwise table as display strings."""
    human = comparison.has_human
    headers = ["judge A", "judge B", "n"]
    if human:
        headers += ["ρ A", "ρ B", "Δρ (A−B) [95% CI]", "p", "CI excludes 0"]
    headers += ["inter-judge ρ", "inter-judge α"]
    rows = []
    for _, r in comparison.pairs.iterrows():
        row = [str(r["judge_a"]), str(r["judge_b"]), str(r["n_common"])]
        if human:
            row += [number(r["spearman_a"]), number(r["spearman_b"])]
            row += [with_ci(r["diff"], r["diff_low"], r["diff_high"]), p_value(r["p_value"])]
            row.append("yes" if r["significant"] else "no")
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
    headers = ["rater", "n", *[f"{k}" for k in cs.LEVELS], "3-4"]
    rows = [
        [str(r["rater"]), str(r["n"])]
        + [number(r[f"share_{k}"], 2) for k in cs.LEVELS]
        + [number(r["share_3_4"], 2)]
        for _, r in comparison.histograms.iterrows()
    ]
    return headers, rows


def emotion_display(comparison: JudgeComparison) -> Table:
    headers = ["emotion", "judge", "n", "mean score", "mean human", "Spearman", "MAE"]
    rows = [
        [
            str(r["emotion"]),
            str(r["judge"]),
            str(r["n"]),
            number(r["mean_score"], 2),
            number(r["mean_human"], 2),
            number(r["spearman"]),
            number(r["mae"]),
        ]
        for _, r in comparison.emotions.iterrows()
    ]
    return headers, rows


def logs_display(comparison: JudgeComparison) -> Table:
    headers = ["judge", "dataset", "status", "dialogs", "log"]
    rows = [
        [str(r["judge"]), str(r["dataset"]), str(r["status"]), str(r["samples"]), str(r["log"])]
        for _, r in comparison.logs.iterrows()
    ]
    return headers, rows


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub Markdown table with aligned columns (readable in a terminal too)."""
    cells = [[c.replace("|", "\\|") for c in row] for row in [list(headers), *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])


def headline(comparison: JudgeComparison) -> list[str]:
    """One-sentence findings: the ranking and whether the top judge is significantly better."""
    judges = comparison.judges
    if judges.empty:
        return ["No judge scored any dialog."]
    lines: list[str] = []
    top = judges.iloc[0]
    keys = ["dataset", "id"]
    dialogs = len(comparison.samples[keys].drop_duplicates())
    rated = len(comparison.samples.dropna(subset=["human"])[keys].drop_duplicates())
    lines.append(f"{len(judges)} judge(s), {dialogs} dialog(s), {rated} with human ratings.")
    if comparison.has_human and number(top["spearman"]) != DASH:
        lines.append(
            f"Best agreement with humans: {top['judge']} "
            f"(Spearman {with_ci(top['spearman'], top['spearman_low'], top['spearman_high'])}, "
            f"QWK {number(top['qwk'])})."
        )
        for _, pair in comparison.pairs.iterrows():
            if pair["judge_a"] != top["judge"] or number(pair["diff"]) == DASH:
                continue
            verdict = (
                "significant: the CI excludes 0"
                if pair["significant"]
                else "not significant: the CI includes 0"
            )
            lines.append(
                f"{pair['judge_a']} vs {pair['judge_b']}: Δρ = "
                f"{with_ci(pair['diff'], pair['diff_low'], pair['diff_high'])}, "
                f"p {_p_clause(pair['p_value'])} ({verdict}; n={pair['n_human']})."
            )
    elif not comparison.has_human:
        lines.append("No human ratings: inter-judge agreement only.")
    if len(judges) >= 2:
        lines.append(
            f"Inter-judge Krippendorff's α (ordinal, all judges): {number(comparison.alpha)}."
        )
    return lines


def terminal_text(comparison: JudgeComparison) -> str:
    """What ``inspect-empathy compare`` prints: findings, judges and pairs tables."""
    parts = [
        "\n".join(headline(comparison)),
        "",
        "Judges (ranked):",
        markdown_table(*judges_display(comparison)),
    ]
    if not comparison.pairs.empty:
        parts += ["", "Pairs (same dialogs):", markdown_table(*pairs_display(comparison))]
    parts += ["", "Length bias:", markdown_table(*bias_display(comparison))]
    return "\n".join(parts)


# --- files --------------------------------------------------------------------------------


METHOD_NOTE = (
    "Spearman CIs: 95% BCa bootstrap over dialogs ({resamples} resamples, seed {seed}). "
    "Δρ: paired bootstrap over the dialogs both judges scored and humans rated (each "
    "resample keeps a dialog's two scores and its human rating together); p is two-sided, "
    "twice the share of resampled differences on the far side of 0. QWK, exact and within-one "
    "use scores rounded half up to 1-5. α: ordinal Krippendorff's alpha. Length ρ: Spearman "
    "of the score against the judged reply's length in words (a positive value on a judge "
    "beyond the humans' own suggests length bias). Share 3-4: scores rounded to 3 or 4."
)


def markdown_report(comparison: JudgeComparison, images: dict[str, Path]) -> str:
    """The whole comparison as one Markdown document (images linked relatively)."""
    note = METHOD_NOTE.format(resamples=comparison.resamples, seed=comparison.seed)
    out = ["# Judge comparison", "", *[f"- {line}" for line in headline(comparison)], ""]

    def section(title: str, table: Table, image: str | None = None) -> None:
        out.extend([f"## {title}", "", markdown_table(*table), ""])
        if image and image in images:
            out.extend([f"![{title}]({images[image].name})", ""])

    section("Judges", judges_display(comparison), "agreement")
    if "heatmap" in images:
        out.extend([f"![Judge vs human]({images['heatmap'].name})", ""])
    if not comparison.pairs.empty:
        section("Pairs of judges", pairs_display(comparison), "differences")
    section("Length bias", bias_display(comparison), "length")
    section("Score histograms (shares)", histogram_display(comparison), "histograms")
    if not comparison.emotions.empty:
        section("By emotion", emotion_display(comparison), "emotions")
    section("Logs", logs_display(comparison))
    out.extend(["## Method", "", note, ""])
    if comparison.warnings:
        out.extend(["## Warnings", "", *[f"- {w}" for w in comparison.warnings], ""])
    return "\n".join(out)


CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 2rem auto;
       max-width: 1200px; color: #222; padding: 0 1rem; }
h1 { margin-bottom: 0.2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.86rem; margin: 0.6rem 0; }
th, td { border: 1px solid #ddd; padding: 0.3rem 0.55rem; text-align: right; white-space: nowrap; }
th { background: #f3f4f6; } td:first-child, td.text { text-align: left; }
tr:nth-child(even) td { background: #fafafa; }
ul.findings li { margin: 0.25rem 0; } img { max-width: 100%; border: 1px solid #eee; }
p.note { color: #555; font-size: 0.85rem; } div.scroll { overflow-x: auto; }
.path { font-family: monospace; font-size: 0.78rem; }
"""


def html_table(headers: Sequence[str], rows: Sequence[Sequence[str]], text_columns: int = 1) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="text">{html.escape(c)}</td>'
            if i < text_columns
            else f"<td>{html.escape(c)}</td>"
            for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    return f"<div class='scroll'>{table}</div>"


def embed(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<p><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"></p>'


def html_report(comparison: JudgeComparison, images: dict[str, Path]) -> str:
    """A self-contained HTML page: findings, tables and the PNG plots embedded as base64."""
    note = METHOD_NOTE.format(resamples=comparison.resamples, seed=comparison.seed)
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<title>Judge comparison</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Judge comparison</h1>",
        "<ul class='findings'>",
        *[f"<li>{html.escape(line)}</li>" for line in headline(comparison)],
        "</ul>",
    ]

    def section(
        title: str, table: Table | None, plots: Sequence[str], text_columns: int = 1
    ) -> None:
        parts.append(f"<h2>{html.escape(title)}</h2>")
        if table is not None:
            parts.append(html_table(*table, text_columns=text_columns))
        parts.extend(embed(images[p], p) for p in plots if p in images)

    section("Judges (ranked)", judges_display(comparison), ["agreement", "heatmap"], 3)
    if not comparison.pairs.empty:
        section("Pairs of judges (same dialogs)", pairs_display(comparison), ["differences"], 2)
    section("Length bias", bias_display(comparison), ["length"])
    section("Score histograms", histogram_display(comparison), ["histograms"])
    if not comparison.emotions.empty:
        section("By emotion", emotion_display(comparison), ["emotions"], 2)
    logs = logs_display(comparison)
    parts.append("<h2>Logs</h2>")
    parts.append(
        html_table(*logs, text_columns=5).replace(
            '<td class="text">file://', '<td class="text path">file://'
        )
    )
    parts.append(f"<h2>Method</h2><p class='note'>{html.escape(note)}</p>")
    if comparison.warnings:
        parts.append("<h2>Warnings</h2><ul>")
        parts.extend(f"<li>{html.escape(w)}</li>" for w in comparison.warnings)
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _csv(frame: pd.DataFrame, path: Path) -> Path:
    frame.to_csv(path, index=False, float_format="%.6g")
    return path


def write_all(comparison: JudgeComparison, out: Path, plots: bool = True) -> dict[str, Path]:
    """Write tables (CSV + Markdown), plots (PNG), report.md, report.html and summary.json."""
    from .compare import samples_wide, write_summary

    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    tables: dict[str, tuple[pd.DataFrame, Callable[[JudgeComparison], Table] | None]] = {
        "judges": (comparison.judges, judges_display),
        "pairs": (comparison.pairs, pairs_display),
        "length_bias": (comparison.length_bias, bias_display),
        "histograms": (comparison.histograms, histogram_display),
        "emotions": (comparison.emotions, emotion_display),
        "logs": (comparison.logs, None),
    }
    for name, (frame, display) in tables.items():
        if frame.empty and name in ("pairs", "emotions"):
            continue
        written[f"{name}.csv"] = _csv(frame, out / f"{name}.csv")
        if display is not None:
            path = out / f"{name}.md"
            path.write_text(markdown_table(*display(comparison)) + "\n", encoding="utf-8")
            written[f"{name}.md"] = path
    written["samples.csv"] = _csv(samples_wide(comparison), out / "samples.csv")
    images: dict[str, Path] = {}
    if plots:
        from ._compare_plots import write_plots

        images = write_plots(comparison, out)
        written.update({path.name: path for path in images.values()})
    report_md = out / "report.md"
    report_md.write_text(markdown_report(comparison, images), encoding="utf-8")
    report_html = out / "report.html"
    report_html.write_text(html_report(comparison, images), encoding="utf-8")
    written["report.md"], written["report.html"] = report_md, report_html
    written["summary.json"] = write_summary(comparison, out / "summary.json")
    return written
