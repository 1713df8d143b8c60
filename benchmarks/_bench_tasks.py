"""The bare Inspect task and the zero-latency provider the benchmarks compare against.

Nothing here imports ``inspect_empathy``: the bare task is what a user would write with
Inspect alone to send the same rubric prompt to the same judge and keep the integer.
Importing this module registers the model API ``bench/zero``.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample, json_dataset
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Logprob,
    Logprobs,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    TopLogprob,
    get_model,
    modelapi,
)
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState, generate
from inspect_ai.tool import ToolChoice, ToolInfo

PACKAGE = Path(__file__).resolve().parents[1] / "inspect_empathy"
PROMPT = PACKAGE / "judge" / "prompts" / "empathy.txt"
LABELS = {"user": "USER", "human": "USER", "assistant": "BOT", "bot": "BOT"}
# the same generation settings the empathy task uses for method=auto/logprobs
JUDGE_CONFIG = GenerateConfig(temperature=0.0, logprobs=True, top_logprobs=20)

# a fixed judge answer: "4", with top logprobs over the five scores
_DIST = {4: 0.6, 3: 0.2, 5: 0.15, 2: 0.04, 1: 0.01}


def zero_choice(logprobs: bool) -> ChatCompletionChoice:
    """The constant judge completion (score token ``4`` and its alternatives)."""
    token = Logprob(
        token="4",
        logprob=math.log(_DIST[4]),
        top_logprobs=[TopLogprob(token=str(k), logprob=math.log(p)) for k, p in _DIST.items()],
    )
    return ChatCompletionChoice(
        message=ChatMessageAssistant(content="4", model="bench/zero"),
        stop_reason="stop",
        logprobs=Logprobs(content=[token]) if logprobs else None,
    )


class ZeroLatencyAPI(ModelAPI):
    """Answers every request at once with the score ``4`` (n choices if asked)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (Inspect's ModelAPI signature)
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    def max_connections(self) -> int:
        return 1000

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        n = config.num_choices or 1
        choices = [zero_choice(bool(config.logprobs)) for _ in range(n)]
        prompt_tokens = sum(len(m.text.split()) for m in input)
        return ModelOutput(
            model=self.model_name,
            choices=choices,
            usage=ModelUsage(
                input_tokens=prompt_tokens, output_tokens=n, total_tokens=prompt_tokens + n
            ),
        )


@modelapi(name="bench")
def bench() -> type[ModelAPI]:
    """Benchmark model APIs (``bench/zero``)."""
    return ZeroLatencyAPI


@cache
def template() -> str:
    return PROMPT.read_text("utf-8")


def rubric_prompt(turns: list[dict[str, Any]]) -> str:
    """The seed rubric with the dialog as USER:/BOT: lines (plain string work)."""
    dialog = "\n".join(f"{LABELS[t['role']]}: {t['content'].strip()}" for t in turns)
    return template().replace("{{Dialog}}", dialog)


def record_to_sample(record: dict[str, Any]) -> Sample:
    rating = record.get("rating")
    return Sample(
        id=record["id"],
        input=rubric_prompt(record["turns"]),
        target="" if rating is None else str(rating),
        # the record's own metadata travels with the sample, as in the empathy task
        metadata={**(record.get("metadata") or {}), "human_rating": rating},
    )


@scorer(metrics=[mean()])
def first_digit() -> Scorer:
    """Trivial scorer: the first digit 1-5 in the completion (0 if none)."""

    async def score(state: TaskState, target: Target) -> Score:
        digits = [c for c in state.output.completion if c in "12345"]
        return Score(value=float(digits[0]) if digits else 0.0, answer=state.output.completion)

    return score


@task
def bare(dataset: str) -> Task:
    """Bare Inspect: same dialogs, same rubric prompt, same judge config, trivial scorer."""
    return Task(
        dataset=json_dataset(dataset, record_to_sample),
        solver=generate(),
        scorer=first_digit(),
        config=JUDGE_CONFIG,
    )


@scorer(metrics=[mean()])
def weighted_digit() -> Scorer:
    """What a user would write with Inspect alone to keep G-Eval's weighted score and show
    it: sum p(k) * k over the score tokens' top logprobs, the arithmetic as the explanation
    and the distribution in the metadata (the fields, and their sizes, of the plugin's Score)."""

    async def score(state: TaskState, target: Target) -> Score:
        words = state.output.completion
        # the reply rated first, then the judge's words (as the plugin's Score answer)
        reply = state.input_text.rsplit("\nBOT: ", 1)[-1].split("\n\n\nEvaluation Form")[0]
        answer = f"BOT: {reply}\n\njudge: {words}"
        logprobs = state.output.choices[0].logprobs if state.output.choices else None
        top = logprobs.content[0].top_logprobs if logprobs and logprobs.content else None
        mass = {k: 0.0 for k in range(1, 6)}
        for alternative in top or []:
            if alternative.token.strip() in ("1", "2", "3", "4", "5"):
                mass[int(alternative.token.strip())] += math.exp(alternative.logprob)
        total = sum(mass.values())
        if total <= 0:
            return Score(value=float("nan"), answer=answer, explanation="no score token")
        p = {k: v / total for k, v in mass.items()}
        value = sum(k * v for k, v in p.items())
        terms = " + ".join(f"{v:.3f} × {k}" for k, v in p.items() if v >= 0.0005)
        return Score(
            value=value,
            answer=answer,
            explanation=f"logprobs: {terms} = {value:.3f}",
            metadata={
                "method": "logprobs",
                "distribution": {str(k): round(v, 6) for k, v in p.items()},
                "score_token_mass": round(total, 6),
                "grader_answer": words,
            },
        )

    return score


@task
def bare_weighted(dataset: str) -> Task:
    """The bare task with `weighted_digit` as its scorer: Inspect alone, keeping the weighted
    score with its arithmetic and distribution as the plugin's Score does."""
    return Task(
        dataset=json_dataset(dataset, record_to_sample),
        solver=generate(),
        scorer=weighted_digit(),
        config=JUDGE_CONFIG,
    )


# response mode: the grader's settings for method=auto (the plugin's score-only bound)
GRADER_CONFIG = GenerateConfig(temperature=0.0, logprobs=True, top_logprobs=20, max_tokens=24)


def record_to_reply_sample(record: dict[str, Any]) -> Sample:
    """The dialog without its last bot turn, as chat messages (the model writes the reply)."""
    turns = record["turns"]
    return Sample(
        id=record["id"],
        input=[
            ChatMessageUser(content=t["content"])
            if t["role"] in ("user", "human")
            else ChatMessageAssistant(content=t["content"])
            for t in turns[:-1]
        ],
        metadata=dict(record.get("metadata") or {}),
    )


@scorer(metrics=[mean()])
def grader_digit() -> Scorer:
    """Ask the ``grader`` role once with the rubric prompt of the dialog and its new
    reply (plain string work); the first digit 1-5 of its answer (0 if none)."""

    async def score(state: TaskState, target: Target) -> Score:
        turns = [
            {"role": m.role, "content": m.text}
            for m in state.messages
            if m.role in ("user", "assistant")
        ]
        prompt = rubric_prompt(turns)
        output = await get_model(role="grader").generate(
            [ChatMessageUser(content=prompt)], config=GRADER_CONFIG
        )
        digits = [c for c in output.completion if c in "12345"]
        return Score(value=float(digits[0]) if digits else 0.0, answer=output.completion)

    return score


@task
def bare_response(dataset: str) -> Task:
    """Bare Inspect, two calls a sample: ``generate()`` writes the reply, then a scorer
    asks the grader once with the rubric prompt of the same size (response mode's requests)."""
    return Task(
        dataset=json_dataset(dataset, record_to_reply_sample),
        solver=generate(),
        scorer=grader_digit(),
    )
