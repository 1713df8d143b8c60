"""Reading Inspect logs into one row per judge and dialog.

Every log kind is read: judge-mode logs (the model under evaluation judges),
response-mode logs (a grader rates the model's reply), logs re-scored with
``inspect score`` (the grader named in each score's metadata) and panels (one
row per panel member, from the score's ``judges``, plus the panel itself).

A log's dialogs are identified by content (a hash of sample ids and the dialogs,
or in response mode the judged replies), not by file name: logs over different
dialogs are never joined, and the ones set apart are listed with the reason.
"""

from __future__ import annotations

import glob
import hashlib
import math
import multiprocessing as mp
import os
import re
import sys
import urllib.parse
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspect_ai.log import (
    EvalLog,
    EvalSampleSummary,
    list_eval_logs,
)

from .._util.file_kind import file_problem
from .._util.usage import (
    Key,
    Tally,
    member_model,
    model_calls,
    own_output,
    panel_name,
    score_judge,
    score_tally,
    usage_tally,
)
from ..dialogs import HUMAN_KEY, LABELLED_INPUT_KEY, reply_words, unlabelled_text
from ..dialogs import rater_ratings as dialog_rater_ratings
from ..judge._rubric import rubric_label
from ..stats.metrics import UNCALIBRATED_KEY
from ._logged import READERS, LoggedSample, read_header
from .checks import (
    LogProblem,
    PartRecords,
    Record,
    off_scale,
    one_record_each,
    record,
    record_once,
    same_ratings,
    unfinished_reason,
)
from .comparison import SCORER, CompareError, LogSource

if TYPE_CHECKING:
    import pandas as pd

JUDGE_MODE = "judge"
RESPONSE_MODE = "response"
HEADER_KEYS = (
    "key", "log", "mode", "fingerprint", "cot", "rubric", "asked_method", "dataset", "created",
    "reply_model",
)  # fmt: skip
"""Log header columns copied onto each of its rows."""
RUBRIC_END = "\n\n\nEvaluation Form"
"""Where the dialog ends inside a rendered rubric prompt (``-T input=prompt``)."""


@dataclass
class LoadedScores:
    """What ``load_scores`` read: the compared rows, one row per log, warnings."""

    samples: pd.DataFrame
    logs: pd.DataFrame
    warnings: list[str]
    dataset: str
    replies: pd.DataFrame | None = None
    """Response mode: mean score per reply model and grader, over every log read."""
    reply_scores: pd.DataFrame | None = None
    """Response mode: each reply model's score per dialog and grader (``replying``)."""
    reply_spent: pd.DataFrame | None = None
    """Response mode: what each reply model spent, per dataset and grader of its logs
    (``replying.reply_spending``)."""


def find_logs(sources: Iterable[LogSource]) -> list[str]:
    """Log files named by ``sources``, each as a plain absolute path: log files, folders and
    eval-set folders (recursive), ``file://`` addresses and glob patterns (``logs/*.eval``).

    However a log is named, it comes back as the same path, so every log is read the same
    way (Inspect lists a folder's logs as ``file://`` addresses: they are turned into paths).
    """
    found: list[str] = []
    sources = list(sources)
    for source in sources:
        for path in _named(source):
            if path.is_dir():
                names = [
                    local_path(info.name) for info in list_eval_logs(str(path), recursive=True)
                ]
                found.extend(sorted(str(Path(name).resolve()) for name in names))
            else:
                found.append(str(path.resolve()))
    unique = list(dict.fromkeys(found))
    if not unique:
        shown = ", ".join(str(s) for s in sources)
        raise CompareError(f"no Inspect logs (.eval or .json) found in {shown}")
    return unique


GLOB_CHARACTERS = frozenset("*?[")


def _named(source: LogSource) -> list[Path]:
    """The files and folders one source names: itself, or a glob pattern's matches."""
    text = os.fspath(source)
    path = Path(local_path(text))
    if path.is_dir() or path.is_file():
        return [path]
    if path.exists():  # a FIFO, device or socket: refused unread, saying what it is
        raise CompareError(f"{source}: {file_problem(path)[1]}")
    if GLOB_CHARACTERS & set(text) and "://" not in text:
        matches = sorted(glob.glob(text, recursive=True))
        logs = [Path(m) for m in matches if Path(m).is_dir() or m.endswith((".eval", ".json"))]
        if not logs:
            raise CompareError(f"{source}: the pattern matches no log file or folder")
        return logs
    raise CompareError(f"{source}: no such log file or folder")


def local_path(location: str) -> str:
    """A local log location as a path: ``file://`` addresses (Inspect's, or percent-encoded
    ones) become paths; anything else is returned as it is."""
    if not location.startswith("file://"):
        return location
    path = location[len("file://") :]
    if path.startswith("localhost/"):
        path = path[len("localhost") :]
    if not path.startswith("/"):
        raise CompareError(f"{location}: not a local file:// address")
    if not os.path.exists(path) and os.path.exists(urllib.parse.unquote(path)):
        path = urllib.parse.unquote(path)  # a percent-encoded address (file:///a%20b/x.eval)
    return path


def display_path(location: str) -> str:
    """A log location as a plain path (without ``file://``)."""
    return location[len("file://") :] if location.startswith("file://") else location


# --- the log header -----------------------------------------------------------------------


def is_empathy_scorer(name: str) -> bool:
    """Whether a score name is the empathy scorer's (also ``pkg/empathy_scorer``, ``..1``)."""
    base = name.rsplit("/", 1)[-1]
    suffix = base[len(SCORER) :].lstrip("_-") if base.startswith(SCORER) else None
    return base == SCORER or bool(suffix and suffix.isdigit())


def _scorer_spec(log: EvalLog) -> Any:
    for scorer in log.eval.scorers or []:
        if is_empathy_scorer(scorer.name):
            return scorer
    return None


def has_empathy_scores(log: EvalLog) -> bool:
    """Whether the log was scored by the empathy scorer (in the task or re-scored later)."""
    if _scorer_spec(log) is not None:
        return True
    return any(is_empathy_scorer(s.name) for s in (log.results.scores if log.results else []))


def model_name(config: Any) -> str:
    """A model (or a list of them, a panel) from a log's model role or scorer option."""
    if isinstance(config, list):
        return panel_name(model_name(c) for c in config)
    if isinstance(config, dict):
        return str(config.get("model", config))
    return str(getattr(config, "model", config))


def _options(log: EvalLog) -> dict[str, Any]:
    scorer = _scorer_spec(log)
    return dict(scorer.options or {}) if scorer is not None else {}


