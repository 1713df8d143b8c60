"""Variants of the ``empathy`` task, to attribute its overhead over the bare task.

Each variant changes one thing; ``overhead_breakdown.py`` runs them against the bare
task and the real ``empathy`` task. They are measurement tools, not proposed API.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task, task_with
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageUser
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from inspect_empathy import empathy, load_dialogs
from inspect_empathy.judge._geval import method_config
from inspect_empathy.judge._rubric import render_dialog, render_prompt, turns_from_messages
from inspect_empathy.scorer import empathy_scorer
from inspect_empathy.solver import empathy_prompt


@solver
def prompt_and_generate(keep_transcript: bool = True) -> Solver:
    """``empathy_prompt`` and ``generate`` in one solver (one span, one state event)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        turns, _ = turns_from_messages(state.messages)
        dialog = render_dialog(turns)
        state.messages = [ChatMessageUser(content=render_prompt(dialog))]
        if keep_transcript:
            state.metadata.setdefault("transcript", dialog)
        return await generate(state)

    return solve


def _without_transcript(dataset: Any) -> MemoryDataset:
    samples = []
    for sample in dataset:
        metadata = dict(sample.metadata or {})
        metadata.pop("transcript", None)
        samples.append(sample.model_copy(update={"metadata": metadata}))
    return MemoryDataset(samples)


def _prerendered(dataset: Any, keep_transcript: bool = True) -> MemoryDataset:
    samples = []
    for sample in dataset:
        turns, _ = turns_from_messages(sample.input)  # type: ignore[arg-type]
        prompt = render_prompt(render_dialog(turns))
        metadata = dict(sample.metadata or {})
        if not keep_transcript:
            metadata.pop("transcript", None)
        samples.append(Sample(id=sample.id, input=prompt, metadata=metadata))
    return MemoryDataset(samples)


@task
def one_solver(dataset: str) -> Task:
    """empathy with prompt + generate merged into one solver."""
    return Task(
        dataset=load_dialogs(dataset),
        solver=prompt_and_generate(),
        scorer=empathy_scorer(from_output=True),
        config=method_config("auto"),
    )


@task
def no_transcript(dataset: str) -> Task:
    """empathy without the ``transcript`` copy of the dialog in sample metadata."""
    return Task(
        dataset=_without_transcript(load_dialogs(dataset)),
        solver=[empathy_prompt(), generate()],
        scorer=empathy_scorer(from_output=True),
        config=method_config("auto"),
    )


@task
def one_solver_no_transcript(dataset: str) -> Task:
    """Both changes: one solver and no ``transcript`` metadata."""
    return Task(
        dataset=_without_transcript(load_dialogs(dataset)),
        solver=prompt_and_generate(keep_transcript=False),
        scorer=empathy_scorer(from_output=True),
        config=method_config("auto"),
    )


@task
def prerendered(dataset: str) -> Task:
    """Rubric prompt rendered at load time, plain ``generate()``, the plugin's scorer."""
    return Task(
        dataset=_prerendered(load_dialogs(dataset)),
        solver=generate(),
        scorer=empathy_scorer(from_output=True),
        config=method_config("auto"),
    )


@task
def prerendered_no_transcript(dataset: str) -> Task:
    """Prompt rendered at load time and no ``transcript`` metadata (the proposed fix)."""
    return Task(
        dataset=_prerendered(load_dialogs(dataset), keep_transcript=False),
        solver=generate(),
        scorer=empathy_scorer(from_output=True),
        config=method_config("auto"),
    )


VARIANTS = {
    "one_solver": one_solver,
    "no_transcript": no_transcript,
    "one_solver_no_transcript": one_solver_no_transcript,
    "prerendered": prerendered,
    "prerendered_no_transcript": prerendered_no_transcript,
}


# --- what the end-of-run peak RSS is made of (rss_variants.py) ---


@scorer(metrics=[mean()])
def _lean(inner: Scorer) -> Scorer:
    """The plugin's scorer, its Score stripped to value and answer."""

    async def score(state: TaskState, target: Target) -> Score:
        result = await inner(state, target)
        return Score(value=result.value, answer=result.answer)

    return score


def _slim(dataset: Any, keep: tuple[str, ...]) -> MemoryDataset:
    return MemoryDataset(
        [
            s.model_copy(update={"metadata": {k: v for k, v in (s.metadata or {}).items()
                                              if k in keep}})
            for s in dataset
        ]
    )  # fmt: skip


@task
def lean_score(dataset: str) -> Task:
    """empathy, its Score reduced to value and answer (no explanation, no metadata)."""
    return task_with(empathy(dataset=dataset), scorer=_lean(empathy_scorer(from_output=True)))


@task
def slim_metadata(dataset: str) -> Task:
    """empathy, sample metadata cut to the bare task's keys."""
    base = empathy(dataset=dataset)
    keep = ("emotion", "case", "rationale", "human_rating", "judge_dialog")
    return task_with(base, dataset=_slim(base.dataset, keep))


