"""_judge_call and _providers: the request each service accepts, refusals, cut answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)

from inspect_empathy.judge._judge_call import mark_cut, plan_request
from inspect_empathy.judge._providers import JudgeTraits, refused_option

RESPONSES = JudgeTraits("OpenAI Responses API", False, 1, min_output_tokens=16,
                        thinking="always", quiet=(("reasoning_effort", "minimal"),))  # fmt: skip


def test_a_bound_below_the_services_minimum_is_raised_even_when_the_user_set_it() -> None:
    plain = JudgeTraits("Responses, no reasoning", None, 1, min_output_tokens=16)
    request = plan_request(plain, "auto", 20, False, GenerateConfig(max_tokens=8))
    assert request.bound == 16 and request.config.max_tokens == 16
    assert any("raised to 16" in note for note in request.notes)


def test_reasoning_judge_gets_room_the_least_effort_and_no_logprobs() -> None:
    request = plan_request(RESPONSES, "auto", 20, False, GenerateConfig())
    assert request.reads == "parse" and request.config.logprobs is None
    assert request.config.reasoning_effort == "minimal"
    assert request.bound is not None and request.bound > 1000
    mine = plan_request(RESPONSES, "auto", 20, False, GenerateConfig(reasoning_effort="high",
                                                                     max_tokens=4000))  # fmt: skip
    assert mine.config.reasoning_effort == "high" and mine.bound == 4000


def test_logprobs_asked_of_a_judge_without_them_is_unscored_not_sent() -> None:
    request = plan_request(RESPONSES, "logprobs", 20, False, GenerateConfig())
    assert request.unanswerable and "gives no logprobs" in request.unanswerable


@pytest.mark.parametrize(("max_choices", "sent"), [(8, 8), (1, None), (None, 20)])
def test_samples_ask_as_many_per_call_as_the_service_takes(
    max_choices: int | None, sent: int | None
) -> None:
    traits = JudgeTraits("x", True, max_choices)
    request = plan_request(traits, "samples", 20, False, GenerateConfig())
    assert request.config.num_choices == sent


def answer(text: str, stop: str, output_tokens: int) -> ModelOutput:
    return ModelOutput(
        model="judge",
        choices=[ChatCompletionChoice(message=ChatMessageAssistant(content=text),
                                      stop_reason=stop)],  # type: ignore[arg-type]
        usage=ModelUsage(input_tokens=10, output_tokens=output_tokens, total_tokens=10),
    )  # fmt: skip


def test_an_answer_that_used_the_whole_bound_is_cut_whatever_its_stop_reason() -> None:
    assert mark_cut(answer("Let me", "stop", 512), 512).choices[0].stop_reason == "max_tokens"
    assert mark_cut(answer("4", "stop", 1), 512).choices[0].stop_reason == "stop"


class FakeBadRequest(Exception):
    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message


@pytest.mark.parametrize(
    ("status", "message", "option"),
    [
        (400, "Logprobs is not enabled for models/gemini-2.5-pro", "logprobs"),
        (400, "`logprobs` is not supported with this model", "logprobs"),
        (403, "You are not allowed to request logprobs from this model", "logprobs"),
        (400, "Multiple candidates is not enabled for this model", "num_choices"),
        (400, "'n' : number must be at most 1", "num_choices"),
        (
            400,
            "Invalid 'max_output_tokens': integer below minimum value. Expected a value "
            ">= 16, but got 8 instead.",
            "max_tokens",
        ),  # fmt: skip
        (400, "context_length_exceeded", None),
        (403, "Multiple candidates is not enabled", None),
        (500, "Logprobs is not enabled", None),
    ],
)
def test_refusals_are_read_from_the_providers_own_words(
    status: int, message: str, option: str | None
) -> None:
    found = refused_option(FakeBadRequest(status, message))
    assert (found[0] if found else None) == option


def test_the_request_inspect_quotes_beside_an_error_is_not_read() -> None:
    class Wrapped(RuntimeError):
        status_code = 400
        provider_message = "context_length_exceeded"

    error = Wrapped('Request: {"logprobs": true, "note": "logprobs not supported"}')
    assert refused_option(error) is None


# -- sequential sampling --------------------------------------------------------------------


@pytest.mark.parametrize("scores", [[4] * 5, [3, 4] * 4, [1, 2, 3, 4, 5], [2, 2, 5]])
def test_posterior_sd_matches_a_monte_carlo_dirichlet(scores: list[int]) -> None:
    """Independent check: draw p from Dirichlet(prior + counts), take the SD of sum p(k) k."""
    import numpy as np

    from inspect_empathy.judge._judge_call import PRIOR, posterior_sd

    rng = np.random.default_rng(0)
    alpha = [scores.count(k) + PRIOR for k in range(1, 6)]
    weighted = rng.dirichlet(alpha, size=200_000) @ np.arange(1, 6)
    # Dirichlet(0.02) tails make the Monte Carlo SD converge slowly: 5%
    assert posterior_sd(scores) == pytest.approx(float(weighted.std()), rel=0.05)


def test_rounds_are_as_many_a_call_as_the_service_takes() -> None:
    from inspect_empathy.judge._judge_call import round_sizes

    assert round_sizes(0, 1, 20) == [1, 1, 1, 1] and round_sizes(4, 1, 20) == [1, 1]
    assert round_sizes(19, 1, 20) == [1]
    assert round_sizes(0, 8, 20) == [8] and round_sizes(16, 8, 20) == [4]


@pytest.mark.parametrize("scores", [[4] * 4, [3, 4] * 3, [1, 2, 3, 4, 5], [2, 2, 5, 5]])
def test_next_cut_is_the_expected_drop_in_posterior_variance(scores: list[int]) -> None:
    """Independent check of the rule's quantity: E over the predictive of the next answer
    of the posterior variance after it, subtracted from the variance now."""
    from inspect_empathy.judge._judge_call import PRIOR, next_cut, posterior_sd

    alpha = [scores.count(k) + PRIOR for k in range(1, 6)]
    predictive = [a / sum(alpha) for a in alpha]
    after = sum(p * posterior_sd([*scores, k]) ** 2
                for k, p in zip(range(1, 6), predictive, strict=True))  # fmt: skip
    assert next_cut(scores) ** 2 == pytest.approx(posterior_sd(scores) ** 2 - after, rel=1e-9)


def test_four_alike_settle_a_judge_only_where_the_runs_judges_are_sure() -> None:
    from inspect_empathy.judge._judge_call import PRECISION, SamplingLedger, settled

    assert all(settled([k] * 4) for k in range(1, 6))  # no floor: the Dirichlet rule alone
    assert not settled([4, 4, 4, 3]) and not settled([3, 4, 3, 4])
    assert not settled([1, 5, 3, 2, 4, 3] * 3)  # a flat judge draws all 20
    assert not settled([4] * 20, precision=0)  # precision 0 draws every completion
    # at the stop, the posterior SD is at most precision * sqrt(a0 + n + 1)
    assert settled([3, 4] * 4) and not settled([3, 4] * 3)
    assert PRECISION > 0
    fresh = SamplingLedger()  # a run of one: it starts from a judge split 50/50
    assert fresh.contradiction() == pytest.approx(0.5) and fresh.floor() == pytest.approx(0.25)
    assert not settled([4] * 4, floor=fresh.floor())
    sure, split = SamplingLedger(), SamplingLedger()
    for _ in range(20):
        sure.first_round([4, 4, 4, 4])
        split.first_round([3, 4, 4, 3])
    assert sure.contradiction() < 0.02 and settled([4] * 4, floor=sure.floor())
    assert split.contradiction() > 0.4 and not settled([4] * 4, floor=split.floor())


def run_of(judges: list[list[float]], seed: int, completions: int = 20) -> dict[str, Any]:
    """The plugin's rule (`Draw`, one `SamplingLedger`) over a run of judges of known
    distributions, in order, fixed seed: estimates, calls, why each draw stopped."""
    import numpy as np

    from inspect_empathy.judge._judge_call import Draw, SamplingLedger

    rng = np.random.default_rng(seed)
    ledger = SamplingLedger()
    values, calls, stopped = [], [], []
    for p in judges:
        answers = [int(k) for k in rng.choice(range(1, 6), size=completions, p=p)]
        draw = Draw(ledger, 1, completions)
        scores: list[int] = []
        while sizes := draw.next_round(scores, len(scores)):
            scores = answers[: len(scores) + sum(sizes)]
        draw.finish()
        values.append(sum(scores) / len(scores))
        calls.append(draw.calls)
        stopped.append(draw.stopped)
    exact = [float(np.dot(p, range(1, 6))) for p in judges]
    return {"values": np.array(values), "calls": np.array(calls), "stopped": stopped,
            "exact": np.array(exact)}  # fmt: skip


def test_a_50_50_judge_is_not_settled_by_four_agreeing_answers() -> None:
    """In a run of judges split 50/50 between two levels (one in eight opens with four
    alike), no draw stops on its first four answers: each takes the run's six."""
    run = run_of([[0, 0, 0.5, 0.5, 0]] * 400, seed=3)
    assert run["calls"].min() >= 6 and run["calls"].mean() <= 6
    errors = run["values"] - 3.5
    assert abs(errors.mean()) < 0.05 and float(np.sqrt((errors**2).mean())) < 0.25


