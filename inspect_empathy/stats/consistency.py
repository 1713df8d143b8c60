"""Does the judge agree with itself? Self-consistency over epochs (``--epochs k``, k >= 2).

A judge asked the same question twice may answer differently (sampling at temperature > 0,
logprobs that shift between calls, a provider's nondeterminism). Over the dialogs scored
in at least two epochs:

- ``self_sd``: the judge's spread on one dialog, the pooled within-dialog standard
  deviation, sqrt(mean over dialogs of the sample variance (ddof 1) of its epochs'
  scores), on the 1-5 scale (0 = the same score every time);
- ``self_flip``: the share of dialogs whose score rounded half up to 1-5 is not the same
  in every epoch (a level that changes between runs);
- ``self_alpha``: ordinal Krippendorff's alpha of the judge with itself, epochs as
  coders and dialogs as units, on the scores rounded half up to 1-5 (the same
  coefficient as ``judge_alpha`` and the raters' alpha; 1 = the epochs agree perfectly,
  0 = no better than chance);
- ``self_dialogs``: how many dialogs these figures rest on; ``self_epochs``: the most
  epochs a dialog had (``compare``'s columns; at the end of a run the plugin's line says
  how many dialogs were scored in two epochs or more, as a whole number, not a metric).

The metric reads what the `empathy_mean` epoch reducer (the tasks' default) keeps in the
reduced Score's metadata (``epochs``: every epoch's value); a metric sees only reduced
scores, so with Inspect's own reducers (``--epochs-reducer mean``) it reports nothing.
No numpy at import time (Inspect imports every plugin at start).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Value, metric

from ._agreement import krippendorff_alpha, round_score
from .metrics import EPOCHS_KEY, UNCALIBRATED_KEY, in_progress

COLUMNS = ("self_sd", "self_flip", "self_alpha", "self_dialogs", "self_epochs")
"""The figures, as columns of ``compare``'s ``judges.csv``."""
COUNTS = ("self_dialogs", "self_epochs")
"""The figures that are counts: columns, not metrics."""


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def self_consistency_figures(epochs: Iterable[Sequence[Any]]) -> dict[str, float]:
    """The figures of the module docstring from each dialog's epoch scores (None / NaN
    for an epoch without a score). Empty when no dialog has two scored epochs."""
    dialogs = [[v for v in map(_finite, values) if v is not None] for values in epochs]
    dialogs = [d for d in dialogs if len(d) >= 2]
    if not dialogs:
        return {}
    variances = []
    flips = 0
    for values in dialogs:
        mean = math.fsum(values) / len(values)
        variances.append(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))
        flips += len(set(round_score(values).tolist())) > 1
    width = max(len(d) for d in dialogs)
    matrix = [[d[e] if e < len(d) else None for d in dialogs] for e in range(width)]
    alpha = krippendorff_alpha(matrix)
    return {
        "self_sd": math.sqrt(math.fsum(variances) / len(variances)),
        "self_flip": flips / len(dialogs),
        # undefined (NaN) when every score of every dialog is one level: nothing to agree on
        "self_alpha": math.nan if alpha is None else alpha,
        "self_dialogs": float(len(dialogs)),
        "self_epochs": float(width),
    }


def epoch_values(score: SampleScore) -> list[float | None] | None:
    """Each epoch's value kept by `empathy_mean` in a reduced score (the judge's own,
    uncalibrated value where ``-T calibration`` mapped it: a map does not make a judge
    more consistent), or None."""
    epochs = (score.score.metadata or {}).get(EPOCHS_KEY)
    if not isinstance(epochs, list):
        return None
    return [
        _finite(e.get(UNCALIBRATED_KEY, e.get("value"))) if isinstance(e, dict) else None
        for e in epochs
    ]


@metric
def self_consistency() -> Metric:
    """The judge's agreement with itself over epochs: ``self_sd``, ``self_flip``,
    ``self_alpha`` (ordinal Krippendorff; see the module docstring), without the counts
    (`COUNTS`: the end-of-task line gives them as whole numbers). Reports nothing with one
    epoch or without `empathy_mean`, nor while the run is in progress
    (`metrics.in_progress`)."""

    def compute(scores: list[SampleScore]) -> Value:
        if in_progress():
            return {}
        per_dialog = [v for s in scores if (v := epoch_values(s)) is not None]
        figures = self_consistency_figures(per_dialog)
        return {k: v for k, v in figures.items() if k not in COUNTS}

    return compute