@task
def no_reducer(dataset: str) -> Task:
    """empathy with Inspect's default epochs (no `empathy_mean` reducer)."""
    return task_with(empathy(dataset=dataset), epochs=1)


VARIANTS.update(lean_score=lean_score, slim_metadata=slim_metadata, no_reducer=no_reducer)


@task
def eager(dataset: str) -> Task:
    """empathy with every sample built (and every record let go) before the run."""
    import gc

    base = empathy(dataset=dataset)
    samples = MemoryDataset(list(base.dataset))
    gc.collect()
    return task_with(base, dataset=samples)


@task
def eager_trim(dataset: str) -> Task:
    """``eager``, then glibc's ``malloc_trim`` (freed heap returned to the system)."""
    import ctypes

    built = eager(dataset=dataset)
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return built


VARIANTS.update(eager=eager, eager_trim=eager_trim)


@task
def no_logprobs_explanation(dataset: str) -> Task:
    """empathy without the explanation on a logprobs Score whose probabilities held (the
    arithmetic its ``distribution`` already holds; what `4cf5bc8` brought back)."""
    from inspect_empathy import scorer as scorer_module

    explain = scorer_module._explain

    def lean_explain(judgement: Any) -> str | None:
        if judgement.method == "logprobs" and not judgement.details.get("low_mass"):
            return None
        return explain(judgement)

    scorer_module._explain = lean_explain  # type: ignore[assignment]
    return empathy(dataset=dataset)


VARIANTS.update(no_logprobs_explanation=no_logprobs_explanation)


# --- response mode: the plugin's code path without the data it hands Inspect ---


def _record_metadata_only(dataset: Any) -> MemoryDataset:
    """Response-mode samples with only the record's own metadata (the bare task's)."""
    added = ("human_rating", "reference_reply", "reference_rating")
    return MemoryDataset(
        [
            s.model_copy(update={"metadata": {k: v for k, v in (s.metadata or {}).items()
                                              if k not in added}})
            for s in dataset
        ]
    )  # fmt: skip


@task
def lean_response(dataset: str) -> Task:
    """empathy_response doing all its work (the grader call, the G-Eval reading, the
    Score it builds, the summary hook) but handing Inspect the bare task's data: sample
    metadata without the plugin's keys and a Score of value and answer only."""
    from inspect_empathy import empathy_response

    base = empathy_response(dataset=dataset)
    inner = base.scorer[0] if isinstance(base.scorer, list) else base.scorer
    return task_with(
        base, dataset=_record_metadata_only(base.dataset), scorer=_lean(inner)
    )


VARIANTS.update(lean_response=lean_response)


@task
def no_summary_hook(dataset: str) -> Task:
    """empathy without the end-of-task summary hook (`_util.summary.activate` made a no-op, in
    this process): what the per-sample hook (counts, unscored reasons, calls) costs."""
    from inspect_empathy._util import summary as _summary

    _summary.activate = lambda: None
    return empathy(dataset=dataset)


VARIANTS.update(no_summary_hook=no_summary_hook)


@scorer(metrics=[mean()])
def _plain_metrics(inner: Scorer) -> Scorer:
    """The plugin's scorer, its Scores as they are, with Inspect's mean as its only metric."""

    async def score(state: TaskState, target: Target) -> Score:
        return await inner(state, target)

    return score


def _stripped(inner: Scorer, field: str) -> Scorer:
    """The plugin's scorer (its metrics kept), one field of its Score left out."""

    async def score(state: TaskState, target: Target) -> Score:
        result = await inner(state, target)
        return result.model_copy(update={field: None})

    return score


@task
def plain_metrics(dataset: str) -> Task:
    """empathy, its Scores kept whole, with `mean` alone instead of the plugin's metrics."""
    return task_with(
        empathy(dataset=dataset), scorer=_plain_metrics(empathy_scorer(from_output=True))
    )


def _without(dataset: str, field: str) -> Task:
    """empathy, its Scores without ``field`` (the plugin's metrics kept)."""
    inner = empathy_scorer(from_output=True)
    stripped = scorer(metrics=_METRICS, name="empathy_scorer")(lambda: _stripped(inner, field))
    return task_with(empathy(dataset=dataset), scorer=stripped())


@task
def no_explanation(dataset: str) -> Task:
    """empathy, its Scores without the explanation (the plugin's metrics kept)."""
    return _without(dataset, "explanation")


@task
def no_score_metadata(dataset: str) -> Task:
    """empathy, its Scores without metadata (the plugin's metrics kept)."""
    return _without(dataset, "metadata")


def _plugin_metrics() -> list[Any]:
    from inspect_ai.util import registry_info

    return registry_info(empathy_scorer).metadata["metrics"]


_METRICS = _plugin_metrics()

VARIANTS.update(
    plain_metrics=plain_metrics, no_explanation=no_explanation, no_score_metadata=no_score_metadata
)