def log_mode(log: EvalLog) -> str:
    """``judge`` when the model under evaluation judged the dataset's replies, else ``response``."""
    if _options(log).get("from_output") or (log.eval.metadata or {}).get("mode") == JUDGE_MODE:
        return JUDGE_MODE
    return RESPONSE_MODE


def judge_model(log: EvalLog) -> str:
    """The log's judge: the model under evaluation in judge mode, else the bound grader.

    Scores that name their grader (``grader`` in the score metadata) override this.
    """
    options = _options(log)
    if log_mode(log) == JUDGE_MODE:
        return log.eval.model
    if options.get("model"):
        return model_name(options["model"])
    role = options.get("model_role", "grader")
    if isinstance(role, dict):  # a ModelRole serialised in the log: {"name": ..., ...}
        role = role.get("name", "grader")
    bound = (log.eval.model_roles or {}).get(str(role))
    if bound:
        return model_name(bound)
    return log.eval.model


def _cot(log: EvalLog) -> bool:
    return bool(_options(log).get("cot"))


def _rubric(log: EvalLog) -> str:
    """The rubric's name (``seed`` unless the run named a variant), with its content hash
    where the log records one: two files of one name are two rubrics."""
    identity = (log.eval.metadata or {}).get("rubric")
    if isinstance(identity, dict) and identity.get("name"):
        return rubric_label(identity)
    return str(_options(log).get("rubric") or "seed")


def _method(log: EvalLog) -> str:
    return str(_options(log).get("method") or "auto")


# --- samples ------------------------------------------------------------------------------


def _words(text: str) -> str:
    return " ".join(text.split())


def dialog_content(input: str | Sequence[Any], labelled: bool = False) -> str:
    """The judged dialog in one canonical form, whatever the judge-mode input.

    ``input`` is a logged sample's input: messages (Inspect's, or their JSON as an
    ``.eval`` file holds them) give ``user:`` / ``assistant:`` lines (consecutive
    same-side turns joined; ``labelled``: a response-mode input whose messages open with
    who speaks, `dialogs.LABELLED_INPUT_KEY`, read without the labels); a rendered rubric
    prompt, or a rendered dialog on its own (the default ``-T input=conversation``), gives
    the same from its ``USER:`` / ``BOT:`` lines, so logs of one dataset match whichever
    ``-T input`` made them.
    """
    lines: list[list[str]] = []
    if isinstance(input, str):
        text = input
        if text.startswith(("USER: ", "BOT: ")) and RUBRIC_END not in text:
            start, end = -1, len(text)
        else:
            start = text.find("\nUSER: ")
            end = text.rfind(RUBRIC_END)
            if start < 0 or end < start:
                return "text:" + _words(text)
        for line in text[start + 1 : end].split("\n"):
            side = {"USER: ": "user", "BOT: ": "bot"}.get(line[: line.find(": ") + 2], "")
            body = line.partition(": ")[2] if side else line
            if side and (not lines or lines[-1][0] != side):
                lines.append([side, body])
            elif lines:
                lines[-1][1] += " " + body
    else:
        for message in input:
            role, text = _role_text(message)
            if role not in ("user", "assistant"):
                continue
            if labelled:
                text = unlabelled_text(role, text)
            side = "user" if role == "user" else "bot"
            if lines and lines[-1][0] == side:
                lines[-1][1] += " " + text
            else:
                lines.append([side, text])
    return "\n".join(f"{side}: {_words(body)}" for side, body in lines)


def _role_text(message: Any) -> tuple[str, str]:
    """A message's role and text (``ChatMessage.text``), from Inspect's object or its
    logged JSON."""
    if not isinstance(message, dict):
        return message.role, message.text
    content = message.get("content")
    if isinstance(content, str):
        return str(message.get("role")), content
    parts = [
        str(part.get("text", ""))
        for part in content or []
        if isinstance(part, dict) and part.get("type") == "text"
    ]
    return str(message.get("role")), "\n".join(parts)


def _float(value: Any) -> float:
    if isinstance(value, bool) or value is None:
        return math.nan
    try:
        number = float(value)
    except (TypeError, ValueError):
        return math.nan
    return number  # +-inf is kept: ``checks.off_scale`` names it


def _human(sample: LoggedSample, score_metadata: dict[str, Any] | None) -> float:
    for source in (sample.metadata, score_metadata or {}):
        value = source.get(HUMAN_KEY)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return _float(value)
    return math.nan


def rater_ratings(sample: EvalSampleSummary | LoggedSample) -> dict[str, float] | None:
    """Each rater's rating on 1-5 for a logged sample (see `dialogs.rater_ratings`)."""
    return dialog_rater_ratings(sample.metadata or {}, sample.id)


def _reply_words(sample: LoggedSample) -> float:
    """Words in the dialog's last bot reply (the one judged), if the input ends with one:
    the sample's ``reply_words``, else counted in the sample's input."""
    words = sample.metadata.get("reply_words")
    if isinstance(words, int | float) and not isinstance(words, bool):
        return float(words)
    return input_reply_words(sample.input)


def input_reply_words(input: str | Sequence[Any]) -> float:
    """Words in the last message of a logged input when it is the bot's (NaN for a text
    input or one ending on the user)."""
    if isinstance(input, str):
        return math.nan
    for message in reversed(input):
        role, text = _role_text(message)
        if role == "assistant":
            return float(reply_words(text))
        if role == "user":
            return math.nan
    return math.nan


def _last_reply(dialog: str, bot: str = "bot: ", user: str = "user: ") -> str | None:
    """The rated reply: the dialog's last turn when it is the bot's (``dialog_content``'s
    ``bot:`` / ``user:`` lines, or a rendered dialog's ``BOT:`` / ``USER:`` lines)."""
    text = "\n" + dialog
    start = text.rfind("\n" + bot)
    if start < 0 or text.rfind("\n" + user) > start:
        return None
    return text[start + 1 + len(bot) :].strip() or None


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


COST_COLUMNS = ("calls", "input_tokens", "output_tokens", "reasoning_tokens")
"""A judge's calls and tokens in one sample (`_util.usage`), per row."""
CACHE_COLUMNS = ("cache_read_tokens", "cache_write_tokens")
"""Of the input tokens, those read from and written to the provider's prompt cache (priced
apart where the price file says so)."""


def _spent(tally: Tally) -> tuple[int, int, int, int, int]:
    """A panel seat's (input, output, reasoning, cache read, cache write) tokens."""
    return (tally.input, tally.output, tally.reasoning, tally.cache_read, tally.cache_write)


