"""The alternative-annotator test as log metrics, for data with three or more raters.

The statistics are in `alttest` (Calderon, Reichart and Dror, ACL 2025); this
module only gathers each scored sample's raters (sample metadata ``human_ratings``, judge
mode) and the judge's score. pandas and scipy are imported when the metric runs on such
data, never at Inspect's start.
"""

from __future__ import annotations

import re

from inspect_ai.scorer import Metric, SampleScore, Value, metric

from ..dialogs import scored_rater_ratings
from .metrics import in_progress

DEFAULT_EPSILON = 0.2
"""The paper's default margin (``alttest.DEFAULT_EPSILON``)."""


def _label(rater: str) -> str:
    # parentheses, not brackets, in metric names: Inspect's console reads [..] as markup
    return re.sub(r"[\[\]]", "", rater)


@metric
def alt_test_metric(epsilon: float = DEFAULT_EPSILON) -> Metric:
    """Could the judge replace one of the raters? With three or more raters per dataset:
    ``alt_winning_rate`` (share of raters the judge beats at ``epsilon``),
    ``alt_passed`` (1 when that share is at least 0.5, else 0),
    ``alt_advantage_probability`` (mean over raters of the share of dialogs where the
    judge agrees with the remaining raters at least as well as the left-out rater),
    ``alt_epsilon``, ``alt_raters`` (raters tested: those with 30 or more dialogs),
    ``alt_power`` (the chance the test passes for a judge exactly as good as a rater, at
    these raters' dialogs: a FAIL at low power says little) and,
    per rater, ``alt_advantage(<rater>)`` (rho_f - rho_h) and ``alt_p(<rater>)`` (the
    one-sided t-test's p before Benjamini-Yekutieli). Reports nothing otherwise.
    ``inspect-empathy compare`` gives the same test with every column (``alt_test.csv``).
    Nothing while the run is in progress (`metrics.in_progress`)."""

    def compute(scores: list[SampleScore]) -> Value:
        if in_progress():
            return {}
        per_dialog, judge = scored_rater_ratings(scores)
        raters = {r for ratings in per_dialog.values() for r in ratings}
        if len(raters) < 3:
            return {}
        import pandas as pd

        from .alttest import alt_test
        from .humans import ratings_frame

        result = alt_test(pd.Series(judge), ratings_frame(per_dialog), epsilon=epsilon)
        if not result.tested:
            return {}
        out: dict[str, float] = {
            "alt_winning_rate": result.winning_rate,
            "alt_passed": float(bool(result.passed)),
            "alt_advantage_probability": result.advantage_probability,
            "alt_epsilon": float(epsilon),
            "alt_raters": float(result.tested),
            "alt_power": result.power,
        }
        for _, row in result.raters.iterrows():
            out[f"alt_advantage({_label(row['rater'])})"] = float(row["advantage"])
            out[f"alt_p({_label(row['rater'])})"] = float(row["p_value"])
        return out

    return compute
