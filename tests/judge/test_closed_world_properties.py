"""One verdict or none, proven over generated outputs (Hypothesis).

(a) an answer with a sentence stating another score, wherever it stands (before, after, at
    any sentence or clause boundary), in wording generated from parts, is unscored under
    parse, logprobs, samples, cot and response mode's reading; (b) every answer whose stop is
    not a finished stop is unscored; (c) special and end tokens of random names inserted
    anywhere in the logprobs leave the weighted score unchanged; (d) sampled answers with an
    unreadable share u are scored only where 4u <= 0.25; (e) a clear verdict of each
    documented form is scored, after reasoning of any form, under any tokenisation.
    Examples per property: ``max_examples`` in each ``@settings``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    ContentReasoning,
    ContentText,
    Logprob,
    Logprobs,
    ModelOutput,
    TopLogprob,
)

from inspect_empathy.judge._geval import expected_score, judge_output
from inspect_empathy.judge._providers import FINISHED_STOPS
from inspect_empathy.judge._score_text import parse_score

QUICK = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)

# -- answers ------------------------------------------------------------------------------

SCORE_ONLY_FORMS = (
    "{s}",
    "{s}.",
    "**{s}**",
    "{s}/5",
    "{s} out of 5",
    "{s} - strong empathy",
    "{s}: Demonstrates empathy",
    "{s}\n\nThe reply acknowledges the loss.",
    "Score: {s}",
    "**Score:** {s}",
    "Overall: {s}",
    "Final score: {s}",
    "Rating: {s} out of 5",
    "I'd give it a {s}.",
    "The score is {s} out of 5.",
    "Empathetical responding (1-5): {s}",
    "Empathetical responding (1–5): {s}",
    "Evaluation Form (return score ONLY): {s}",
    "Score:\n{s}",
    "- Score: {s}",
    '{{"score": {s}}}',
    "Relevance: 5\nTone Matching: 2\nOverall: {s}",
    "I’d give it a {s}.",
    # held-out wordings: LaTeX boxes (reasoning models trained on mathematics), other
    # languages' labels and scales, "rate it" without an article
    "\\boxed{{{s}}}",
    "**Final Answer**\n$\\boxed{{{s}}}$",
    "Punteggio: {s}",
    "Оценка: {s}/5",
    "{s} sur 5",
    "Bewertung: {s} von 5",
    "评分：{s}分",
    "평가: {s}점",
    "I rate it {s}.",
    "I'd rate this response a {s}.",
    "{s} stars",
    "The response deserves a {s}.",
    "<score>{s}</score>",
    "> Score: {s}",
    # forms chat models write (issue 47): a sentence that ends on the score, a key, a table
    "The final answer is {s}.",
    "Verdict - {s}",
    "Overall, {s}.",
    "| Empathy | {s} |",
    "I would rate the chatbot's response a {s}.",
    "I would rate the chatbot's response a {s}. The response acknowledges the user's loss.",
    "After reading the dialog, I'll go with {s}.",
)
COT_FORMS = (
    "The reply names the loss and offers 2 steps.\nScore: {s}",
    "Reasoning with 2 steps.\nScore: {s}\n\nHope this helps.",
    "The reply is kind and matches the user's tone.\n{s}",
    '{{"reasoning": "it names the fear", "score": {s}}}',
    "Reasoning.\n**Score: {s}**",
)
DRAFTS = (
    "Score: 3",
    "I'd give it a 2.",
    "Final score: 5",
    "Overall: 1",
    "4/10",
    "Score: 4",
    "maybe 3 or 4",
    "At first I'd rate it a 3, but it offers a plan too.",
    '{"score": 2}',
    "1. Read it\n2. Emotion: sad\n3.",
    "Empathetical responding (1-5): 5",
    "5",
    "a 4 step plan",
    "\n",
    " ",
    "The user is anxious about 2 exams.",
    "Relevance: 5",
    "4 - strong empathy",
    "5 more turns would be needed.",
    "\\boxed{3}",
    "Punteggio: 2",
    "Hmm, 2",
)
reasoning_text = st.lists(st.sampled_from(DRAFTS), min_size=1, max_size=6).map(" ".join)


@dataclass(frozen=True)
class Form:
    """One way a completion carries reasoning before its answer."""

    name: str
    opening: str
    closing: str
    block: bool = False
    """Reasoning in a content block (not in the text)."""


FORMS = (
    Form("block", "", "", block=True),
    Form("think", "<think>\n", "\n</think>\n\n"),
    Form("think_attrs", '<think signature="x">', "</think>"),
    Form("half_open", "", "\n</think>\n\n"),
    Form("thinking", "<thinking>", "</thinking>\n"),
    Form("mistral", "[THINK]", "[/THINK]"),
    Form("seed", "<seed:think>", "</seed:think>"),
    Form("kimi", "◁think▷", "◁/think▷"),
    Form(
        "thought",
        "<|begin_of_thought|>\n",
        "\n<|end_of_thought|>\n\n<|begin_of_solution|>\n",
    ),
    Form("cohere", "<|START_THINKING|>", "<|END_THINKING|><|START_RESPONSE|>"),
    Form("granite", "Here is my thought process:\n", "\nHere is my response:\n"),
    Form(
        "harmony",
        "<|channel|>analysis<|message|>",
        "<|end|><|start|>assistant<|channel|>final<|message|>",
    ),
    Form("harmony_decoded", "analysis", "assistantfinal"),
    Form("exaone_half_open", "", "\n</thought>\n\n"),
    Form("glm_box", "<think>", "</think>\n<|begin_of_box|>"),
    Form("grpo", "<reasoning>\n", "\n</reasoning>\n<answer>\n"),
    Form("gemma", "<|channel>thought\n", "<channel|>"),
    Form("apriel", "Here are my reasoning steps:\n", "\n[BEGIN FINAL RESPONSE]\n"),
)


def with_reasoning(form: Form, reasoning: str, answer: str) -> str | list:
    if form.block:
        return [ContentReasoning(reasoning=reasoning), ContentText(text=answer)]
    tail = ""
    if form.name == "thought":
        tail = "\n<|end_of_solution|>"
    elif form.name == "harmony":
        tail = "<|return|>"
    elif form.name == "cohere":
        tail = "<|END_RESPONSE|>"
    elif form.name == "grpo":
        tail = "\n</answer>"
    elif form.name == "glm_box":
        tail = "<|end_of_box|>"
    elif form.name == "apriel":
        tail = "\n[END FINAL RESPONSE]"
    return f"{form.opening}{reasoning}{form.closing}{answer}{tail}"


def finished(content: str | list, logprobs: list[Logprob] | None = None) -> ChatCompletionChoice:
    return ChatCompletionChoice(
        message=ChatMessageAssistant(content=content),
        stop_reason="stop",
        logprobs=Logprobs(content=logprobs) if logprobs is not None else None,
    )


def judged(choices: list[ChatCompletionChoice], method: str, cot: bool) -> tuple[float | None, str]:
    out = judge_output(ModelOutput(model="judge", choices=choices), method, len(choices))  # type: ignore[arg-type]
    return out.value, out.method


# -- (e) after reasoning of any form --------------------------------------------------------


@settings(QUICK, max_examples=300)
@given(
    cot=st.booleans(),
    form=st.sampled_from(FORMS),
    reasoning=reasoning_text,
    shape=st.integers(0, 100),
    score=st.sampled_from((1, 2, 3, 4, 5)),
    method=st.sampled_from(("parse", "samples")),
)
def test_a_final_answer_scores_the_same_after_any_reasoning(
    cot: bool, form: Form, reasoning: str, shape: int, score: int, method: str
) -> None:
    forms = COT_FORMS if cot else SCORE_ONLY_FORMS
    answer = forms[shape % len(forms)].format(s=score)
    alone = judged([finished(answer), finished(answer)], method, cot)
    after = judged([finished(with_reasoning(form, reasoning, answer))] * 2, method, cot)
    assert alone == (float(score), method)
    assert after == alone


# -- (e) under any tokenisation, with the reasoning's tokens listed ------------------------

SPACE_STYLES = (" ", "Ġ", "▁")


@st.composite
def tokenised(draw: st.DrawFn, text: str, start: int, end: int, top: dict[int, float]) -> list:
    """``text`` as tokens of one generated tokeniser: the score (``text[start:end]``) is one
    token, with a leading space or not, written as a space, ``Ġ`` or ``▁``; the rest is cut
    at random places, non-ASCII characters whole, split into byte escapes, or U+FFFD."""
    style = draw(st.sampled_from(SPACE_STYLES))
    with_bytes = style == " " and draw(st.booleans())
    lead = start > 0 and text[start - 1] == " " and draw(st.booleans())
    head, digit, rest = text[: start - lead], text[start - lead : end], text[end:]

    def spell(piece: str) -> str:
        return piece.replace(" ", style) if style != " " else piece

    def pieces(part: str) -> list[Logprob]:
        found: list[Logprob] = []
        i = 0
        while i < len(part):
            size = draw(st.integers(1, 4))
            chunk = part[i : i + size]
            i += size
            if any(ord(c) > 127 for c in chunk) and with_bytes and draw(st.booleans()):
                raw = chunk.encode()
                cut = draw(st.integers(1, len(raw) - 1))
                for b in (raw[:cut], raw[cut:]):
                    escaped = "bytes:" + "".join(f"\\x{x:02x}" for x in b)
                    found.append(Logprob(token=escaped, logprob=-0.01, bytes=list(b)))
                continue
            if any(ord(c) > 127 for c in chunk) and not with_bytes and draw(st.booleans()):
                # servers without bytes send U+FFFD for each piece of a split character
                found += [Logprob(token="\ufffd", logprob=-0.01)] * len(chunk.encode())
                continue
            if chunk == "\n" and style == "▁" and draw(st.booleans()):
                found.append(Logprob(token="<0x0A>", logprob=-0.01))
                continue
            found.append(
                Logprob(
                    token=spell(chunk),
                    logprob=-0.01,
                    bytes=list(chunk.encode()) if with_bytes else None,
                )
            )
        return found

    alternatives = [
        TopLogprob(token=spell(digit[:-1] + str(k)), logprob=math.log(p)) for k, p in top.items()
    ]
    chosen = Logprob(
        token=spell(digit),
        logprob=math.log(top[int(digit[-1])]),
        bytes=list(digit.encode()) if with_bytes else None,
        top_logprobs=alternatives,
    )
    return [*pieces(head), chosen, *pieces(rest)]


distributions = st.dictionaries(
    st.sampled_from((1, 2, 3, 4, 5)), st.floats(0.05, 1.0), min_size=1, max_size=5
).map(lambda d: {k: p / (sum(d.values()) * 1.001) for k, p in d.items()})


@settings(QUICK, max_examples=300)
@given(data=st.data(), cot=st.booleans(), form=st.sampled_from(FORMS), shape=st.integers(0, 100))
def test_the_weighted_score_is_the_answers_own_under_any_tokens(
    data: st.DataObject, cot: bool, form: Form, shape: int
) -> None:
    top = data.draw(distributions)
    score = data.draw(st.sampled_from(sorted(top)))
    forms = COT_FORMS if cot else SCORE_ONLY_FORMS
    answer = forms[shape % len(forms)].format(s=score)
    match = parse_score(answer)
    tokens = data.draw(tokenised(answer, match.start, match.end, top))
    expected = expected_score({k: top.get(k, 0.0) / sum(top.values()) for k in range(1, 6)})
    alone = judged([finished(answer, tokens)], "logprobs", cot)
    assert alone[1] == "logprobs" and alone[0] is not None
    assert math.isclose(alone[0], expected, abs_tol=1e-9)
    # the reasoning's own tokens, with score-like tokens of other weights, before the answer's
    reasoning = data.draw(reasoning_text)
    if data.draw(st.booleans()):
        reasoning += "\nDraft: " + answer  # the answer itself, drafted in the reasoning
    content = with_reasoning(form, reasoning, answer)
    raw = content if isinstance(content, str) else reasoning + "\n\n" + answer
    before = raw[: len(raw) - len(raw.rsplit(answer, 1)[1]) - len(answer)]
    # the reasoning's tokens: each digit its own token, weighed otherwise than the answer's
    decoys = [
        Logprob(
            token=piece,
            logprob=math.log(0.5),
            top_logprobs=[
                TopLogprob(token=piece, logprob=math.log(0.5)),
                TopLogprob(token=piece.replace(piece.strip(), "1"), logprob=math.log(0.4)),
            ],
        )
        if piece.strip().isdigit()
        else Logprob(token=piece, logprob=-0.01)
        for piece in _split(before)
    ]
    after = [*decoys, *tokens]
    tail = raw[len(before) + len(answer) :]
    after += [Logprob(token=t, logprob=-0.01) for t in _split(tail)]
    # the end of turn as a special token, where the server lists it and the text has none
    if not tail:
        after += [Logprob(token=t, logprob=-0.01) for t in data.draw(END_MARKERS)]
    with_tokens = judged([finished(content, after)], "logprobs", cot)
    assert with_tokens == alone


END_MARKERS = st.sampled_from(
    ((), (), ("<|im_end|>",), ("</s>",), ("<|eot_id|>",), ("<end_of_turn>",), ("<|return|>",),
     ("<｜end▁of▁sentence｜>",), ("<|end|>", "<|endoftext|>"))
)  # fmt: skip
"""Special tokens after the answer: llama.cpp, vLLM with special tokens kept and gpt-oss's
harmony tokens list the end of turn in the logprobs, not in the text."""


def _split(text: str) -> list[str]:
    """Tokens as a tokenizer that splits digits cuts them: a digit (with its space) alone."""
    return re.findall(r" ?\d|[^\d]{1,3}", text)


# -- (b) stops ------------------------------------------------------------------------------

KNOWN_STOPS = st.sampled_from(
    ("unknown", "tool_calls", "model_length", "content_filter", "length", "end_turn", "error",
     "OTHER", "model_context_window_exceeded", "pause_turn", "eos", "abort", "")
)  # fmt: skip


@settings(QUICK, max_examples=200)
@given(
    stop=st.one_of(KNOWN_STOPS, st.just("max_tokens"), st.text(max_size=12)).filter(
        lambda s: s not in FINISHED_STOPS
    ),
    shape=st.integers(0, 100),
    score=st.sampled_from((1, 2, 3, 4, 5)),
    method=st.sampled_from(("auto", "logprobs", "parse", "samples")),
)
def test_any_stop_outside_the_known_set_is_unscored(
    stop: str, shape: int, score: int, method: str
) -> None:
    answer = SCORE_ONLY_FORMS[shape % len(SCORE_ONLY_FORMS)].format(s=score)
    match = parse_score(answer)
    token = Logprob(
        token=answer[match.start : match.end],
        logprob=math.log(0.9),
        top_logprobs=[TopLogprob(token=str(score), logprob=math.log(0.9))],
    )
    tokens = [Logprob(token=answer[: match.start], logprob=-0.01), token,
              Logprob(token=answer[match.end :], logprob=-0.01)]  # fmt: skip
    choice = ChatCompletionChoice.model_construct(
        message=ChatMessageAssistant(content=answer),
        stop_reason=stop,
        logprobs=Logprobs(content=[t for t in tokens if t.token]),
    )
    out = judge_output(ModelOutput(model="judge", choices=[choice, choice]), method, 2)  # type: ignore[arg-type]
    assert out.value is None
    assert out.reason


# -- reasoning no tag sets aside ------------------------------------------------------------

BARE_ANSWERS = ("{s}", "**{s}**", "{s} - strong empathy", "{s}\n\nThe reply acknowledges the loss.")


@settings(QUICK, max_examples=300)
@given(
    reasoning=reasoning_text,
    shape=st.integers(0, 100),
    score=st.sampled_from((1, 2, 3, 4, 5)),
    cot=st.booleans(),
    method=st.sampled_from(("parse", "samples")),
)
def test_untagged_reasoning_gives_the_answers_score_or_none(
    reasoning: str, shape: int, score: int, cot: bool, method: str
) -> None:
    """Reasoning in no form the answer region knows (a model that writes no tags, a tag no
    service documents) stays in the text: its drafts may be read as candidates, so the answer
    may be unscored as ambiguous, but a score is never one of the drafts' where the final
    answer says another."""
    forms = COT_FORMS if cot else BARE_ANSWERS
    answer = forms[shape % len(forms)].format(s=score)
    value, _ = judged([finished(f"{reasoning}\n\n{answer}")] * 2, method, cot)
    assert value is None or value == score, (reasoning, answer)


# -- refusals holding numbers ---------------------------------------------------------------

REFUSING = ("", "I can't rate this; ", "Sorry, I cannot evaluate this conversation.\n",
            "Unable to score.\n\n", "I'm not able to judge this. ", "- ", "The user gets a ",
            "It deserves a ")  # fmt: skip
COUNTED = (" more turns", " reasons", " exchanges", " more messages of context", " turns",
           " times", " people", " más turnos", " weitere Nachrichten", " minute break",
           "-step plan", "-minute read")  # fmt: skip
ENDINGS = ("", ".", " would be needed to rate this.", " are missing.", ":\n- a\n- b")


@settings(QUICK, max_examples=200)
@given(
    opening=st.sampled_from(REFUSING), n=st.sampled_from("12345"),
    counted=st.sampled_from(COUNTED), ending=st.sampled_from(ENDINGS),
    method=st.sampled_from(("auto", "parse", "samples")),
)  # fmt: skip
def test_a_number_that_counts_something_is_no_verdict(
    opening: str, n: str, counted: str, ending: str, method: str
) -> None:
    """A refusal (or any prose) whose one number counts something, wherever it stands on
    its line, is unscored."""
    text = f"{opening}{n}{counted}{ending}"
    tokens = [Logprob(token=p, logprob=-0.01, top_logprobs=[TopLogprob(token=p, logprob=-0.01)])
              for p in _split(text)]  # fmt: skip
    value, _ = judged([finished(text, tokens)] * 2, method, False)
    assert value is None, text


# -- stops that say finished on a cut answer ------------------------------------------------

LABELS = (
    "", "Score: ", "Overall: ", "Final score: ", "I'd give it a ", "**Score:** ", "Score:\n",
    "The score is ", "Score ", '{"score": ', "Punteggio: ", "I rate it ", "评分：",
    "I'd rate this response a ",
)  # fmt: skip
DANGLING = ("/", " /", " out of", " out of ", " of", " or", " to", "-", " – ", ",", " sur", " de")


@settings(QUICK, max_examples=150)
@given(
    label=st.sampled_from(LABELS), digit=st.sampled_from("12345"),
    dangling=st.sampled_from(DANGLING), method=st.sampled_from(("auto", "parse", "samples")),
)  # fmt: skip
def test_an_answer_that_ends_mid_verdict_is_unscored_whatever_its_stop(
    label: str, digit: str, dangling: str, method: str
) -> None:
    """``I'd give it a 4 out of`` with stop ``stop``: the service (or Inspect's mapping)
    said finished on an answer the bound cut; its complete form could be ``4 out of 10``."""
    text = f"{label}{digit}{dangling}"
    value, _ = judged([finished(text)] * 2, method, False)
    assert value is None, text


def test_tokens_that_spell_the_answer_twice_are_not_weighed() -> None:
    """Untagged reasoning in the logprobs that drafted the whole answer, with no reasoning
    returned apart to spell it by: the tokens spell the answer in two places, so which one
    wrote the score cannot be told; logprobs leave it unscored (auto parses it)."""
    draft = [Logprob(token=t, logprob=-0.01, top_logprobs=[TopLogprob(token=t, logprob=-0.01)])
             for t in ("Draft: ", "评分：", "4", "分", "\n\n")]  # fmt: skip
    own = Logprob(token="4", logprob=math.log(0.6),
                  top_logprobs=[TopLogprob(token="4", logprob=math.log(0.6)),
                                TopLogprob(token="5", logprob=math.log(0.4))])  # fmt: skip
    unspelled = [Logprob(token="评", logprob=-0.01)] + [Logprob(token="\ufffd", logprob=-0.01)] * 6
    tokens = [*draft, *unspelled, own, Logprob(token="分", logprob=-0.01)]
    assert judged([finished("评分：4分", tokens)], "logprobs", False) == (None, "logprobs")
    assert judged([finished("评分：4分", tokens)], "auto", False) == (4.0, "parse")
    # the answer's own tokens alone are found, through the U+FFFD pieces
    assert judged([finished("评分：4分", tokens[5:])], "logprobs", False) == (4.4, "logprobs")


def test_unspelled_characters_around_the_score_do_not_hide_it() -> None:
    """A Chinese verdict inside the Bespoke-Stratos solution tags, every CJK character shown
    as U+FFFD pieces: U+FFFD's first byte is also the first of ``：``, and such a byte
    never anchors the alignment, so the score's own token is found."""
    own = Logprob(token="1", logprob=math.log(0.7),
                  top_logprobs=[TopLogprob(token="1", logprob=math.log(0.7)),
                                TopLogprob(token="2", logprob=math.log(0.3))])  # fmt: skip
    fffd = Logprob(token="\ufffd", logprob=-0.01)
    tail = [Logprob(token=t, logprob=-0.01) for t in ("\n<|", "end", "_of_", "solution", "|>")]
    tokens = [*[fffd] * 9, own, *[fffd] * 3, *tail]
    value, method = judged([finished("评分：1分\n<|end_of_solution|>", tokens)], "logprobs", False)
    assert method == "logprobs" and value is not None and math.isclose(value, 1.3)


