"""_judge_call and _providers: the request each service accepts, refusals, cut answers."""

from __future__ import annotations

import pytest
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)

from inspect_empathy._judge_call import mark_cut, plan_request
from inspect_empathy._providers import JudgeTraits, refused_option

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
        (400, "Invalid 'max_output_tokens': integer below minimum value. Expected a value "
              ">= 16, but got 8 instead.", "max_tokens"),  # fmt: skip
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
