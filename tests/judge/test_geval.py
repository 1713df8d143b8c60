"""G-Eval scoring: parsing, probability weighting, sampling."""

import math

import pytest
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    Logprob,
    Logprobs,
    ModelOutput,
    TopLogprob,
)

from inspect_empathy.judge._geval import (
    expected_score,
    judge_output,
    logprob_distribution,
    method_config,
    token_score,
)


@pytest.mark.parametrize(
    ("token", "score"), [
        ("4", 4),
        (" 4", 4),
        ("**4", 4),
        ("4.", 4),
        ("４", 4),
        ("45", None),
        ("a", None),
        (" four", None),
        ("10", None),
    ]
)
def test_token_score(token: str, score: int | None) -> None:
    assert token_score(token) == score


def choice(
    tokens: list[tuple[str, dict[str, float]]], text: str | None = None
) -> ChatCompletionChoice:
    """A completion whose tokens carry top logprobs given as probabilities."""
    content = [
        Logprob(
            token=tok,
            logprob=math.log(top[tok]) if tok in top else 0.0,
            top_logprobs=[TopLogprob(token=t, logprob=math.log(p)) for t, p in top.items()],
        )
        for tok, top in tokens
    ]
    text = text if text is not None else "".join(t for t, _ in tokens)
    return ChatCompletionChoice(
        message=ChatMessageAssistant(content=text),
        logprobs=Logprobs(content=content),
        stop_reason="stop",
    )


def output(*choices: ChatCompletionChoice) -> ModelOutput:
    return ModelOutput(model="judge", choices=list(choices))


def test_issue_example_scores_4_2() -> None:
    judged = judge_output(output(choice([("4", {"4": 0.6, "5": 0.3, "3": 0.1})])), "auto", 1)
    assert judged.method == "logprobs"
    assert judged.value == pytest.approx(4.2)
    assert judged.distribution == pytest.approx({1: 0, 2: 0, 3: 0.1, 4: 0.6, 5: 0.3})


def test_weights_are_renormalised_over_score_tokens() -> None:
    # 0.4 of the mass sits on non-score tokens; the rest renormalises to 0.5/0.25/0.25
    top = {"2": 0.3, "3": 0.15, "1": 0.15, "The": 0.3, "I": 0.1}
    judged = judge_output(output(choice([("2", top)])), "logprobs", 1)
    assert judged.value == pytest.approx((0.15 * 1 + 0.3 * 2 + 0.15 * 3) / 0.6)
    assert judged.details["score_token_mass"] == pytest.approx(0.6)


def test_variant_tokens_of_one_score_are_summed() -> None:
    dist, mass = logprob_distribution(
        Logprob(
            token="4",
            logprob=math.log(0.5),
            top_logprobs=[
                TopLogprob(token="4", logprob=math.log(0.5)),
                TopLogprob(token=" 4", logprob=math.log(0.2)),
                TopLogprob(token="5", logprob=math.log(0.3)),
            ],
        )
    )
    assert dist[4] == pytest.approx(0.7) and dist[5] == pytest.approx(0.3)
    assert expected_score(dist) == pytest.approx(4.3)
    assert mass == pytest.approx(1.0)


def test_score_token_is_found_after_a_label() -> None:
    tokens = [("Score", {"Score": 1.0}), (":", {":": 1.0}), (" 3", {" 3": 0.5, " 2": 0.5})]
    judged = judge_output(output(choice(tokens)), "logprobs", 1)
    assert judged.value == pytest.approx(2.5)


def test_cot_uses_the_last_score_token_not_the_denominator() -> None:
    tokens = [
        ("Step 2 is met, 5 cues.\nScore: ", {"x": 1.0}),
        ("4", {"4": 0.8, "3": 0.2}),
        ("/", {"/": 1.0}),
        ("5", {"5": 1.0}),
    ]
    judged = judge_output(output(choice(tokens)), "logprobs", 1)
    assert judged.value == pytest.approx(3.8)