def _usage_row(
    sample: LoggedSample,
    calls: dict[Key, Tally] | None,
    row: ScoreRow,
    own: bool,
    reply_model: str,
) -> dict[str, Any]:
    """The judge's calls and tokens for one score of one sample (a panel's: its members'
    summed), and ``members_usage`` for a panel (what each seat spent, for its price).

    From the sample's events (`_util.usage.score_tally`): the calls made for this score only
    (``own``: a judge-mode score of the judge's own output also counts the judge's calls
    outside every scorer). Without events, the sample's ``model_usage`` of the model, unless
    it may be the reply model's too, or the model sits twice on the panel (NaN: not told
    apart)."""
    seats = row.members or [row.judge]
    models = [member_model(seat) for seat in seats]
    per_model: dict[str, Tally | None] = {}
    known = bool(calls)
    for index, (seat, model) in enumerate(zip(seats, models, strict=True)):
        place = index + 1 if row.members else row.place
        if known:
            per_model[seat] = score_tally(calls or {}, model, row.name, own, place)
        elif row.shared or models.count(model) > 1:
            per_model[seat] = None
        else:  # no events: the model's usage where it cannot be the reply model's too
            usage = sample.model_usage.get(model)
            per_model[seat] = usage_tally(usage if own or model != reply_model else None)
    if any(t is None for t in per_model.values()):
        unknown = dict.fromkeys(
            (*COST_COLUMNS, *CACHE_COLUMNS, "tokens", "recorded_cost"), math.nan
        )
        return {**unknown, "members_usage": None}
    total = Tally()
    for tally in per_model.values():
        total.add(tally)  # type: ignore[arg-type]
    return {
        "calls": float(total.calls) if known else math.nan,
        "input_tokens": float(total.input),
        "output_tokens": float(total.output),
        "reasoning_tokens": float(total.reasoning),
        "cache_read_tokens": float(total.cache_read),
        "cache_write_tokens": float(total.cache_write),
        "tokens": float(total.input + total.output),
        # what Inspect recorded the calls cost (--model-cost-config), where it priced all
        "recorded_cost": math.nan if total.recorded_cost is None else total.recorded_cost,
        "members_usage": (
            {m: _spent(t) for m, t in per_model.items() if t} if row.members else None
        ),
    }


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _answer(answer: Any, explanation: Any) -> str | None:
    """The judge's answer (its text) and the score's explanation, as one text."""
    parts = [str(p) for p in (answer, explanation) if p not in (None, "")]
    return "\n".join(parts) or None


@dataclass
class ScoreRow:
    """One judge's score of a sample: a single judge's, a panel member's or a panel's."""

    name: str
    """The score's scorer (its span in the sample's events)."""
    judge: str
    value: float
    method: str | None
    reason: str | None
    """Why it is unscored (None when scored)."""
    meta: dict[str, Any]
    answer: str | None
    label: str = ""
    """The judge as compared (`_labelled`; the judge where empty)."""
    place: int | None = None
    """A panel member's seat (1-based)."""
    members: list[str] = field(default_factory=list)
    """A panel's members (the panel's own row)."""
    shared: bool = False
    """A panel member whose model sits on the panel more than once."""


def _score_rows(sample: LoggedSample, default_judge: str) -> list[ScoreRow]:
    """One `ScoreRow` for each empathy score of a sample, and one for each panel member.

    The metadata of a panel member's row is the panel score's with ``uncalibrated``
    removed (a calibration file maps the panel's score, not its members').
    """
    rows = []
    for name, score in sample.scores.items():
        if not is_empathy_scorer(name):
            continue
        meta = dict(score.metadata or {})
        judges = meta.get("judges")
        value = _float(score.value)
        if isinstance(judges, dict) and judges:
            member_meta = {k: v for k, v in meta.items() if k != UNCALIBRATED_KEY}
            members = [str(m) for m in judges]
            models = [member_model(m) for m in members]
            for place, (member, info) in enumerate(zip(members, judges.values(), strict=True)):
                info = info if isinstance(info, dict) else {}
                rows.append(
                    ScoreRow(
                        name,
                        member,
                        _float(info.get("value")),
                        _text(info.get("method")),
                        _text(info.get("unscored_reason")),
                        member_meta,
                        _answer(info.get("raw"), None),
                        place=place + 1,
                        shared=models.count(member_model(member)) > 1,
                    )  # fmt: skip
                )
            reason = _text(meta.get("unscored_reason"))
            rows.append(
                ScoreRow(
                    name,
                    panel_name(members),
                    value,
                    "panel",
                    reason,
                    meta,
                    _text(score.explanation),
                    members=members,
                )  # fmt: skip
            )
            continue
        judge = score_judge(meta, default_judge)
        reason = _text(meta.get("unscored_reason"))
        if reason is None and math.isnan(value):
            reason = _text(score.explanation) or "no score value"
        # response mode: the Score's answer is the reply graded, the grader's words are in
        # its metadata (``grader_answer``)
        answer = _answer(meta.get("grader_answer", score.answer), score.explanation)
        rows.append(ScoreRow(name, judge, value, _text(meta.get("method")), reason, meta, answer))
    return rows


def _own_outputs(log: EvalLog, mode: str) -> dict[str, bool]:
    """For each empathy scorer of the log's results, whether it reads the judge's own
    output (``from_output``: its calls are the judge's answers) rather than asking a grader
    (`_util.usage.own_output`)."""
    results = (log.results.scores if log.results else []) or []
    return {r.name: own_output(r.params, mode == JUDGE_MODE) for r in results}


def _labelled(rows: list[ScoreRow]) -> list[ScoreRow]:
    """The rows with a judge that an earlier scorer of the same sample already has renamed
    ``judge (scorer)``: a log re-scored by the same grader holds two scorings, not two
    epochs."""
    first: dict[str, str] = {}
    for row in rows:
        owner = first.setdefault(row.judge, row.name)
        row.label = row.judge if owner == row.name else f"{row.judge} ({row.name})"
    return rows


ROW_COLUMNS = (
    "id", "epoch", "reply_words", "emotion", "errored", "error", "dialog", "reply",
    *COST_COLUMNS, *CACHE_COLUMNS, "tokens", "recorded_cost", "members_usage", "judge_model",
    "model", "score",
    "method", "unscored_reason", "human", "ratings", "uncalibrated", "content", "answer",
)  # fmt: skip
"""The columns of `read_rows`' rows, in order."""
SHARED_TEXT = ("id", "emotion", "error", "dialog", "reply", "judge_model", "model", "method",
               "unscored_reason", "content")  # fmt: skip
