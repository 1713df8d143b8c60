"""Closed-world scoring through Inspect's own providers, against fakes that answer as the
services do: reasoning before the answer (vLLM without a reasoning parser, SGLang's
reasoning tokens in the logprobs), stops Inspect cannot map (OpenRouter's in-body error,
Anthropic's context window, Gemini's OTHER), a cut answer with a lead-in, a number in prose.

Each case is one dialog whose judge answer is a hand-made payload in the service's shape; the
sample must end with the expected value or be unscored with the expected reason.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fake_servers import Reply
from inspect_ai import eval
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import GenerateConfig, get_model

from inspect_empathy._util.summary import summary_lines
from inspect_empathy.tasks import empathy

pytestmark = pytest.mark.usefixtures("quick_backoff")

Respond = Callable[[dict[str, Any]], dict[str, Any]]


def tok(text: str, top: dict[str, float] | None = None) -> dict[str, Any]:
    """One chat-completions logprob token (UTF-8 bytes), its alternatives as probabilities."""
    top = top or {text: 0.99}
    return {
        "token": text,
        "logprob": math.log(top.get(text, 0.99)),
        "bytes": list(text.encode()),
        "top_logprobs": [
            {"token": t, "logprob": math.log(p), "bytes": list(t.encode())} for t, p in top.items()
        ],
    }


def spelled(text: str, scores: dict[str, dict[str, float]] | None = None) -> list[dict[str, Any]]:
    """Tokens that spell ``text`` (words and punctuation runs with their leading white
    space); a token listed in
    ``scores`` gets those alternatives the first time it appears (then the next key)."""
    import re

    pending = dict(scores or {})
    found = []
    for piece in re.findall(r"\s*\w+|\s*[^\w\s]+|\s+", text):
        found.append(tok(piece, pending.pop(piece, None)))
    return found


ANSWER = {" 4": {" 4": 0.6, " 5": 0.3, " 3": 0.1}}
"""The answer's own score token: weighted 4.2."""
DRAFT = {" 3": {" 3": 0.9, " 4": 0.1}, " 4": {" 4": 0.5, " 5": 0.5}}
"""Score tokens in the reasoning: the draft's 3 (weighted 3.1), a 4 (weighted 4.5)."""
OWN = tok("4", {"4": 0.6, "5": 0.3, "3": 0.1})
"""The answer's own score token after the reasoning: weighted 4.2."""


