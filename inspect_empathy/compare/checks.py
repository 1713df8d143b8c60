"""What makes a log unfit to compare: a sample recorded twice with different scores, values
off the scale, an unfinished run, and logs that disagree on the human ratings of the same
dialogs; and which records of a sample recorded more than once count (`one_record_each`).

A log with differing records of one sample or values off the 1-5 scale is skipped with a
note naming it, the samples and their scores; an unfinished log is set apart with its
status and the command that resumes it; logs that disagree on a dialog's human rating are
refused (no reference to measure every judge against), naming dialogs, ratings and logs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._logged import LoggedSample
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


@dataclass(frozen=True, slots=True)
class Record:
    """One logged record of a sample, as `one_record_each` weighs it."""

    id: str
    epoch: int
    finished: bool
    """No error and not invalidated: a result, not an attempt."""
    outcome: str
    """Every score's value and answer (and a panel's members'), exactly as stored."""
    shown: str
    """Its scores as a message names them."""
    exact: str
    """Its scores as stored, with their answers: named where ``shown`` reads alike."""
    whole: bool = True
    """``outcome``, ``shown`` and ``exact`` were made (`record`); a record its reader said
    is its sample's only one has none (`record_once`) until another record of the sample
    turns up (`PartRecords`)."""


class PartRecords(Exception):
    """`one_record_each` needs what a `record_once` record left out: read the log again
    with whole records."""


@dataclass(frozen=True, slots=True)
class Repeats:
    """What `one_record_each` found: the records not counted, and why."""

    drop: frozenset[int]
    """Indices of the records set aside."""
    rerun: int = 0
    """Samples whose unfinished attempt a later record of the sample replaced."""
    copies: int = 0
    """Samples recorded more than once with the same answer and score."""

    def note(self) -> str:
        """The Logs section's note ("" when every sample is recorded once)."""
        parts = []
        if self.rerun:
            parts.append(
                f"{self.rerun} sample(s) re-run after an attempt that did not finish: the "
                "later record read, as Inspect reads it"
            )
        if self.copies:
            parts.append(
                f"{self.copies} sample(s) recorded more than once with the same answer and "
                "score: counted once"
            )
        return "; ".join(parts)


def record(sample: LoggedSample) -> Record:
    """What `one_record_each` weighs of a logged sample."""
    outcome: dict[str, Any] = {"error": sample.error}
    shown: list[str] = []
    exact: list[str] = []
    for name, score in sorted(sample.scores.items()):
        meta = score.metadata or {}
        judges = meta.get("judges")
        members = (
            {m: [i.get("value"), i.get("raw")] for m, i in judges.items() if isinstance(i, dict)}
            if isinstance(judges, dict)
            else None
        )
        outcome[name] = [score.value, score.answer, meta.get("grader_answer"), members]
        named = "" if len(sample.scores) == 1 else f"{name} "
        shown.append(named + _number(score.value))
        exact.append(f"{named}{score.value!r} (answer {score.answer!r})")
    text, stored = (", ".join(shown) or "none"), (", ".join(exact) or "none")
    if sample.error is not None:
        text += f" (error: {sample.error[:80]})"
        stored += f" (error: {sample.error[:80]})"
    return Record(
        id=sample.id,
        epoch=sample.epoch,
        finished=sample.error is None and not sample.invalidated,
        outcome=json.dumps(outcome, sort_keys=True, default=str),
        shown=text,
        exact=stored,
    )


def record_once(sample: LoggedSample) -> Record:
    """A record of a sample its reader says is recorded once (`LoggedSample.once`): its id,
    epoch and whether it finished, without its scores' text (`record` makes it whole)."""
    finished = sample.error is None and not sample.invalidated
    return Record(sample.id, sample.epoch, finished, "", "", "", whole=False)


def _number(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return "none" if value is None else str(value)
    try:
        return _value(float(value))
    except (TypeError, ValueError):
        return repr(value)


def one_record_each(records: Sequence[Record], epochs: int) -> Repeats:
    """The one rule for a sample recorded more than once in a log (``records`` in the
    log's order): which records count, or LogProblem naming the samples and scores.

    Inspect records a sample again when it re-runs it: a resumed eval set or
    ``inspect eval-retry`` re-runs the samples whose attempt did not finish (in flight at a
    kill, errored, invalidated) and writes each under its old member name, where every
    Inspect reader takes the last. So an unfinished record followed by a later record of
    the same sample is that attempt, set aside. Records left that are the same sample (the
    same answer and score, compared as stored) count once. Records left that differ, or a
    sample in an epoch beyond the run's ``epochs``, make the log unfit (edited or merged):
    LogProblem. ``1`` and ``"1"`` are one sample, as compare names dialogs.
    """
    groups: dict[tuple[str, int], list[int]] = {}
    for index, one in enumerate(records):
        groups.setdefault((one.id, one.epoch), []).append(index)
    problems: list[str] = []
    drop: set[int] = set()
    rerun = copies = 0
    for (sample, epoch), indices in groups.items():
        if len(indices) == 1:
            continue
        if not all(records[i].whole for i in indices):
            raise PartRecords()
        attempts = [i for i in indices[:-1] if not records[i].finished]
        rest = [i for i in indices if i not in attempts]
        distinct = list({records[i].outcome: records[i] for i in rest}.values())
        if len(distinct) > 1:
            shown = [r.shown for r in distinct]
            if len(set(shown)) < len(shown):
                shown = [r.exact for r in distinct]
            problems.append(
                f"sample id {sample!r} appears {len(indices)} times in epoch {epoch} with "
                f"different scores ({', '.join(shown)})"
            )
            continue
        drop.update(attempts + rest[:-1])
        rerun += bool(attempts)
        copies += len(rest) > 1
    run = f"{epochs} epoch" + ("s" if epochs != 1 else "")
    for sample in sorted({s for s, epoch in groups if not 1 <= epoch <= epochs}):
        held = [(e, i) for (s, e), indices in groups.items() if s == sample for i in indices]
        if not all(records[i].whole for _, i in held):
            raise PartRecords()
        problems.append(
            f"sample id {sample!r} appears in epoch(s) "
            f"{', '.join(str(e) for e, _ in held)} of a run of {run} "
            f"(scores {', '.join(records[i].shown for _, i in held)})"
        )
    if problems:
        raise LogProblem(
            _more(problems) + ": a log holds one result per sample and epoch (Inspect records "
            "a sample again only to replace an attempt that did not finish), so this one was "
            "edited or merged; it is not compared"
        )
    return Repeats(frozenset(drop), rerun, copies)


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
