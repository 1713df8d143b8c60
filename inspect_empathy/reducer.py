"""The epoch reducer that keeps every epoch's judgement (Inspect's keep the first's metadata)."""

from __future__ import annotations

import math
import statistics
from typing import Any

from inspect_ai.scorer import Score, ScoreReducer, score_reducer

from .stats.metrics import EPOCHS_KEY, UNCALIBRATED_KEY, in_progress, uncalibrated


def _scored(score: Score) -> bool:
    return not (isinstance(score.value, float) and math.isnan(score.value))


def _judges(scores: list[Score]) -> dict[str, dict[str, Any]] | None:
    """A panel's per-judge results over epochs: every epoch's value, and their mean."""
    panels = [(s.metadata or {}).get("judges") for s in scores]
    if not any(isinstance(p, dict) for p in panels):
        return None
    first = next(p for p in panels if isinstance(p, dict))
    judges: dict[str, dict[str, Any]] = {}
    names = list(dict.fromkeys(n for p in panels if isinstance(p, dict) for n in p))
    for name in names:
        values = [
            (p.get(name) or {}).get("value") if isinstance(p, dict) else None for p in panels
        ]
        present = [float(v) for v in values if v is not None]
        judges[name] = {
            **(first.get(name) or {}),
            "value": statistics.fmean(present) if present else None,
            "epoch_values": values,
        }
    return judges


def _mean_distribution(scores: list[Score]) -> dict[str, float] | None:
    distributions = [
        d for s in scores if isinstance(d := (s.metadata or {}).get("distribution"), dict)
    ]
    if not distributions:
        return None
    keys = sorted({k for d in distributions for k in d})
    return {k: round(statistics.fmean(d.get(k, 0.0) for d in distributions), 6) for k in keys}


SAMPLE_ONLY = ("distribution", "score_token_mass")
"""Score metadata that a one-epoch reduction leaves to the sample's own score."""

_LEFT = (*SAMPLE_ONLY, "grader_answer")
"""What a one-epoch reduction leaves out: `SAMPLE_ONLY` and the grader's words (the
scorer's ``grader_answer``), which compare reads from the sample's score."""


def _one_epoch(score: Score) -> Score:
    """A single epoch's score as its reduction, without the judgement's distribution and
    score-token mass: the sample's score has them, and Inspect copies every reduction into
    the log's reductions and reads them back when the log is closed."""
    metadata = score.metadata
    if not metadata or not any(key in metadata for key in _LEFT):
        return score
    kept = {key: value for key, value in metadata.items() if key not in _LEFT}
    return score.model_copy(update={"metadata": kept})


def _own(score: Score) -> dict[str, float]:
    """``{"uncalibrated": the judge's own score}`` of a scored, calibrated epoch, else {}."""
    raw = uncalibrated(score) if _scored(score) else None
    return {} if raw is None else {UNCALIBRATED_KEY: raw}


@score_reducer(name="empathy_mean")
def empathy_mean() -> ScoreReducer:
    """Mean of the scored epochs, keeping what each epoch's judgement was.

    The reduced Score's metadata lists every epoch (value, method, unscored
    reason), averages the score distributions, and for a panel keeps each judge's
    value in every epoch (``epoch_values``) with their mean, so per-judge metrics
    (`judge_means`, `judge_agreement`) cover every epoch. A sample no epoch
    scored stays unscored, with each epoch's reason. With one epoch the reduction
    is that epoch's score without its ``distribution`` and ``score_token_mass``
    (the sample's score keeps them); while the run is in progress (`metrics.in_progress`:
    Inspect's live figures, whose reductions are not kept) it is the epoch's score itself.
    """

    def reduce(scores: list[Score]) -> Score:
        if len(scores) == 1:
            # Inspect reduces every sample again at each live recomputation and keeps only
            # the figures: the log's reductions are the final ones, made outside the run
            return scores[0] if in_progress() else _one_epoch(scores[0])
        scored = [s for s in scores if _scored(s)]
        base = dict((scored or scores)[0].metadata or {})
        base[EPOCHS_KEY] = [
            {
                "value": s.value if _scored(s) else None,
                **_own(s),
                "method": (s.metadata or {}).get("method"),
                **(
                    {"unscored_reason": (s.metadata or {}).get("unscored_reason")}
                    if not _scored(s)
                    else {}
                ),
            }
            for s in scores
        ]
        judges = _judges(scores)
        if judges is not None:
            base["judges"] = judges
        if not scored:
            return Score.unscored(
                reason=scores[0].reason,
                answer=scores[0].answer,
                explanation=f"unscored in all {len(scores)} epochs: {scores[0].explanation}",
                metadata=base,
            )
        values = [s.as_float() for s in scored]
        value = statistics.fmean(values)
        own = [_own(s).get(UNCALIBRATED_KEY) for s in scored]
        if UNCALIBRATED_KEY in base:  # calibrated: the judge's own mean, not one epoch's
            if all(v is not None for v in own):
                base[UNCALIBRATED_KEY] = statistics.fmean(float(v) for v in own)  # type: ignore[arg-type]
            else:
                del base[UNCALIBRATED_KEY]
        distribution = _mean_distribution(scored)
        if distribution is not None:
            base["distribution"] = distribution
        if "threshold" in base:  # empathy_scorer(threshold=...): the mean passes or not
            base["passed"] = math.floor(value + 0.5) >= base["threshold"]
        shown = ", ".join(f"{v:.3f}" for v in values)
        return Score(
            value=value,
            answer=scored[0].answer,
            explanation=(
                f"mean of {len(scored)} of {len(scores)} epochs ({shown}) = {value:.3f}; "
                f"first: {scored[0].explanation}"
            ),
            metadata=base,
        )

    return reduce
