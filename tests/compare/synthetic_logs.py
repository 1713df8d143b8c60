"""Small judge-mode logs built in-process, without any model call.

One tiny ``mockllm`` eval (cached) gives a valid log header; each log gets
synthetic ``EvalSample`` objects (a two-turn dialog, a human rating, an
``empathy_scorer`` score) and is written with Inspect's ``write_eval_log``. So
these tests depend on Inspect's log format only, not on the scoring code.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, EvalSample, read_eval_log, write_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

HUMAN = (5.0, 1.0, 4.0, 2.0, 3.0, 5.0)
"""Human ratings of the six dialogs ``d1`` ... ``d6``."""


@scorer(metrics=[mean()], name="empathy_scorer")
def _named_empathy_scorer() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=3.0)

    return score


@functools.cache
def _template() -> EvalLog:
    with tempfile.TemporaryDirectory() as tmp:
        task = Task(dataset=[Sample(id="t", input="x", target="")], scorer=_named_empathy_scorer())
        [log] = eval(task, model="mockllm/model", log_dir=tmp, display="none")
        return read_eval_log(str(log.location))


def sample(
    id: str, score: float, human: float | None, epoch: int = 1, reply: str | None = None
) -> EvalSample:
    """One judged dialog: the judge's ``score`` (NaN: unscored) and the human rating."""
    metadata: dict[str, Any] = {"emotion": "grief"}
    if human is not None:
        metadata["human_rating"] = human
    return EvalSample(
        id=id,
        epoch=epoch,
        input=[
            ChatMessageUser(content=f"Dialog {id}: something sad happened to me today."),
            ChatMessageAssistant(content=reply or f"I am sorry, that sounds hard ({id})."),
        ],
        target="",
        metadata=metadata,
        scores={"empathy_scorer": Score(value=score, metadata={"method": "logprobs"})},
    )


def samples(scores: Sequence[float], human: Sequence[float | None] = HUMAN) -> list[EvalSample]:
    """Dialogs ``d1`` ... ``dN`` with these judge scores and human ratings."""
    return [sample(f"d{i + 1}", s, h) for i, (s, h) in enumerate(zip(scores, human, strict=True))]


def write_log(
    path: Path,
    model: str,
    rows: list[EvalSample],
    status: str = "success",
    expected: Sequence[str] | None = None,
    task_version: str | None = None,
) -> Path:
    """A judge-mode log of ``model`` holding ``rows``; ``expected``: the run's sample ids;
    ``task_version``: the log's ``eval.task_version`` (None: the template's)."""
    log = _template().model_copy(deep=True)
    if task_version is not None:
        log.eval.task_version = task_version
    log.location = None
    log.status = status  # type: ignore[assignment]
    log.eval.model = model
    log.eval.metadata = {"mode": "judge"}
    log.eval.eval_id = log.eval.task_id = f"task-{path.stem}"
    ids = list(expected) if expected is not None else list(dict.fromkeys(str(s.id) for s in rows))
    log.eval.dataset.name = "dialogs"
    log.eval.dataset.samples = len(ids)
    log.eval.dataset.sample_ids = ids  # type: ignore[assignment]
    log.samples = rows
    if status != "success":
        log.results = None
    path.parent.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(path))
    return path