"""Text columns whose values repeat across logs (a dialog judged by every judge): kept once
in memory (`Rows.share`)."""


class Rows(dict[str, list[Any]]):
    """A log's rows, one list per column (`ROW_COLUMNS`); ``pd.DataFrame(rows)`` makes the
    table, `records` gives the rows one by one."""

    def __init__(self) -> None:
        super().__init__((name, []) for name in ROW_COLUMNS)
        self.repeats = ""
        """What the log holds more than once (`checks.Repeats.note`; "" for nothing)."""
        self.replies: list[Tally | None] = []
        """Response mode: what the reply model spent on each sample record (its calls
        outside every empathy scorer; None without events), in record order."""
        self.reply_spent: Tally | None = None
        """Response mode: what the reply model spent on the log's samples, each counted
        once (None where some sample has no events, or in judge mode)."""

    @property
    def count(self) -> int:
        """How many rows."""
        return len(self["id"])

    def append(self, row: dict[str, Any]) -> None:
        """Add one row (a value for every column)."""
        for name in ROW_COLUMNS:
            self[name].append(row[name])

    def records(self) -> Iterator[dict[str, Any]]:
        """Each row as a dict."""
        for values in zip(*self.values(), strict=True):
            yield dict(zip(self.keys(), values, strict=True))

    def drop(self, rows: set[int]) -> None:
        """Remove the rows of these positions."""
        for column in self.values():
            column[:] = [v for i, v in enumerate(column) if i not in rows]

    def share(self, pool: dict[str, str]) -> None:
        """Make equal texts one object, across every log shared through ``pool``."""
        for name in SHARED_TEXT:
            column = self[name]
            column[:] = [pool.setdefault(v, v) if isinstance(v, str) else v for v in column]


class _Unreadable(Exception):
    """A reader could not read the log's samples (its error is the cause)."""


def _readable(reader: Any, path: str) -> Iterator[LoggedSample]:
    """``reader(path)``'s samples; any error while reading them becomes `_Unreadable` (an
    error in what a sample holds, raised while its rows are made, is not one)."""
    try:
        samples = iter(reader(path))
    except Exception as ex:
        raise _Unreadable() from ex
    while True:
        try:
            sample = next(samples)
        except StopIteration:
            return
        except Exception as ex:
            raise _Unreadable() from ex
        yield sample


DIALOGS_KEPT = 150_000
"""Dialogs `_dialog` keeps (a worker process reads several logs of the same dialogs: each
dialog's text is made once); emptied when full."""
_dialogs: dict[str, tuple[str, str | None, str]] = {}


def _dialog(input: str | Sequence[Any], labelled: bool = False) -> tuple[str, str | None, str]:
    """The dialog (`dialog_content`), its rated reply (`_last_reply`) and its content hash:
    kept for a text input, which the next log of the same dialogs holds again."""
    if isinstance(input, str) and input in _dialogs:
        return _dialogs[input]
    dialog = dialog_content(input, labelled)
    made = (dialog, _last_reply(dialog), _hash(dialog)[:16])
    if isinstance(input, str):
        if len(_dialogs) >= DIALOGS_KEPT:
            _dialogs.clear()
        _dialogs[input] = made
    return made


def _read_with(
    reader: Any, path: str, log: EvalLog, whole: bool = False
) -> tuple[Rows, list[Record], list[int]]:
    """Rows of every sample record ``reader`` reads, the records and the record each row
    came from. A record its reader says is the sample's only one is not made whole
    (`checks.record_once`) unless ``whole``."""
    mode = log_mode(log)
    default_judge = judge_model(log)
    reply_model = log.eval.model if mode == RESPONSE_MODE else ""
    own_outputs = _own_outputs(log, mode)
    rows = Rows()
    records: list[Record] = []
    owners: list[int] = []
    for sample in _readable(reader, path):
        records.append(record_once(sample) if sample.once and not whole else record(sample))
        error = sample.error
        dialog, last, content = _dialog(
            sample.input, bool(sample.metadata.get(LABELLED_INPUT_KEY))
        )
        words = _reply_words(sample)
        emotion = _text(sample.metadata.get("emotion"))
        shown_error = error[:200] if error is not None else None
        # the raters rated the dataset's reply: in response mode they are not the reference
        raters = rater_ratings(sample) if mode == JUDGE_MODE else None
        scores = _labelled(_score_rows(sample, default_judge))
        if not scores:
            reason = None if error is not None else "no empathy score"
            scores = [ScoreRow("", default_judge, math.nan, None, reason, {}, None)]
        calls = model_calls(sample.events) if sample.events is not None else None
        if mode == RESPONSE_MODE:
            # the chatbot's calls: the reply model's outside every empathy scorer's span
            rows.replies.append(
                calls.get((reply_model, None, None), Tally()) if calls is not None else None
            )
        content = content if mode == JUDGE_MODE else ""
        owners.extend([len(records) - 1] * len(scores))
        for row in scores:
            meta, value = row.meta, row.value
            own = own_outputs.get(row.name, mode == JUDGE_MODE and not meta.get("grader"))
            own = own and row.method != "panel" and row.place is None
            usage = _usage_row(sample, calls, row, own, reply_model)
            if not math.isnan(value) and meta.get(UNCALIBRATED_KEY) is not None:
                # a log run with -T calibration: compare the judge's own scores (the
                # calibrated columns map them, cross-fitted, once)
                value = _float(meta[UNCALIBRATED_KEY])
            reply, row_words, row_content = last, words, content
            if mode == RESPONSE_MODE:
                judged = meta.get("judged_dialog")
                reply = _last_reply(judged, "BOT: ", "USER: ") if isinstance(judged, str) else None
                graded = f"{dialog}\nreply by {log.eval.model}: " + (
                    _words(judged) if isinstance(judged, str) else ""
                )
                row_content = _hash(graded)[:16]
                # the graded reply is the model's, not in the input: its length for the
                # length-bias diagnostics
                row_words = float(reply_words(reply)) if reply is not None else math.nan
            rows.append(
                usage
                | {
                    "id": sample.id,
                    "epoch": sample.epoch,
                    "emotion": emotion,
                    "errored": error is not None,
                    "error": shown_error,
                    "dialog": dialog,
                    "reply_words": row_words,
                    "judge_model": row.label or row.judge,
                    # the model behind the judge (a panel seat's, a second scoring's)
                    "model": member_model(row.judge),
                    "score": value,
                    "method": row.method,
                    "unscored_reason": None if not math.isnan(value) else row.reason,
                    "human": _human(sample, meta),
                    "ratings": raters,
                    # the judge's own score where a calibration file mapped it (-T calibration)
                    "uncalibrated": _float(meta.get(UNCALIBRATED_KEY, value)),
                    "content": row_content,
                    "reply": reply,
                    "answer": row.answer,
                }
            )
    return rows, records, owners


