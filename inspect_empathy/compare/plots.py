"""PNG plots for the judge comparison (matplotlib, Agg backend: no display needed).

Labels come from the logs (model names, emotions): ``$`` is escaped so that
matplotlib never reads them as mathtext, and a plot that fails anyway is left out
of the report with a warning instead of stopping it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

from . import stats  # noqa: E402
from .comparison import HUMAN, LEVELS, JudgeComparison  # noqa: E402

DPI = 110
HUMAN_COLOUR = "#444444"


def escape(text: object) -> str:
    """Text that matplotlib shows as itself (``$`` would start mathtext)."""
    return str(text).replace("$", r"\$")


def _short(name: object, width: int = 28) -> str:
    name = str(name)
    return escape(name if len(name) <= width else "…" + name[-(width - 1) :])


def _wrap(name: str) -> str:
    """A model name on two lines, split after its provider (``openai/`` + ``gpt-4o``)."""
    provider, slash, rest = name.partition("/")
    if slash and len(name) > 18:
        return f"{escape(provider)}/\n{_short(rest, 24)}"
    return _short(name)


def _colours(n: int) -> list[tuple[float, float, float, float]]:
    cmap = plt.get_cmap("tab10")
    return [cmap(i % 10) for i in range(n)]


def _save(figure: Figure, path: Path) -> Path:
    figure.savefig(path, dpi=DPI, bbox_inches="tight", facecolor="white")
    plt.close(figure)
    return path


def _panel_grid(
    count: int, width: float, height: float, **options: Any
) -> tuple[Figure, list[Axes]]:
    """A figure of ``count`` panels, up to three a row (each ``width`` x ``height`` inches),
    the unused cells of the last row hidden; the panels' axes in order."""
    columns = min(count, 3)
    rows = math.ceil(count / columns)
    figure, axes = plt.subplots(
        rows,
        columns,
        figsize=(width * columns, height * rows),
        squeeze=False,
        constrained_layout=True,
        **options,
    )
    cells = [ax for row in axes for ax in row]
    for ax in cells[count:]:
        ax.axis("off")
    return figure, cells[:count]


def heatmaps(comparison: JudgeComparison, path: Path) -> Path | None:
    """Judge score (rounded) against human rating: one 5x5 count matrix per judge."""
    samples = comparison.samples
    judges = comparison.judge_names
    if not comparison.has_human or not judges:
        return None
    figure, axes = _panel_grid(len(judges), 4.2, 4.0)
    for ax, judge in zip(axes, judges, strict=True):
        rated = samples[(samples["judge"] == judge)].dropna(subset=["score", "human"])
        matrix = stats.confusion(rated["score"].to_numpy(float), rated["human"].to_numpy(float))
        ax.imshow(matrix, origin="lower", cmap="Blues", vmin=0)
        peak = matrix.max() or 1
        for (i, j), count in np.ndenumerate(matrix):
            colour = "white" if count > peak * 0.6 else "black"
            ax.text(j, i, str(count), ha="center", va="center", color=colour, fontsize=10)
        ax.set_xticks(range(5), [str(k) for k in LEVELS])
        ax.set_yticks(range(5), [str(k) for k in LEVELS])
        ax.set_xlabel("human rating")
        ax.set_ylabel("judge score (rounded)")
        row = comparison.judges.set_index("judge").loc[judge]
        ax.set_title(
            f"{_short(judge, 40)}\nρ={row['spearman']:.2f}  QWK={row['qwk']:.2f}", fontsize=10
        )
        ax.plot([-0.5, 4.5], [-0.5, 4.5], color="#d62728", linewidth=0.8, alpha=0.5)
    figure.suptitle("Judge vs human (counts of dialogs)")
    return _save(figure, path)