def test_flat_judges_take_the_budget_and_sure_ones_four() -> None:
    """A run of flat judges draws six answers each, or four where all four agree early in
    the run (a third of G-Eval's 20 is 6.67); a
    sure judge is settled by four alike once the run has seen sure judges; flat judges
    among sure ones take the calls the sure ones left unused."""
    flat = run_of([[0.2] * 5] * 200, seed=5)
    assert flat["calls"].max() == 6 and (flat["calls"] == 6).mean() > 0.95
    sure = run_of([[0, 0, 0, 1, 0]] * 100, seed=5)
    assert set(sure["calls"][20:]) == {4} and (sure["values"] == 4).all()
    mix = run_of(([[0, 0, 0, 1, 0]] * 9 + [[0.2] * 5]) * 40, seed=5)
    assert mix["calls"].mean() <= 6 and mix["calls"][9::10].mean() > 8


def test_on_a_mix_the_rule_spends_a_third_of_g_evals_calls_and_beats_fixed_n() -> None:
    """Mostly peaked judges with some split and flat ones (the shape of real judges at
    temperature 1): under a third of 20 answers a dialog on average, and a smaller squared
    error than the same number of answers drawn for every dialog (fixed seed; the margins
    are the benchmark's, benchmarks/sequential.py)."""
    rng = np.random.default_rng(11)
    judges = [[0, 0, 0.95, 0.05, 0]] * 80 + [[0, 0, 0.5, 0.5, 0]] * 10 + [[0.2] * 5] * 10
    judges = [judges[i] for i in rng.permutation(len(judges))] * 10
    run = run_of(judges, seed=11)
    answers = run["calls"].mean()
    assert answers <= 20 / 3
    err = np.mean((run["values"] - run["exact"]) ** 2)
    var = np.mean(
        [np.dot(p, np.arange(1, 6) ** 2) - e**2 for p, e in zip(judges, run["exact"], strict=True)]
    )
    assert err < 0.8 * var / answers  # fixed n at equal answers: Var / n


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(1, 5), min_size=20, max_size=20), min_size=1, max_size=30),
    st.sampled_from([1, 8]),
)
def test_a_run_never_averages_more_calls_than_the_budget(
    answers: list[list[int]], per_call: int
) -> None:
    """Whatever the judges answer, each draw makes at most its completions' calls, and the
    run's draws together at most `BUDGET` a dialog (in flight or finished)."""
    from inspect_empathy.judge._judge_call import BUDGET, Draw, SamplingLedger

    ledger = SamplingLedger()
    total = 0
    for dialog, said in enumerate(answers, 1):
        draw = Draw(ledger, per_call, 20)
        drawn: list[int] = []
        while sizes := draw.next_round(drawn, len(drawn)):
            assert all(1 <= size <= per_call for size in sizes)
            drawn = said[: len(drawn) + sum(sizes)]
        assert draw.calls <= -(-20 // per_call) and ledger.spare >= 0
        total += draw.calls
        assert total <= BUDGET * dialog
        if dialog % 3:  # some draws are still in flight when the next starts
            draw.finish()


# -- thinking room, and a prompt too long for the context ----------------------------------


@pytest.mark.parametrize(
    ("traits", "user", "room"),
    [
        (JudgeTraits("plain"), {}, 0),
        (JudgeTraits("plain"), {"reasoning_tokens": 3000}, 3000),
        (JudgeTraits("plain"), {"reasoning_effort": "high"}, 16000),
        (JudgeTraits("plain"), {"reasoning_effort": "none"}, 0),
        (RESPONSES, {}, 2048),
        (RESPONSES, {"reasoning_tokens": 1024}, 2048),  # never less than what it always uses
        (RESPONSES, {"reasoning_tokens": 8000}, 8000),
    ],
)
def test_thinking_gets_room_in_the_bound(
    traits: JudgeTraits, user: dict[str, object], room: int
) -> None:
    from inspect_empathy.judge._judge_call import thinking_room

    assert thinking_room(traits, user)[0] == room
    request = plan_request(traits, "parse", 20, False, GenerateConfig(**user))  # type: ignore[arg-type]
    assert request.bound == 24 + room


def test_a_bound_at_or_below_the_thinking_budget_is_raised_and_said() -> None:
    request = plan_request(JudgeTraits("Anthropic"), "parse", 20, False,
                           GenerateConfig(max_tokens=2048, reasoning_tokens=2048))  # fmt: skip
    assert request.bound == 2072 and any("raised to 2072" in n for n in request.notes)
    kept = plan_request(JudgeTraits("Anthropic"), "parse", 20, False,
                        GenerateConfig(max_tokens=2049, reasoning_tokens=2048))  # fmt: skip
    assert kept.bound == 2049


class SdkError(Exception):
    """As the openai SDK raises an HTTP error: status, parsed body, ``Error code`` message."""

    def __init__(self, status: int, body: object) -> None:
        super().__init__(f"Error code: {status} - {body}")
        self.status_code = status
        self.body = body
        self.message = str(self)


class InspectError(RuntimeError):
    """As Inspect wraps it (ModelGenerateError): the whole request quoted in the message."""

    def __init__(self, request: str, cause: SdkError) -> None:
        super().__init__(f"\nRequest:\n{request}\n\n{cause!r}")
        self.status_code = cause.status_code
        self.provider_message = str(cause)


def _raised(request: str, status: int, body: object) -> BaseException:
    cause = SdkError(status, body)
    try:
        raise InspectError(request, cause) from cause
    except InspectError as ex:
        return ex


WORDINGS = {
    "gemini": (400, "The input token count ({a}) exceeds the maximum number of tokens allowed "
                    "({b})."),
    "mistral": (400, "Prompt contains {a} tokens, too large for model with {b} maximum context "
                     "length"),
    "groq": (413, "Request too large for model `m` in organization `o` service tier `on_demand` "
                  "on tokens per minute (TPM): Limit {b}, Requested {a}, please reduce your "
                  "message size and try again."),
    "vllm": (400, "This model's maximum context length is {b} tokens. However, you requested "
                  "{a} tokens ({a} in the messages, 24 in the completion)."),
    "vllm-engine": (400, "The decoder prompt (length {a}) is longer than the maximum model "
                         "length of {b}."),
    "sglang": (400, "The input ({a} tokens) is longer than the model's context length ({b} "
                    "tokens)."),
    "sglang-total": (400, "Requested token count exceeds the model's maximum context length of "
                          "{b} tokens. You requested a total of {a} tokens."),
}  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    service=st.sampled_from(sorted(WORDINGS)),
    a=st.integers(1, 10**7),
    b=st.integers(1, 10**7),
    dialog=st.text(max_size=200),
    listed=st.booleans(),
)
def test_a_context_refusal_is_read_from_the_body_alone(
    service: str, a: int, b: int, dialog: str, listed: bool
) -> None:
    """Over services, numbers, body shapes (Gemini's list) and any dialog in the request:
    the provider's words are returned; the same words quoted only in the request, or under
    another status, are no refusal."""
    from inspect_empathy.judge._providers import context_refusal

    status, wording = WORDINGS[service]
    words = wording.format(a=a, b=b)
    body: object = {"message": words, "type": "invalid_request_error"}
    if listed:
        body = [{"error": {"code": status, "message": words}}]
    request = json.dumps({"messages": [{"role": "user", "content": dialog}]})
    assert context_refusal(_raised(request, status, body)) == " ".join(words.split())
    quoted = json.dumps({"messages": [{"role": "user", "content": dialog + words}]})
    assert context_refusal(_raised(quoted, 400, {"message": "Invalid request."})) is None
    other = 429 if status != 429 else 400
    assert context_refusal(_raised(request, other, body)) is None