def chat(
    content: str | None,
    tokens: list[dict[str, Any]] | None,
    finish: str = "stop",
    n: int = 1,
    used: int = 8,
    **message: Any,
) -> Respond:
    """A chat.completion answer: ``n`` alike choices with the given content, tokens, stop
    reason, output tokens ``used`` per choice and extra message fields (``reasoning_content``)."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        choices = [
            {
                "index": i,
                "message": {"role": "assistant", "content": content, **message},
                "finish_reason": finish,
                "logprobs": {"content": tokens, "refusal": None} if tokens is not None else None,
            }
            for i in range(n)
        ]
        return {
            "id": "chatcmpl-closed-world",
            "object": "chat.completion",
            "created": 1700000000,
            "model": body.get("model", "fake"),
            "choices": choices,
            "usage": {
                "prompt_tokens": 100,
                "completion_tokens": used * n,
                "total_tokens": 100 + used * n,
            },
        }

    return respond


@dataclass(frozen=True)
class Case:
    name: str
    respond: Respond
    expect: float | str
    """The score, or a piece of the unscored reason."""
    flag: str | None = None
    """A metadata key the score must carry."""


def dialogs(path: Path, names: list[str]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for name in names:
            turns = [
                {"role": "user", "content": f"Case {name}: I lost my job today."},
                {"role": "assistant", "content": "I'm so sorry. That is a hard blow."},
            ]
            f.write(json.dumps({"id": name, "turns": turns, "rating": 4}) + "\n")
    return path


def run(
    server: Any, model: str, cases: list[Case], tmp_path: Path, response_mode: bool = False,
    bound: int | None = None, **task_args: Any,
) -> EvalLog:  # fmt: skip
    """One eval of ``cases`` (``bound``: the user's --max-tokens; a reasoning judge needs
    room for its reasoning)."""
    for case in cases:
        server.script(Reply(respond=case.respond), when=f"Case {case.name}:")
    data = dialogs(tmp_path / "d.jsonl", [c.name for c in cases])
    common: dict[str, Any] = {
        "log_dir": str(tmp_path / "logs"),
        "display": "none",
        "max_retries": 0,
        "timeout": 30,
        "fail_on_error": False,
    }
    if response_mode:
        # the grader's own bound, with room for its reasoning
        grader = get_model(model, config=GenerateConfig(max_tokens=REASONING_BOUND))
        args = {"dataset": str(data), **task_args}
        [log] = eval(
            "inspect_empathy/empathy_response", task_args=args,
            model="empathy_baseline/lexicon", model_roles={"grader": grader}, **common,
        )  # fmt: skip
    else:
        [log] = eval(
            empathy(dataset=str(data), **task_args), model=model, max_tokens=bound, **common
        )
    samples = {str(s.id): s for s in log.samples or []}
    check(samples, cases)
    return log


def check(samples: dict[str, EvalSample], cases: list[Case]) -> None:
    problems = []
    for case in cases:
        sample = samples[case.name]
        if sample.error is not None:
            problems.append(f"{case.name}: errored: {sample.error.message[:300]}")
            continue
        score = sample.scores["empathy_scorer"]  # type: ignore[index]
        value = score.value
        unscored = isinstance(value, float) and math.isnan(value)
        reason = (score.metadata or {}).get("unscored_reason", "")
        if isinstance(case.expect, str):
            if not unscored or case.expect not in reason:
                problems.append(f"{case.name}: expected '{case.expect}', got {value} {reason!r}")
        elif unscored or not math.isclose(float(value), case.expect, abs_tol=1e-6):  # type: ignore[arg-type]
            problems.append(f"{case.name}: expected {case.expect}, got {value} {reason!r}")
        elif case.flag and not (score.metadata or {}).get(case.flag):
            problems.append(f"{case.name}: no {case.flag} in {sorted(score.metadata or {})}")
    assert not problems, "\n".join(problems)


# -- 1, 2: reasoning before the answer -------------------------------------------------------

REASONING = (
    "Okay, the user lost a job. A draft: Score: 3. At first I'd rate it a 3, but it offers a "
    "plan in 4 steps too."
)
HALF_OPEN = REASONING + "\n</think>\n\n4"
"""DeepSeek-R1-0528 / Qwen3 Thinking-2507 through vLLM without a reasoning parser: the template
opened <think>, so the output holds only the closing tag, in ``content``."""
WHOLE = "<think>\n" + REASONING + "\n</think>\n\n4"
REASONING_BOUND = 2048
"""--max-tokens for a reasoning judge (the default 24 cuts its reasoning)."""
USED = 60
"""Output tokens such an answer takes: more than the default bound."""


def test_vllm_without_a_reasoning_parser_scores_the_answer_after_the_reasoning(
    vllm_server: Any, tmp_path: Path
) -> None:
    """Item 1 (half-open ``</think>``) and item 2 (a whole ``<think>`` block: Inspect strips
    the text, not the logprobs): the answer's own token weighs 4.2; the draft's 3.1 never."""
    cases = [
        Case("half_open", chat(HALF_OPEN, [*spelled(HALF_OPEN[:-1], DRAFT), OWN], used=USED), 4.2),
        Case("whole", chat(WHOLE, [*spelled(WHOLE[:-1], DRAFT), OWN], used=USED), 4.2),
        Case("inside", chat("<think>\nA draft: Score: 4", None), "ends inside reasoning"),
    ]
    run(vllm_server, "vllm/closed-world-qwen3-thinking", cases, tmp_path, bound=REASONING_BOUND)


def test_a_reasoning_model_under_the_default_bound_is_asked_again_with_room(
    vllm_server: Any, tmp_path: Path
) -> None:
    """README's row: the default bound (24) is spent on the reasoning, which the fake vLLM
    cuts there (``finish_reason: length``); no draft in it is read as the score: the call is
    asked again once with room (512), and the finished answer scored."""
    thoughts = "Okay, so the user lost a job. Score: 3 at first, but a plan helps. " * 3
    vllm_server.script(thoughts + "\n</think>\n\n4", when="Case default:")
    data = dialogs(tmp_path / "d.jsonl", ["default"])
    [log] = eval(empathy(dataset=str(data)), model="vllm/closed-world-qwen3-thinking",
                 log_dir=str(tmp_path / "logs"), display="none", max_retries=0)  # fmt: skip
    [sample] = log.samples or []
    assert sample.scores is not None
    [score] = sample.scores.values()
    assert 3.8 < float(score.value) < 4.0 and score.metadata is not None  # the fake's weights
    assert score.metadata["asked_again"] == {"max_tokens": 24, "again": 512, "cut": 1}
    bounds = [b.get("max_tokens", b.get("max_completion_tokens")) for b in vllm_server.bodies()]
    assert bounds == [24, 512]


def test_vllm_samples_and_cot_read_the_answer_not_the_draft(
    vllm_server: Any, tmp_path: Path
) -> None:
    """Item 1 under ``samples`` (3.0 today: the draft's label wins) and item 7 under
    ``samples``; then ``cot``, where a labelled draft inside the reasoning won."""
    refusal = "I can't rate this; I'd need 5 more turns of context"
    cases = [
        Case("samples", chat(HALF_OPEN, None, n=3, used=USED), 4.0),
        Case("refusal", chat(refusal, None, n=3), "none of 3 completions"),
    ]
    run(vllm_server, "vllm/closed-world-qwen3-samples", cases, tmp_path, method="samples",
        completions=3, bound=REASONING_BOUND)  # fmt: skip
    cot = "Draft. Score: 4 at first.\n</think>\n\nThe reply offers a plan but misses the fear.\n3"
    cases = [Case("cot", chat(cot, spelled(cot, {"\n3": {"\n3": 0.8, "\n2": 0.2}})), 2.8)]
    (tmp_path / "cot").mkdir()
    run(vllm_server, "vllm/closed-world-qwen3-cot", cases, tmp_path / "cot", cot=True,
        bound=REASONING_BOUND)  # fmt: skip


def test_a_reasoning_grader_in_response_mode_scores_the_answer(
    vllm_server: Any, tmp_path: Path
) -> None:
    cases = [Case("graded", chat(HALF_OPEN, [*spelled(HALF_OPEN[:-1], DRAFT), OWN], used=USED),
                  4.2)]  # fmt: skip
    run(vllm_server, "vllm/closed-world-grader", cases, tmp_path, response_mode=True)


def test_sglang_reasoning_tokens_in_the_logprobs_are_passed_over(
    openai_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 2: SGLang with a reasoning parser returns the reasoning in ``reasoning_content``
    and its tokens in ``logprobs``; the score token is the answer's (4.2), not the first
    that reads 4 (a draft ``Score: 4`` at 4.5)."""
    monkeypatch.setenv("SGLANG_BASE_URL", openai_server.url)
    monkeypatch.setenv("SGLANG_API_KEY", "test")
    thinking = "The user lost a job. Draft: Score: 4 for now."
    draft = {" 4": {" 4": 0.5, " 5": 0.5}}
    answer = OWN
    cases = [
        Case(
            "marked",
            chat("4", [*spelled(thinking, draft), tok("</think>"), tok("\n\n"), answer],
                 reasoning_content=thinking, used=USED),
            4.2,
        ),
        Case(
            "unmarked",
            chat("4", [*spelled(thinking, draft), tok("\n\n"), answer],
                 reasoning_content=thinking, used=USED),
            4.2,
        ),
    ]  # fmt: skip
    run(openai_server, "openai-api/sglang/deepseek-r1", cases, tmp_path, bound=REASONING_BOUND)


# -- 3, 7: cut answers and numbers in prose --------------------------------------------------


def test_cut_lead_ins_and_numbers_in_prose_are_unscored_through_openai(
    openai_server: Any, tmp_path: Path
) -> None:
    """Item 3: a cut "I'd give it a 4 at first glance, but ..." (the full answer ended
    ``Score: 3``); item 7: a refusal holding one number, under logprobs (``auto``)."""
    lead_in = "I'd give it a 4 at first glance, but let me check the"
    refusal = "I can't rate this; I'd need 5 more turns of context"
    closed = "Score: 4\n\nThe reply names the"
    cases = [
        Case("lead_in", chat(lead_in, spelled(lead_in, ANSWER), "length"), "cut off by max_tokens"),
        Case("refusal", chat(refusal, spelled(refusal, {" 5": {" 5": 0.3, " 1": 0.7}})),
             "no score"),
        # issue 47, item 2: a cut answer is never read (asked again, cut again here)
        Case("closed", chat(closed, spelled(closed, ANSWER), "length"), "raise --max-tokens"),
        # issue 38: a short top-logprobs list is flagged, its number kept
        Case("short", chat("4", [tok("4", {"4": 0.6})]), 4.0, flag="short_list"),
    ]  # fmt: skip
    log = run(openai_server, "openai/gpt-4o-mini", cases, tmp_path)
    assert log.results is not None
    assert "short_list" not in log.results.scores[0].metrics  # a count, not a metric
    # said where a reader looks: the Score's explanation and the end-of-run line
    [short] = [s for s in log.samples or [] if s.id == "short"]
    explained = short.scores["empathy_scorer"].explanation or ""  # type: ignore[index]
    assert "short list: 40.0% of the probability unlisted" in explained, explained
    [line] = summary_lines(log)
    assert "short_list 1" in line, line


# -- 4: stops outside the known set ----------------------------------------------------------

PARTIAL = "I'd give it a 4 out of"


def test_openrouter_in_body_error_is_unscored(
    openai_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenRouter reports a provider failure mid-answer as ``finish_reason: "error"`` with an
    ``error`` object in the choice (https://openrouter.ai/docs/api-reference/errors, "Errors
    during streaming"); Inspect maps it to ``unknown``."""
    monkeypatch.setenv("OPENROUTER_BASE_URL", openai_server.url)
    monkeypatch.setenv("OPENROUTER_API_KEY", "test")

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        # the call used the whole bound: still an error, never taken as a cut answer
        answer = chat(PARTIAL, spelled(PARTIAL, ANSWER), "error", used=24)(body)
        answer["choices"][0]["error"] = {"code": 502, "message": "Provider returned error"}
        answer["choices"][0]["native_finish_reason"] = "error"
        return answer

    cases = [Case("error", respond, "stop reason 'unknown'")]
    run(openai_server, "openrouter/openai/gpt-4o-mini", cases, tmp_path)


def anthropic(text: str, stop: str) -> Respond:
    def respond(body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": "msg_closed_world",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 8},
        }

    return respond


def test_anthropic_context_window_stop_is_unscored_and_prose_is_no_verdict(
    anthropic_server: Any, tmp_path: Path
) -> None:
    """``model_context_window_exceeded`` (https://docs.anthropic.com/en/api/handling-stop-reasons)
    reaches the scorer as ``unknown``; item 7 under ``parse`` (Claude has no logprobs)."""
    cases = [
        Case("window", anthropic(PARTIAL, "model_context_window_exceeded"), "did not finish"),
        Case("refusal", anthropic("I can't rate this; I'd need 5 more turns of context",
                                  "end_turn"), "no score"),
        Case("fine", anthropic("Score: 4", "end_turn"), 4.0),
    ]  # fmt: skip
    run(anthropic_server, "anthropic/claude-haiku-4-5", cases, tmp_path)


def test_gemini_other_stop_is_unscored(google_server: Any, tmp_path: Path) -> None:
    """Gemini's ``finishReason: OTHER`` (https://ai.google.dev/api/generate-content#FinishReason)
    reaches the scorer as ``unknown``."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        return {
            "candidates": [{"content": {"role": "model", "parts": [{"text": PARTIAL}]},
                            "finishReason": "OTHER"}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 8,
                              "totalTokenCount": 108},
            "modelVersion": "gemini-2.0-flash",
            "responseId": "closed-world",
        }  # fmt: skip

    google_server.script(respond, when="Case other:")
    data = dialogs(tmp_path / "d.jsonl", ["other"])
    [log] = eval(
        empathy(dataset=str(data), method="parse"), model="google/gemini-2.0-flash",
        log_dir=str(tmp_path / "logs"), display="none", max_retries=0, timeout=30,
        fail_on_error=False,
    )  # fmt: skip
    check({str(s.id): s for s in log.samples or []}, [Case("other", respond, "did not finish")])


# -- held-out forms: wordings, reasoning and tokens the cases above do not hold -------------


def test_held_out_answers_through_vllm(vllm_server: Any, tmp_path: Path) -> None:
    """Answers of other models and wordings through Inspect's vLLM provider (method auto):
    GLM-4.5V's answer box, EXAONE Deep's half-open ``</thought>``, gpt-oss decoded with its
    special tokens skipped, the GRPO recipes' ``<reasoning>`` tags,
    a LaTeX box, the end of turn listed in the logprobs, a Chinese verdict whose last
    character the server shows as U+FFFD pieces; a refusal whose number counts something,
    reasoning no tag sets aside, a stop that says finished on a cut answer, a question."""
    decoded = "analysisWe need to rate. Draft: Score: 3.assistantfinal4"
    grpo = "<reasoning>\nDraft: Score: 3, but a plan.\n</reasoning>\n<answer>\n4\n</answer>"
    boxed = "**Final Answer**\n$\\boxed{4}$"
    chinese = "评分：4分"
    counted = "Sorry, I cannot score this.\n5 more turns of context would be needed."
    untagged = "Okay, the user lost a job. Draft: Score: 3.\n\n4"
    lying = "I'd give it a 4 out of"
    fffd = [tok("\ufffd")] * 3
    glm = "<think>Draft: Score: 3.</think>\n<|begin_of_box|>4<|end_of_box|>"
    exaone = "Draft: Score: 3.\n</thought>\n\n4"
    cases = [
        Case("glm_box", chat(glm, [*spelled(glm[: glm.index("4<")], DRAFT), OWN,
                                   tok("<|end_of_box|>")]), 4.2),
        Case("exaone", chat(exaone, [*spelled(exaone[:-1], DRAFT), OWN]), 4.2),
        Case("decoded", chat(decoded, [*spelled(decoded[:-1], DRAFT), OWN]), 4.2),
        Case("grpo", chat(grpo, [*spelled(grpo[: grpo.index("4\n</")], DRAFT), OWN,
                                 *spelled("\n</answer>")]), 4.2),
        Case("boxed", chat(boxed, [*spelled(boxed[:-3]), OWN, *spelled("}$")]), 4.2),
        Case("end_marker", chat("4", [OWN, tok("<|im_end|>")]), 4.2),
        Case("chinese", chat(chinese, [tok("评分："), OWN, *fffd]), 4.2),
        Case("counted", chat(counted, spelled(counted, {"\n5": {"\n5": 0.9, "\n4": 0.1}})),
             "no verdict"),
        Case("untagged", chat(untagged, [*spelled(untagged[:-1], DRAFT), OWN]), "ambiguous"),
        Case("lying", chat(lying, spelled(lying, ANSWER)), "ends mid-verdict"),
        Case("question", chat("Score: 4?", spelled("Score: 4?", ANSWER)), "a question"),
    ]  # fmt: skip
    run(vllm_server, "vllm/held-out-judge", cases, tmp_path)


def test_held_out_wordings_through_anthropic(anthropic_server: Any, tmp_path: Path) -> None:
    """Claude's wordings (method parse: no logprobs) the parse table did not hold: other
    languages' labels and scales, "rate it" without an article, a box."""
    cases = [
        Case("rate_it", anthropic("I rate it 4.", "end_turn"), 4.0),
        Case("response_a", anthropic("I'd rate this response a 4.", "end_turn"), 4.0),
        Case("italian", anthropic("Punteggio: 4", "end_turn"), 4.0),
        Case("french", anthropic("4 sur 5", "end_turn"), 4.0),
        Case("russian", anthropic("Оценка: 4/5", "end_turn"), 4.0),
        Case("korean", anthropic("평가: 4점", "end_turn"), 4.0),
        Case("boxed", anthropic("\\boxed{4}", "end_turn"), 4.0),
        Case("counted", anthropic("5 more turns would be needed to rate this.", "end_turn"),
             "no verdict"),
        # a labelled number that is not the verdict: conditional, hedged, compared
        Case("conditional", anthropic("I'd give it a 5 if it named the fear, but it gets a 4.",
                                      "end_turn"), "several different scores (4, 5)"),
        Case("hedged", anthropic("Score: 3 (maybe 4)", "end_turn"), "several different scores"),
        Case("compared", anthropic("Score: >3", "end_turn"), "compared or approximate"),
        Case("open", anthropic("Score: 4 or higher", "end_turn"), "range of scores"),
    ]  # fmt: skip
    run(anthropic_server, "anthropic/claude-haiku-4-5", cases, tmp_path)


def test_thinking_blocks_and_thought_parts_hold_no_verdict(
    anthropic_server: Any, google_server: Any, tmp_path: Path
) -> None:
    """Claude's thinking block and Gemini's thought part, each holding a labelled draft that
    differs from the answer after it: the answer is read, the draft never; a thinking block
    with no text after it is unscored."""

    def claude(blocks: list[dict[str, Any]]) -> Respond:
        def respond(body: dict[str, Any]) -> dict[str, Any]:
            return {"id": "msg_t", "type": "message", "role": "assistant",
                    "model": body.get("model", "fake"), "content": blocks,
                    "stop_reason": "end_turn", "stop_sequence": None,
                    "usage": {"input_tokens": 100, "output_tokens": 8,
                              # reported, as the API does: Inspect counts it otherwise
                              "output_tokens_details": {"thinking_tokens": 6}}}  # fmt: skip

        return respond

    draft = {"type": "thinking", "thinking": "Draft: Score: 3. But it offers a plan.",
             "signature": "sig"}  # fmt: skip
    cases = [
        Case("thinking", claude([draft, {"type": "text", "text": "4"}]), 4.0),
        Case("only", claude([draft]), "no answer after the reasoning"),
    ]
    run(anthropic_server, "anthropic/claude-haiku-4-5", cases, tmp_path)

    def gemini(body: dict[str, Any]) -> dict[str, Any]:
        parts = [{"text": "Draft: Score: 3. But it offers a plan.", "thought": True},
                 {"text": "4"}]  # fmt: skip
        return {
            "candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 8,
                              "totalTokenCount": 108},
            "modelVersion": "gemini-2.0-flash", "responseId": "thought",
        }  # fmt: skip

    google_server.script(gemini, when="Case thought:")
    (tmp_path / "g").mkdir()
    data = dialogs(tmp_path / "g" / "d.jsonl", ["thought"])
    [log] = eval(empathy(dataset=str(data), method="parse"), model="google/gemini-2.0-flash",
                 log_dir=str(tmp_path / "g" / "logs"), display="none", max_retries=0,
                 timeout=30, fail_on_error=False)  # fmt: skip
    check({str(s.id): s for s in log.samples or []}, [Case("thought", gemini, 4.0)])


# -- issue 47: one verdict or none, through the providers ------------------------------------

REVISED = "I'd give it a 3 at first glance, but since it offers a plan, I'll go with 4."


def by_bound(cut: Respond, complete: Respond) -> Respond:
    """The cut answer under the default bound, the complete one when asked with room."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        bound = body.get("max_completion_tokens", body.get("max_tokens"))
        return (cut if bound == 24 else complete)(body)

    return respond


def test_revised_verdicts_are_unscored_under_every_method(
    openai_server: Any, tmp_path: Path
) -> None:
    """Item 1: the draft's 3 (3.2 under logprobs, 3 under parse) is never the score."""
    revised = [REVISED, "Score: 3, upgraded to 4 for the plan.", "Score: 3 → 4",
               "I'd give it a 5 – no, a 4.", "A 3 at first, so my final answer is 4."]  # fmt: skip
    cases = [
        Case(f"r{i}", chat(text, spelled(text, {" 3": {" 3": 0.8, " 4": 0.2}})),
             "several different scores")
        for i, text in enumerate(revised)
    ]  # fmt: skip
    run(openai_server, "openai/gpt-4o-mini", cases, tmp_path)
    for method, extra in (("samples", {"completions": 4}), ("parse", {"cot": True})):
        openai_server.clear()
        cases = [Case("s", chat(REVISED, None, n=4), "several different scores")]
        (tmp_path / method).mkdir()
        run(openai_server, "openai/gpt-4o-mini", cases, tmp_path / method, method=method,
            **extra)  # fmt: skip
    openai_server.clear()
    (tmp_path / "response").mkdir()
    run(openai_server, "openai/gpt-4o-mini", [Case("g", chat(REVISED, None),
        "several different scores")], tmp_path / "response", response_mode=True)  # fmt: skip


def test_a_cut_answer_is_asked_again_and_its_end_read(openai_server: Any, tmp_path: Path) -> None:
    """Item 2: ``Score: 4\\n\\n...but on reflection it never addresses the`` cut by the bound
    read 4.2; asked again with room, the complete answer ends ``lower it to 3.``: ambiguous,
    never 4. A complete clear answer after a cut is scored, both calls counted."""
    cut = "Score: 4\n\n...but on reflection it never addresses the"
    complete = cut + " fear, so I'd lower it to 3."
    clear = "Score: 4\n\nThe reply names the loss and offers a plan."
    cases = [
        Case("lowered", by_bound(chat(cut, spelled(cut, ANSWER), "length", used=24),
                                 chat(complete, spelled(complete, ANSWER), used=30)),
             "several different scores (3, 4)"),
        Case("clear", by_bound(chat(clear[:30], spelled(clear[:30], ANSWER), "length", used=24),
                               chat(clear, spelled(clear, ANSWER), used=14)), 4.2,
             flag="asked_again"),
    ]  # fmt: skip
    log = run(openai_server, "openai/gpt-4o-mini", cases, tmp_path)
    bounds = [r.body.get("max_completion_tokens", r.body.get("max_tokens"))
              for r in openai_server.requests]  # fmt: skip
    assert sorted(bounds) == [24, 24, 512, 512]
    [usage] = (log.stats.model_usage or {}).values()
    assert usage.output_tokens == 24 + 30 + 24 + 14


def test_samples_with_a_llama_sentence_half_read_it(openai_server: Any, tmp_path: Path) -> None:
    """Item 3: 10 draws ``5`` and 10 draws ``I would rate the chatbot's response a 4.`` gave
    5.0 (the unread half dropped); now every draw is read: 4.5."""
    texts = ["5", "I would rate the chatbot's response a 4."] * 10

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        answer = chat("", None, n=20)(body)
        for choice, text in zip(answer["choices"], texts, strict=True):
            choice["message"]["content"] = text
        return answer

    cases = [Case("llama", respond, 4.5)]
    run(openai_server, "openai/gpt-4o-mini", cases, tmp_path, method="samples", completions=20)


def test_end_tokens_of_unknown_names_keep_the_weighting(vllm_server: Any, tmp_path: Path) -> None:
    """Item 4: a service that keeps an end token the plugin does not know in ``logprobs``
    (``<seed:eos>``, MiniMax's ``[e~[``, ``<extra_id_1>``): 4.2, not 4.0 parsed."""
    cases = [
        Case(f"e{i}", chat("4", [OWN, tok(end)]), 4.2)
        for i, end in enumerate(("<seed:eos>", "[e~[", "<extra_id_1>"))
    ]
    inside = [tok("Score"), tok("<extra_id_7>"), tok(":"), tok(" 4", ANSWER[" 4"]), tok("[e~[")]
    cases.append(Case("inside", chat("Score: 4", inside), 4.2))
    run(vllm_server, "vllm/closed-world-end-tokens", cases, tmp_path)


def test_clear_verdicts_of_every_family_are_scored(anthropic_server: Any, tmp_path: Path) -> None:
    """Item 5: forms chat models write, refused before."""
    texts = {
        "final": "The final answer is 4.", "verdict": "Verdict - 4", "overall": "Overall, 4.",
        "table": "| Aspect | Score |\n|---|---|\n| Empathy | 4 |",
        "llama": "I would rate the chatbot's response a 4. The response acknowledges the loss.",
        "apriel": "Here are my reasoning steps:\nThe user is sad; a 3 or 5 seem off.\n"
                  "[BEGIN FINAL RESPONSE]\nScore: 4\n[END FINAL RESPONSE]",
        "gemma": "<|channel>thought\nThe reply is warm; maybe a 5.<channel|>4",
    }  # fmt: skip
    cases = [Case(name, anthropic(text, "end_turn"), 4.0) for name, text in texts.items()]
    run(anthropic_server, "anthropic/claude-sonnet-4-5", cases, tmp_path)


def test_magistral_through_openai_api_fails_in_one_line_naming_mistral(
    openai_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 6: Magistral's content is a list of chunks; Inspect's openai-api provider raises
    a TypeError in every sample. The plugin names the remedy (``mistral/``)."""
    monkeypatch.setenv("MISTRAL_BASE_URL", openai_server.url)
    monkeypatch.setenv("MISTRAL_API_KEY", "test")
    chunks = [{"type": "thinking", "thinking": [{"type": "text", "text": "The user is sad."}]},
              {"type": "text", "text": "4"}]  # fmt: skip
    openai_server.script(Reply(respond=chat(chunks, None)))  # type: ignore[arg-type]
    data = dialogs(tmp_path / "d.jsonl", ["m"])
    [log] = eval(empathy(dataset=str(data)), model="openai-api/mistral/magistral-medium-latest",
                 log_dir=str(tmp_path / "logs"), display="none", max_retries=0)  # fmt: skip
    assert log.status == "error" and log.error is not None
    message = log.error.message
    assert "list of chunks" in message and "--model mistral/magistral-medium-latest" in message
    assert "\n" not in message.strip()
