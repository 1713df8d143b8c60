"""``ieval``: iEval (SIGDIAL 2022, ``ieval_data.json``).

A JSON list of tasks; each has a ``positive`` and a ``negative`` EmpatheticDialogues
situation, and for each of those four chatbot conversations (``Pink``, ``Purple``,
``Yellow``, ``Green``) with a ``chat_log`` ("- " prefixed lines, user first,
alternating) and the chatting person's 1-5 ratings, among them ``EU`` (the bot
understood my emotions) and ``ER`` (it responded appropriately). One sample per
conversation, label the mean of EU and ER (``label: EU`` or ``label: ER`` for one of
them). The rating is for the whole conversation, and the metadata says so
(``rating_scope: conversation``). Sample ids: ``ieval-<task>-<pos|neg>-<bot>``.

Each task is one participant, and each conversation was rated by that one person only:
EU and ER are two questions to the same rater, not two raters, so iEval has no
rater-to-rater agreement (no human ceiling) and the ``ratings:`` key is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..dialogs import RATING_SCOPE_KEY, DialogRecord, Turn, ends_with_bot
from ..errors import DatasetError
from ._options import check_keys
from ._problems import (
    BAD_VALUE,
    EMPTY_DIALOG,
    MISSING_FIELD,
    NO_BOT_REPLY,
    LoadReport,
    Located,
    RecordProblem,
)
from ._ratings import parse_rating
from ._transcript import split_lines
from .jsonl import parse_json_file

FORMAT = "ieval"
KEYS = ("label",)
LABELS = ("mean", "EU", "ER")
POLARITIES = {"positive": "pos", "negative": "neg"}
SCALE = (1.0, 5.0)
ONE_RATER = (
    "ieval: 'ratings' does not apply: each conversation was rated by one person (the "
    "participant who chatted); EU and ER are two of that person's questions, not two raters. "
    "Use 'label: EU', 'label: ER' or 'label: mean'"
)


def looks_like(data: Any) -> bool:
    """A parsed JSON document in iEval's shape."""
    return (
        isinstance(data, list)
        and bool(data)
        and isinstance(data[0], dict)
        and "positive" in data[0]
        and "negative" in data[0]
    )


def parse_chat_log(text: str) -> list[Turn]:
    """Turns from an iEval chat log: ``- `` opens a turn, user first, then alternating."""
    turns: list[Turn] = []
    parts: list[str] = []
    for line in split_lines(text):
        if line.startswith("- ") or line == "-":
            if parts:
                turns.append(Turn("user" if len(turns) % 2 == 0 else "bot", "\n".join(parts)))
            parts = [line[2:].strip()]
        elif parts:
            parts.append(line.strip())  # a line break inside a message
        elif line.strip():
            raise RecordProblem(BAD_VALUE, f"chat_log line {line[:40]!r} does not start with '- '")
    if parts:
        turns.append(Turn("user" if len(turns) % 2 == 0 else "bot", "\n".join(parts)))
    return turns


def load_ieval(
    path: Path, report: LoadReport, data: Any = None, **mapping: Any
) -> Iterator[Located]:
    """Samples from the iEval JSON, one per rated bot conversation."""
    if "ratings" in mapping:
        raise DatasetError(ONE_RATER)
    check_keys(FORMAT, mapping, KEYS)
    label = str(mapping.get("label", "mean"))
    if label not in LABELS:
        raise DatasetError(f"ieval: label must be one of {', '.join(LABELS)}, not {label!r}")
    if data is None:
        data = parse_json_file(path, report)
        if data is None:
            return
    if not isinstance(data, list):
        raise DatasetError(f"{path}: not an iEval file: expected a JSON list of tasks")
    for index, task in enumerate(data):
        if not isinstance(task, dict):
            report.problem(f"{path}: task {index}", BAD_VALUE, "task is not an object")
            continue
        part = task.get("part", index)
        task_id = str(part)
        for polarity, short in POLARITIES.items():
            side = task.get(polarity)
            where = f"{path}: task {task_id} {polarity}"
            if not isinstance(side, dict):
                report.problem(where, MISSING_FIELD, f"missing field {polarity!r}")
                continue
            bots = [(name, value) for name, value in side.items() if isinstance(value, dict)]
            if not bots:
                report.problem(where, MISSING_FIELD, "no bot conversations")
            for bot, conversation in bots:
                record_id = f"ieval-{task_id}-{short}-{bot.lower()}"
                try:
                    record = _record(record_id, conversation, side, task_id, polarity, bot, label)
                except RecordProblem as ex:
                    report.problem(f"{where} {bot}", ex.kind, ex.detail)
                    continue
                yield f"{where} {bot}", record


def _record(
    record_id: str,
    conversation: dict[str, Any],
    side: dict[str, Any],
    task_id: str,
    polarity: str,
    bot: str,
    label: str,
) -> DialogRecord:
    log = conversation.get("chat_log")
    if log is None:
        raise RecordProblem(MISSING_FIELD, "missing field 'chat_log'")
    if not isinstance(log, str) or not log.strip():
        raise RecordProblem(EMPTY_DIALOG, "empty dialog")
    turns = parse_chat_log(log)
    if not turns:
        raise RecordProblem(EMPTY_DIALOG, "empty dialog")
    if not ends_with_bot(turns):
        raise RecordProblem(NO_BOT_REPLY, "dialog does not end with a bot turn")
    scores: dict[str, float] = {}
    for key in ("EU", "ER"):
        if conversation.get(key) is None:
            raise RecordProblem(MISSING_FIELD, f"missing field {key!r}")
        scores[key] = parse_rating(conversation[key], SCALE, key)
    rating = (scores["EU"] + scores["ER"]) / 2 if label == "mean" else scores[label]
    metadata: dict[str, Any] = {
        RATING_SCOPE_KEY: "conversation",
        "rating_label": "mean of EU and ER" if label == "mean" else label,
        "EU": scores["EU"],
        "ER": scores["ER"],
        "task": task_id,
        "polarity": polarity,
        "bot": bot,
    }
    for source, key in (("emotion", "emotion"), ("prompt", "situation"), ("conv_id", "ed_conv_id")):
        if side.get(source) is not None:
            metadata[key] = side[source]
    return DialogRecord(record_id, turns, rating, SCALE, metadata)