# -- conditions, alternatives and comparisons beside a labelled number ----------------------

VERDICT_LABELS = ("Score: ", "I'd give it a ", "I'd rate it ", "It deserves a ", "Rating: ",
                  "**Score:** ", "The score is ")  # fmt: skip
NOT_THE_VERDICT = (
    "{a} if it named the fear", "{a} if it had named the fear", "{a} at best", "{a} at most",
    "{a} is not warranted", "{a} unless it misses the fear", "{a} (maybe {b})", "{a}, maybe {b}",
    "{a} — possibly {b}", "{a} or maybe {b}", "{a} (borderline {b})", "{a}\nCould also be {b}.",
    "{a} or higher", "{a}+", "{a}-ish", ">{a}", "~{a}", "≥{a}", "at least {a}", "around {a}",
)  # fmt: skip
"""A labelled number the judge does not give as its verdict: under a condition, denied, with
another score offered beside it, or compared."""


@settings(QUICK, max_examples=250)
@given(
    label=st.sampled_from(VERDICT_LABELS), shape=st.sampled_from(NOT_THE_VERDICT),
    a=st.sampled_from("12345"), b=st.sampled_from("12345"), gets=st.booleans(),
    opening=st.sampled_from(("", "If it had named the fear, ", "Had it named the fear, ")),
    method=st.sampled_from(("parse", "samples")),
)  # fmt: skip
def test_a_number_not_given_as_the_verdict_is_never_the_score(
    label: str, shape: str, a: str, b: str, gets: bool, opening: str, method: str
) -> None:
    """``I'd give it a 5 if it named the fear, but it gets a 4`` reads 4 or nothing, never
    5; ``Score: 3 (maybe 4)``, ``Score: >3`` and ``Score: 4 or higher`` read nothing."""
    if a == b:
        return
    text = f"{label}{shape.format(a=a, b=b)}"
    text = f"{opening}{text[0].lower()}{text[1:]}" if opening and "{b}" not in shape else text
    if gets:
        text += f", but it gets a {b}."
    value, _ = judged([finished(text)] * 2, method, False)
    assert value is None or value == float(b), text


