"""Dialog records: rating normalisation, samples, and the max_turns marker."""

import json
from pathlib import Path

import pytest
from inspect_ai.dataset import Sample

from inspect_empathy.dataset._dataset import load_dialogs
from inspect_empathy.dataset._samples import record_to_sample
from inspect_empathy.dialogs import (
    HUMAN_KEY,
    JUDGE_PROMPT_KEY,
    LEFT_OUT_KEY,
    DialogRecord,
    left_out_marker,
    normalise_rating,
    rater_ratings,
    reply_words,
    truncate_turns,
)
from inspect_empathy.judge._rubric import Turn, render_dialog, render_prompt, turns_from_messages
from inspect_empathy.stats import metrics

DIALOG = [
    Turn("user", "I moved to a new city."),
    Turn("bot", "How is it going so far?"),
    Turn("user", "Lonely, honestly."),
    Turn("bot", "The first weeks are often the hardest."),
    Turn("user", "I joined a climbing gym yesterday."),
    Turn("bot", "That's a great way to meet people. How was it?"),
]


@pytest.mark.parametrize(
    ("raw", "scale", "expected"),
    [(1, (1, 5), 1.0), (5, (1, 5), 5.0), (2, (1, 3), 3.0), (3, (1, 3), 5.0), (0, (0, 2), 1.0),
     (1, (0, 2), 3.0), (3.5, (0, 6), 1 + 4 * 3.5 / 6)],
)  # fmt: skip
def test_normalise_rating_is_linear_onto_1_5(raw: float, scale: tuple, expected: float) -> None:
    assert normalise_rating(raw, scale) == pytest.approx(expected)


@pytest.mark.parametrize(("raw", "scale"), [(0, (1, 5)), (6, (1, 5)), (float("nan"), (1, 5))])
def test_normalise_rating_refuses_values_off_the_scale(raw: float, scale: tuple) -> None:
    with pytest.raises(ValueError, match="outside the scale"):
        normalise_rating(raw, scale)


def test_normalise_rating_refuses_an_empty_scale() -> None:
    with pytest.raises(ValueError, match="max > min"):
        normalise_rating(3, (3, 3))


def test_sample_keeps_raw_rating_and_scale() -> None:
    record = DialogRecord("d1", DIALOG[:2], rating=2, scale=(1, 3), metadata={"emotion": "sad"})
    sample = record_to_sample(record)
    assert sample.id == "d1"
    assert [m.role for m in sample.input] == ["user", "assistant"]
    assert sample.metadata["human_rating"] == 3.0
    assert sample.metadata["human_rating_raw"] == 2
    assert sample.metadata["human_rating_scale"] == (1, 3)
    assert sample.metadata["emotion"] == "sad"
    assert sample.target == "3"
    assert sample.metadata["transcript"] == (
        "USER: I moved to a new city.\nBOT: How is it going so far?"
    )


def test_unrated_sample_has_no_human_rating_and_no_scale() -> None:
    sample = record_to_sample(DialogRecord("d2", DIALOG[:2]))
    assert sample.metadata["human_rating"] is None
    assert "human_rating_scale" not in sample.metadata
    assert "human_rating_raw" not in sample.metadata
    assert sample.target == ""


@pytest.mark.parametrize("prompt_cot", [None, False])
def test_rating_on_1_5_has_no_duplicate_raw_rating_or_scale(prompt_cot: bool | None) -> None:
    record = DialogRecord("d3", DIALOG[:2], rating=4, metadata={"emotion": "sad"})
    sample = record_to_sample(record, prompt_cot=prompt_cot)
    assert sample.metadata["human_rating"] == 4.0
    assert "human_rating_raw" not in sample.metadata
    assert "human_rating_scale" not in sample.metadata
    assert sample.target == "4"


def test_several_raters_keep_the_scale_even_on_1_5() -> None:
    # rater_ratings maps each rater's rating from the scale: it must be there
    raters = {"human_ratings": {"a": 4, "b": 5}}
    rated = record_to_sample(DialogRecord("d4", DIALOG[:2], rating=4.5, metadata=raters))
    assert rated.metadata["human_rating_raw"] == 4.5
    assert rated.metadata["human_rating_scale"] == (1.0, 5.0)
    assert rater_ratings(rated.metadata, "d4") == {"a": 4.0, "b": 5.0}
    # no aggregate rating, but the raters' scale still travels with their ratings
    zero_to_four = {"human_ratings": {"a": 0, "b": 4}}
    unrated = record_to_sample(DialogRecord("d5", DIALOG[:2], scale=(0, 4), metadata=zero_to_four))
    assert unrated.metadata["human_rating"] is None
    assert unrated.metadata["human_rating_scale"] == (0, 4)
    assert rater_ratings(unrated.metadata, "d5") == {"a": 1.0, "b": 5.0}


