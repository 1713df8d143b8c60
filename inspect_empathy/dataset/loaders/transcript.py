"""``transcript``: text files of blank-line separated dialogs of ``LABEL: text`` lines.

Each dialog may open with ``# key: value`` header lines: ``# id: ...`` (default
``<file stem>-<n>``, n counting dialogs from 1), ``# rating: ...`` and any other
key, which goes into sample metadata. Other lines starting with ``#`` are comments.
Indent a continuation line that would otherwise look like ``Word: text`` (an
indented line whose label is a role still opens a turn). Mapping keys: ``roles``
(label -> user or bot), ``scale`` (rating scale), ``trailing_user`` and ``unescape``
(as for every generic format, see `_options.TextOptions`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...dialogs import RUBRIC_SCALE, TRAILING_KEY, DialogRecord, Scale, dialog_id, end_with_bot
from ._files import read_text
from ._options import TextOptions, check_keys
from ._problems import LoadReport, Located, RecordProblem
from ._ratings import parse_rating, parse_scale
from ._roles import DEFAULT_ROLES, role_map
from ._text import check_data_metadata
from ._transcript import parse_transcript, split_lines

KEYS = ("roles", "scale", "trailing_user", "unescape")


def dialog_blocks(text: str) -> Iterator[tuple[int, list[str]]]:
    """(first line number, lines) for each blank-line separated block."""
    block: list[str] = []
    start = 0
    for number, line in enumerate(split_lines(text), start=1):
        if line.strip():
            if not block:
                start = number
            block.append(line)
        elif block:
            yield start, block
            block = []
    if block:
        yield start, block


def record_from_block(
    lines: list[str],
    default_id: str,
    roles: dict[str, str],
    scale: Scale,
    text: TextOptions | None = None,
) -> DialogRecord:
    """One record from a block's header and ``LABEL: text`` lines."""
    fields: dict[str, str] = {}
    body_start = 0
    for line in lines:
        if not line.startswith("#"):
            break
        body_start += 1
        key, sep, value = line[1:].partition(":")
        if sep and key.strip():
            fields[key.strip().lower()] = value.strip()
    body = "\n".join(lines[body_start:])
    text = text or TextOptions()
    if text.unescape is not None:
        body = text.unescape(body)
    seen: list[str] = []
    turns = parse_transcript(body, roles, seen=seen)
    cut = end_with_bot(turns, text.cut_trailing_user, seen)
    record_id = dialog_id(fields.pop("id", "") or default_id)
    raw = fields.pop("rating", "")
    rating = parse_rating(raw, scale) if raw else None
    check_data_metadata(fields, "a '# key: value' header line")
    metadata: dict[str, Any] = dict(fields)
    if cut:
        metadata[TRAILING_KEY] = cut
    return DialogRecord(record_id, turns, rating, scale, metadata)


def load_transcript(path: Path, report: LoadReport, **mapping: Any) -> Iterator[Located]:
    """Records from a transcript text file."""
    check_keys("transcript", mapping, KEYS)
    roles = role_map(mapping.get("roles")) if mapping.get("roles") else DEFAULT_ROLES
    scale = parse_scale(mapping["scale"]) if mapping.get("scale") else RUBRIC_SCALE
    options = TextOptions.from_mapping(mapping)
    for index, (line, lines) in enumerate(dialog_blocks(read_text(path)), start=1):
        where = f"{path}:{line}"
        try:
            record = record_from_block(lines, f"{path.stem}-{index}", roles, scale, options)
        except RecordProblem as ex:
            report.problem(where, ex.kind, ex.detail)
            continue
        options.count(report, record)
        yield where, record
    options.summarise(report)