def histograms(comparison: JudgeComparison, path: Path) -> Path | None:
    """Share of scores at each level 1-5, judges side by side with the humans."""
    table = comparison.histograms
    if table.empty:
        return None
    raters = list(table["rater"])
    width = 0.8 / len(raters)
    figure, ax = plt.subplots(figsize=(max(6.5, 1.4 * len(raters) + 4), 4.2))
    colours = _colours(len(raters))
    for index, (_, row) in enumerate(table.iterrows()):
        shares = [row[f"share_{k}"] for k in LEVELS]
        offsets = np.array(LEVELS) - 0.4 + width * (index + 0.5)
        human = row["rater"] == HUMAN
        ax.bar(
            offsets,
            shares,
            width=width,
            label=f"{_short(str(row['rater']))} (n={int(row['n'])})",
            color=HUMAN_COLOUR if human else colours[index],
            hatch="//" if human else None,
            edgecolor="white" if not human else "#bbbbbb",
        )
    ax.axvspan(2.5, 4.5, color="#ffdd88", alpha=0.18, zorder=0, label="3-4 (clustering)")
    ax.set_xticks(list(LEVELS))
    ax.set_xlabel("score (rounded half up)")
    ax.set_ylabel("share of dialogs")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title("Score histograms")
    ax.grid(axis="y", alpha=0.3)
    return _save(figure, path)


def agreement_bars(comparison: JudgeComparison, path: Path) -> Path | None:
    """The headline ``somers_d_all`` and Spearman on the common set (each with its 95%
    bootstrap CI), and QWK, per judge, ranked."""
    table = comparison.judges
    if not comparison.has_human or table.empty:
        return None
    judges = [
        _short(j, 34) + (" (floor)" if floor else "")
        for j, floor in zip(table["judge"], table["baseline"], strict=True)
    ]
    y = np.arange(len(judges))[::-1]
    figure, axes = plt.subplots(
        1, 3, figsize=(13, 2.2 + 0.55 * len(judges)), sharey=True, constrained_layout=True
    )
    colours = _colours(len(judges))
    panels = (
        ("somers_d_all", "somers_d", "somers_d_all with humans (headline, 95% CI)"),
        ("spearman", "spearman", "Spearman ρ (common set, 95% CI)"),
        ("qwk", None, "Quadratic weighted κ (common set)"),
    )
    for ax, (key, ci, title) in zip(axes, panels, strict=True):
        values = table[key].to_numpy(float) if key in table else np.full(len(table), np.nan)
        errors = None
        extent = values
        if ci is not None and f"{ci}_low" in table:
            low = table[f"{ci}_low"].to_numpy(float)
            high = table[f"{ci}_high"].to_numpy(float)
            has_ci = np.isfinite(low) & np.isfinite(high) & np.isfinite(values)
            errors = np.vstack(
                [np.where(has_ci, values - low, 0), np.where(has_ci, high - values, 0)]
            )
            extent = np.concatenate([values, low])
        finite = extent[np.isfinite(extent)]
        ax.barh(y, np.nan_to_num(values), xerr=errors, color=colours, capsize=4, height=0.6)
        for yi, value in zip(y, values, strict=True):
            label = f"{value:.2f}" if np.isfinite(value) else "n/a"
            ax.text(0.01, yi + 0.36, label, fontsize=8, va="center")
        ax.set_xlim(min(-0.1, float(finite.min()) - 0.05) if len(finite) else -0.1, 1.0)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.grid(axis="x", alpha=0.3)
        ax.set_title(title)
    axes[0].set_yticks(y, judges)
    figure.suptitle("Agreement with human ratings (ranked by the headline, best at the top)")
    return _save(figure, path)


def choice_points(comparison: JudgeComparison) -> tuple[Any, str] | None:
    """The points of `choice`: per judge ``x`` (cost per scored dialog with prices or a
    cost Inspect recorded, else input + output tokens per scored dialog), ``y`` its
    headline ``somers_d_all`` with ``low`` / ``high``, ``baseline``; and the x axis label.
    None without human ratings or anything to draw."""
    table = comparison.judges
    if not comparison.has_human or table.empty or "somers_d_all" not in table:
        return None
    cost = table.get("cost_per_dialog")
    if comparison.prices and cost is not None and np.isfinite(cost.to_numpy(float)).any():
        x, label = cost.to_numpy(float), "cost per scored dialog"
    elif "input_tokens_per_dialog" in table:
        x = table["input_tokens_per_dialog"].to_numpy(float)
        x = x + table["output_tokens_per_dialog"].to_numpy(float)
        label = "tokens per scored dialog (input + output; no prices)"
    else:
        return None
    points = table[["judge", "baseline", "somers_d_all", "somers_d_low", "somers_d_high"]]
    points = points.rename(
        columns={"somers_d_all": "y", "somers_d_low": "low", "somers_d_high": "high"}
    ).assign(x=x)
    points = points[np.isfinite(points["x"]) & np.isfinite(points["y"])]
    return (points, label) if len(points) else None