def test_cut_reply_moves_the_rating_to_reference() -> None:
    sample = record_to_sample(DialogRecord("d3", DIALOG[:4], rating=4), cut_reply=True)
    assert [m.role for m in sample.input] == ["user", "assistant", "user"]
    assert sample.target == DIALOG[3].content
    assert sample.metadata["reference_rating"] == 4.0
    assert "reference_reply" not in sample.metadata
    assert sample.metadata["human_rating"] is None


def test_sample_needs_a_final_bot_turn() -> None:
    with pytest.raises(ValueError, match="does not end with a bot turn"):
        record_to_sample(DialogRecord("d4", DIALOG[:3]))


def test_marker_wording() -> None:
    assert left_out_marker(1) == "[1 earlier turn left out]"
    assert left_out_marker(3) == "[3 earlier turns left out]"


def test_truncate_keeps_everything_when_short_enough() -> None:
    assert truncate_turns(DIALOG, None) == (DIALOG, 0)
    assert truncate_turns(DIALOG, 6) == (DIALOG, 0)


def test_truncate_keeps_the_last_turns_after_a_user_side_marker() -> None:
    kept, left_out = truncate_turns(DIALOG, 3)
    assert left_out == 3
    assert kept[0] == Turn("user", "[3 earlier turns left out]")
    assert kept[1:] == DIALOG[-3:]


def test_max_turns_window_starting_with_a_bot_turn_renders_marker_on_its_own_line() -> None:
    sample = record_to_sample(DialogRecord("d5", DIALOG, rating=4), max_turns=3)
    assert sample.metadata[LEFT_OUT_KEY] == 3
    assert sample.metadata["transcript"] == (
        "USER: [3 earlier turns left out]\n"
        "BOT: The first weeks are often the hardest.\n"
        "USER: I joined a climbing gym yesterday.\n"
        "BOT: That's a great way to meet people. How was it?"
    )
    # the judge renders the same text from the chat messages
    turns, _ = turns_from_messages(sample.input)
    assert turns[0].content == "[3 earlier turns left out]"


def test_max_turns_window_starting_with_a_user_turn_leads_with_the_marker() -> None:
    sample = record_to_sample(DialogRecord("d6", DIALOG, rating=4), max_turns=2)
    # separate chat messages: the user's own message stays intact
    assert [m.text for m in sample.input[:2]] == [
        "[4 earlier turns left out]",
        "I joined a climbing gym yesterday.",
    ]
    assert sample.metadata["transcript"].splitlines()[:2] == [
        "USER: [4 earlier turns left out]",
        "    I joined a climbing gym yesterday.",
    ]
    turns, _ = turns_from_messages(sample.input)
    assert turns[0].content.startswith("[4 earlier turns left out]\n")


def test_max_turns_applies_before_the_reply_is_cut() -> None:
    sample = record_to_sample(DialogRecord("d7", DIALOG, rating=4), cut_reply=True, max_turns=4)
    assert [m.text for m in sample.input] == [
        "[2 earlier turns left out]",
        DIALOG[2].content,
        DIALOG[3].content,
        DIALOG[4].content,
    ]
    assert sample.target == DIALOG[5].content


@pytest.mark.parametrize("cot", [False, True])
def test_prompt_input_is_the_rubric_with_the_transcript(cot: bool) -> None:
    record = DialogRecord("d8", DIALOG, rating=4)
    dialog = record_to_sample(record, max_turns=3)
    prompt = record_to_sample(record, max_turns=3, prompt_cot=cot)
    assert prompt.input == render_prompt(dialog.metadata["transcript"], cot)
    assert "transcript" not in prompt.metadata
    assert prompt.metadata["reply_words"] == reply_words(DIALOG[-1].content)
    assert prompt.target == dialog.target
    added = ("reply_words", JUDGE_PROMPT_KEY)
    assert {k: v for k, v in prompt.metadata.items() if k not in added} == {
        k: v for k, v in dialog.metadata.items() if k != "transcript"
    }


