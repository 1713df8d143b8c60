"""Lines at the end of each task: how the empathy scorer's samples were scored, as whole
numbers (`summary_lines`), and what its judge spent per scored dialog (`cost_lines`).

The counts are not metrics: Inspect prints every metric with three decimals (135 would
read 135.000), and metrics never see unscored samples (Inspect excludes them). They are
counted here from the samples, as each ends, and printed when the task ends, for every task
that has an empathy scorer.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.hooks import Hooks, RunEnd, SampleEnd, SampleStart, TaskEnd, TaskStart, hooks
from inspect_ai.log import EvalLog, EvalSample

from ..dialogs import (
    CONVERSATION_KEY,
    CONVERSATION_RATING_KEY,
    CONVERSATION_TURNS_KEY,
    HUMAN_KEY,
)
from .usage import Key, Tally, is_empathy_scorer_name, model_calls, own_output, scorer_spent

logger = logging.getLogger("inspect_empathy")

_FLAGS = ("fallback", "low_mass", "short_list", "partial", "conv_partial")
"""Counts the end-of-run line names: auto scores parsed, low-mass logprobs scores, logprobs
scores whose top-logprobs list left probability unlisted, samples scores from fewer
completions, and (per turn) conversations with turns missing from the
figures (cut by --limit, or unscored turns)."""
_DETAIL = re.compile(r"\s*(?::\s|\().*$", re.DOTALL)


def _reason_kind(reason: str) -> str:
    """A reason without its specifics (the quoted answer, the numbers)."""
    return _DETAIL.sub("", reason).strip() or reason.strip()


def _unscored(score: Any) -> bool:
    return isinstance(score.value, float) and math.isnan(score.value)


def _flags(metadata: dict[str, Any]) -> tuple[str, ...]:
    """The flags of one scored epoch (`_FLAGS`, but ``conv_partial``)."""
    flags = tuple(f for f in ("low_mass", "short_list", "partial") if metadata.get(f))
    return (*flags, "fallback") if metadata.get("logprobs_unavailable") else flags


@dataclass(slots=True)
class _Scored:
    """A sample's scored epochs under one scorer: the first's (as `empathy_mean` keeps its
    metadata) method and flags, and how many."""

    epoch: int
    method: str
    flags: tuple[str, ...]
    epochs: int = 1


@dataclass
class Counts:
    """What the end-of-task line counts, gathered from each sample (every epoch's) as it
    ends (`ScoringSummary`), or from a log's samples (`Counts.of`)."""

    reasons: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Unscored reasons per (scorer, reason kind), one per unscored epoch."""
    rated: set[Any] = field(default_factory=set)
    """The samples with a human rating."""
    conversations: dict[Any, tuple[str, int | None, bool]] = field(default_factory=dict)
    """A per-turn sample's conversation, its bot turns and whether it is rated."""
    scored: dict[str, dict[Any, _Scored]] = field(default_factory=dict)
    """Per empathy scorer, its scored samples."""
    added: int = 0
    """The sample epochs counted."""

    @classmethod
    def of(cls, log: EvalLog) -> Counts:
        counts = cls()
        for sample in log.samples or []:
            counts.add(sample)
        return counts

    def add(self, sample: EvalSample) -> None:
        """Count one sample (one epoch of it)."""
        self.added += 1
        metadata = sample.metadata or {}
        if metadata.get(HUMAN_KEY) is not None:
            self.rated.add(sample.id)
        conversation = metadata.get(CONVERSATION_KEY)
        if conversation is not None:
            turns = metadata.get(CONVERSATION_TURNS_KEY)
            self.conversations[sample.id] = (
                str(conversation),
                turns if isinstance(turns, int) and not isinstance(turns, bool) else None,
                isinstance(metadata.get(CONVERSATION_RATING_KEY), int | float),
            )
        for name, score in (sample.scores or {}).items():
            if not is_empathy_scorer_name(name):
                continue
            if _unscored(score):
                reason = (score.metadata or {}).get("unscored_reason") or score.explanation
                self.reasons[(name, _reason_kind(str(reason or "no reason recorded")))] += 1
                continue
            meta = score.metadata or {}
            mine = self.scored.setdefault(name, {})
            seen = mine.get(sample.id)
            method = str(meta.get("method", "unknown"))
            if seen is None:
                mine[sample.id] = _Scored(sample.epoch, method, _flags(meta))
                continue
            seen.epochs += 1
            if sample.epoch < seen.epoch:
                seen.epoch, seen.method, seen.flags = sample.epoch, method, _flags(meta)

    def figures(self, scorer: str) -> tuple[Counter[str], Counter[str], dict[str, int]]:
        """A scorer's scored samples by method, its flags, and its other counts: ``rated``
        (with a human rating), ``conversations`` and ``conversations_rated`` (per turn),
        ``repeated`` (scored in two epochs or more: what self-consistency rests on)."""
        mine = self.scored.get(scorer, {})
        methods = Counter(s.method for s in mine.values())
        flags = Counter(f for s in mine.values() for f in s.flags)
        others = {
            "rated": sum(1 for i in mine if i in self.rated),
            "repeated": sum(1 for s in mine.values() if s.epochs >= 2),
        }
        turns: dict[str, tuple[int, int | None, bool]] = {}
        for sample in mine:
            if sample in self.conversations:
                conversation, total, rated = self.conversations[sample]
                done = turns.get(conversation, (0, total, rated))[0]
                turns[conversation] = (done + 1, total, rated)
        if turns:
            others["conversations"] = len(turns)
            others["conversations_rated"] = sum(1 for _, _, rated in turns.values() if rated)
            partial = sum(1 for done, total, _ in turns.values() if total and done < total)
            if partial:
                flags["conv_partial"] = partial
        return methods, flags, others


def summary_lines(log: EvalLog, counts: Counts | None = None) -> list[str]:
    """For each empathy scorer in the log's results, one line of whole numbers: its samples
    scored, by method, with a human rating; per turn, the conversations; with epochs, the
    samples scored in two or more; the flags; the unscored and their reasons.
    ``counts``: gathered as the samples ended, else read from the log's samples."""
    return [line for line, _ in scorer_lines(log, counts)]


def scorer_lines(log: EvalLog, counts: Counts | None = None) -> list[tuple[str, bool]]:
    """`summary_lines`, each with whether it says something is amiss (unscored samples or
    flags): a warning, else information."""
    if counts is None:
        counts = Counts.of(log)
    lines: list[tuple[str, bool]] = []
    epochs = log.eval.config.epochs or 1
    for result in (log.results.scores if log.results else []) or []:
        if not result.name.endswith("empathy_scorer") and result.scorer != "empathy_scorer":
            continue
        methods, flags, others = counts.figures(result.name)
        scored = int(result.scored_samples or 0)
        unscored = int(result.unscored_samples or 0)
        line = f"{result.name}{judged_by(log)}: {scored} of {scored + unscored} samples scored"
        if methods:
            line += " (" + ", ".join(f"{m} {n}" for m, n in methods.most_common()) + ")"
        if others["rated"]:
            line += f", {others['rated']} with human ratings"
        if "conversations" in others:
            line += f"; {others['conversations']} conversations"
            if others["conversations_rated"]:
                line += f" ({others['conversations_rated']} rated)"
        if epochs > 1 and others["repeated"]:
            line += f"; {others['repeated']} scored in two epochs or more"
        shown_flags = [(f, flags[f]) for f in _FLAGS if flags.get(f)]
        if shown_flags:
            line += "; " + ", ".join(f"{name} {count}" for name, count in shown_flags)
        if unscored:
            mine = Counter({r: c for (n, r), c in counts.reasons.items() if n == result.name})
            shown = "; ".join(f"{count} × {reason}" for reason, count in mine.most_common(3))
            if shown and epochs > 1:
                # the samples are dialogs (epochs reduced), the reasons are each epoch's
                shown = f"reasons over the {epochs} epochs of each dialog: {shown}"
            line += f"; {unscored} unscored" + (f": {shown}" if shown else "")
        lines.append((line, bool(unscored or shown_flags)))
    return lines


def add_calls(total: dict[Key, Tally], sample: EvalSample) -> None:
    """Add one sample's calls and tokens per (model, scorer span) to ``total``."""
    for key, tally in model_calls(sample.events or []).items():
        total.setdefault(key, Tally()).add(tally)


def _judge_mode(log: EvalLog) -> bool:
    if (log.eval.metadata or {}).get("mode") == "judge":
        return True
    return any(
        (scorer.options or {}).get("from_output")
        for scorer in log.eval.scorers or []
        if is_empathy_scorer_name(scorer.name)
    )


def cost_lines(log: EvalLog, calls: dict[Key, Tally] | None = None) -> list[str]:
    """For each empathy scorer, what its judge spent per scored dialog, in one line: ``judge
    openai/gpt-4o: 1 call, 612 input, 1 output, 0 reasoning tokens per scored dialog`` (per
    scored turn in a per-turn run; ``612 input (480 cached)`` where the service read part of
    the input from its prompt cache, billed at its cached price), and what Inspect recorded
    it cost where it priced every call (``--model-cost-config``, or a model whose price it knows).

    ``calls``: every sample's calls per (model, scorer span) summed (`add_calls`), else
    read from the log's samples. A score of the judge's own output (judge mode) counts the
    judge's calls (the model under evaluation) outside every empathy scorer and inside its
    own; any other score the calls made inside its own scorer, never the reply model's nor
    another scorer's (`_util.usage`). Every epoch and every unscored sample counts: they were
    billed.
    """
    if calls is None:
        calls = {}
        for sample in log.samples or []:
            add_calls(calls, sample)
    lines: list[str] = []
    for result in (log.results.scores if log.results else []) or []:
        if not is_empathy_scorer_name(result.name) and result.scorer != "empathy_scorer":
            continue
        own = own_output(result.params, _judge_mode(log))
        spent = scorer_spent(calls, result.name, log.eval.model if own else None)
        if not spent:
            continue
        total = Tally()
        for tally in spent.values():
            total.add(tally)
        who = "judge" if own else "grader" if len(spent) == 1 else "graders"
        scored = int(result.scored_samples or 0)
        unit = "turn" if (log.eval.task_args or {}).get("per_turn") in (True, "true") else "dialog"
        head = f"{who} {', '.join(spent)}: "
        cost = total.recorded_cost
        if not scored:
            lines.append(
                head
                + f"{_calls(total.calls)}, {total.input} input"
                + (f" ({total.cache_read} cached)" if total.cache_read else "")
                + f", {total.output} output, "
                f"{total.reasoning} reasoning tokens"
                + (f", cost {cost:.3g}" if cost is not None else "")
                + f", no {unit} scored ({result.name})"
            )
            continue
        cached = f" ({total.cache_read / scored:.0f} cached)" if total.cache_read else ""
        lines.append(
            head + f"{_calls(total.calls / scored)}, {total.input / scored:.0f} input{cached}, "
            f"{_amount(total.output / scored)} output, {total.reasoning / scored:.0f} reasoning "
            "tokens"
            + (f", cost {cost / scored:.3g}" if cost is not None else "")
            + f" per scored {unit} ({result.name}, {scored} scored)"
        )
    return lines


def _amount(value: float) -> str:
    """A count per scored dialog: whole where it is whole (1, 2), else one decimal (6.5)."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def _calls(value: float) -> str:
    return f"{_amount(value)} call" + ("" if value == 1 else "s")


def _say(line: str) -> None:
    """An end-of-run line: shown at Inspect's default log level (warnings) through its
    display, but labelled INFO, since it is information, not a warning."""
    record = logger.makeRecord(logger.name, logging.WARNING, __file__, 0, line, None, None)
    record.levelname = "INFO"
    logger.handle(record)


def judged_by(log: EvalLog) -> str:
    """`` (judge: <model>)``: who scored, so that each line of an eval-set names its judge
    (the model bound to the ``grader`` role where there is one, else the model under
    evaluation, judge mode's judge)."""
    roles = log.eval.model_roles or {}
    grader = roles.get("grader")
    if grader is not None:
        return f" (grader: {grader.model})"
    return f" (judge: {log.eval.model})" if log.eval.model else ""


@dataclass
class SamplesDone:
    """The samples of a running task that have ended (scored, unscored or errored), and
    of them those with a human rating: what the live headline is computed over."""

    all: set[str | int] = field(default_factory=set)
    rated: set[str | int] = field(default_factory=set)
    live: dict[Any, Any] = field(default_factory=dict)
    """What a metric keeps of this run between its live computations (the last live
    headline, `metrics.coverage_agreement`): released with the run's entry in `_done`, when
    the task ends or, for a task that never reached its end, when its run (the ``eval()``
    call) ends."""


_live_run: ContextVar[str | None] = ContextVar("inspect_empathy_live_run", default=None)
_done: dict[str, SamplesDone] = {}


def samples_done() -> SamplesDone | None:
    """The samples ended so far of the task whose live metrics are being computed: Inspect
    computes them as each sample completes, inside the sample's own context, which
    `ScoringSummary.on_sample_start` marked. None elsewhere: the task's final results
    (computed outside any sample, over every sample, reused ones of an ``eval-retry``
    included), a finished log, ``inspect score``, ``compare``."""
    run = _live_run.get()
    return _done.get(run) if run is not None else None


_registered = False


def activate() -> None:
    """Register the end-of-task summary hook, once, when an empathy scorer is made: a
    plugin that is only installed registers no hook, so Inspect runs of other tasks get
    no start-up banner and no per-sample call from it."""
    global _registered
    if not _registered:
        _registered = True
        hooks(
            name="inspect_empathy_summary", description="Scored/unscored counts of empathy scorers."
        )(ScoringSummary)


class ScoringSummary(Hooks):
    """Counts the samples as they end (`Counts`); prints `summary_lines` and `cost_lines`
    when a task ends.

    Registered (`activate`) only once an empathy scorer exists in the process."""

    def __init__(self) -> None:
        self._counts: dict[str, Counts] = {}
        self._calls: dict[str, dict[Key, Tally]] = {}
        self._tasks: dict[str, set[str]] = {}  # the tasks of each run not ended yet

    async def on_task_start(self, data: TaskStart) -> None:
        _done[data.eval_id] = SamplesDone()
        self._tasks.setdefault(data.run_id, set()).add(data.eval_id)

    async def on_sample_start(self, data: SampleStart) -> None:
        # the sample's context only: the task's final results are computed outside it
        _live_run.set(data.eval_id)

    async def on_sample_end(self, data: SampleEnd) -> None:
        done = _done.get(data.eval_id)
        if done is not None:
            done.all.add(data.sample.id)
            if (data.sample.metadata or {}).get(HUMAN_KEY) is not None:
                done.rated.add(data.sample.id)
        self._counts.setdefault(data.eval_id, Counts()).add(data.sample)
        add_calls(self._calls.setdefault(data.eval_id, {}), data.sample)

    async def on_task_end(self, data: TaskEnd) -> None:
        _done.pop(data.eval_id, None)
        self._tasks.get(data.run_id, set()).discard(data.eval_id)
        counts = self._counts.pop(data.eval_id, None) or Counts()
        results = data.log.results
        if results is not None and counts.added < results.completed_samples:
            # an eval-retry's reused samples ended in no hook: count the log's samples (read
            # only then: Inspect reads a finished log's samples back from its file)
            counts = Counts.of(data.log)
        for line, amiss in scorer_lines(data.log, counts):
            if amiss:
                logger.warning(line)
            else:
                _say(line)
        for line in cost_lines(data.log, self._calls.pop(data.eval_id, {})):
            _say(line)

    async def on_run_end(self, data: RunEnd) -> None:
        # a task that raised before its end (Inspect calls on_task_end only for a task
        # that finished) leaves its samples, live figures and tallies behind: forget them
        # when its run ends, whether the run succeeded or raised
        for eval_id in self._tasks.pop(data.run_id, set()):
            _done.pop(eval_id, None)
            self._counts.pop(eval_id, None)
            self._calls.pop(eval_id, None)
