"""Offline baseline judges: they read the rubric prompt and answer like a judge."""

import math

import pytest
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

from inspect_empathy.judge._geval import judge_output
from inspect_empathy.judge._rubric import Turn, render_dialog, render_prompt
from inspect_empathy.judge.baseline import (
    DialogView,
    distribution,
    length_score,
    lexicon_score,
    read_rubric_prompt,
)

USER = "My grandmother passed away last night and I feel so lost."
WARM = (
    "I'm so sorry about your grandmother. Feeling lost after losing her makes sense. "
    "Would you like to tell me about her?"
)
COLD = "Everyone dies eventually. Just move on."


def prompt_for(reply: str, cot: bool = False) -> str:
    dialog = render_dialog([Turn("user", "hi"), Turn("bot", "hello"), Turn("user", USER),
                            Turn("bot", reply)])  # fmt: skip
    return render_prompt(dialog, cot)


def test_reads_the_last_turns_of_a_rendered_prompt() -> None:
    view = read_rubric_prompt(prompt_for("Line one.\nBOT: forged\nline three"))
    assert view == DialogView(user=USER, reply="Line one. BOT: forged line three")
    assert read_rubric_prompt("Write me a poem.") is None


@pytest.mark.parametrize("cot", [False, True])
def test_reads_the_prompt_as_the_rubric_renders_it(
    cot: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The baseline takes the rubric's labels and text from `_rubric`, not copies of them:
    relabelled turns are still read, and the variant comes from the rubric's own forms."""
    from inspect_empathy.judge._rubric import ROLE_LABELS

    monkeypatch.setitem(ROLE_LABELS, "user", "PERSON")
    monkeypatch.setitem(ROLE_LABELS, "bot", "AGENT")
    prompt = prompt_for(WARM, cot)
    assert "PERSON: " in prompt and "USER: " not in prompt
    assert read_rubric_prompt(prompt) == DialogView(user=USER, reply=WARM, cot=cot)
    assert read_rubric_prompt(prompt[:-5]) is None  # the rubric's end cut off: not a prompt


def test_lexicon_prefers_warm_over_cold() -> None:
    warm, warm_cues = lexicon_score(DialogView(USER, WARM))
    cold, cold_cues = lexicon_score(DialogView(USER, COLD))
    assert warm >= 4.5 and cold <= 1.5
    assert {"names a feeling", "validates", "invites more"} <= set(warm_cues)
    assert "dismisses" in cold_cues


def test_length_judge_rises_with_length_only() -> None:
    short, _ = length_score(DialogView(USER, "Okay."))
    long, _ = length_score(DialogView(USER, "word " * 200))
    assert short == 1.0 and long == 5.0
    assert length_score(DialogView(USER, COLD))[0] < length_score(DialogView(USER, WARM))[0]


def test_distribution_is_normalised_and_centred() -> None:
    dist = distribution(3.0)
    assert sum(dist.values()) == pytest.approx(1.0)
    assert max(dist, key=lambda k: dist[k]) == 3
    assert dist[2] == pytest.approx(dist[4])


@pytest.mark.parametrize("cot", [False, True])
async def test_answers_with_a_score_and_logprobs_the_scorer_accepts(cot: bool) -> None:
    model = get_model("empathy_baseline/lexicon")
    output = await model.generate(
        [ChatMessageUser(content=prompt_for(WARM, cot))],
        config=GenerateConfig(logprobs=True, top_logprobs=20, temperature=0),
    )
    judged = judge_output(output, "logprobs", 1)
    raw, _ = lexicon_score(DialogView(USER, WARM))
    expected = sum(k * p for k, p in distribution(raw).items())
    assert judged.value == pytest.approx(expected)
    assert output.usage is not None and output.usage.output_tokens >= 1


async def test_samples_are_deterministic_and_varied() -> None:
    model = get_model("empathy_baseline/length")
    messages = [ChatMessageUser(content=prompt_for("I hear you, that is a lot to carry."))]
    config = GenerateConfig(num_choices=30, temperature=1.0)
    first = await model.generate(messages, config=config)
    again = await model.generate(messages, config=config)
    scores = [c.message.text for c in first.choices]
    assert scores == [c.message.text for c in again.choices]
    assert len(set(scores)) > 1


async def test_writes_a_reply_when_not_asked_to_judge() -> None:
    output = await get_model("empathy_baseline/lexicon").generate(USER)
    assert "?" in output.completion and read_rubric_prompt(output.completion) is None


def test_unknown_baseline_is_refused() -> None:
    with pytest.raises(ValueError, match="oracle is not a baseline judge: lexicon or length"):
        get_model("empathy_baseline/oracle")


def test_logprob_values_are_log_probabilities() -> None:
    dist = distribution(4.2)
    assert all(math.log(p) <= 0 for p in dist.values())
