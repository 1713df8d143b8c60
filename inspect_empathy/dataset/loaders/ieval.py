"""``ieval``: iEval (SIGDIAL 2022, ``ieval_data.json``).

A JSON list of tasks; each has a ``positive`` and a ``negative`` EmpatheticDialogues
situation, and for each of those four chatbot conversations (``Pink``, ``Purple``,
``Yellow``, ``Green``) with a ``chat_log`` ("- " prefixed lines, user first,
alternating) and the chatting person's 1-5 ratings, among them ``EU`` (the bot
understood my emotions) and ``ER`` (it responded appropriately). One sample per
conversation, label the mean of EU and ER (``label: EU`` or ``label: ER`` for one of
them; then only that rating is required). The rating is for the whole conversation, and
the metadata says so (``rating_scope: conversation``). Sample ids:
``ieval-<task>-<pos|neg>-<bot>``.

Every task chatted with the same bots: the bots of a file are the object-valued entries
seen in any task (``BOTS`` as published), and a task side lacking one of them is a
problem naming the task and the bot, never a silently smaller task. An empty chat log
line (``- ``) is an empty turn, a problem too.

Each task is one participant, and each conversation was rated by that one person only:
EU and ER are two questions to the same rater, not two raters, so iEval has no
rater-to-rater agreement (no human ceiling) and the ``ratings:`` key is refused.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...dialogs import RATING_SCOPE_KEY, DialogRecord, Turn, ends_with_bot
from ...errors import DatasetError
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
BOTS = ("Pink", "Purple", "Yellow", "Green")
"""The four bots of iEval as published; a file's bots are those its tasks hold."""
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
                _close(turns, parts)
            parts = [line[2:].strip()]
        elif parts:
            parts.append(line.strip())  # a line break inside a message
        elif line.strip():
            raise RecordProblem(BAD_VALUE, f"chat_log line {line[:40]!r} does not start with '- '")
    if parts:
        _close(turns, parts)
    return turns


def _close(turns: list[Turn], parts: list[str]) -> None:
    """Append the turn read from ``parts``; an empty one (a bare ``- `` line) is a problem."""
    content = "\n".join(parts)
    if not content.strip():
        raise RecordProblem(BAD_VALUE, f"turn {len(turns) + 1} has empty content")
    turns.append(Turn("user" if len(turns) % 2 == 0 else "bot", content))


def file_bots(data: list[Any]) -> list[str]:
    """The bots of an iEval file: every object-valued entry of any task side, in the order
    first seen (Pink, Purple, Yellow, Green as published)."""
    seen: dict[str, None] = {}
    for task in data:
        if not isinstance(task, dict):
            continue
        for polarity in POLARITIES:
            side = task.get(polarity)
            if isinstance(side, dict):
                seen.update((name, None) for name, value in side.items() if isinstance(value, dict))
    return list(seen)


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
    expected = file_bots(data)
    if expected and set(expected) != set(BOTS):
        report.note(
            f"{path}: the tasks hold the bots {', '.join(expected)} (iEval as published: "
            f"{', '.join(BOTS)}); each task side must hold all of them"
        )
    one_rating = 0  # conversations without the rating the label does not need
    for index, task in enumerate(data):
        if not isinstance(task, dict):
            report.problem(f"{path}: task {index}", BAD_VALUE, "task is not an object")
            continue
        part = task.get("part", index)
        task_id = str(part)
        # a task whose part is not its list position is named by both, so that two tasks
        # with the same part read apart
        task_name = task_id if part == index else f"{task_id} (list index {index})"
        for polarity, short in POLARITIES.items():
            side = task.get(polarity)
            where = f"{path}: task {task_name} {polarity}"
            if not isinstance(side, dict):
                report.problem(where, MISSING_FIELD, f"missing field {polarity!r}")
                continue
            bots = [(name, value) for name, value in side.items() if isinstance(value, dict)]
            if not bots:
                report.problem(where, MISSING_FIELD, "no bot conversations")
            else:
                _check_bots(side, expected, where, report)
            for bot, conversation in bots:
                record_id = f"ieval-{task_id}-{short}-{bot.lower()}"
                try:
                    record = _record(record_id, conversation, side, task_id, polarity, bot, label)
                except RecordProblem as ex:
                    report.problem(f"{where} {bot}", ex.kind, ex.detail)
                    continue
                if label != "mean" and _other(label) not in record.metadata:
                    one_rating += 1
                yield f"{where} {bot}", record
    if one_rating:
        report.note(
            f"{one_rating} conversation(s) without an {_other(label)} rating loaded "
            f"(label {label} needs only {label})"
        )


def _check_bots(side: dict[str, Any], expected: list[str], where: str, report: LoadReport) -> None:
    """A problem for each of the file's bots that this task side lacks (or holds as a
    non-object): every participant chatted with every bot."""
    for bot in expected:
        if bot not in side:
            report.problem(
                f"{where} {bot}",
                MISSING_FIELD,
                f"missing field {bot!r}: no {bot} bot conversation "
                f"(the file's bots: {', '.join(expected)})",
            )
        elif not isinstance(side[bot], dict):
            report.problem(f"{where} {bot}", BAD_VALUE, f"{bot!r} is not a bot conversation object")


def _other(label: str) -> str:
    return "ER" if label == "EU" else "EU"


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
            if label in ("mean", key):  # only the chosen label's rating is required
                raise RecordProblem(MISSING_FIELD, f"missing field {key!r}")
            continue  # left out of the metadata; the load notes count it
        scores[key] = parse_rating(conversation[key], SCALE, key)
    rating = (scores["EU"] + scores["ER"]) / 2 if label == "mean" else scores[label]
    metadata: dict[str, Any] = {
        RATING_SCOPE_KEY: "conversation",
        "rating_label": "mean of EU and ER" if label == "mean" else label,
        **scores,
        "task": task_id,
        "polarity": polarity,
        "bot": bot,
    }
    for source, key in (("emotion", "emotion"), ("prompt", "situation"), ("conv_id", "ed_conv_id")):
        if side.get(source) is not None:
            metadata[key] = side[source]
    return DialogRecord(record_id, turns, rating, SCALE, metadata)
