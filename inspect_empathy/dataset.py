"""Datasets: the bundled reference set and dialog files mapped to Inspect samples."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Dataset, MemoryDataset

from ._rubric import Turn, merge_consecutive
from .dialogs import DialogRecord, record_to_sample

BUNDLED: dict[str, str] = {"default": "empathy_reference.jsonl"}
"""Bundled datasets by name, files in the project's ``datasets/`` folder."""

USER_ROLES = {"user", "human", "seeker", "speaker", "customer"}
BOT_ROLES = {"assistant", "bot", "ai", "chatbot", "supporter", "listener", "agent"}


class DatasetError(ValueError):
    """A dataset could not be loaded; the message lists every problem found."""


def bundled_path(name: str) -> Path:
    """Path of a bundled dataset, in a wheel install or in a source checkout."""
    if name not in BUNDLED:
        raise DatasetError(f"no bundled dataset {name!r} (bundled: {', '.join(BUNDLED)})")
    filename = BUNDLED[name]
    installed = Path(str(files("inspect_empathy"))) / "_bundled" / filename
    checkout = Path(__file__).resolve().parent.parent / "datasets" / filename
    for path in (installed, checkout):
        if path.is_file():
            return path
    raise DatasetError(
        f"bundled dataset {name!r} is missing: looked for {installed} and {checkout}"
    )


def parse_role(label: Any, where: str) -> str:
    role = str(label).strip().lower()
    if role in USER_ROLES:
        return "user"
    if role in BOT_ROLES:
        return "bot"
    raise DatasetError(f"{where}: unknown role {label!r}")


def record_from_json(obj: Any, where: str) -> DialogRecord:
    """A dialog record from one JSON object (``turns`` or OpenAI-style ``messages``)."""
    if not isinstance(obj, dict):
        raise DatasetError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    if "id" not in obj:
        raise DatasetError(f"{where}: missing field 'id'")
    turns_field = "turns" if "turns" in obj else "messages" if "messages" in obj else None
    if turns_field is None:
        raise DatasetError(f"{where}: missing field 'turns' (or 'messages')")
    raw_turns = obj[turns_field]
    if not isinstance(raw_turns, list) or not raw_turns:
        raise DatasetError(f"{where}: empty dialog")
    turns: list[Turn] = []
    for index, turn in enumerate(raw_turns):
        if not isinstance(turn, dict) or "role" not in turn or "content" not in turn:
            raise DatasetError(f"{where}: turn {index} needs 'role' and 'content'")
        if str(turn["role"]).lower() == "system":
            continue
        role = parse_role(turn["role"], f"{where}: turn {index}")
        content = turn["content"]
        if not isinstance(content, str) or not content.strip():
            raise DatasetError(f"{where}: turn {index} has empty content")
        turns.append(Turn(role, content))  # type: ignore[arg-type]
    turns = merge_consecutive(turns)
    if not turns or turns[-1].role != "bot":
        raise DatasetError(f"{where}: dialog does not end with a bot turn")
    rating = obj.get("rating")
    if rating is not None and (isinstance(rating, bool) or not isinstance(rating, int | float)):
        raise DatasetError(f"{where}: rating {rating!r} is not a number")
    scale = obj.get("scale", [1, 5])
    metadata = obj.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise DatasetError(f"{where}: metadata must be an object")
    record = DialogRecord(
        id=str(obj["id"]),
        turns=turns,
        rating=float(rating) if rating is not None else None,
        scale=(float(scale[0]), float(scale[1])),
        metadata=dict(metadata),
    )
    if record.rating is not None and not (record.scale[0] <= record.rating <= record.scale[1]):
        raise DatasetError(f"{where}: rating {rating} is outside the scale {scale[0]}-{scale[1]}")
    return record


def read_jsonl(path: Path) -> list[DialogRecord]:
    """Dialog records from a JSONL file; every bad line is reported, none dropped."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as ex:
        raise DatasetError(f"{path}: cannot read file: {ex}") from ex
    records: list[DialogRecord] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as ex:
            problems.append(f"{where}: bad JSON: {ex.msg} (column {ex.colno})")
            continue
        try:
            record = record_from_json(obj, where)
        except DatasetError as ex:
            problems.append(str(ex))
            continue
        if record.id in seen:
            problems.append(
                f"{where}: duplicate id {record.id!r} (first on line {seen[record.id]})"
            )
            continue
        seen[record.id] = number
        records.append(record)
    if problems:
        raise DatasetError(problem_report(path, problems))
    if not records:
        raise DatasetError(f"{path}: no dialogs")
    return records


def problem_report(path: Path | str, problems: list[str], limit: int = 20) -> str:
    """One error message listing the first ``limit`` problems and how many there were."""
    head = f"{path}: {len(problems)} invalid record(s)"
    shown = "\n".join(f"  - {p}" for p in problems[:limit])
    more = f"\n  ... and {len(problems) - limit} more" if len(problems) > limit else ""
    return f"{head}\n{shown}{more}"


def load_dialogs(
    source: str | Path = "default",
    cut_reply: bool = False,
    shuffle: bool = False,
    seed: int | None = None,
) -> Dataset:
    """Load dialogs (a bundled name or a JSONL file) as an Inspect dataset."""
    path = bundled_path(str(source)) if str(source) in BUNDLED else Path(source)
    if not path.exists():
        raise DatasetError(f"{path}: no such file (bundled datasets: {', '.join(BUNDLED)})")
    records = read_jsonl(path)
    samples = [record_to_sample(r, cut_reply=cut_reply) for r in records]
    dataset = MemoryDataset(samples, name=path.stem, location=str(path))
    if shuffle:
        dataset.shuffle(seed=seed)
    return dataset