def read_rows(path: str, log: EvalLog) -> Rows:
    """One row per sample (epoch) and judge of a log; errored samples get a row per judge.

    The samples are read by the first of `_logged.READERS` that reads them all (whatever
    names the log, an ``.eval`` or ``.json`` file is read as plain JSON). A sample recorded
    more than once counts once (`checks.one_record_each`: a re-run's last record, or one of
    identical copies; ``rows.repeats`` says so). LogProblem when the records of a sample
    differ, a sample lies in an epoch the run did not have, or a score or human rating lies
    outside 1-5 (``checks``).
    """
    for _, reader in READERS:
        try:
            rows, records, owners = _read_with(reader, path, log)
            break
        except _Unreadable as ex:  # the next reader; the last one's error is raised
            if reader is READERS[-1][1]:
                raise ex.__cause__ from None  # type: ignore[misc]
    epochs = log.eval.config.epochs or 1
    try:
        repeats = one_record_each(records, epochs)
    except PartRecords:  # a sample recorded under two names: every record made whole
        rows, records, owners = _read_with(reader, path, log, whole=True)
        repeats = one_record_each(records, epochs)
    if repeats.drop:
        rows.drop({i for i, owner in enumerate(owners) if owner in repeats.drop})
    rows.repeats = repeats.note()
    if rows.replies:
        kept = [t for i, t in enumerate(rows.replies) if i not in repeats.drop]
        if all(t is not None for t in kept):
            rows.reply_spent = Tally()
            for tally in kept:
                rows.reply_spent.add(tally)  # type: ignore[arg-type]
    suspect = [
        i
        for i, (score, human) in enumerate(zip(rows["score"], rows["human"], strict=True))
        if not (math.isnan(score) or 1 <= score <= 5) or not (math.isnan(human) or 1 <= human <= 5)
    ]
    if suspect:  # ``checks.off_scale`` says which, within its tolerance
        records = list(rows.records())
        off_scale([records[i] for i in suspect])
    return rows


def fingerprint(rows: Rows) -> str:
    """The content fingerprint of a log's dialogs: a hash over (id, dialog hash) pairs."""
    pairs = sorted(set(zip(rows["id"], rows["content"], strict=True)))
    return _hash("\n".join(f"{i}\t{c}" for i, c in pairs))[:10]


# --- reading many logs --------------------------------------------------------------------


def _header(path: str, log: EvalLog, rows: Rows) -> dict[str, Any]:
    return {
        "eval_id": log.eval.eval_id,
        "task_id": log.eval.task_id,
        "created": log.eval.created,
        "status": log.status,
        "task": log.eval.task,
        "mode": log_mode(log),
        "reply_model": log.eval.model if log_mode(log) == RESPONSE_MODE else "",
        "cot": _cot(log),
        "rubric": _rubric(log),
        "asked_method": _method(log),
        "dataset": log.eval.dataset.name or Path(log.eval.dataset.location or "").stem or "?",
        "fingerprint": fingerprint(rows),
        "log": display_path(log.location or path),
        "set_apart": "",
        "records": rows.repeats,
        "task_version": str(log.eval.task_version).split("+")[0],
        "held": len(set(zip(rows["id"], rows["epoch"], strict=True))),
        "expected": _expected(log),
        **_reply_spent(rows.reply_spent),
    }


REPLY_SPENT = (
    "reply_calls", "reply_input_tokens", "reply_output_tokens", "reply_reasoning_tokens",
    "reply_cache_read_tokens", "reply_cache_write_tokens", "reply_recorded_cost",
)  # fmt: skip
"""A response-mode log's header columns: what its reply model spent on all its samples
(`Rows.reply_spent`; NaN where not known)."""


def _reply_spent(spent: Tally | None) -> dict[str, float]:
    if spent is None:
        return dict.fromkeys(REPLY_SPENT, math.nan)
    cost = spent.recorded_cost
    values = (spent.calls, spent.input, spent.output, spent.reasoning, spent.cache_read,
              spent.cache_write, math.nan if cost is None else cost)  # fmt: skip
    return dict(zip(REPLY_SPENT, map(float, values), strict=True))


def _expected(log: EvalLog) -> int:
    """Samples (epochs included) the run was to produce, from the log header."""
    dataset = log.eval.dataset
    count = len(dataset.sample_ids) if dataset.sample_ids is not None else dataset.samples or 0
    return count * (log.eval.config.epochs or 1)


ReadResult = tuple[dict[str, Any] | None, Rows, str | None]

PARALLEL_BYTES = 20_000_000
"""Total log size above which logs are read by parallel worker processes."""


def read_one(path: str) -> ReadResult:
    """One log's header and rows, or a note saying why it was skipped."""
    shown = display_path(path)
    try:
        log = read_header(path)
        if not has_empathy_scores(log):
            return None, Rows(), f"{shown}: skipped (not scored by {SCORER})"
        rows = read_rows(path, log)
    except LogProblem as ex:
        return None, Rows(), f"{shown}: skipped ({ex})"
    except Exception as ex:  # noqa: BLE001 - any unreadable file is skipped and named
        detail = str(ex).strip().splitlines()[0] if str(ex).strip() else ""
        return None, Rows(), f"{shown}: skipped (unreadable log: {type(ex).__name__}: {detail})"
    if not rows.count:
        if log.status != "success":
            why = unfinished_reason(log.status, 0, _expected(log), shown)
            return None, Rows(), f"{shown}: skipped ({why})"
        return None, Rows(), f"{shown}: skipped (the log has no samples; status {log.status})"
    return _header(path, log, rows), rows, None


def _results(paths: Sequence[str]) -> Iterator[ReadResult]:
    """``read_one`` for each path, in order: in worker processes when the logs are big."""
    workers = min(len(paths), os.cpu_count() or 1)
    size = sum(os.path.getsize(p) for p in paths if os.path.isfile(p))
    if workers < 2 or size < PARALLEL_BYTES or "fork" not in mp.get_all_start_methods():
        yield from map(read_one, paths)
        return
    with ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool:
        yield from pool.map(read_one, paths)