@pytest.mark.parametrize(
    ("name", "thinking", "quiet"),
    [
        ("claude-3-5-haiku-latest", "none", ()),
        ("claude-3-7-sonnet-20250219", "none", ()),
        ("claude-sonnet-4-5-20250929", "none", ()),
        ("claude-sonnet-4-6", "none", ()),
        ("claude-opus-4-7", "always", ()),
        ("claude-opus-4-8", "always", ()),
        ("claude-sonnet-5", "optional", (("reasoning_effort", "none"),)),
        ("claude-opus-5-20260922", "optional", (("reasoning_effort", "none"),)),
        ("claude-haiku-5-5", "optional", (("reasoning_effort", "none"),)),
        ("claude-sonnet-5-5", "optional", (("reasoning_effort", "none"),)),
        ("claude-opus-5-5", "always", (("reasoning_effort", "low"),)),
        ("claude-fable-5-1", "always", (("reasoning_effort", "low"),)),
        ("claude-mythos-preview", "always", (("reasoning_effort", "low"),)),
        ("claude-opus-6", "always", (("reasoning_effort", "low"),)),
        ("anthropic.claude-sonnet-5-v1:0", "optional", (("reasoning_effort", "none"),)),
    ],
)
def test_each_claude_thinks_as_its_sources_say(name: str, thinking: str, quiet: tuple) -> None:
    from inspect_empathy.judge._providers import _anthropic_traits

    traits = _anthropic_traits(f"anthropic/{name}")
    assert (traits.thinking, traits.quiet, traits.logprobs, traits.max_choices) == (
        thinking,
        quiet,
        False,
        1,
    )