# -- (a) one verdict or none: another score stated anywhere ------------------------------------

OPENERS = ("", "Hmm, ", "On reflection, ", "Actually, ", "But ", "Then again, ", "Wait — ",
           "So ", "Overall, ", "That said, ")  # fmt: skip
STATEMENTS = (
    "I'd give it a {n}", "I'll go with {n}", "my final answer is {n}", "the final answer is {n}",
    "I'd upgrade it to {n}", "I'll lower it to {n}", "upgraded to {n}", "lowered to {n}",
    "a {n} feels right", "a {n} seems fairer", "{n}", "Score: {n}", "→ {n}", "– no, a {n}",
    "— make that {n}", "I'd rate it {n}", "it deserves a {n}", "let me revise to {n}",
    "{n} is more like it", "Final score: {n}", "I would rate the chatbot's response a {n}",
    "it's a {n}", "**{n}**", "I'd say {n}",
)  # fmt: skip
REASONS = ("", "", " for the plan", " because it offers a plan", " overall", " instead",
           " after all", " on second thought", " given the tone")  # fmt: skip
STOPS = (".", "!", "", ";", ".\n")
statements = st.tuples(
    st.sampled_from(OPENERS), st.sampled_from(STATEMENTS), st.sampled_from(REASONS),
    st.sampled_from(STOPS),
)
JOINS = (" ", "\n", "\n\n", ", ", " — ")


