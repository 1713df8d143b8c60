"""What makes a log unfit to compare: repeated samples, values off the scale, an unfinished
run, and logs that disagree on the human ratings of the same dialogs.

A log with repeated samples or values off the 1-5 scale is skipped with a note
naming it and the samples; an unfinished log is set apart with its status and
the command that resumes it; logs that disagree on a dialog's human rating are
refused (no reference to measure every judge against), naming dialogs, ratings
and logs.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .comparison import CompareError

if TYPE_CHECKING:
    import pandas as pd

SCALE = (1.0, 5.0)
"""Judge scores and human ratings (on the rubric's scale) lie here."""
TOLERANCE = 1e-9
SHOWN = 3
"""Samples or dialogs named in one message; the rest are counted."""

STATUS_MEANING = {
    "started": "still running, or its run stopped before closing the log",
    "cancelled": "cancelled",
    "error": "stopped by an error",
}


class LogProblem(CompareError):
    """A log holds something no finished run of the empathy scorer writes."""


def _more(items: Sequence[str]) -> str:
    shown = "; ".join(items[:SHOWN])
    return shown + (f"; and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def _value(value: float) -> str:
    return "none" if math.isnan(value) else f"{value:.6g}"


def repeated_samples(
    keys: Iterable[tuple[str, int]], scores: dict[tuple[str, int], list[float]]
) -> None:
    """Raise LogProblem when a sample id occurs more than once in one epoch."""
    counts = Counter(keys)
    repeated = [key for key, n in counts.items() if n > 1]
    if not repeated:
        return
    items = [
        f"sample id {sample!r} appears {counts[(sample, epoch)]} times in epoch {epoch} "
        f"(scores {', '.join(_value(s) for s in scores.get((sample, epoch), []))})"
        for sample, epoch in repeated
    ]
    raise LogProblem(
        _more(items) + ": a log holds each sample once per epoch, so this one was edited or "
        "merged; it is not averaged as if it were several epochs"
    )


def repeated_ids(
    keys: Sequence[tuple[Any, int]], epochs: int, ids: Sequence[str], scores: Sequence[float]
) -> None:
    """Raise LogProblem when a log holds one sample id more often than its run could: twice
    in one epoch once ids are read as compare names dialogs (``1`` and ``"1"`` are one
    dialog), or in an epoch beyond the run's ``epochs`` (a log merged from two runs, or
    edited). ``keys`` are the samples' (id, epoch); ``ids`` and ``scores`` the rows'.
    Otherwise compare would average the copies as if they were epochs."""
    beyond = sorted({str(i) for i, epoch in keys if not 1 <= epoch <= epochs})
    named = Counter((i if isinstance(i, str) else str(i), epoch) for i, epoch in keys)
    twice = [key for key, n in named.items() if n > 1]
    if not beyond and not twice:
        return
    found: dict[str, list[float]] = {}
    for sample, score in zip(ids, scores, strict=True):
        found.setdefault(str(sample), []).append(score)
    items = [
        f"sample id {sample!r} appears {named[(sample, epoch)]} times in epoch {epoch} "
        f"(scores {', '.join(_value(s) for s in found.get(sample, []))})"
        for sample, epoch in twice
    ]
    run = f"{epochs} epoch" + ("s" if epochs != 1 else "")
    items += [
        f"sample id {sample!r} appears in epoch(s) "
        f"{', '.join(str(e) for i, e in keys if str(i) == sample)} of a run of {run} "
        f"(scores {', '.join(_value(s) for s in found.get(sample, []))})"
        for sample in beyond
    ]
    raise LogProblem(
        _more(items) + ": a log holds each sample once per epoch, so this one was edited or "
        "merged; it is not averaged as if it were several epochs"
    )


def off_scale(rows: Sequence[dict[str, Any]]) -> None:
    """Raise LogProblem when a judge score or human rating lies outside 1-5."""
    low, high = SCALE
    items: list[str] = []
    seen: set[tuple[str, int, str]] = set()
    for row in rows:
        for what, value in (("judge score", row["score"]), ("human rating", row["human"])):
            key = (row["id"], row["epoch"], what)
            if math.isnan(value) or low - TOLERANCE <= value <= high + TOLERANCE or key in seen:
                continue
            seen.add(key)
            judge = f" ({row['judge_model']})" if what == "judge score" else ""
            items.append(
                f"sample {row['id']!r} (epoch {row['epoch']}): {what} {_value(value)}{judge} "
                "is outside 1-5"
            )
    if items:
        raise LogProblem(
            _more(items) + ": the empathy scorer never writes such a value (an edited log?)"
        )


def unfinished_reason(status: str, held: int, expected: int, log: str) -> str:
    """Why a log whose run did not finish is set apart, and how to resume it."""
    meaning = STATUS_MEANING.get(status, "not finished")
    return (
        f"unfinished: status {status} ({meaning}), {held} of {expected} samples; "
        f"resume it with `inspect eval-retry {log}`"
    )


def _rating(human: float, ratings: Any) -> str:
    text = _value(human)
    if isinstance(ratings, dict) and ratings:
        raters = ", ".join(f"{k}: {_value(float(v))}" for k, v in sorted(ratings.items()))
        text += f" (raters {raters})"
    return text


def _key(human: float, ratings: Any) -> tuple[Any, ...]:
    rounded = None if math.isnan(human) else round(human, 9)
    raters = (
        tuple(sorted((k, round(float(v), 9)) for k, v in ratings.items()))
        if isinstance(ratings, dict)
        else ()
    )
    return (rounded, raters)


def same_ratings(rows: pd.DataFrame) -> None:
    """Raise CompareError when the logs give one dialog different human ratings.

    ``rows`` are the compared rows (one dialog set); a rating missing in one log
    and present in another is a difference too.
    """
    per_log = rows.drop_duplicates(["key", "id"])
    if per_log["key"].nunique() < 2:
        return
    keys = [_key(h, r) for h, r in zip(per_log["human"], per_log["ratings"], strict=True)]
    per_log = per_log.assign(_rating=keys)
    versions = per_log.groupby("id", sort=False)["_rating"].nunique()
    differing = list(versions[versions > 1].index)
    if not differing:
        return
    items = []
    for dialog in differing:
        group = per_log[per_log["id"] == dialog]
        texts: dict[str, list[str]] = {}
        for _, row in group.iterrows():
            text = _rating(row["human"], row["ratings"])
            texts.setdefault(text, []).append(Path(str(row["log"])).name)
        items.append(
            f"{dialog!r}: " + " vs ".join(f"{t} in {', '.join(logs)}" for t, logs in texts.items())
        )
    raise CompareError(
        f"the logs disagree on the human rating of {len(differing)} dialog(s), so the judges "
        f"would be measured against different references: {_more(items)}. Compare logs made "
        "with the same ratings (name their files), or re-run the judges on one version of "
        "the dataset"
    )