def test_a_provider_that_sets_no_stop_reason_is_read_by_the_tokens_it_used() -> None:
    """Inspect's hf/, nnterp/ and transformer_lens/ providers set no stop reason: every answer
    arrives as ``unknown``. Fewer output tokens than the bound: it ended on its own."""
    ended = mark_cut(answer("4", "unknown", 2), 24, reports_stop=False)
    assert ended.choices[0].stop_reason == "stop"
    cut = mark_cut(answer("I'd give it a 4 at first", "unknown", 24), 24, reports_stop=False)
    assert cut.choices[0].stop_reason == "max_tokens"
    assert mark_cut(answer("4", "unknown", 2), 24).choices[0].stop_reason == "unknown"
    refused = mark_cut(answer("4", "content_filter", 2), 24, reports_stop=False)
    assert refused.choices[0].stop_reason == "content_filter"


def test_a_local_transformers_judge_is_scored(tmp_path: Path) -> None:
    """Through Inspect's model API with a provider shaped as hf.py's (its class name is what
    `judge_traits` knows; no weights are loaded): the answer has no stop reason, as hf.py
    gives none; the default command scores it, and an answer that used the bound is cut."""
    from inspect_ai import eval
    from inspect_ai.model import ModelAPI, modelapi

    from inspect_empathy.tasks import empathy

    class HuggingFaceAPI(ModelAPI):
        async def generate(self, input, tools, tool_choice, config):  # type: ignore[no-untyped-def]
            cut = "Case cut" in input[-1].text
            text = "I'd give it a 4 at first glance, but" if cut else "Score: 4"
            used = config.max_tokens if cut else 4
            choice = ChatCompletionChoice(message=ChatMessageAssistant(content=text))
            return ModelOutput(model=self.model_name, choices=[choice],
                               usage=ModelUsage(input_tokens=10, output_tokens=used,
                                                total_tokens=10 + used))  # fmt: skip

    @modelapi(name="empathy_test_hf")
    def _provider() -> type[ModelAPI]:
        return HuggingFaceAPI

    data = tmp_path / "d.jsonl"
    rows = [{"id": n, "turns": [{"role": "user", "content": f"Case {n}: I lost my job."},
                                {"role": "assistant", "content": "I'm so sorry."}]}
            for n in ("fine", "cut")]  # fmt: skip
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    [log] = eval(empathy(dataset=str(data), method="parse"), model="empathy_test_hf/qwen",
                 log_dir=str(tmp_path / "logs"), display="none")  # fmt: skip
    scores = {s.id: s.scores["empathy_scorer"] for s in log.samples or []}  # type: ignore[index]
    assert scores["fine"].value == 4.0
    assert "cut off by max_tokens" in (scores["cut"].metadata or {})["unscored_reason"]
