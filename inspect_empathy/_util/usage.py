"""What a judge cost: its calls and tokens in one sample, told apart from other models'.

A sample's ``model_usage`` sums every model the sample called, and in response mode the
model that writes the reply may also be the grader (self-grading, or a re-scored log
whose grader is the reply model). The judge's share is therefore read from the sample's
``ModelEvent``s, one per call:

- a score of the judge's own output (judge mode, ``from_output``): the judge's calls outside
  every empathy scorer's span (its answers) and inside that score's own span (top-ups);
- any other score (response mode, re-scored logs, panels): the calls made inside that
  score's span, per grader model, and for a panel member inside the member's own span
  (Inspect's ``collect()`` runs member N in a span ``task-N``), so that a model sitting twice
  on a panel (``name``, ``name#2``) is told apart.

Calls are never shared between two scores: a log re-scored with the same grader counts
each scorer's calls once.

A call counts when it returned an answer: a failed call (an error, a refused option
sent again without it) and a cache hit are neither billed nor in Inspect's
``model_usage``, and are not counted. Input tokens include cache reads and writes
(everything the judge read); output tokens include reasoning tokens, as providers count
them, and ``reasoning`` says how many of them were reasoning.

Events are read as Inspect objects (the end-of-run hook) or as the plain JSON of a log
file (``compare``), so nothing here imports Inspect.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

SCORER_SPAN = "scorer"


@dataclass
class Tally:
    """Calls and tokens (input, of which read from and written to the provider's prompt
    cache; output, of which reasoning) of one model, and what Inspect recorded they cost:
    ``cost``, summed over the ``priced`` usages that carried a ``total_cost`` (a run with
    ``--model-cost-config``, or a model whose price Inspect knows), beside the ``unpriced``
    ones that did not."""

    calls: int = 0
    input: int = 0
    output: int = 0
    reasoning: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    priced: int = 0
    unpriced: int = 0

    @property
    def recorded_cost(self) -> float | None:
        """What Inspect recorded these calls cost, where it priced every one of them."""
        return self.cost if self.priced and not self.unpriced else None

    def add(self, other: Tally) -> Tally:
        self.calls += other.calls
        self.input += other.input
        self.output += other.output
        self.reasoning += other.reasoning
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.cost += other.cost
        self.priced += other.priced
        self.unpriced += other.unpriced
        return self


def _get(item: Any, key: str) -> Any:
    return _fields(item).get(key)


class _Attributes:
    """An object's attributes read as a mapping's ``get`` (None where absent)."""

    __slots__ = ("item",)

    def __init__(self, item: Any) -> None:
        self.item = item

    def get(self, key: str) -> Any:
        return getattr(self.item, key, None)


def _fields(item: Any) -> Any:
    """``item`` with a ``get``: a mapping (a log's JSON) as it is, an Inspect object
    through its attributes. One call per item: a log's events are read a million times."""
    if type(item) is dict or isinstance(item, Mapping):
        return item
    return _Attributes(item)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def usage_tally(usage: Any, calls: int = 0) -> Tally:
    """A ``ModelUsage`` (object or its JSON) as a tally of ``calls`` calls."""
    if usage is None:
        return Tally(calls=calls, unpriced=1 if calls else 0)
    usage = _fields(usage)
    read = _int(usage.get("input_tokens_cache_read"))
    write = _int(usage.get("input_tokens_cache_write"))
    cost = usage.get("total_cost")
    priced = isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0
    return Tally(
        calls=calls,
        input=_int(usage.get("input_tokens")) + read + write,
        output=_int(usage.get("output_tokens")),
        reasoning=_int(usage.get("reasoning_tokens")),
        cache_read=read,
        cache_write=write,
        cost=float(cost) if priced else 0.0,
        priced=int(priced),
        unpriced=int(not priced),
    )


def is_empathy_scorer_name(name: Any) -> bool:
    """An empathy scorer's name (``empathy_scorer``, ``pkg/empathy_scorer``, ``..1``)."""
    return _scorer_base(name).startswith("empathy_scorer")


def _scorer_base(name: Any) -> str:
    return str(name or "").rsplit("/", 1)[-1]


def own_output(params: Mapping[str, Any] | None, judge_mode: bool) -> bool:
    """Whether an empathy score reads the judge's own output (``from_output``: judge mode)
    rather than asking a grader, from the scorer's logged parameters; for a log without
    them, ``judge_mode``."""
    if params:
        return bool(params.get("from_output"))
    return judge_mode


def panel_name(members: Iterable[Any]) -> str:
    """A panel's name: ``panel(a, b)``."""
    return "panel(" + ", ".join(str(m) for m in members) + ")"


def score_judge(metadata: Mapping[str, Any] | None, default: str) -> str:
    """Who made an empathy score, from its metadata: ``panel(a, b)`` (its ``judges``), its
    ``grader``, else ``default`` (judge mode: the model under evaluation)."""
    metadata = metadata or {}
    judges = metadata.get("judges")
    if isinstance(judges, Mapping) and judges:
        return panel_name(judges)
    grader = metadata.get("grader")
    return str(grader) if isinstance(grader, str) and grader else default


Key = tuple[str, str | None, int | None]
"""(model, the empathy scorer whose span made the call or None outside any, the panel
member's place in that scorer (1-based; None outside a panel's member span))."""

_TASK_SPAN = re.compile(r"task-(\d+)")
_MEMBER = re.compile(r"(.+)#(\d+)")


@functools.lru_cache(maxsize=4096)  # a few names, asked of every sample
def member_model(member: str) -> str:
    """The model of a panel member's name: ``name#2`` (the second seat of a model on one
    panel, `scorer._unique_names`) is ``name``."""
    match = _MEMBER.fullmatch(member)
    return match.group(1) if match and int(match.group(2)) >= 2 else member


def model_calls(events: Iterable[Any]) -> dict[Key, Tally]:
    """Calls and tokens per (model, empathy scorer span, panel member) in one sample's
    events."""
    spans: dict[str, tuple[str | None, str | None, str | None]] = {}
    found: dict[Key, Tally] = {}
    for item in events:
        event = _fields(item)
        kind = event.get("event")
        if kind == "span_begin":
            spans[str(event.get("id"))] = (
                event.get("parent_id"), event.get("type"), event.get("name"),
            )  # fmt: skip
            continue
        if kind != "model" or event.get("pending") or event.get("error") is not None:
            continue
        if event.get("cache") == "read":
            continue
        output = event.get("output")
        if output is None:
            continue
        scorer, member = _scorer_span(spans, event.get("span_id"))
        key = (str(event.get("model")), scorer, member)
        found.setdefault(key, Tally()).add(usage_tally(_get(output, "usage"), calls=1))
    return found


def _scorer_span(
    spans: dict[str, tuple[Any, Any, Any]], span: Any
) -> tuple[str | None, int | None]:
    """The empathy scorer span above ``span`` and, where the span right below it is one of
    ``collect()``'s ``task-N`` spans, N."""
    below: Any = None
    seen = 0
    while span is not None and str(span) in spans and seen < 100:
        parent, kind, name = spans[str(span)]
        if kind == SCORER_SPAN and is_empathy_scorer_name(name):
            return str(name), _member_place(spans.get(str(below)) if below else None)
        below, span, seen = span, parent, seen + 1
    return None, None


def _member_place(span: tuple[Any, Any, Any] | None) -> int | None:
    if span is None or span[1] != "task":
        return None
    match = _TASK_SPAN.fullmatch(str(span[2]))
    return int(match.group(1)) if match else None


def score_tally(
    calls: Mapping[Key, Tally],
    model: str,
    scorer: str,
    own_output: bool = False,
    member: int | None = None,
) -> Tally:
    """What ``model`` spent for the score ``scorer``: its calls inside that scorer's span (a
    panel member's: inside its ``task-N`` span, ``member`` = N), and for a score of the
    model's own output (``own_output``: judge mode) its calls outside every empathy
    scorer's span too."""
    total = Tally()
    base = _scorer_base(scorer)
    for (name, span, place), tally in calls.items():
        if name != model:
            continue
        if span is None:
            if own_output:
                total.add(tally)
        elif _scorer_base(span) == base and (member is None or place in (None, member)):
            total.add(tally)
    return total


def scorer_spent(
    calls: Mapping[Key, Tally], scorer: str, own_model: str | None
) -> dict[str, Tally]:
    """Each model's calls and tokens for the score ``scorer``, every panel seat together
    (`score_tally`); ``own_model``: the judge whose own output the score reads (judge mode),
    else None."""
    spent: dict[str, Tally] = {}
    models = [name for name, span, _ in calls if span is not None or name == own_model]
    for model in dict.fromkeys(models):
        tally = score_tally(calls, model, scorer, own_output=model == own_model)
        if tally.calls or tally.input or tally.output:
            spent[model] = tally
    return spent
