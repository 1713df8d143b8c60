"""What a judge cost: its calls and tokens in one sample, told apart from other models'.

A sample's ``model_usage`` sums every model the sample called, and in response mode the
model that writes the reply may also be the grader (self-grading, or a re-scored log
whose grader is the reply model). The judge's share is therefore read from the sample's
``ModelEvent``s, one per call:

- judge mode: the calls of the judge (the model under evaluation), wherever they were made;
- response mode (and re-scored logs, panels): the calls made inside an empathy scorer's
  span, per grader model.

A call counts when it returned an answer: a failed call (an error, a refused option
sent again without it) and a cache hit are neither billed nor in Inspect's
``model_usage``, and are not counted. Input tokens include cache reads and writes
(everything the judge read); output tokens include reasoning tokens, as providers count
them, and ``reasoning`` says how many of them were reasoning.

Events are read as Inspect objects (the end-of-run hook) or as the plain JSON of a log
file (``compare``), so nothing here imports Inspect.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

SCORER_SPAN = "scorer"


@dataclass
class Tally:
    """Calls and tokens (input, output, of which reasoning) of one model."""

    calls: int = 0
    input: int = 0
    output: int = 0
    reasoning: int = 0

    def add(self, other: Tally) -> Tally:
        self.calls += other.calls
        self.input += other.input
        self.output += other.output
        self.reasoning += other.reasoning
        return self


def _get(item: Any, key: str) -> Any:
    if isinstance(item, Mapping):
        return item.get(key)
    return getattr(item, key, None)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def usage_tally(usage: Any, calls: int = 0) -> Tally:
    """A ``ModelUsage`` (object or its JSON) as a tally of ``calls`` calls."""
    if usage is None:
        return Tally(calls=calls)
    cached = ("input_tokens_cache_read", "input_tokens_cache_write")
    read = sum(_int(_get(usage, key)) for key in cached)
    return Tally(
        calls=calls,
        input=_int(_get(usage, "input_tokens")) + read,
        output=_int(_get(usage, "output_tokens")),
        reasoning=_int(_get(usage, "reasoning_tokens")),
    )


def is_empathy_scorer_name(name: Any) -> bool:
    """An empathy scorer's name (``empathy_scorer``, ``pkg/empathy_scorer``, ``..1``)."""
    return str(name or "").rsplit("/", 1)[-1].startswith("empathy_scorer")


Key = tuple[str, str | None]
"""(model, the empathy scorer whose span made the call, or None outside any)."""


def model_calls(events: Iterable[Any]) -> dict[Key, Tally]:
    """Calls and tokens per (model, empathy scorer span) in one sample's events."""
    spans: dict[str, tuple[str | None, str | None, str | None]] = {}
    found: dict[Key, Tally] = {}
    for event in events:
        kind = _get(event, "event")
        if kind == "span_begin":
            spans[str(_get(event, "id"))] = (
                _get(event, "parent_id"), _get(event, "type"), _get(event, "name"),
            )  # fmt: skip
            continue
        if kind != "model" or _get(event, "pending") or _get(event, "error") is not None:
            continue
        if _get(event, "cache") == "read":
            continue
        output = _get(event, "output")
        if output is None:
            continue
        scorer = _scorer_span(spans, _get(event, "span_id"))
        key = (str(_get(event, "model")), scorer)
        found.setdefault(key, Tally()).add(usage_tally(_get(output, "usage"), calls=1))
    return found


def _scorer_span(spans: dict[str, tuple[Any, Any, Any]], span: Any) -> str | None:
    seen = 0
    while span is not None and str(span) in spans and seen < 100:
        parent, kind, name = spans[str(span)]
        if kind == SCORER_SPAN and is_empathy_scorer_name(name):
            return str(name)
        span, seen = parent, seen + 1
    return None


def judge_tally(calls: Mapping[Key, Tally], model: str, judge_mode: bool) -> Tally:
    """The judge ``model``'s calls and tokens: in judge mode all of its calls, else its
    calls inside empathy scorer spans (a grader's)."""
    total = Tally()
    for (name, scorer), tally in calls.items():
        if name == model and (judge_mode or scorer is not None):
            total.add(tally)
    return total