def boundaries(text: str) -> list[int]:
    """Where a sentence or clause may be inserted: the start, the end, after every sentence
    end, clause mark and line break."""
    found = {0, len(text)}
    for m in re.finditer(r"[.!?;,]\s|\n", text):
        found.add(m.end())
    return sorted(found)


def stated(parts: tuple[str, str, str, str], n: int) -> str:
    opener, statement, reason, stop = parts
    text = f"{opener}{statement.format(n=n)}{reason}{stop}"
    return text[0].upper() + text[1:] if not opener else text


def _logprob_tokens(text: str) -> list[Logprob]:
    """Tokens of ``text``, each digit its own with an even spread over 1-5."""
    spread = [TopLogprob(token=str(k), logprob=math.log(0.19)) for k in range(1, 6)]
    return [
        Logprob(token=p, logprob=math.log(0.19), top_logprobs=spread)
        if p.strip().isdigit() else Logprob(token=p, logprob=-0.01)
        for p in _split(text)
    ]  # fmt: skip


@settings(QUICK, max_examples=400)
@given(
    shape=st.integers(0, 200), score=st.sampled_from((1, 2, 3, 4, 5)),
    other=st.sampled_from((1, 2, 3, 4, 5)), parts=statements, data=st.data(),
    cot=st.booleans(),
)  # fmt: skip
@example(shape=0, score=4, other=3, parts=("", "I'd give it a {n}", " at first glance", ""),
         data=None, cot=False)  # fmt: skip
