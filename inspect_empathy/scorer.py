"""The empathy scorer: G-Eval scoring of a chatbot's last reply with the seed rubric."""

from __future__ import annotations

import statistics
from typing import Any, Literal

from inspect_ai.model import ChatMessage, ChatMessageUser, Model, get_model, model_roles
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState
from inspect_ai.util import collect

from ._geval import (
    DEFAULT_SAMPLES,
    METHODS,
    Judgement,
    Method,
    complete_choices,
    generate_judgement,
    judge_output,
    method_config,
)
from ._rubric import render_dialog, render_prompt, turns_from_messages
from .metrics import HUMAN_KEY, human_agreement, judge_agreement, level_shares

Aggregate = Literal["mean", "median"]


@scorer(metrics=[mean(), stderr(), human_agreement(), level_shares(), judge_agreement()])
def empathy_scorer(
    method: Method = "auto",
    samples: int = DEFAULT_SAMPLES,
    cot: bool = False,
    model: str | Model | list[str | Model] | None = None,
    model_role: str = "grader",
    aggregate: Aggregate = "mean",
    from_output: bool = False,
) -> Scorer:
    """Rate the last assistant reply for empathetical responding, 1-5, G-Eval style.

    Args:
      method: ``logprobs`` (probability-weighted score from the score token's
        top logprobs), ``samples`` (mean of ``samples`` sampled scores),
        ``parse`` (the integer the judge wrote) or ``auto`` (logprobs when the
        judge returns them, else parse).
      samples: Number of completions for the ``samples`` method.
      cot: Use the rubric variant that asks for brief reasoning before the score.
      model: Judge model, or a list of models for a panel. Takes precedence
        over ``model_role``.
      model_role: Role whose bound model(s) judge (``--model-role grader=...``);
        without a binding the model under evaluation judges.
      aggregate: How a panel's scores combine: ``mean`` or ``median``.
      from_output: Score the judgement already in ``state.output`` (judge mode:
        the model under evaluation is the judge) instead of asking a grader.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    if aggregate not in ("mean", "median"):
        raise ValueError(f"aggregate must be 'mean' or 'median', not {aggregate!r}")

    async def score(state: TaskState, target: Target) -> Score:
        human = (state.metadata or {}).get(HUMAN_KEY)
        if from_output:
            judgement = await _judge_own_output(state, method, samples, cot)
            return to_score(judgement, {HUMAN_KEY: human})

        turns, notes = turns_from_messages(state.messages)
        if not turns or turns[-1].role != "bot":
            return Score.unscored(
                reason="no_response",
                explanation="the conversation does not end with an assistant reply to rate",
                metadata={HUMAN_KEY: human, "notes": notes},
            )
        dialog = render_dialog(turns)
        prompt: list[ChatMessage] = [ChatMessageUser(content=render_prompt(dialog, cot))]
        judges = _judges(model, model_role)
        judgements = await collect(
            *[_judge_with(judge, prompt, method, samples, cot) for judge in judges]
        )
        context: dict[str, Any] = {HUMAN_KEY: human, "judged_dialog": dialog}
        if notes:
            context["notes"] = notes
        if len(judgements) == 1:
            return to_score(judgements[0][1], context)
        return panel_score(judgements, aggregate, context)

    return score


def _judges(
    model: str | Model | list[str | Model] | None, model_role: str
) -> list[str | Model | None]:
    """The judge models: explicit ones, else the role's binding (None = default model)."""
    if model is not None:
        return list(model) if isinstance(model, list) else [model]
    bound = model_roles().get(model_role)
    if isinstance(bound, list):
        return list(bound)
    return [bound]


async def _judge_with(
    judge: str | Model | None, prompt: list[ChatMessage], method: Method, samples: int, cot: bool
) -> tuple[str, Judgement]:
    model = get_model(judge)
    judgement, _ = await generate_judgement(model, prompt, method, samples, cot)
    return str(model), judgement


async def _judge_own_output(state: TaskState, method: Method, samples: int, cot: bool) -> Judgement:
    """Judge mode: the model under evaluation already answered the rubric prompt."""
    output = state.output
    if method == "samples" and output.choices and len(output.choices) < samples:
        # providers without num_choices: top up with further calls to the same judge
        prompt = _prompt_messages(state.messages)
        output = await complete_choices(
            get_model(), prompt, output, samples, method_config(method, samples)
        )
        state.output = output
    return judge_output(output, method, samples, cot)


def _prompt_messages(messages: list[ChatMessage]) -> list[ChatMessage]:
    """The messages that were sent to the judge: all but the trailing assistant reply."""
    end = len(messages)
    while end > 0 and messages[end - 1].role == "assistant":
        end -= 1
    return list(messages[:end])


def _distribution(judgement: Judgement) -> dict[str, float] | None:
    if judgement.distribution is None:
        return None
    return {str(k): round(p, 6) for k, p in judgement.distribution.items()}


def _explain(judgement: Judgement) -> str:
    if judgement.value is None:
        return f"{judgement.method}: unscored: {judgement.reason}"
    if judgement.method == "logprobs" and judgement.distribution:
        terms = " + ".join(f"{p:.3f}*{k}" for k, p in judgement.distribution.items() if p >= 0.0005)
        return f"logprobs: {terms} = {judgement.value:.3f}"
    if judgement.method == "samples":
        scores = judgement.details.get("scores", [])
        return f"samples: mean of {len(scores)} scores {scores} = {judgement.value:.3f}"
    extra = judgement.details.get("logprobs_unavailable")
    return f"parse: {judgement.value:g}" + (f" (logprobs unavailable: {extra})" if extra else "")


def judgement_metadata(judgement: Judgement) -> dict[str, Any]:
    """What a Score keeps of one judgement."""
    return {
        "method": judgement.method,
        "distribution": _distribution(judgement),
        "raw": judgement.raw,
        **({"unscored_reason": judgement.reason} if judgement.reason else {}),
        **judgement.details,
    }


def to_score(judgement: Judgement, context: dict[str, Any]) -> Score:
    """A Score (or an unscored Score with its reason) for one judgement."""
    metadata = {**context, **judgement_metadata(judgement)}
    if judgement.value is None:
        return Score.unscored(
            reason="grader_failed",
            answer=judgement.raw,
            explanation=_explain(judgement),
            metadata=metadata,
        )
    return Score(
        value=judgement.value,
        answer=judgement.raw,
        explanation=_explain(judgement),
        metadata=metadata,
    )


def panel_score(
    judgements: list[tuple[str, Judgement]], aggregate: Aggregate, context: dict[str, Any]
) -> Score:
    """Combine a panel's judgements: mean (or median) of the judges that scored."""
    per_judge = {name: judgement_metadata(j) | {"value": j.value} for name, j in judgements}
    values = [j.value for _, j in judgements if j.value is not None]
    metadata = {**context, "method": "panel", "aggregate": aggregate, "judges": per_judge}
    explanation = "; ".join(f"{name}: {_explain(j)}" for name, j in judgements)
    if not values:
        return Score.unscored(
            reason="grader_failed", explanation="no judge scored: " + explanation, metadata=metadata
        )
    value = statistics.fmean(values) if aggregate == "mean" else statistics.median(values)
    return Score(
        value=float(value),
        answer=" | ".join(j.raw for _, j in judgements),
        explanation=f"panel {aggregate} = {value:.3f}; {explanation}",
        metadata=metadata,
    )