def test_judge_prompt_sample_keeps_only_what_users_need() -> None:
    record = DialogRecord("d11", DIALOG, rating=2, scale=(1, 3), metadata={"emotion": "lonely"})
    sample = record_to_sample(record, prompt_cot=False)
    assert isinstance(sample.input, str)
    assert sample.input == render_prompt(render_dialog(DIALOG))
    assert sample.metadata == {
        "human_rating": 3.0,
        "human_rating_raw": 2,
        "human_rating_scale": (1, 3),
        "emotion": "lonely",
        "reply_words": reply_words(DIALOG[-1].content),
        JUDGE_PROMPT_KEY: True,
    }
    assert sample.target == "3"
    # a chat-input sample is not a judge prompt
    assert JUDGE_PROMPT_KEY not in record_to_sample(record).metadata


def test_human_key_is_the_one_the_metrics_read() -> None:
    assert HUMAN_KEY == metrics.HUMAN_KEY


def test_prompt_dataset_lets_go_of_each_record_once_its_sample_is_built(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    turns = [{"role": t.role, "content": t.content} for t in DIALOG]
    rows = [{"id": f"r{i}", "turns": turns, "rating": 1 + i} for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    data = load_dialogs(path)
    prompts = data.as_prompts()
    count = len(prompts)
    assert count == 3 and prompts._records == data.records
    first = prompts[0]
    assert prompts._records[0] is None and prompts._records[1] is not None
    assert prompts[0] is first  # built once, kept
    built = list(prompts)
    assert prompts._records == [None] * count and len(prompts) == count
    assert [s.id for s in built] == [r.id for r in data.records]  # the source keeps its own
    assert all(s.metadata[JUDGE_PROMPT_KEY] is True for s in built)
    with pytest.raises(ValueError, match="let go of the records"):
        _ = prompts.records
    # slicing, filtering and shuffling still work on a dataset whose records are gone
    assert [s.id for s in prompts[1:]] == [s.id for s in built[1:]]
    assert len(prompts.filter(lambda s: s.metadata["human_rating"] is not None)) >= 1
    prompts.shuffle(seed=1)
    assert sorted(str(s.id) for s in prompts) == sorted(str(s.id) for s in built)


def test_prompt_input_needs_the_reply() -> None:
    with pytest.raises(ValueError, match="needs the bot reply"):
        record_to_sample(DialogRecord("d9", DIALOG, rating=4), cut_reply=True, prompt_cot=False)


def test_reply_words_counts_words_and_contractions() -> None:
    assert reply_words("That's hard. I'm here, 100%!") == 5
    assert reply_words("") == 0


def test_transcript_is_what_the_judge_sees_for_consecutive_turns() -> None:
    record = DialogRecord("d10", [Turn("user", "one"), Turn("user", "two"), Turn("bot", "ok")])
    sample = record_to_sample(record)
    assert sample.metadata["transcript"] == "USER: one\n    two\nBOT: ok"
    turns, _ = turns_from_messages(sample.input)
    assert record_to_sample(record, prompt_cot=False).input == render_prompt(render_dialog(turns))


# --- the record model: one module, imported by everything, importing neither rendering
# nor Inspect --------------------------------------------------------------------------

PACKAGE = Path(__file__).resolve().parent.parent / "inspect_empathy"


def _imports(path: Path) -> set[str]:
    """Modules a source file imports at module level (relative ones resolved)."""
    import ast

    from test_layers import imported_from

    package = path.relative_to(PACKAGE).parent.parts
    found: set[str] = set()
    for node in ast.parse(path.read_text("utf-8")).body:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            inside = imported_from(package, node)
            if inside is None:
                module = node.module or ""
            else:
                module = f"inspect_empathy.{inside}".rstrip(".")
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_the_record_model_imports_neither_rendering_nor_inspect() -> None:
    imported = _imports(PACKAGE / "dialogs.py")
    assert not [m for m in imported if m.startswith(("inspect_ai", "inspect_empathy"))]


def test_rendering_and_loaders_take_turns_from_the_record_model() -> None:
    from inspect_empathy import dialogs
    from inspect_empathy.dataset.loaders import _transcript
    from inspect_empathy.judge import _rubric

    assert _rubric.Turn is dialogs.Turn and _transcript.Turn is dialogs.Turn
    assert _rubric.merge_consecutive is dialogs.merge_consecutive
    loaders = sorted((PACKAGE / "dataset" / "loaders").glob("*.py"))
    assert len(loaders) > 10
    for path in loaders:
        assert "inspect_empathy.judge._rubric" not in _imports(path), path.name


def test_add_turn_joins_the_same_side_and_merge_consecutive_uses_it() -> None:
    from inspect_empathy.dialogs import add_turn, merge_consecutive

    turns: list[Turn] = []
    for role, text in (("user", "a"), ("user", "b"), ("bot", "c"), ("bot", "d"), ("user", "e")):
        add_turn(turns, role, text)
    assert turns == [Turn("user", "a\nb"), Turn("bot", "c\nd"), Turn("user", "e")]
    flat = [Turn("user", "a"), Turn("user", "b"), Turn("bot", "c"), Turn("bot", "d"),
            Turn("user", "e")]  # fmt: skip
    assert merge_consecutive(flat) == turns


def test_one_end_with_bot_check() -> None:
    from inspect_empathy.dialogs import (
        EMPTY_DIALOG,
        NO_BOT_REPLY,
        RecordProblem,
        bot_end,
        end_with_bot,
        ends_with_bot,
    )

    user, bot = Turn("user", "u"), Turn("bot", "b")
    assert ends_with_bot([user, bot]) and not ends_with_bot([]) and not ends_with_bot([bot, user])
    assert [bot_end(t) for t in ([], [user], [user, bot], [user, bot, user, user])] == [0, 0, 2, 2]
    turns = [user, bot, user, user]
    assert end_with_bot(turns, cut=True) == 2 and turns == [user, bot]
    for turns, cut, kind in (([], True, EMPTY_DIALOG), ([user], True, NO_BOT_REPLY),
                             ([user, bot, user], False, NO_BOT_REPLY)):  # fmt: skip
        with pytest.raises(RecordProblem) as problem:
            end_with_bot(list(turns), cut)
        assert problem.value.kind == kind
    with pytest.raises(RecordProblem, match="labels seen: Client"):
        end_with_bot([user], False, ["Client"])
    with pytest.raises(ValueError, match="does not end with a bot turn"):
        record_to_sample(DialogRecord("x", [bot, user]))


def test_reserved_metadata_keys_are_the_sample_and_loader_keys() -> None:
    from inspect_empathy import dialogs
    from inspect_empathy.dataset.loaders._text import check_data_metadata

    assert dialogs.RESERVED_METADATA == dialogs.SAMPLE_KEYS | dialogs.LOADER_KEYS
    assert dialogs.LOADER_KEYS == {"human_ratings", "raters_missing", "trailing_user_turns_cut"}
    sample = record_to_sample(DialogRecord("x", DIALOG, 4.0, metadata={"topic": "t"}), max_turns=2)
    assert set(sample.metadata or {}) - {"topic"} <= dialogs.SAMPLE_KEYS
    prompt = record_to_sample(DialogRecord("x", DIALOG, 4.0), prompt_cot=False)
    response = record_to_sample(DialogRecord("x", DIALOG, 4.0), cut_reply=True)
    for built in (prompt, response):
        assert set(built.metadata or {}) <= dialogs.SAMPLE_KEYS
    for key in dialogs.RESERVED_METADATA:
        with pytest.raises(dialogs.RecordProblem):
            check_data_metadata({key: 1})


def test_samples_are_built_as_inspect_builds_them() -> None:
    """The checked parts go into the sample without revalidation: same fields, same values."""
    from inspect_ai.dataset import Sample

    built = record_to_sample(DialogRecord("x", DIALOG, 4.0, metadata={"topic": "t"}))
    again = Sample(input=built.input, target=built.target, id=built.id, metadata=built.metadata)
    assert built.model_fields_set == again.model_fields_set
    assert built.model_dump() == again.model_dump()


def test_samples_share_one_fields_set_equal_to_what_sample_sets() -> None:
    record = DialogRecord("d6", DIALOG, rating=4)
    first, second = record_to_sample(record), record_to_sample(record, prompt_cot=False)
    # what Sample(...) marks as set, held once for all samples instead of once per sample
    assert first.model_fields_set == Sample(id="x", input="hi").model_fields_set
    assert first.model_fields_set is second.model_fields_set
    # Inspect assigns a sample's input before a run: the shared set holds every field already
    first.input = "changed"
    assert first.model_fields_set == set(Sample.model_fields)
    assert first.model_dump(exclude_unset=True).keys() == Sample.model_fields.keys()
    copy = second.model_copy(update={"target": "5"})
    assert copy.target == "5" and second.target == "4"
