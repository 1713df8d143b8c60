"""Logged samples as the comparison reads them: one reader behind every way of naming a log.

``.eval`` logs are zip files of one JSON file per sample, and ``.json`` logs one JSON
document: both are read as plain JSON (fifty times faster than building Inspect's
objects, and the whole sample, where Inspect's summaries cut strings and drop long
metadata), every record of a sample included. An ``.eval`` sample is parsed for what
`LoggedSample` holds only (`parse_sample`): its messages, output, attachments and the
events' contents are passed over unbuilt, five times faster than the whole document. Any
other layout, or a file that cannot be read so, goes through Inspect's
``read_eval_log_samples``; failing that, through the sample summaries (no events: no call
counts). Each sample comes back as a `LoggedSample`, whichever reader read it.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable, Iterator
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
    once: bool = False
    """No other record of the file has this record's name (an ``.eval`` member's: the zip
    reader says so); another name may still hold the same id and epoch."""


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


@functools.cache
def _slim() -> Callable[[bytes], dict[str, Any]]:
    """pydantic's JSON validator of the keys `from_json` reads (and of the events, what
    `_util.usage.model_calls` reads): every other key is checked as JSON and passed over
    without building it."""
    from pydantic import TypeAdapter
    from typing_extensions import TypedDict

    class Output(TypedDict, total=False):
        usage: Any

    class Event(TypedDict, total=False):
        event: Any
        id: Any
        parent_id: Any
        type: Any
        name: Any
        span_id: Any
        model: Any
        pending: Any
        error: Any
        cache: Any
        output: Output | None

    class Sample(TypedDict, total=False):
        id: Any
        epoch: Any
        input: Any
        metadata: Any
        scores: Any
        model_usage: Any
        error: Any
        invalidation: Any
        events: list[Event] | None

    return TypeAdapter(Sample).validate_json


def parse_sample(data: bytes) -> dict[str, Any]:
    """A logged sample's JSON, with what `from_json` reads as ``json.loads`` gives it.

    Whatever the slim parse does not take (an event that is not an object, a string
    Python's ``json`` reads and pydantic refuses, such as a lone surrogate, or bad JSON) is
    parsed by ``json.loads``, which reads it as before or raises its own error."""
    try:
        return _slim()(data)
    except ValueError:  # pydantic's ValidationError
        return json.loads(data)


ZSTD = 93
"""The zip compression method of zstd, which Inspect writes ``.eval`` members with."""


_kept_directory: list[Any] = []
"""The last zip directory `_directory` read: its file's (path, inode, size, mtime) and its
members."""


def _directory(path: str) -> list[Any]:
    """A zip file's members as ``zipfile`` lists them (every record, a superseded one too),
    kept for the file's next reader: its header, then its samples (the directory of 100,000
    members takes most of a second to read)."""
    import os
    import zipfile

    import inspect_ai.log  # noqa: F401  (Inspect's zstd support for zipfile)

    info = os.stat(path)
    key = (path, info.st_ino, info.st_size, info.st_mtime_ns)
    if _kept_directory and _kept_directory[0] == key:
        return list(_kept_directory[1])
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
    _kept_directory[:] = [key, members]
    return list(members)


def _members(path: str, members: list[Any]) -> Iterator[bytes]:
    """The bytes of each member, as ``zipfile`` reads them.

    A zstd member is read from its offset in the mapped file and inflated by one
    decompressor for the whole file (``zipfile`` makes a decompressor per member: half the
    time of a small sample); its size and CRC-32 are checked as ``zipfile`` checks them.
    Any other member, or one that does not read so, is read by ``zipfile`` (which names
    what is wrong)."""
    import mmap
    import zipfile

    try:
        import zstandard
    except ImportError:  # Python 3.14's own zstd in zipfile: member by member
        zstandard = None
    archive = None
    with open(path, "rb") as file:
        view = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) if members else None
        try:
            decompressor = zstandard.ZstdDecompressor() if zstandard is not None else None
            for member in members:
                data = _zstd_member(view, member, decompressor) if decompressor else None
                if data is None:
                    archive = archive or zipfile.ZipFile(path)
                    data = archive.read(member)
                yield data
        finally:
            if archive is not None:
                archive.close()
            if view is not None:
                view.close()


def _zstd_member(view: Any, member: Any, decompressor: Any) -> bytes | None:
    """A zstd member's bytes read at its offset, or None (another method, encrypted, not
    as the directory says: `_members` reads it through ``zipfile``)."""
    import struct
    import zlib

    if member.compress_type != ZSTD or member.flag_bits & 0x1:  # 0x1: encrypted
        return None
    start = member.header_offset
    local = view[start : start + 30]
    if len(local) != 30 or local[:4] != b"PK\x03\x04":
        return None
    name, extra = struct.unpack("<HH", local[26:30])
    start += 30 + name + extra
    packed = view[start : start + member.compress_size]
    try:
        data = decompressor.decompress(packed, max_output_size=member.file_size)
    except Exception:  # noqa: BLE001 - zstandard.ZstdError: zipfile reads it and says why
        return None
    if len(data) != member.file_size or zlib.crc32(data) != member.CRC:
        return None
    return data


def _zip_samples(path: str) -> Iterator[LoggedSample]:
    members = [  # each record, a superseded one too
        member
        for member in _directory(path)
        if member.filename.startswith("samples/") and member.filename.endswith(".json")
    ]
    names = Counter(member.filename for member in members)
    for member, data in zip(members, _members(path, members), strict=True):
        sample = from_json(parse_sample(data))
        sample.once = names[member.filename] == 1
        yield sample


def read_header(path: str) -> Any:
    """A log's header (``EvalLog`` without samples), as ``read_eval_log(path,
    header_only=True)`` reads it.

    Of an ``.eval`` file, the ``header.json`` member is given to ``read_eval_log`` alone, as
    an in-memory zip: a header-only read of the file also parses ``reductions.json``, every
    sample's reduced score and answer (two seconds for 100,000 samples), which the
    comparison does not read. A file without that member, or one that does not read so, is
    read whole by ``read_eval_log``, which says what is wrong."""
    import io
    import zipfile

    from inspect_ai.log import read_eval_log

    if path.endswith(".eval"):
        try:
            [*_, member] = [m for m in _directory(path) if m.filename == "header.json"]
            header = next(_members(path, [member]))
            alone = io.BytesIO()
            with zipfile.ZipFile(alone, "w") as copy:
                copy.writestr("header.json", header)
            alone.seek(0)
            log = read_eval_log(alone, header_only=True)
        except Exception:  # noqa: BLE001 - read as Inspect reads the file, which names it
            pass
        else:
            log.location = path
            return log
    return read_eval_log(path, header_only=True)


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
