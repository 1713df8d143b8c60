"""A gate for CI pipelines: ``inspect-empathy compare --fail-under spearman=0.6``.

Each threshold applies to every compared judge that is not an offline baseline (floors
are expected to fail), or to the judges named with ``--gate-judge`` (a name not compared
fails, listing the judges that were). The figures are the ranked table's: the headline
``somers_d_all`` over every rated dialog (an unscored one counted against the judge), the
other agreement figures on the common set (the dialogs every judge scored and humans
rated), so a judge cannot pass by leaving hard dialogs unscored; ``coverage`` is there to
gate on that too. A figure that cannot be computed fails the gate, naming why (no human
ratings, too few dialogs, no variation in the judge's scores or in the human ratings): a
gate never passes on a missing number.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .comparison import JudgeComparison

UNDER = (
    "somers_d_all", "somers_d_low", "spearman", "spearman_low", "kendall", "pearson", "qwk",
    "qwk_low", "exact", "within_one", "coverage",
)  # fmt: skip
"""Metrics where higher is better: ``--fail-under`` (``*_low``: the 95% CI's lower end)."""
OVER = ("mae", "mae_high", "rmse")
"""Metrics where lower is better: ``--fail-over``."""
EXIT_FAILED = 3
"""Exit status of ``inspect-empathy compare`` when a gate fails (1: an error, 2: usage)."""

Threshold = tuple[str, float]


def _parser(allowed: tuple[str, ...], flag: str):  # noqa: ANN202
    def parse(text: str) -> Threshold:
        name, sep, value = text.partition("=")
        name = name.strip().lower()
        if not sep or name not in allowed:
            raise argparse.ArgumentTypeError(
                f"{flag} takes METRIC=VALUE with METRIC one of {', '.join(allowed)} (got {text!r})"
            )
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise argparse.ArgumentTypeError(f"{flag} {text!r}: {value!r} is not a number")
        return name, number

    return parse


parse_under = _parser(UNDER, "--fail-under")
parse_over = _parser(OVER, "--fail-over")


def unknown_judges(comparison: JudgeComparison, judges: list[str] | None) -> str:
    """The ``--gate-judge`` names that are not judges of the comparison, in one line naming
    those that are (empty: all are): a usage error, not a failed gate."""
    names = [str(j) for j in comparison.judges["judge"]]
    missing = [j for j in judges or [] if j not in set(names)]
    if not missing:
        return ""
    return (
        f"--gate-judge {', '.join(missing)}: no such judge in the comparison (its judges: "
        f"{', '.join(names) or 'none'})"
    )


def gate_failures(
    comparison: JudgeComparison,
    under: list[Threshold] | None = None,
    over: list[Threshold] | None = None,
    judges: list[str] | None = None,
) -> list[str]:
    """Why the gate fails, one line per judge and threshold (empty: it passes)."""
    under, over = list(under or []), list(over or [])
    if not under and not over:
        return []
    table = comparison.judges
    if judges:
        missing = [j for j in judges if j not in set(table["judge"])]
        known = ", ".join(str(j) for j in table["judge"]) or "none"
        failures = [
            f"--gate-judge {j}: no such judge in the comparison (its judges: {known})"
            for j in missing
        ]
        gated = table[table["judge"].isin(judges)]
    else:
        failures = []
        gated = table[~table["baseline"].astype(bool)] if len(table) else table
        if gated.empty:
            failures.append("no judge to gate (only offline baselines, which are floors)")
    where = f"on the {comparison.common} dialog(s) every judge scored and humans rated"
    for _, row in gated.iterrows():
        for name, limit, fails, sign in [
            *((n, v, lambda x, v=v: x < v, "<") for n, v in under),
            *((n, v, lambda x, v=v: x > v, ">") for n, v in over),
        ]:
            value = row.get(name, math.nan)
            value = math.nan if value is None else float(value)
            if math.isnan(value):
                why = missing_reason(comparison, str(row["judge"]))
                failures.append(
                    f"{row['judge']}: {name} cannot be computed ({why}), needed {limit:g}"
                )
            elif fails(value):
                scope = (
                    "" if name == "coverage"
                    else " (over every rated dialog, unscored ones counted against)"
                    if name.startswith("somers_d") else f" ({where})"
                )  # fmt: skip
                failures.append(f"{row['judge']}: {name} {value:.3f} {sign} {limit:g}{scope}")
    return failures


MIN_RANKED = 3
"""Fewest dialogs a correlation is computed on (`stats.varied`)."""


def missing_reason(comparison: JudgeComparison, judge: str) -> str:
    """Why a judge's agreement figures are missing: no human ratings, fewer than
    `MIN_RANKED` common dialogs, or no variation (every common dialog got one score from
    the judge, or one rating from the humans: nothing to rank)."""
    if not comparison.has_human:
        return "no human ratings"
    from .tables import common_dialogs, human_ratings, wide_scores

    samples = comparison.samples
    judges = list(dict.fromkeys(samples["judge"]))
    common = common_dialogs(samples, judges)
    scores = wide_scores(samples, judges).reindex(common)[judge].dropna()
    if len(scores) < MIN_RANKED:
        return f"too few dialogs: {len(scores)} on the common set, {MIN_RANKED} needed"
    if scores.nunique() == 1:
        return (
            f"no variation: the judge gave all {len(scores)} common dialogs the same score "
            f"{float(scores.iloc[0]):g}"
        )
    human = human_ratings(samples).reindex(scores.index).dropna()
    if human.nunique() == 1:
        return (
            f"no variation: the human ratings of all {len(human)} common dialogs are "
            f"{float(human.iloc[0]):g}"
        )
    return f"undefined on the {len(scores)} common dialogs"