def read_logs(
    paths: Sequence[str], progress: bool = False, frames: bool = False
) -> tuple[list[dict[str, Any]], list[Any], list[str]]:
    """Headers and rows of every readable log scored by the empathy scorer, plus warnings.

    An unreadable log (truncated, empty, not a log), a log without samples or
    without empathy scores is skipped with a warning that names it. Big logs are
    read by one worker process per core. A text that several logs hold (a dialog every
    judge judged) is kept once. Each log's rows are `Rows`, or with ``frames`` a
    DataFrame made as the log arrives (its lists let go column by column).
    """
    from tqdm.auto import tqdm

    headers: list[dict[str, Any]] = []
    all_rows: list[Any] = []
    pool: dict[str, str] = {}
    notes: list[str] = []
    results = _results(paths)
    bar = tqdm(
        results, total=len(paths), desc="reading logs", unit="log", disable=not progress,
        file=sys.stderr,
    )  # fmt: skip
    for header, rows, note in bar:
        if header is None:
            notes.append(str(note))
            continue
        rows.share(pool)
        headers.append(header)
        all_rows.append(_frame(rows) if frames else rows)
    return headers, all_rows, notes


def _frame(rows: Rows) -> pd.DataFrame:
    """``pd.DataFrame(rows)``, emptying the lists as each column is made."""
    import numpy as np
    import pandas as pd

    columns = {}
    for name in list(rows):
        values = rows.pop(name)
        kind = _DTYPES.get(name)
        if name in LONG_TEXT:  # Python strings, each dialog's one object (`Rows.share`)
            columns[name] = pd.Series(np.array(values, dtype=object), dtype=object, copy=False)
        elif kind is not None:  # the type said, not inferred
            columns[name] = pd.Series(np.array(values, dtype=kind), copy=False)
        else:
            columns[name] = pd.Series(values)  # inferred, as pd.DataFrame(rows) would
    return pd.DataFrame(columns, copy=False)


_FLOATS = (
    "reply_words", *COST_COLUMNS, *CACHE_COLUMNS, "tokens", "recorded_cost", "score", "human",
    "uncalibrated",
)  # fmt: skip
_DTYPES = {"epoch": "int64", "errored": "bool", **dict.fromkeys(_FLOATS, "float64")}
"""Columns of one type in every log's rows (`_usage_row`, `_read_with` write floats)."""
LONG_TEXT = ("dialog", "reply", "answer")
"""Columns kept as Python strings (``object``): pandas' own string type would copy each
dialog into every judge's column (a million rows: gigabytes)."""