def test_another_score_stated_anywhere_leaves_the_answer_unscored(
    shape: int, score: int, other: int, parts: tuple[str, str, str, str], data: st.DataObject,
    cot: bool,
) -> None:
    """``I'd give it a 3 at first glance, but ... I'll go with 4.``: two different scores,
    whichever is labelled and whichever comes last, are no verdict."""
    if other == score:
        return
    forms = COT_FORMS if cot else SCORE_ONLY_FORMS
    answer = forms[shape % len(forms)].format(s=score)
    sentence = stated(parts, other)
    places = boundaries(answer)
    at = places[data.draw(st.integers(0, len(places) - 1))] if data is not None else 0
    join = data.draw(st.sampled_from(JOINS)) if data is not None else ", but "
    text = answer[:at] + (join if at else "") + sentence + (join if at < len(answer) else "")
    text += answer[at:]
    for method in ("parse", "samples", "logprobs", "auto"):
        choice = finished(text, _logprob_tokens(text))
        value, _ = judged([choice] * 2, method, cot)
        assert value is None, (method, text)


def test_the_revisions_of_the_issue_are_unscored() -> None:
    for text in (
        "I'd give it a 3 at first glance, but since it offers a plan, I'll go with 4.",
        "I'd give it a 3 at first glance, so my final answer is 4.",
        "Score: 3, upgraded to 4 for the plan.",
        "Score: 3 → 4",
        "I'd give it a 5 – no, a 4.",
    ):
        with_tokens = finished(text, _logprob_tokens(text))
        for method in ("parse", "samples", "logprobs", "auto"):
            for cot in (False, True):
                assert judged([with_tokens] * 2, method, cot)[0] is None, (text, method)


