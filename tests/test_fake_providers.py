"""Smoke tests: the fake Gemini, Groq and Mistral APIs speak to Inspect's own providers
through the real SDKs, and apply the services' documented limits (see fake_providers.py)."""

from __future__ import annotations

import pytest
from fake_providers import FakeGemini, FakeGroq, FakeMistral, Refusal
from inspect_ai.model import ContentReasoning, GenerateConfig, get_model

SCORE_PROMPT = "The reply to rate. Evaluation Form (return score ONLY):"
COT_PROMPT = "The reply to rate. Evaluation Form (reason first, then give the score):"

pytestmark = pytest.mark.usefixtures("quick_backoff")


def config(**kwargs: object) -> GenerateConfig:
    return GenerateConfig(max_retries=0, timeout=20, **kwargs)  # type: ignore[arg-type]


async def test_gemini_2_0_logprobs(google_server: FakeGemini) -> None:
    model = get_model("google/gemini-2.0-flash", memoize=False)
    out = await model.generate(
        SCORE_PROMPT, config=config(logprobs=True, top_logprobs=5, max_tokens=8)
    )
    assert out.completion == "4"
    assert out.choices[0].stop_reason == "stop"
    assert out.choices[0].logprobs is not None
    [score] = out.choices[0].logprobs.content
    assert score.token == "4"
    assert [t.token for t in score.top_logprobs or []] == ["4", "3", "5", "2", "1"]
    sent = google_server.last()
    assert sent.path == "/v1/models/gemini-2.0-flash:generateContent"
    assert sent.body["generationConfig"] == {
        "maxOutputTokens": 8,
        "responseLogprobs": True,
        "logprobs": 5,
    }
    # A certain score token (p = 1) comes without logProbability, and Inspect drops it.
    google_server.certain = True
    out = await model.generate("[judge-says:2] " + SCORE_PROMPT, config=config(logprobs=True))
    assert out.completion == "2"
    assert out.choices[0].logprobs is not None and out.choices[0].logprobs.content == []


async def test_gemini_2_5_refusals_and_thinking(google_server: FakeGemini) -> None:
    pro = get_model("google/gemini-2.5-pro", memoize=False)
    with pytest.raises(Exception, match="Logprobs is not enabled for models/gemini-2.5-pro"):
        await pro.generate(SCORE_PROMPT, config=config(logprobs=True, top_logprobs=5))
    assert google_server.last().status == 400
    # Thinking spends 200 tokens of maxOutputTokens first: 100 leaves no room to answer.
    out = await pro.generate(SCORE_PROMPT, config=config(max_tokens=100))
    assert out.completion == ""
    assert out.choices[0].stop_reason == "max_tokens"
    out = await pro.generate(COT_PROMPT, config=config(max_tokens=1000))
    assert out.completion.endswith("Score: 4")
    assert any(isinstance(c, ContentReasoning) for c in out.choices[0].message.content)
    assert out.usage is not None and out.usage.reasoning_tokens == 200
    # Inspect knows 2.5 Pro cannot stop thinking (no thinkingBudget 0 is sent) ...
    await pro.generate(SCORE_PROMPT, config=config(reasoning_tokens=0))
    assert "thinking_budget" not in google_server.last().body["generationConfig"]["thinkingConfig"]
    # ... nor a budget under its 128; 2.5 Flash accepts a budget of 0 (no thinking).
    with pytest.raises(Exception, match=r"The thinking budget \(50\) is invalid"):
        await pro.generate(SCORE_PROMPT, config=config(reasoning_tokens=50))
    flash = get_model("google/gemini-2.5-flash", memoize=False)
    out = await flash.generate(SCORE_PROMPT, config=config(reasoning_tokens=0, max_tokens=5))
    assert out.completion == "4"
    assert google_server.last().body["generationConfig"]["thinkingConfig"]["thinking_budget"] == 0


async def test_gemini_candidate_counts(google_server: FakeGemini) -> None:
    model = get_model("google/gemini-2.0-flash", memoize=False)
    out = await model.generate(SCORE_PROMPT, config=config(num_choices=8, temperature=1.0))
    assert len(out.choices) == 8
    assert {c.message.text for c in out.choices} <= {"3", "4", "5"}
    with pytest.raises(Exception, match="candidateCount value of 9"):
        await model.generate(SCORE_PROMPT, config=config(num_choices=9))
    gemini3 = get_model("google/gemini-3-pro-preview", memoize=False)
    with pytest.raises(Exception, match="Multiple candidates is not enabled for this model"):
        await gemini3.generate(SCORE_PROMPT, config=config(num_choices=2))
    with pytest.raises(Exception, match="Logprobs is not enabled"):
        await gemini3.generate(SCORE_PROMPT, config=config(logprobs=True))
    out = await gemini3.generate(SCORE_PROMPT, config=config(max_tokens=1000))
    assert out.completion == "4"
    assert [r.status for r in google_server.requests] == [200, 400, 400, 400, 200]


async def test_groq_limits(groq_server: FakeGroq) -> None:
    model = get_model("groq/llama-3.1-8b-instant", memoize=False)
    with pytest.raises(Exception, match="number must be at most 1"):
        await model.generate(SCORE_PROMPT, config=config(num_choices=2))
    assert groq_server.last().error == "'n' : number must be at most 1"
    groq_server.script(Refusal(400, "scripted refusal"), when="Dialog 7", times=1)
    with pytest.raises(Exception, match="scripted refusal"):
        await model.generate("Dialog 7. " + SCORE_PROMPT, config=config())
    # Inspect's groq provider does not pass logprobs on (the API would refuse them).
    out = await model.generate(SCORE_PROMPT, config=config(logprobs=True, top_logprobs=5))
    assert out.completion == "4"
    assert out.choices[0].logprobs is None
    assert "logprobs" not in groq_server.last().body
    assert groq_server.last().path == "/openai/v1/chat/completions"


async def test_mistral_cut_at_max_tokens(mistral_server: FakeMistral) -> None:
    # Inspect's default (Conversations API): the answer is cut, yet reported as "stop".
    conversation = get_model("mistral/mistral-large-latest", memoize=False)
    out = await conversation.generate(COT_PROMPT, config=config(max_tokens=3))
    assert out.completion == "The reply names"
    assert out.choices[0].stop_reason == "stop"
    assert mistral_server.last().path == "/v1/conversations"
    assert mistral_server.last().body["completion_args"] == {"max_tokens": 3}
    # Chat completions report the cut.
    chat = get_model("mistral/mistral-large-latest", conversation_api=False, memoize=False)
    out = await chat.generate(COT_PROMPT, config=config(max_tokens=3))
    assert out.completion == "The reply names"
    assert out.choices[0].stop_reason == "max_tokens"
    assert mistral_server.last().path == "/v1/chat/completions"
