"""``epitome``: EPITOME (Sharma et al. 2020), the three ``*-reddit.csv`` files.

Each file holds ``sp_id, rp_id, seeker_post, response_post, level, rationales`` for
one communication mechanism, level 0 (none), 1 (weak) or 2 (strong):
emotional reactions, interpretations, explorations. The files are joined on
(``sp_id``, ``rp_id``); one sample per pair: the seeker post (user) and the response
(bot). ``dimension`` picks the label: ``sum`` (default, 0-6) or one of
``emotional_reactions``, ``interpretations``, ``explorations`` (0-2); either is
mapped linearly onto 1-5. A pair that appears on several rows of a file is one
sample; its level is the mean of those rows (the load summary counts them).
Sample ids: ``epitome-<sp_id>-<rp_id>``.

The source may be the folder holding the three files, one of them (the others
are looked up next to it), or a spec file naming them with the keys
``emotional_reactions``, ``interpretations``, ``explorations``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...dialogs import RATING_SCOPE_KEY, DialogRecord, Turn, id_text
from ...errors import DatasetError
from ._files import inside_folder
from ._options import check_keys
from ._problems import (
    CONFLICT,
    EMPTY_DIALOG,
    MISSING_FIELD,
    NO_BOT_REPLY,
    LoadReport,
    Located,
    RecordProblem,
)
from ._ratings import parse_rating
from .tabular import csv_rows

FORMAT = "epitome"
DIMENSIONS = {
    "emotional_reactions": "emotional-reactions-reddit.csv",
    "interpretations": "interpretations-reddit.csv",
    "explorations": "explorations-reddit.csv",
}
ALIASES = {"er": "emotional_reactions", "ip": "interpretations", "ex": "explorations",
           "emotional-reactions": "emotional_reactions"}  # fmt: skip
KEYS = ("dimension", *DIMENSIONS)
REQUIRED = ("sp_id", "rp_id", "seeker_post", "response_post", "level")
HEADER_SIGNATURE = frozenset(REQUIRED)
LEVELS = (0.0, 2.0)
REPEATED = "repeated (sp_id, rp_id) row folded into one sample"


def resolve_files(path: Path, dimensions: list[str], mapping: dict[str, Any]) -> dict[str, Path]:
    """The CSV file of each wanted dimension (explicit, in the folder, or next to ``path``)."""
    folder = path if path.is_dir() else path.parent
    files: dict[str, Path] = {}
    for dimension in dimensions:
        if mapping.get(dimension):
            files[dimension] = Path(mapping[dimension])
        elif path.is_file() and path.name == DIMENSIONS[dimension]:
            files[dimension] = path
        else:  # a member of the folder: one that is a symlink out of it is refused
            files[dimension] = inside_folder(folder, DIMENSIONS[dimension], str(path), dimension)
    missing = [f"{d} ({p})" for d, p in files.items() if not p.is_file()]
    if missing:
        hint = (
            " or pick one dimension (dimension=emotional_reactions, ...)"
            if len(dimensions) > 1
            else ""
        )
        raise DatasetError(
            f"{path}: EPITOME file(s) not found: {', '.join(missing)}; name them in a "
            f"spec file (keys {', '.join(DIMENSIONS)}){hint}"
        )
    return files


def _read(file: Path, report: LoadReport) -> dict[tuple[str, str], list[tuple[str, list[str]]]]:
    rows = csv_rows(file, report, ",")
    first = next(rows, None)
    if first is None:
        raise DatasetError(f"{file}: empty file")
    columns = {name.strip(): i for i, name in enumerate(first[1])}
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise DatasetError(f"{file}: not an EPITOME file: no {', '.join(missing)}")
    sp, rp, seeker, response, level = (columns[c] for c in REQUIRED)
    needed = max(sp, rp, seeker, response, level) + 1
    pairs: dict[tuple[str, str], list[tuple[str, list[str]]]] = {}
    for line, values in rows:
        where = f"{file}:{line}"
        if len(values) < needed:
            report.problem(where, MISSING_FIELD, "row has too few fields")
            continue
        key = (id_text(values[sp]), id_text(values[rp]))
        if not key[0] or not key[1]:
            report.problem(where, MISSING_FIELD, "missing field 'sp_id' or 'rp_id'")
            continue
        picked = [values[seeker], values[response], values[level]]
        pairs.setdefault(key, []).append((where, picked))
    return pairs


SCRUBBED = re.compile(r"(?i)(?:sub)?reddit")
"""What the emotional-reactions file as published has removed from 36 of its texts (the
other two files keep it: ``browsing subreddits`` there, ``browsings`` in it)."""
_SPACE = re.compile(r"\s+")


def same_text(a: str, b: str) -> bool:
    """Whether two files' copies of one post are the same text as EPITOME publishes them:
    equal but for whitespace (640 of its rows differ between the files in whitespace only)
    and the words ``reddit`` / ``subreddit`` that one file scrubbed (`SCRUBBED`)."""
    if a.strip() == b.strip():
        return True
    return _SPACE.sub("", SCRUBBED.sub("", a)) == _SPACE.sub("", SCRUBBED.sub("", b))


def _check_same_text(key: tuple[str, str], entries: list[tuple[str, list[str]]]) -> None:
    """A RecordProblem when the rows of a pair (in one file or several) disagree on the
    seeker post or the response beyond what `same_text` allows."""
    first_where, first = entries[0]
    for where, values in entries[1:]:
        for index, column in enumerate(("seeker_post", "response_post")):
            a, b = first[index].strip(), values[index].strip()
            if not same_text(a, b):
                pairs = enumerate(zip(a, b, strict=False))
                at = next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))
                raise RecordProblem(
                    CONFLICT,
                    f"pair (sp_id {key[0]!r}, rp_id {key[1]!r}): the rows disagree on "
                    f"{column} from character {at + 1}: {_snippet(a, at)} at {first_where}, "
                    f"{_snippet(b, at)} at {where} (every row of a pair must hold the same "
                    "text: fix the files)",
                )


def _snippet(text: str, at: int, width: int = 30) -> str:
    start = max(0, at - 10)
    part = text[start : start + width]
    return repr(("..." if start else "") + part + ("..." if start + width < len(text) else ""))


def load_epitome(path: Path, report: LoadReport, **mapping: Any) -> Iterator[Located]:
    """Samples from the EPITOME CSV files, one per (sp_id, rp_id) pair."""
    check_keys(FORMAT, mapping, KEYS)
    dimension = str(mapping.get("dimension", "sum")).strip().lower()
    dimension = ALIASES.get(dimension, dimension)
    if dimension != "sum" and dimension not in DIMENSIONS:
        raise DatasetError(
            f"epitome: dimension must be sum or one of {', '.join(DIMENSIONS)}, "
            f"not {mapping.get('dimension')!r}"
        )
    dimensions = list(DIMENSIONS) if dimension == "sum" else [dimension]
    files = resolve_files(path, dimensions, mapping)
    tables = {d: _read(f, report) for d, f in files.items()}
    scale = (LEVELS[0] * len(dimensions), LEVELS[1] * len(dimensions))
    first = tables[dimensions[0]]
    for other in dimensions[1:]:
        for key in tables[other].keys() - first.keys():
            where = tables[other][key][0][0]
            report.problem(where, MISSING_FIELD, f"pair {key} is missing from the {dimensions[0]} "
                                                 "file")  # fmt: skip
    repeated = 0
    for key, rows in first.items():
        where = rows[0][0]
        at = where  # where a problem is: the row being read when it is found
        try:
            levels: dict[str, float] = {}
            for d in dimensions:
                entries = tables[d].get(key)
                if entries is None:
                    raise RecordProblem(MISSING_FIELD, f"pair {key} is missing from the {d} file")
                values = []
                for row_where, entry in entries:
                    at = row_where  # a bad level is reported at its own row
                    values.append(parse_rating(entry[2], LEVELS, f"{d} level"))
                levels[d] = sum(values) / len(values)
            at = where
            seeker, response = rows[0][1][0].strip(), rows[0][1][1].strip()
            _check_same_text(key, [e for d in dimensions for e in tables[d][key]])
            if not seeker and not response:
                raise RecordProblem(EMPTY_DIALOG, "empty dialog")
            if not seeker:
                raise RecordProblem(MISSING_FIELD, "missing field 'seeker_post' (empty cell)")
            if not response:
                raise RecordProblem(NO_BOT_REPLY, "empty response_post: no reply to rate")
        except RecordProblem as ex:
            report.problem(at, ex.kind, ex.detail)
            continue
        repeats = max(len(tables[d][key]) for d in dimensions)
        if repeats > 1:
            repeated += repeats - 1
        metadata: dict[str, Any] = {
            RATING_SCOPE_KEY: "reply",
            "dimension": dimension,
            "levels": levels,
            "sp_id": key[0],
            "rp_id": key[1],
        }
        if repeats > 1:
            metadata["repeated_rows"] = repeats
        rating = sum(levels.values())
        yield where, DialogRecord(f"epitome-{key[0]}-{key[1]}",
                                  [Turn("user", seeker), Turn("bot", response)],
                                  rating, scale, metadata)  # fmt: skip
    if repeated:
        report.exclude(REPEATED, repeated)
        report.note(
            f"{repeated} repeated (sp_id, rp_id) row(s) folded into one sample per pair; "
            "where their levels differ the level is their mean"
        )