# -- (c) special and end tokens of any name ------------------------------------------------

special_names = st.tuples(
    st.sampled_from("<[{|«⟨"), st.text("abcdefghijklmnopqrstuvwxyz_:~!|0123456789", max_size=12),
    st.sampled_from(">]}|»⟩["),
).map("".join)
"""A special token's name: brackets of some kind around anything (``<seed:eos>``,
``[e~[``, ``<extra_id_1>``), as no list of known names holds."""


@settings(QUICK, max_examples=300)
@given(data=st.data(), shape=st.integers(0, 200), top=distributions, names=st.lists(
    special_names, min_size=1, max_size=4))  # fmt: skip
@example(data=None, shape=0, top={4: 0.8, 5: 0.2}, names=["<seed:eos>", "[e~[", "<extra_id_1>"])
def test_special_tokens_of_any_name_anywhere_leave_the_weighted_score(
    data: st.DataObject, shape: int, top: dict[int, float], names: list[str]
) -> None:
    score = max(top, key=lambda k: top[k])
    answer = SCORE_ONLY_FORMS[shape % len(SCORE_ONLY_FORMS)].format(s=score)
    if any(name in answer or re.search(r"think|thought|channel|BEGIN", name) for name in names):
        return
    match = parse_score(answer)
    tokens = [
        *[Logprob(token=t, logprob=-0.01) for t in _split(answer[: match.start])],
        Logprob(token=answer[match.start : match.end], logprob=math.log(top[score]),
                top_logprobs=[TopLogprob(token=str(k), logprob=math.log(p))
                              for k, p in top.items()]),
        *[Logprob(token=t, logprob=-0.01) for t in _split(answer[match.end :])],
    ]  # fmt: skip
    alone = judged([finished(answer, tokens)], "logprobs", False)
    assert alone[1] == "logprobs" and alone[0] is not None
    specials = list(tokens)
    for name in names:
        at = data.draw(st.integers(0, len(specials))) if data is not None else len(specials)
        specials.insert(at, Logprob(token=name, logprob=-0.01))
    assert judged([finished(answer, specials)], "logprobs", False) == alone, specials