def choice(comparison: JudgeComparison, path: Path) -> Path | None:
    """The choice between judges in one figure: each judge's headline (``somers_d_all``,
    95% CI) against what a scored dialog cost it (`choice_points`), one point per judge,
    the offline floors hollow."""
    found = choice_points(comparison)
    if found is None:
        return None
    points, label = found
    figure, ax = plt.subplots(figsize=(8, 5.2), constrained_layout=True)
    colours = _colours(len(comparison.judges))
    for i, row in enumerate(points.itertuples()):
        has_ci = math.isfinite(row.low) and math.isfinite(row.high)
        error = [[row.y - row.low], [row.high - row.y]] if has_ci else None
        floor = bool(row.baseline)
        ax.errorbar(
            row.x, row.y, yerr=error, fmt="o", color=colours[i], capsize=4, markersize=8,
            markerfacecolor="white" if floor else colours[i],
        )  # fmt: skip
        name = _short(row.judge, 30) + (" (floor)" if floor else "")
        ax.annotate(name, (row.x, row.y), xytext=(6, 6), textcoords="offset points", fontsize=8)
    ax.set_xlabel(label)
    ax.set_ylabel("somers_d_all with humans (95% CI)")
    ax.axhline(0, color="black", linewidth=0.6)
    ax.grid(alpha=0.3)
    ax.set_xlim(left=0, right=float(points["x"].max()) * 1.25 or 1.0)
    ax.set_title("Agreement against cost: up and to the left is better")
    return _save(figure, path)


def differences(comparison: JudgeComparison, path: Path) -> Path | None:
    """Paired difference in Spearman for each pair of judges, with its 95% CI."""
    pairs = comparison.pairs
    if pairs.empty or pairs["diff"].isna().all():
        return None
    pairs = pairs.dropna(subset=["diff"])
    labels = [
        f"{_short(a, 24)}  −  {_short(b, 24)}"
        for a, b in zip(pairs["judge_a"], pairs["judge_b"], strict=True)
    ]
    y = np.arange(len(labels))[::-1]
    diff = pairs["diff"].to_numpy(float)
    low, high = pairs["diff_low"].to_numpy(float), pairs["diff_high"].to_numpy(float)
    figure, ax = plt.subplots(figsize=(9, 1.2 + 0.5 * len(labels)))
    significant = pairs["significant"].to_numpy(bool)
    for yi, d, lo, hi, sig in zip(y, diff, low, high, significant, strict=True):
        colour = "#2ca02c" if sig else "#7f7f7f"
        if np.isfinite(lo) and np.isfinite(hi):
            ax.plot([lo, hi], [yi, yi], color=colour, linewidth=2.5)
        ax.plot([d], [yi], "o", color=colour, markersize=7)
    ax.axvline(0, color="black", linewidth=0.8)
    extent = np.concatenate([diff, low, high, [0.0]])
    extent = extent[np.isfinite(extent)]
    margin = 0.05 * (extent.max() - extent.min() or 1)
    ax.set_xlim(extent.min() - margin, extent.max() + margin)
    ax.set_yticks(y, labels)
    ax.set_xlabel("difference in Spearman ρ with humans (paired bootstrap 95% CI)")
    ax.set_title("Is the better judge better? (green: Holm-adjusted p < 0.05)")
    ax.grid(axis="x", alpha=0.3)
    return _save(figure, path)


