"""What a judge comparison holds: the result type, its error and the shared constants.

The bottom layer of the ``compare`` package: no numpy or pandas at import time,
so ``import inspect_empathy`` (which Inspect does at every start) stays fast.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

SCORER = "empathy_scorer"
"""Name of the scorer whose scores are compared."""

BASELINE_PREFIX = "empathy_baseline/"
"""Offline baseline judges: shown as floors, never announced as the best judge."""

HUMAN = "human"
"""Label of the human ratings wherever they are listed beside the judges."""

CALIBRATION_METHODS = ("shift", "linear", "isotonic")
DEFAULT_CALIBRATION = "shift"
"""Calibration map of the cross-fitted ``mae_calibrated`` / ``qwk_calibrated`` columns."""

LEVELS = (1, 2, 3, 4, 5)

LEFT_OUT = "left_out"
"""Status of a judge's sample row left out by design, not a dialog it failed to score: a
published judge's rating of its own model's reply (a spec's ``own_replies``). The dialog
is outside that judge's dialogs (its coverage and headline) and is counted in the judges
table's ``left_out``."""

DEFAULT_RESAMPLES = 2000
"""Bootstrap resamples for confidence intervals and p-values."""

LogSource = str | os.PathLike[str]


class CompareError(ValueError):
    """The logs could not be compared (none found, none scored by the empathy scorer)."""


@dataclass
class JudgeComparison:
    """Everything ``compare_logs`` found. All tables are pandas DataFrames."""

    judges: pd.DataFrame
    """One row per judge, ranked by the headline ``somers_d_all`` (best first)."""
    pairs: pd.DataFrame
    """One row per pair of judges: Spearman difference, paired bootstrap CI, raw and Holm p."""
    length_bias: pd.DataFrame
    """Spearman of score against reply length (words), per judge and for the humans."""
    histograms: pd.DataFrame
    """Share of scores at each level 1-5 per judge and for the humans."""
    emotions: pd.DataFrame
    """Per emotion and judge breakdown with Spearman CIs (empty without ``emotion``)."""
    samples: pd.DataFrame
    """One row per judge and dialog: score, status, human rating, reply length, tokens, ..."""
    alpha: float
    """Ordinal Krippendorff's alpha over all judges (NaN with fewer than two)."""
    logs: pd.DataFrame
    """One row per log read: path, judge(s), dataset, status, counts, and why it was set apart."""
    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    common: int = 0
    """Dialogs every compared judge scored and humans rated: the set the ranking uses."""
    dataset: str = ""
    """The compared dataset: its name and content fingerprint."""
    warnings: list[str] = field(default_factory=list)
    replies: pd.DataFrame | None = None
    """Response mode: mean score and share >= 4 per reply model and grader (else None)."""
    humans: pd.DataFrame | None = None
    """The human ceiling (``humans.csv``): each rater pair and each rater against the rest
    (``humans.humans_table``); None without several raters (``humans_note`` says why)."""
    beside: pd.DataFrame | None = None
    """Each judge on the ceiling's footing (``humans.judge_vs_aggregate`` on the common set):
    against the rest of each rater, and against all raters; None without several raters."""
    human_alpha: dict[str, float] | None = None
    """Ordinal Krippendorff's alpha over the raters, with its CI (``humans.ordinal_alpha``)."""
    humans_note: str = ""
    """Why there is no human ceiling, or how it was computed."""
    calibration_method: str = DEFAULT_CALIBRATION
    alt_test: pd.DataFrame | None = None
    """The alternative-annotator test, one row per judge and left-out rater
    (``alt_test.csv``, `alttest.RATER_COLUMNS`); None with fewer than three raters."""
    alt_note: str = ""
    """How the alternative-annotator test was run, or why there is none."""
    prices: str = ""
    """Where ``cost_per_dialog`` comes from: the price file, ``tables.RECORDED`` (the costs
    Inspect recorded in the logs), or empty (no cost column)."""
    reply_pairs: pd.DataFrame | None = None
    """Response mode: each pair of reply models under one grader, paired tests
    (``replying.reply_pairs``); None without response-mode logs."""
    published_sections: list = field(default_factory=list)
    """Report sections of ``--published`` specs, (title, lines, (headers, rows)) each: the
    responders table (set by ``cli.published.scale_section``)."""

    @property
    def judge_names(self) -> list[str]:
        """Judges in rank order."""
        return list(self.judges["judge"]) if not self.judges.empty else []

    @property
    def has_human(self) -> bool:
        """Whether any dialog has a human rating."""
        return bool(self.samples["human"].notna().any())


def is_baseline(model: str) -> bool:
    """Whether ``model`` is one of the offline baseline judges (a floor, not a contender)."""
    return str(model).startswith(BASELINE_PREFIX)