def test_logprobs_missing_is_unscored_in_logprobs_mode_and_parsed_in_auto() -> None:
    plain = ChatCompletionChoice(message=ChatMessageAssistant(content="4"), stop_reason="stop")
    strict = judge_output(output(plain), "logprobs", 1)
    assert strict.value is None and "no logprobs" in (strict.reason or "")
    auto = judge_output(output(plain), "auto", 1)
    assert auto.method == "parse" and auto.value == 4.0
    assert "no logprobs" in auto.details["logprobs_unavailable"]


def test_unparseable_output_is_unscored_never_a_number() -> None:
    judged = judge_output(output(choice([("7", {"7": 1.0})])), "auto", 1)
    assert judged.value is None
    assert "outside 1-5" in (judged.reason or "")


def test_no_choices_is_unscored() -> None:
    judged = judge_output(ModelOutput(model="judge", choices=[]), "parse", 1)
    assert judged.value is None and judged.reason


def texts(*values: str) -> ModelOutput:
    return output(
        *[
            ChatCompletionChoice(message=ChatMessageAssistant(content=v), stop_reason="stop")
            for v in values
        ]
    )


def test_samples_mean_of_parsed_scores_with_failures_counted() -> None:
    answers = ("4", "5", "Score: 3", "4") * 4
    judged = judge_output(texts(*answers, "maybe 4 or 5"), "samples", 17)
    assert judged.value == pytest.approx(4.0)
    assert judged.details["n_parsed"] == 16 and judged.details["share_read"] == 0.9412
    assert len(judged.details["parse_failures"]) == 1
    assert judged.distribution == pytest.approx({1: 0, 2: 0, 3: 0.25, 4: 0.5, 5: 0.25})
    # one unread of five could move the mean by 0.8: unscored, with the reason
    few = judge_output(texts("4", "5", "Score: 3", "maybe 4 or 5", "4"), "samples", 5)
    assert few.value is None and "could move the mean by up to 0.80" in (few.reason or "")


def test_samples_uses_at_most_n_choices_and_unscored_when_none_parse() -> None:
    assert judge_output(texts("1", "5", "5"), "samples", 1).value == 1.0
    judged = judge_output(texts("nope", "no"), "samples", 2)
    assert judged.value is None and "none of 2" in (judged.reason or "")


