"""Smoke tests: each fake of `fake_openai_shapes` talks to Inspect's own provider through
the real SDK, and applies its service's documented limits and token shapes."""

from __future__ import annotations

import pytest
from fake_openai_shapes import CHAT_PATH, RESPONSES_PATH, ShapeServer
from inspect_ai.model import GenerateConfig, get_model

RUBRIC = "Evaluation Form\nRate the reply. Empathy (return score ONLY):"

pytestmark = pytest.mark.usefixtures("quick_backoff")


def _config(**kwargs: object) -> GenerateConfig:
    return GenerateConfig(max_retries=1, reasoning_summary="none", **kwargs)  # type: ignore[arg-type]


async def test_responses_refuses_max_output_tokens_below_16(responses_server: ShapeServer) -> None:
    model = get_model("openai/gpt-5")
    with pytest.raises(Exception, match="integer below minimum value. Expected a value >= 16"):
        await model.generate(RUBRIC, config=_config(max_tokens=8))
    assert responses_server.bodies(RESPONSES_PATH)[-1]["max_output_tokens"] == 8


async def test_reasoning_spends_the_bound_before_any_answer(responses_server: ShapeServer) -> None:
    model = get_model("openai/gpt-5")
    cut = await model.generate(RUBRIC, config=_config(max_tokens=16, reasoning_effort="medium"))
    assert cut.choices[0].stop_reason == "max_tokens"
    assert cut.completion == ""
    assert cut.usage is not None and cut.usage.reasoning_tokens == 16
    body = responses_server.bodies(RESPONSES_PATH)[-1]
    assert body["reasoning"]["effort"] == "medium"
    assert "message.output_text.logprobs" not in body["include"]  # Inspect drops logprobs

    whole = await model.generate(RUBRIC, config=_config(max_tokens=512, reasoning_effort="low"))
    assert whole.completion == "4" and whole.choices[0].stop_reason == "stop"
    assert whole.usage is not None and whole.usage.reasoning_tokens == 64

    with pytest.raises(Exception, match="'none' is not supported with the 'gpt-5' model"):
        await model.generate(RUBRIC, config=_config(reasoning_effort="none"))


async def test_responses_gives_logprobs_to_a_non_reasoning_model(
    responses_server: ShapeServer,
) -> None:
    model = get_model("openai/gpt-4o", responses_api=True)
    output = await model.generate(RUBRIC, config=_config(logprobs=True, top_logprobs=5))
    assert responses_server.bodies(RESPONSES_PATH)[-1]["top_logprobs"] == 5
    assert output.choices[0].logprobs is not None
    top = output.choices[0].logprobs.content[0].top_logprobs or []
    assert [t.token for t in top][:3] == ["4", "3", "5"]


async def test_chat_completions_refuse_logprobs_for_gpt_5(responses_server: ShapeServer) -> None:
    model = get_model("openai/gpt-5", responses_api=False)
    with pytest.raises(Exception, match="'logprobs' is not supported"):
        await model.generate(RUBRIC, config=_config(logprobs=True, max_tokens=16))
    body = responses_server.bodies(CHAT_PATH)[-1]
    assert body["max_completion_tokens"] == 16 and "max_tokens" not in body


async def test_together_logprobs_reach_inspect_as_code_points(
    together_server: ShapeServer,
) -> None:
    together_server.script("I’d give it a 4.")
    model = get_model("together/meta-llama/Llama-3.3-70B-Instruct-Turbo")
    output = await model.generate(RUBRIC, config=_config(logprobs=True, top_logprobs=5))
    logprobs = output.choices[0].logprobs
    assert logprobs is not None
    apostrophe = next(lp for lp in logprobs.content if lp.token == "’d")
    assert apostrophe.bytes == [8217, 100]  # code points, not UTF-8 [226, 128, 153, 100]
    score = next(lp for lp in logprobs.content if lp.token == " 4")
    assert score.top_logprobs is None  # Inspect drops Together's native top_logprobs


@pytest.mark.parametrize(
    ("fixture", "model", "bytes_of_four"),
    [
        ("vllm_server", "vllm/fake-shapes-vllm-judge", [52]),
        ("ollama_server", "ollama/fake-shapes-judge", [52]),
        ("llamacpp_server", "llama-cpp-python/fake-shapes-judge", None),
    ],
)
async def test_local_servers_answer_with_logprobs(
    fixture: str, model: str, bytes_of_four: list[int] | None, request: pytest.FixtureRequest
) -> None:
    server: ShapeServer = request.getfixturevalue(fixture)
    output = await get_model(model).generate(
        RUBRIC, config=_config(logprobs=True, top_logprobs=3, max_tokens=16)
    )
    assert output.completion == "4"
    logprobs = output.choices[0].logprobs
    assert logprobs is not None
    assert logprobs.content[0].bytes == bytes_of_four
    assert [t.token for t in logprobs.content[0].top_logprobs or []] == ["4", "3", "5"]
    assert server.bodies(CHAT_PATH)[-1]["logprobs"] is True