def length_scatter(comparison: JudgeComparison, path: Path) -> Path | None:
    """Score against reply length (log scale) per judge and for the humans: a panel for
    each whose correlation is defined (a rater without one, e.g. replies all of one
    length, has nothing to show), no plot when none is."""
    samples = comparison.samples.dropna(subset=["reply_words"])
    if samples.empty:
        return None
    bias = comparison.length_bias.set_index("rater")
    everyone = [*comparison.judge_names, *([HUMAN] if comparison.has_human else [])]
    raters = [
        rater
        for rater in everyone
        if rater in bias.index and math.isfinite(float(bias.loc[rater, "length_spearman"]))
    ]
    if not raters:
        return None
    figure, axes = _panel_grid(len(raters), 4.2, 3.4, sharey=True)
    colours = _colours(len(everyone))  # each judge keeps its colour
    for ax, rater in zip(axes, raters, strict=True):
        if rater == HUMAN:
            frame = samples.groupby(["dataset", "id"]).agg(
                score=("human", "first"), reply_words=("reply_words", "first")
            )
            colour = HUMAN_COLOUR
        else:
            frame = samples[samples["judge"] == rater]
            colour = colours[everyone.index(rater)]
        frame = frame.dropna(subset=["score"])
        ax.scatter(
            frame["reply_words"].clip(lower=1), frame["score"], s=12, alpha=0.6, color=colour
        )
        _length_axis(ax, frame["reply_words"].clip(lower=1))
        rho = bias.loc[rater, "length_spearman"]
        ax.set_title(f"{_short(rater, 40)}\nρ(score, words)={rho:.2f}", fontsize=10)
        ax.set_xlabel("reply length (words)")
        ax.set_ylabel("score")
        ax.set_ylim(0.8, 5.2)
        ax.grid(alpha=0.3)
    figure.suptitle("Length bias: score against reply length")
    return _save(figure, path)


def _length_axis(ax: Axes, words: Any) -> None:
    """Reply lengths on a log scale labelled 1, 2, 5, 10, 20, ... in plain numbers; lengths
    within one decade on a linear scale (a log scale labels each of its minor ticks there,
    one on top of the next)."""
    low, high = float(words.min()), float(words.max())
    if high < 10 * low:
        return
    ax.set_xscale("log")
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
    ax.xaxis.set_minor_formatter(plain)


def emotion_heatmap(comparison: JudgeComparison, path: Path) -> Path | None:
    """Spearman with humans per emotion (rows) and judge (columns)."""
    table = comparison.emotions
    if table.empty or table["spearman"].isna().all():
        return None
    grid = table.pivot(index="emotion", columns="judge", values="spearman")
    grid = grid.reindex(columns=comparison.judge_names)
    counts = table.pivot(index="emotion", columns="judge", values="n").reindex(
        columns=comparison.judge_names
    )
    figure, ax = plt.subplots(figsize=(2.2 + 1.7 * grid.shape[1], 1.2 + 0.42 * grid.shape[0]))
    image = ax.imshow(grid.to_numpy(float), cmap="RdYlGn", vmin=-1, vmax=1, aspect="auto")
    for (i, j), value in np.ndenumerate(grid.to_numpy(float)):
        n = counts.iat[i, j]
        text = "–" if not np.isfinite(value) else f"{value:.2f}"
        ax.text(
            j,
            i,
            f"{text}\n(n={int(n) if np.isfinite(n) else 0})",
            ha="center",
            va="center",
            fontsize=8,
        )
    ax.set_xticks(range(grid.shape[1]), [_wrap(j) for j in grid.columns])
    ax.set_yticks(range(grid.shape[0]), [_short(e, 30) for e in grid.index])
    figure.colorbar(image, ax=ax, label="Spearman ρ with humans")
    ax.set_title("Agreement by emotion")
    return _save(figure, path)


PLOTS = {
    "heatmap": heatmaps,
    "agreement": agreement_bars,
    "choice": choice,
    "differences": differences,
    "histograms": histograms,
    "length": length_scatter,
    "emotions": emotion_heatmap,
}
"""Plot name -> function writing ``<name>.png`` (or returning None when not applicable)."""


def write_plots(comparison: JudgeComparison, out: Path) -> dict[str, Path]:
    """Write every applicable plot as ``out/<name>.png``; a failing plot becomes a warning."""
    written: dict[str, Path] = {}
    for name, plot in PLOTS.items():
        try:
            path = plot(comparison, out / f"{name}.png")
        except Exception as ex:  # noqa: BLE001 - the report must be written regardless
            plt.close("all")
            comparison.warnings.append(f"plot {name}.png left out: {type(ex).__name__}: {ex}")
            continue
        if path is not None:
            written[name] = path
    return written