def test_method_config() -> None:
    assert method_config("logprobs").logprobs is True
    assert method_config("auto").top_logprobs == 20
    assert method_config("auto").temperature == 0
    sampled = method_config("samples", 7)
    assert sampled.num_choices == 7 and sampled.temperature == 1
    assert method_config("parse").logprobs is None
    with pytest.raises(ValueError, match="method"):
        method_config("vibes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="completions must be at least 1"):
        method_config("samples", 0)


def test_every_method_bounds_the_output() -> None:
    for method in ("auto", "logprobs", "samples", "parse"):
        assert method_config(method).max_tokens == 24  # type: ignore[arg-type]
        assert method_config(method, cot=True).max_tokens == 512  # type: ignore[arg-type]


# -- the judges people use: cut answers, labelled verdicts, token shapes ---------------------


def cut(text: str, cot: bool = False) -> ChatCompletionChoice:
    return ChatCompletionChoice(
        message=ChatMessageAssistant(content=text), stop_reason="max_tokens"
    )


@pytest.mark.parametrize(
    "text",
    [
        "1. Read the conversation: the user is",
        "Step 1: Read the conversation",
        "The user is anxious about 2 exams; the bot",
        "I think the reply, in 3 ways,",
        "Score: 1",
    ],
)
def test_a_number_in_an_answer_cut_before_its_verdict_is_never_the_score(text: str) -> None:
    for method in ("auto", "parse"):
        judged = judge_output(output(cut(text)), method, 1)  # type: ignore[arg-type]
        assert judged.value is None and "cut off by max_tokens" in (judged.reason or ""), judged
    sampled = judge_output(output(cut(text), cut(text)), "samples", 2)
    assert sampled.value is None


@pytest.mark.parametrize(
    "text",
    ["Score: 4\n\nThe reply names", "**Score:** 3. The reply", "I'd give it a 4. At first",
     "Overall: 2; it ignores"],
)  # fmt: skip
def test_a_cut_answer_is_never_read_even_a_closed_labelled_one(text: str) -> None:
    """Issue 47, item 2: ``Score: 4\n\n...but on reflection it never addresses the`` could end
    ``...lower it to 3.``: a cut answer is unscored with the remedy (the call is asked again
    upstream, `_judge_call._generate`)."""
    judged = judge_output(output(cut(text)), "parse", 1)
    assert judged.value is None and "raise --max-tokens" in (judged.reason or "")


@pytest.mark.parametrize(
    "text",
    [
        "4\n\nThe reply names",  # "... Score: 3" would read 3
        "**4** - warm and",
        "Score: 3 because the",  # not closed
        "I'd give it a 4 at first glance, but let me check",
        # a reasoning model's thoughts, cut before their end (the template opened <think>)
        "Okay, the user lost a job. Score: 3. Hmm, but",
    ],
)
def test_a_cut_answer_that_a_continuation_could_overrule_is_not_read(text: str) -> None:
    """An unlabelled opening number can be overruled by a label after it; a labelled one
    not closed by '.', '!', ';' or a line break can still become a draft or another scale."""
    for method in ("auto", "parse"):
        judged = judge_output(output(cut(text)), method, 1)  # type: ignore[arg-type]
        assert judged.value is None and "cut off by max_tokens" in (judged.reason or ""), judged


@pytest.mark.parametrize(
    "text",
    [
        "Score: 4\n(A 5 would need more specific validation.)",
        "Reasoning: warm, but a 5 would name the fear.\nScore: 4",
        "Score: 4\nReasoning: a 5 would name the fear.",
        '{"reasoning": "... a 5 would name the fear ...", "score": 4}',
        '```json\n{"reasoning": "a 5 would name the fear", "score": 4}\n```',
    ],
)
def test_cot_reasoning_that_names_another_score_is_ambiguous(text: str) -> None:
    """No label makes one of two different scores win (issue 47): the reasoning's ``a 5``
    and the labelled 4 leave the answer unscored."""
    judged = judge_output(output(choice([], text)), "parse", 1)
    assert judged.value is None and "several different scores (4, 5)" in (judged.reason or "")


@pytest.mark.parametrize("text", ["4分", "得分4分", "评分：4", "得分：4分"])
def test_cjk_score_words(text: str) -> None:
    assert judge_output(output(choice([], text)), "parse", 1).value == 4


def test_two_tokens_that_read_alike_both_count_exact_repeats_once() -> None:
    top = [
        TopLogprob(token="4", logprob=math.log(0.5)),
        TopLogprob(token="4", logprob=math.log(0.3)),  # another id that reads "4"
        TopLogprob(token="5", logprob=math.log(0.2)),
        TopLogprob(token="5", logprob=math.log(0.2)),  # the same token listed twice
    ]
    token = Logprob(token="4", logprob=math.log(0.5), top_logprobs=top)
    distribution, _ = logprob_distribution(token)
    assert expected_score(distribution) == pytest.approx(4.2)


def test_code_point_bytes_and_junk_bytes_never_crash() -> None:
    text = "I’d give it a 4."
    tokens = [
        Logprob(token="I", logprob=-0.01, bytes=[73]),
        Logprob(token="’d", logprob=-0.01, bytes=[8217, 100]),  # Together: code points
        Logprob(token=" give it a", logprob=-0.01, bytes=[-5, 10**9]),  # neither
        Logprob(token=" 4", logprob=-0.2, bytes=[32, 52],
                top_logprobs=[TopLogprob(token=" 4", logprob=math.log(0.8)),
                              TopLogprob(token=" 3", logprob=math.log(0.2))]),
        Logprob(token=".", logprob=-0.01, bytes=[46]),
    ]  # fmt: skip
    picked = ChatCompletionChoice(
        message=ChatMessageAssistant(content=text),
        logprobs=Logprobs(content=tokens),
        stop_reason="stop",
    )
    judged = judge_output(output(picked), "auto", 1)
    assert judged.value == pytest.approx(3.8) and judged.method == "logprobs"


def test_a_certain_score_token_the_service_left_out_is_certain_only_where_it_does() -> None:
    """Gemini omits logProbability 0 (p = 1) and Inspect drops the token."""
    tokens = [Logprob(token="Score", logprob=-0.1, top_logprobs=[]),
              Logprob(token=":", logprob=-0.1, top_logprobs=[])]  # fmt: skip
    picked = ChatCompletionChoice(
        message=ChatMessageAssistant(content="Score: 4"),
        logprobs=Logprobs(content=tokens),
        stop_reason="stop",
    )
    certain = judge_output(output(picked), "logprobs", 1, certain_if_dropped=True)
    assert certain.value == 4.0 and certain.distribution == {1: 0, 2: 0, 3: 0, 4: 1, 5: 0}
    assert judge_output(output(picked), "logprobs", 1).value is None


def test_too_long_for_the_judges_context_is_never_parsed() -> None:
    message = "This model's maximum context length is 128000 tokens; you asked for 250312 (4)."
    refused = ChatCompletionChoice(
        message=ChatMessageAssistant(content=message), stop_reason="model_length"
    )
    judged = judge_output(output(refused), "auto", 1)
    assert judged.value is None and "too long for the judge's context" in (judged.reason or "")
    assert "max_turns" in (judged.reason or "")


@pytest.mark.parametrize("text", ["Score: 4/", "Score: 4 out of", "Score: 3 or", "Score: 3."])
def test_a_cut_answer_that_may_have_gone_on_to_change_its_score_is_not_read(text: str) -> None:
    """``Score: 4/`` may have become ``4/10``, ``3 or`` a range, ``3.`` a fraction."""
    for method in ("auto", "parse"):
        judged = judge_output(output(cut(text)), method, 1)  # type: ignore[arg-type]
        assert judged.value is None and "cut off by max_tokens" in (judged.reason or ""), judged


def test_logprobs_that_cannot_be_the_judges_own_are_not_weighed() -> None:
    """The written token at probability 0, or exclusive alternatives adding up past 1: the
    list does not describe the answer, so ``logprobs`` leaves it unscored and ``auto``
    reads the text."""
    impossible = Logprob(
        token="4", logprob=-math.inf,
        top_logprobs=[TopLogprob(token="5", logprob=0.0), TopLogprob(token="4", logprob=-math.inf)],
    )  # fmt: skip
    over = Logprob(
        token="4", logprob=math.log(0.9),
        top_logprobs=[TopLogprob(token="4", logprob=math.log(0.9)),
                      TopLogprob(token="5", logprob=math.log(0.7))],
    )  # fmt: skip
    for token in (impossible, over):
        answer = ChatCompletionChoice(
            message=ChatMessageAssistant(content="4"),
            logprobs=Logprobs(content=[token]),
            stop_reason="stop",
        )
        assert judge_output(output(answer), "logprobs", 1).value is None
        read = judge_output(output(answer), "auto", 1)
        assert read.value == 4 and read.method == "parse"


def test_a_short_top_logprobs_list_is_flagged_and_keeps_its_number() -> None:
    """One entry at p = 0.6: 0.4 of the probability is unlisted, where other scores may be."""
    short = judge_output(output(choice([("4", {"4": 0.6})])), "logprobs", 1)
    assert short.value == 4.0
    assert short.details["short_list"] is True
    assert short.details["unlisted_mass"] == pytest.approx(0.4)
    full = judge_output(output(choice([("4", {"4": 0.6, "5": 0.35})])), "logprobs", 1)
    assert "short_list" not in full.details