def _drop_superseded(info: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    """Of several logs of one task id and judges (eval-set retries), keep the newest.

    Complete logs are preferred. A re-scored copy of a log (same task id, other
    judges in its scores) is not a retry and is kept.
    """
    ok = info["status"].astype(str).eq("success")
    order = info.assign(_ok=ok).sort_values(["_ok", "created"], ascending=[False, False])
    keep = ~order.duplicated(["task_id", "_raters"], keep="first")
    for path in order.loc[~keep, "log"]:
        notes.append(f"{path}: skipped (superseded by a newer log of the same task)")
    return order[keep].drop(columns=["_ok", "_raters"]).sort_values("created", kind="stable")


def _choose_group(
    info: pd.DataFrame, rows: pd.DataFrame, dataset: str | None, notes: list[str]
) -> tuple[str, str]:
    """The (mode, fingerprint) group to compare: the one with the most judges, or ``dataset``."""
    groups = info.groupby(["mode", "fingerprint"], sort=False)
    if dataset is not None:
        matches = [
            key
            for key, g in groups
            if dataset in set(g["dataset"]) or str(key[1]).startswith(dataset)
        ]
        if len(matches) != 1:
            found = ", ".join(f"{g['dataset'].iloc[0]}@{k[1]}" for k, g in groups)
            what = "no" if not matches else "more than one"
            raise CompareError(f"{what} dataset matches {dataset!r} (found: {found})")
        return matches[0]
    judges = rows.groupby(["mode", "fingerprint"], sort=False)["judge_model"].nunique()
    dialogs = rows.groupby(["mode", "fingerprint"], sort=False)["id"].nunique()
    ranking = sorted(judges.index, key=lambda k: (-judges[k], -dialogs[k]))
    return ranking[0]


def _set_apart(info: pd.DataFrame, chosen: tuple[str, str], notes: list[str]) -> pd.DataFrame:
    mode, fp = chosen
    info = info.copy()
    label = info.loc[info["fingerprint"] == fp, "dataset"].iloc[0]
    for index, row in info.iterrows():
        if row["_unfinished"]:
            why = unfinished_reason(row["status"], row["held"], row["expected"], row["log"])
        elif (row["mode"], row["fingerprint"]) == chosen:
            continue
        elif row["mode"] != mode:
            rated = "model replies" if row["mode"] == RESPONSE_MODE else "the dataset's replies"
            why = f"{row['mode']}-mode log (it rates {rated}); the compared logs are {mode}-mode"
        elif row["fingerprint"] != fp and row["mode"] == RESPONSE_MODE:
            why = (
                f"it grades other replies (by {row['reply_model']}) or other dialogs "
                f"(content {row['fingerprint']} vs {fp})"
            )
        else:
            why = (
                f"other dialogs: dataset {row['dataset']} has content {row['fingerprint']}, "
                f"the compared {label} has {fp}"
            )
        info.loc[index, "set_apart"] = why
        if row["mode"] == RESPONSE_MODE and mode == RESPONSE_MODE and not row["_unfinished"]:
            # its chatbot is ranked (`reply_models`): only its grader's scores stay apart
            notes.append(f"{row['log']}: its chatbot is ranked; its grader is not among the "
                         f"judges compared ({why})")  # fmt: skip
        else:
            notes.append(f"{row['log']}: set apart, not compared ({why})")
    return info


JUDGE_PARTS = ("rubric", "asked_method", "cot")
"""What, beside the model, makes a judge: two logs of one model that differ in any of these
are two judges, and their labels name what differs."""


def _label_judges(pairs: pd.DataFrame) -> pd.Series:
    """A unique label per (log, judge model): the model, with what differs from the same
    model's other logs (``[rubric=anchored:1a2b3c4d]``, ``[method=samples]``, ``[cot]``)
    and a run number where nothing does."""
    label = pairs["judge_model"].astype(str)
    for part in JUDGE_PARTS:
        if part not in pairs:
            continue
        kinds = pairs.groupby("judge_model")[part].transform("nunique")
        if part == "cot":
            tag = pairs[part].map({True: " [cot]", False: ""})
        else:
            name = "method" if part == "asked_method" else part
            tag = " [" + name + "=" + pairs[part].astype(str) + "]"
        label = label.where(kinds <= 1, label + tag)
    run = pairs.assign(_label=label).groupby("_label").cumcount()
    return label.where(run == 0, label + " #" + (run + 1).astype(str))


def _members_sum(values: pd.Series) -> dict[str, tuple[int, ...]] | None:
    """A panel's per-seat tokens (`_spent`) summed over epochs."""
    total: dict[str, tuple[int, ...]] = {}
    for value in values:
        for model, usage in (value or {}).items():
            before = total.get(model, (0,) * len(usage))
            total[model] = tuple(a + b for a, b in zip(before, usage, strict=True))
    return total or None


def per_dialog(rows: pd.DataFrame) -> pd.DataFrame:
    """Average epochs: one row per judge and dialog, with its status.

    ``status`` is ``scored`` (some epoch has a score), ``errored`` (no score and an
    epoch errored: infrastructure, ``inspect eval-retry`` fixes it) or ``unscored``
    (the judge answered with no usable score).
    """
    import pandas as pd

    if not rows.duplicated(["judge", "id"]).any():
        samples = _one_epoch_each(rows)
    else:
        samples = _epochs_averaged(rows)
    status = pd.Series("unscored", index=samples.index, dtype=object)
    status[samples["errored_epochs"] > 0] = "errored"
    status[samples["score"].notna()] = "scored"
    samples["status"] = status
    samples.loc[samples["status"] == "scored", ["unscored_reason", "error"]] = None
    samples.loc[samples["status"] == "unscored", "error"] = None
    return samples


PER_DIALOG = (
    "judge", "id", "model", "dataset", "score", "method", "human", "ratings", "reply_words",
    "emotion", "tokens", "calls", *COST_COLUMNS[1:], *CACHE_COLUMNS, "recorded_cost",
    "members_usage", "epochs",
    "epoch_scores", "errored_epochs", "error", "unscored_reason", "log", "dialog", "reply",
    "answer",
)  # fmt: skip
"""`per_dialog`'s columns (before ``status``), in order."""


def _one_epoch_each(rows: pd.DataFrame) -> pd.DataFrame:
    """`per_dialog` where each judge has one row per dialog: the rows as they are (what
    `_epochs_averaged` gives for groups of one, without grouping a million rows)."""
    import pandas as pd

    made = {
        "tokens": rows["tokens"].where(~rows["errored"]),
        "epoch_scores": [[score] for score in rows["score"]],
        "errored_epochs": rows["errored"].astype(int),
        "members_usage": [
            {m: tuple(u) for m, u in value.items()} if value else None
            for value in rows["members_usage"]
        ],
        **{c: rows[c].fillna(0.0) for c in (*COST_COLUMNS[1:], *CACHE_COLUMNS)},
        # `per_dialog` clears these by status: copies, so the rows keep theirs
        **{c: rows[c].copy() for c in ("error", "unscored_reason")},
    }
    # one new frame from the columns (assign and a column selection would each copy all)
    columns = {c: made[c] if c in made else rows[c] for c in PER_DIALOG if c != "epochs"}
    samples = pd.DataFrame(
        {c: v if isinstance(v, pd.Series) else pd.Series(v, index=rows.index, dtype=object)
         for c, v in columns.items()},
        copy=False,
    )  # fmt: skip
    samples.insert(PER_DIALOG.index("epochs"), "epochs", 1)
    return samples.reset_index(drop=True)


def _epochs_averaged(rows: pd.DataFrame) -> pd.DataFrame:
    """`per_dialog` by grouping the rows of each judge and dialog."""
    rows = rows.assign(
        _completed_tokens=rows["tokens"].where(~rows["errored"]),
    )
    grouped = rows.groupby(["judge", "id"], sort=False)
    samples = grouped.agg(
        model=("model", "first"),
        dataset=("dataset", "first"),
        score=("score", "mean"),
        method=("method", "first"),
        human=("human", "first"),
        ratings=("ratings", "first"),
        reply_words=("reply_words", "first"),
        emotion=("emotion", "first"),
        tokens=("_completed_tokens", "mean"),
        # what the judge spent on the dialog, every epoch (errored ones too: billed)
        calls=("calls", lambda c: c.sum(min_count=1)),
        input_tokens=("input_tokens", "sum"),
        output_tokens=("output_tokens", "sum"),
        reasoning_tokens=("reasoning_tokens", "sum"),
        cache_read_tokens=("cache_read_tokens", "sum"),
        cache_write_tokens=("cache_write_tokens", "sum"),
        recorded_cost=("recorded_cost", lambda c: c.sum() if c.notna().all() else math.nan),
        members_usage=("members_usage", _members_sum),
        epochs=("epoch", "size"),
        epoch_scores=("score", list),  # every epoch's score (stats/consistency.py reads them)
        errored_epochs=("errored", "sum"),
        error=("error", "first"),
        unscored_reason=("unscored_reason", "first"),
        log=("log", "first"),
        dialog=("dialog", "first"),
        reply=("reply", "first"),
        answer=("answer", "first"),
    ).reset_index()
    return samples[list(PER_DIALOG)]


def load_scores(
    logs: Sequence[LogSource] | LogSource, progress: bool = False, dataset: str | None = None
) -> LoadedScores:
    """Read logs into one row per judge and dialog, one row per log, and warnings.

    Epochs are averaged per dialog. Logs that cannot be read or were not scored
    by the empathy scorer are skipped with a warning; of several logs of one task
    id (eval-set retry) the newest is kept; logs over other dialogs than the
    compared ones (by content, see ``fingerprint``) are set apart and named.
    ``dataset`` picks the compared dialogs by dataset name or fingerprint prefix
    (default: the dialogs with the most judges).
    """
    import pandas as pd

    sources = [logs] if isinstance(logs, str | os.PathLike) else list(logs)
    paths = find_logs(sources)
    headers, all_rows, notes = read_logs(paths, progress=progress, frames=True)
    if not headers:
        shown = "; ".join(notes)
        raise CompareError(
            f"none of the {len(paths)} log(s) could be compared "
            f"(none readable with samples scored by {SCORER}): {shown}"
        )
    info = pd.DataFrame(headers)
    info["key"] = range(len(info))
    info["_raters"] = [",".join(sorted(set(rows["judge_model"]))) for rows in all_rows]
    raters = info.set_index("key")["_raters"]
    info = _drop_superseded(info, notes)
    # a run that did not finish holds part of its dialogs: never joined with the others
    info["_unfinished"] = info["status"].astype(str).ne("success") & (
        info["held"] < info["expected"]
    )
    if info["_unfinished"].all():
        shown = "; ".join(
            f"{r['log']}: {unfinished_reason(r['status'], r['held'], r['expected'], r['log'])}"
            for _, r in info.iterrows()
        )
        raise CompareError(f"no finished log to compare: {'; '.join([shown, *notes])}")
    frames = []
    for _, header in info.iterrows():
        frame = all_rows[int(header["key"])]
        all_rows[int(header["key"])] = None  # the frame goes into `every`: one copy held
        for key in HEADER_KEYS:
            frame[key] = header[key]
        frames.append(frame)
    every = pd.concat(frames, ignore_index=True)
    del frames, all_rows
    finished = every["key"].isin(set(info.loc[~info["_unfinished"], "key"]))
    rows = every if finished.all() else every[finished]
    replies = reply_models(rows)
    from .replying import reply_scores, reply_spending

    per_reply = reply_scores(rows)
    spent = reply_spending(rows, info)
    chosen = _choose_group(info[~info["_unfinished"]], rows, dataset, notes)
    info = _set_apart(info, chosen, notes)
    _name_older_versions(info, notes)
    compared_rows = finished & (every["mode"] == chosen[0]) & (every["fingerprint"] == chosen[1])
    del rows
    parts = every.loc[compared_rows, ["key", "judge_model", *JUDGE_PARTS, "created"]]
    judges = parts.drop_duplicates(["key", "judge_model"])
    judges = judges.sort_values("created", kind="stable").reset_index(drop=True)
    judges["judge"] = _label_judges(judges)
    # each row's judge label, set on `every` in place (a merge would copy every row)
    label = judges.set_index(["key", "judge_model"])["judge"]
    every["judge"] = label.reindex(
        pd.MultiIndex.from_frame(every[["key", "judge_model"]])
    ).to_numpy()
    rows = every if compared_rows.all() else every[compared_rows]
    same_ratings(rows)
    samples = per_dialog(rows)
    compared = info["set_apart"] == ""
    by_log = rows.groupby("key")
    info["judges"] = info["key"].map(by_log["judge"].agg(lambda j: ", ".join(dict.fromkeys(j))))
    info["judges"] = info["judges"].fillna(info["key"].map(raters)).fillna("")
    counts = every.drop_duplicates(["key", "id", "epoch"]).groupby("key")
    info["samples"] = info["key"].map(counts.size()).fillna(0).astype(int)
    info["errored"] = info["key"].map(counts["errored"].sum()).fillna(0).astype(int)
    for _, row in info[compared & info["status"].astype(str).ne("success")].iterrows():
        if row["errored"] == 0:
            notes.append(
                f"{row['log']}: status {row['status']} although it holds every sample: "
                "compared; the run did not close the log"
            )
    for _, row in info[compared & (info["errored"] > 0)].iterrows():
        notes.append(
            f"{row['log']}: {row['errored']} sample(s) errored (status {row['status']}; "
            f"infrastructure errors, not the judge): retry them with "
            f"`inspect eval-retry {row['log']}`"
        )
    label = f"{info.loc[compared, 'dataset'].iloc[0]}@{chosen[1]}"
    columns = [
        "judges", "mode", "reply_model", "dataset", "fingerprint", "task", "status", "cot",
        "samples", "errored", "created", "log", "set_apart", "records",
    ]  # fmt: skip
    info = info.sort_values("created", kind="stable").reset_index(drop=True)
    return LoadedScores(
        samples=samples, logs=info[columns], warnings=notes, dataset=label, replies=replies,
        reply_scores=per_reply, reply_spent=spent,
    )  # fmt: skip


def _version_key(version: str) -> tuple[int, ...]:
    """A task version's order: its numbers (``1.3.0`` -> (1, 3, 0); none -> (0,))."""
    parts = [int(p) for p in re.findall(r"\d+", version)]
    return tuple(parts) or (0,)


def _name_older_versions(info: pd.DataFrame, notes: list[str]) -> None:
    """Name each log written by an older task version than the others (the part of
    ``eval.task_version`` before ``+``, the input pins after it left out): its judge input or
    headline may differ (`tasks.TASK_VERSION`). In a warning, and in the Logs section's
    compared cell. Logs all of one version are not named."""
    from ..tasks import TASK_VERSION

    versions = set(info["task_version"])
    if len(versions) < 2:
        return
    newest = max(versions, key=_version_key)
    for index, row in info.iterrows():
        if row["task_version"] == newest:
            continue
        said = (f"task version {row['task_version'] or '?'}, older than {newest}"
                + ("" if newest == TASK_VERSION else f"; this plugin writes {TASK_VERSION}")
                + ": its judge input or headline may differ from the newer logs'")  # fmt: skip
        info.loc[index, "records"] = "; ".join(p for p in (row["records"], said) if p)
        notes.append(
            f"{row['log']}: {said}; compared beside them (compare the logs of one version "
            "alone to compare like with like)"
            if row["set_apart"] == ""
            else f"{row['log']}: {said}"
        )


def reply_models(rows: pd.DataFrame) -> pd.DataFrame | None:
    """Response-mode logs: per dataset, grader and reply model, how the replies scored.

    Each reply model wrote its own replies, so these logs are never joined dialog by
    dialog; this table sets the reply models side by side per grader instead.
    """
    response = rows[rows["mode"] == RESPONSE_MODE]
    if response.empty:
        return None
    per_dialog = response.groupby(["dataset", "judge_model", "reply_model", "id"], sort=False)[
        "score"
    ].mean()
    frame = per_dialog.reset_index()
    frame["ge_4"] = (frame["score"] >= 3.5).where(frame["score"].notna())
    table = frame.groupby(["dataset", "judge_model", "reply_model"], sort=True).agg(
        dialogs=("id", "nunique"),
        scored=("score", "count"),
        mean_score=("score", "mean"),
        share_ge_4=("ge_4", "mean"),
    )
    table = table.reset_index().rename(columns={"judge_model": "grader"})
    return table.sort_values(["dataset", "grader", "mean_score"], ascending=[True, True, False])
