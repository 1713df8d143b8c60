"""Two questions beside the ranking: can the judge replace a rater, and does it agree with
itself? (The alternative-annotator test, `alttest`, and self-consistency over epochs,
`inspect_empathy.stats.consistency`.) Their columns join ``judges.csv``; the test's per-rater
rows are ``alt_test.csv``; `sections` gives the report its tables."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..stats.alttest import DEFAULT_EPSILON, judges_alt_test
from ..stats.consistency import COLUMNS as SELF_COLUMNS
from ..stats.consistency import self_consistency_figures
from .ceiling import ratings_table

if TYPE_CHECKING:
    from .comparison import JudgeComparison

ALT_COLUMNS = [
    "alt_epsilon",
    "alt_raters",
    "alt_wins",
    "alt_winning_rate",
    "alt_passed",
    "alt_advantage_probability",
    "alt_power",
    "alt_n_for_80",
]


@dataclass
class Extras:
    judges: pd.DataFrame
    """The judges table with the ``alt_*`` and ``self_*`` columns joined."""
    alt_test: pd.DataFrame | None
    alt_note: str


def judge_extras(
    samples: pd.DataFrame,
    table: pd.DataFrame,
    wide: pd.DataFrame,
    common: pd.Index,
    epsilon: float = DEFAULT_EPSILON,
) -> Extras:
    """The judges table with each judge's alternative-annotator summary (on the common
    dialogs, with three or more raters) and self-consistency over epochs (on its own
    scored dialogs, with two or more epochs) joined, the per-rater table and a note."""
    names = list(table["judge"]) if not table.empty else []
    alt, summaries, note = judges_alt_test(wide, ratings_table(samples), names, common, epsilon)
    out = table.copy()
    if summaries:
        rows = [summaries.get(j, {}) for j in names]
        out = out.join(pd.DataFrame(rows, index=out.index).reindex(columns=ALT_COLUMNS))
    if "epoch_scores" in samples and len(samples) and samples["epochs"].max() > 1:
        figures = {
            judge: self_consistency_figures(group["epoch_scores"])
            for judge, group in samples.groupby("judge", sort=False)
        }
        rows = [{k: figures.get(j, {}).get(k, math.nan) for k in SELF_COLUMNS} for j in names]
        out = out.join(pd.DataFrame(rows, index=out.index))
    return Extras(out, alt, note)


# --- report ---------------------------------------------------------------------------------


def _number(value: Any, digits: int = 3) -> str:
    from .formats import number

    return number(value, digits)


def alt_display(comparison: JudgeComparison) -> tuple[list[str], list[list[str]]]:
    """The per-judge test and its per-rater rows as display strings."""
    from .formats import p_value

    headers = ["judge", "rater", "n", "ρ judge", "ρ rater", "advantage", "p", "judge wins"]
    rows: list[list[str]] = []
    table = getattr(comparison, "alt_test", None)
    if table is None:
        return headers, rows
    judges = comparison.judges.set_index("judge")
    for judge, group in table.groupby("judge", sort=False):
        for _, r in group.iterrows():
            rows.append(
                [
                    str(judge),
                    str(r["rater"]),
                    str(r["n"]),
                    _number(r["judge_wins"]),
                    _number(r["rater_wins"]),
                    _number(r["advantage"]),
                    p_value(r["p_value"]),
                    "yes" if r["won"] else "no",
                ]
            )
        s = judges.loc[judge] if judge in judges.index else {}
        passed = s.get("alt_passed")
        verdict = "–" if passed is None or pd.isna(passed) else ("PASS" if passed else "FAIL")
        rows.append(
            [
                str(judge),
                "all raters",
                str(len(group)),
                f"advantage probability {_number(s.get('alt_advantage_probability'))}",
                "",
                "",
                "",
                f"winning rate {_number(s.get('alt_winning_rate'), 2)}: {verdict} "
                f"({_power(s.get('alt_power'), s.get('alt_n_for_80'))})",
            ]
        )
    return headers, rows


def _power(power: Any, n_for_80: Any) -> str:
    """The test's power for a judge as good as a rater, and the dialogs 80% needs."""
    if power is None or pd.isna(power):
        return "power –"
    need = ("80% needs more than 100,000 dialogs per rater" if n_for_80 is None
            or pd.isna(n_for_80) else f"80% at {int(n_for_80)} dialogs per rater")  # fmt: skip
    return f"power {float(power):.0%} for a judge as good as a rater; {need}"


def self_display(comparison: JudgeComparison) -> tuple[list[str], list[list[str]]]:
    """Self-consistency over epochs per judge as display strings (empty with one epoch)."""
    headers = ["judge", "dialogs", "epochs", "within-dialog SD", "rounded level changes"]
    headers.append("self α (ordinal)")
    judges = comparison.judges
    if "self_sd" not in judges:
        return headers, []
    rows = [
        [
            str(r["judge"]),
            _number(r["self_dialogs"], 0),
            _number(r["self_epochs"], 0),
            _number(r["self_sd"]),
            "–" if pd.isna(r["self_flip"]) else f"{r['self_flip']:.0%}",
            _number(r["self_alpha"]),
        ]
        for _, r in judges.iterrows()
    ]
    return headers, rows


def sections(
    comparison: JudgeComparison,
) -> list[tuple[str, list[str], tuple[list[str], list[list[str]]]]]:
    """The report's sections of this module: (title, lines, table), those the data has."""
    out = []
    note = getattr(comparison, "alt_note", "")
    alt = alt_display(comparison)
    if alt[1] or note:
        lines = [note] if note else []
        if alt[1]:
            lines.append(
                "Per rater: ρ judge / ρ rater = share of the rater's dialogs where the judge / "
                "the left-out rater agrees with the remaining raters at least as well as the "
                "other (negative RMSE); advantage = ρ judge − ρ rater; p: one-sided t-test of "
                "H0 ρ rater − ρ judge ≥ ε; 'judge wins' after Benjamini-Yekutieli. The judge "
                "passes with a winning rate ≥ 0.5; the advantage probability ranks judges."
            )
        out.append(("Could the judge replace a rater? (alternative-annotator test)", lines, alt))
    consistency = self_display(comparison)
    if consistency[1]:
        lines = [
            "The judge against itself over epochs, on each judge's dialogs scored in two or "
            "more epochs: within-dialog SD (pooled, 1-5 scale), share of dialogs whose score "
            "rounded to 1-5 changes between epochs, and ordinal Krippendorff's α with the "
            "epochs as coders (1 = the same level every time)."
        ]
        out.append(("Does the judge agree with itself? (epochs)", lines, consistency))
    return out
