"""Logged samples as the comparison reads them: one reader behind every way of naming a log.

``.eval`` logs are zip files of one JSON file per sample, and ``.json`` logs one JSON
document: both are read as plain JSON (fifty times faster than building Inspect's
objects, and the whole sample, where Inspect's summaries cut strings and drop long
metadata), every record of a sample included. Any other layout, or a file that cannot be
read so, goes through Inspect's ``read_eval_log_samples``; failing that, through the sample
summaries (no events: no call counts). Each sample comes back as a `LoggedSample`,
whichever reader read it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

FAST = "json"
"""`reader` name of the plain-JSON reader (``.eval`` and ``.json`` logs)."""
INSPECT = "inspect"
"""`reader` name of the reader through Inspect's ``read_eval_log_samples``."""
SUMMARIES = "summaries"
"""`reader` name of the last resort: Inspect's sample summaries (no events)."""


@dataclass(slots=True)
class LoggedScore:
    """One score of a logged sample, as logged."""

    value: Any
    answer: Any
    explanation: Any
    metadata: dict[str, Any] | None


@dataclass(slots=True)
class LoggedSample:
    """What the comparison reads of one logged sample (epoch)."""

    id: str
    epoch: int
    input: Any
    """A string, or messages (their JSON, or Inspect's objects)."""
    metadata: dict[str, Any]
    scores: dict[str, LoggedScore]
    model_usage: dict[str, Any]
    """Usage per model (``ModelUsage`` JSON or objects)."""
    error: str | None
    """The error's message, if the sample errored."""
    events: list[Any] | None
    """The sample's events (None: read from the summaries, which have none)."""
    invalidated: bool = False
    """Inspect invalidated the record (a retry re-runs the sample)."""


def _score(data: Any) -> LoggedScore:
    data = data if isinstance(data, dict) else {}
    return LoggedScore(
        data.get("value"), data.get("answer"), data.get("explanation"), data.get("metadata")
    )


def from_json(data: dict[str, Any]) -> LoggedSample:
    """A sample from its logged JSON."""
    error = data.get("error")
    message = error.get("message") if isinstance(error, dict) else error
    return LoggedSample(
        id=str(data["id"]),
        epoch=int(data["epoch"]),
        input=data["input"],
        metadata=data.get("metadata") or {},
        scores={name: _score(s) for name, s in (data.get("scores") or {}).items()},
        model_usage=data.get("model_usage") or {},
        error=str(message) if message not in (None, "") else None,
        events=data.get("events") or [],
        invalidated=data.get("invalidation") is not None,
    )


def _from_object(sample: Any, events: bool) -> LoggedSample:
    """A sample from Inspect's ``EvalSample`` (``events``) or ``EvalSampleSummary``."""
    error = sample.error
    message = getattr(error, "message", error)
    return LoggedSample(
        id=str(sample.id),
        epoch=int(sample.epoch),
        input=sample.input,
        metadata=sample.metadata or {},
        scores={
            name: LoggedScore(s.value, s.answer, s.explanation, s.metadata)
            for name, s in (sample.scores or {}).items()
        },
        model_usage=dict(sample.model_usage or {}),
        error=str(message) if message not in (None, "") else None,
        events=list(sample.events or []) if events else None,
        invalidated=getattr(sample, "invalidation", None) is not None,
    )


def _zip_samples(path: str) -> Iterator[LoggedSample]:
    import zipfile

    import inspect_ai.log  # noqa: F401  (Inspect's zstd support for zipfile)

    with zipfile.ZipFile(path) as archive:
        for member in archive.infolist():  # each record, a superseded one too
            name = member.filename
            if name.startswith("samples/") and name.endswith(".json"):
                yield from_json(json.loads(archive.read(member)))


def _json_samples(path: str) -> Iterator[LoggedSample]:
    with open(path, "rb") as file:
        data = json.load(file)
    samples = data.get("samples") if isinstance(data, dict) else None
    if not isinstance(samples, list):
        raise ValueError("no samples list")
    for sample in samples:
        yield from_json(sample)


def fast_samples(path: str) -> Iterator[LoggedSample]:
    """Each sample record of an ``.eval`` or ``.json`` log in the file's order, read as plain
    JSON (ValueError for another kind of file).

    An ``.eval`` log holds a sample Inspect re-ran (after an attempt that did not finish)
    twice under one member name; Inspect's readers take the last. Both are read here, so
    that `checks.one_record_each` sees what the log holds."""
    if path.endswith(".eval"):
        return _zip_samples(path)
    if path.endswith(".json"):
        return _json_samples(path)
    raise ValueError(f"{path}: not an .eval or .json log")


def inspect_samples(path: str) -> Iterator[LoggedSample]:
    """Each sample through Inspect's ``read_eval_log_samples`` (its objects)."""
    from inspect_ai.log import read_eval_log_samples

    for sample in read_eval_log_samples(
        path, all_samples_required=False, exclude_fields={"messages", "store", "attachments"}
    ):
        yield _from_object(sample, events=True)


def summary_samples(path: str) -> Iterator[LoggedSample]:
    """Each sample's summary (Inspect's: strings cut, long metadata dropped, no events)."""
    from inspect_ai.log import read_eval_log_sample_summaries

    for summary in read_eval_log_sample_summaries(path):
        yield _from_object(summary, events=False)


READERS = ((FAST, fast_samples), (INSPECT, inspect_samples), (SUMMARIES, summary_samples))
"""The readers, in the order they are tried: a log is read by the first that reads it whole."""