# -- (d) samples: the unread share -----------------------------------------------------------

UNREADABLE = ("I cannot rate this.", "3 or 4", "I'd give it a 3 at first glance, so 4.",
              "I would need 5 more turns.", "")  # fmt: skip


@settings(QUICK, max_examples=200)
@given(
    read=st.lists(st.sampled_from((1, 2, 3, 4, 5)), min_size=1, max_size=24),
    unread=st.lists(st.sampled_from(UNREADABLE), max_size=8),
    cut=st.booleans(),
)
def test_samples_are_scored_only_where_the_unread_cannot_move_the_mean_by_a_quarter(
    read: list[int], unread: list[str], cut: bool
) -> None:
    choices = [finished(f"Score: {k}") for k in read] + [finished(t) for t in unread if t]
    if cut and unread:
        choices.append(ChatCompletionChoice(message=ChatMessageAssistant(content="Score: 4\n\nBu"),
                                            stop_reason="max_tokens"))  # fmt: skip
    n = len(choices)
    out = judge_output(ModelOutput(model="judge", choices=choices), "samples", n)
    u = (n - len(read)) / n
    if 4 * u <= 0.25:
        assert out.value is not None and math.isclose(out.value, sum(read) / len(read))
        assert out.details["share_read"] == round(len(read) / n, 4)
    else:
        assert out.value is None and "could move the mean" in (out.reason or "")


def test_ten_fives_and_ten_unread_fours_are_unscored() -> None:
    """Issue 47, item 3: the unread half (Llama's "I would rate ... a 4." read before) is no
    longer averaged away; here the unread half is a sentence with two scores."""
    choices = [finished("5")] * 10 + [finished("A 4, or a 3 at first glance.")] * 10
    out = judge_output(ModelOutput(model="judge", choices=choices), "samples", 20)
    assert out.value is None and "10 of 20" in (out.reason or "")


# -- (e) a clear verdict of each documented form is scored -----------------------------------


@settings(QUICK, max_examples=200)
@given(shape=st.integers(0, 200), score=st.sampled_from((1, 2, 3, 4, 5)), cot=st.booleans())
def test_a_clear_verdict_of_each_form_is_scored(shape: int, score: int, cot: bool) -> None:
    forms = COT_FORMS if cot else SCORE_ONLY_FORMS
    answer = forms[shape % len(forms)].format(s=score)
    for method in ("parse", "samples"):
        assert judged([finished(answer)] * 2, method, cot) == (float(score), method), answer
