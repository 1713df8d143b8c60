"""Scores that hold up on real judge output, through the real SDKs and fake servers.

Each case is one dialog whose judge answer is a hand-made provider payload: tokens that do
not spell the text (U+FFFD or ``bytes:`` escapes for split characters), leading-space and
split-digit tokens, ``length`` stop reasons, sub-scores, empty ``choices``, malformed
logprobs. The whole table runs in one judge-mode eval per answer style through Inspect's
``openai/...`` provider (and a few through ``anthropic/...``), and every sample must end with
the expected value or be unscored with the expected reason.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fake_servers import FakeServer, Reply
from inspect_ai import eval
from inspect_ai.log import EvalSample, read_eval_log

from inspect_empathy import empathy_scorer
from inspect_empathy.tasks import empathy

OPENAI = "openai/gpt-4o-mini"
ANTHROPIC = "anthropic/claude-haiku-4-5"

pytestmark = pytest.mark.usefixtures("quick_backoff")


def tok(
    text: str,
    top: dict[str, float] | None = None,
    raw: bytes | None = None,
    no_bytes: bool = False,
    logprob: float | None = None,
) -> dict[str, Any]:
    """One logprob token; ``top`` gives alternatives as probabilities (the token's own
    logprob comes from it unless given); ``raw`` its bytes where they differ from the
    string; ``no_bytes`` leaves ``bytes`` out, as servers that send U+FFFD do."""
    top = top or {text: 0.99}
    own = logprob if logprob is not None else math.log(top.get(text, 0.99))
    return {
        "token": text,
        "logprob": own,
        "bytes": None if no_bytes else list(raw if raw is not None else text.encode()),
        "top_logprobs": [
            {"token": t, "logprob": math.log(p) if p > 0 else -1e9, "bytes": list(t.encode())}
            for t, p in top.items()
        ],
    }


def words(text: str) -> list[dict[str, Any]]:
    """Tokens that spell ``text`` exactly, without score alternatives."""
    import re

    return [tok(t) for t in re.findall(r"\s*\S+|\s+", text)]


def chat(
    text: str | None,
    tokens: list[dict[str, Any]] | None,
    finish: str = "stop",
    choices: list[dict[str, Any]] | None = None,
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A chat.completion answer (one choice) with the given tokens and stop reason."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        message = None if text is None else {"role": "assistant", "content": text}
        choice = {
            "index": 0,
            "message": message,
            "finish_reason": finish,
            "logprobs": {"content": tokens, "refusal": None} if tokens is not None else None,
        }
        return {
            "id": "chatcmpl-case",
            "object": "chat.completion",
            "created": 1700000000,
            "model": body.get("model", "fake"),
            "choices": [choice] if choices is None else choices,
            "usage": {"prompt_tokens": 100, "completion_tokens": 3, "total_tokens": 103},
        }

    return respond


CURLY = "’".encode()  # e2 80 99
EN_DASH = "–".encode()  # e2 80 93


def cot_curly(style: str) -> list[dict[str, Any]]:
    """"The user’s loss; a 4 step plan.\\nScore: 4", the curly quote split in two tokens."""
    if style == "fffd":
        quote = [tok("\ufffd", no_bytes=True), tok("\ufffd", no_bytes=True)]
    elif style == "escape":
        quote = [tok("bytes:\\xe2\\x80", no_bytes=True), tok("bytes:\\x99", no_bytes=True)]
    else:
        quote = [tok("bytes:\\xe2\\x80", raw=CURLY[:2]), tok("bytes:\\x99", raw=CURLY[2:])]
    return [
        tok("The"),
        tok(" user"),
        *quote,
        tok("s"),
        tok(" loss"),
        tok(";"),
        tok(" a"),
        tok(" 4", {" 4": 0.5, " 3": 0.5}),
        tok(" step"),
        tok(" plan"),
        tok(".\n"),
        tok("Score"),
        tok(":"),
        tok(" 4", {" 4": 0.65, " 5": 0.35}),
    ]


COT_CURLY_TEXT = "The user’s loss; a 4 step plan.\nScore: 4"
DASH_TEXT = "Empathetical responding (1–5): 5"
DASH_TOKENS = [
    tok("Emp"),
    tok("athetical"),
    tok(" responding"),
    tok(" ("),
    tok("1"),
    tok("\ufffd", no_bytes=True),
    tok("\ufffd", no_bytes=True),
    tok("5", {"5": 0.9, "4": 0.1}),
    tok("):"),
    tok(" 5", {" 5": 0.6, " 4": 0.4}),
]
SUBSCORES = "Relevance: 5\nTone Matching: 4\nOverall: 4"
SUBSCORE_TOKENS = [
    tok("Relevance"),
    tok(":"),
    tok(" 5", {" 5": 0.9, " 4": 0.1}),
    tok("\n"),
    tok("Tone"),
    tok(" Matching"),
    tok(":"),
    tok(" 4", {" 4": 0.5, " 5": 0.5}),
    tok("\n"),
    tok("Overall"),
    tok(":"),
    tok(" 4", {" 4": 0.7, " 3": 0.3}),
]


@dataclass(frozen=True)
class Case:
    name: str
    respond: Callable[[dict[str, Any]], dict[str, Any]]
    expect: float | str
    """The score, or a piece of the unscored reason."""
    cot: bool = False
    method: str | None = None
    """Expected scoring method (for scored cases)."""
    flag: str | None = None
    """A metadata key the score must carry (e.g. ``low_mass``, ``logprobs_unavailable``)."""


SCORE_ONLY = [
    Case("dash_ufffd", chat(DASH_TEXT, DASH_TOKENS), 4.6, method="logprobs"),
    Case("subscores_overall", chat(SUBSCORES, SUBSCORE_TOKENS), 3.7, method="logprobs"),
    Case(
        "subscores_only",
        chat("Relevance: 5\nTone Matching: 4", words("Relevance: 5\nTone Matching: 4")),
        "only sub-scores",
    ),
    Case("score_twice", chat("Score: 3\nScore: 4", words("Score: 3\nScore: 4")), "ambiguous"),
    Case(
        "split_digits_10",
        chat("Score: 10", [tok("Score"), tok(":"), tok(" 1", {" 1": 0.9}), tok("0")]),
        "outside 1-5",
    ),
    Case(
        "leading_space",
        chat("Score: 4", [tok("Score"), tok(":"), tok(" 4", {" 4": 0.6, " 5": 0.2, " 3": 0.2})]),
        4.0,
        method="logprobs",
    ),
    Case(
        "bpe_markers",
        chat(
            "Score: 4",
            [
                tok("Score", no_bytes=True),
                tok(":", no_bytes=True),
                tok("Ġ4", {"Ġ4": 0.7, "Ġ5": 0.3}, no_bytes=True),
            ],
        ),
        4.3,
        method="logprobs",
    ),
    Case(
        "one_may_start_ten",
        chat("1", [tok("1", {"1": 0.5, "10": 0.3, "2": 0.2})]),
        (1 * 0.5 + 2 * 0.2) / 0.7,
        method="logprobs",
    ),
    Case(
        "full_width_alternatives",
        chat("4", [tok("4", {"4": 0.5, "４": 0.25, "5": 0.25})]),
        4.25,
        method="logprobs",
    ),
    Case(
        "logprob_1000",
        chat("4", [tok("4", {"4": 0.5, "3": 0.5}, logprob=1000.0)]),
        4.0,
        method="parse",
        flag="logprobs_unavailable",
    ),
    Case(
        "logprob_nan",
        chat("4", [tok("4", {"4": 0.5}, logprob=float("nan"))]),
        4.0,
        method="parse",
        flag="logprobs_unavailable",
    ),
    Case(
        "low_mass",
        chat("4", [tok("4", {"The": 0.9, "4": 0.01, "3": 0.005})]),
        (4 * 0.01 + 3 * 0.005) / 0.015,
        method="logprobs",
        flag="low_mass",
    ),
    Case(
        "cut_after_digit",
        chat("Score: 1", words("Score: 1"), finish="length"),
        "raise --max-tokens",
    ),
    Case(
        # unlabelled: "4\n\nThe reply ... Score: 3" would have read 3
        "cut_after_text",
        chat("4\n\nThe reply", [tok("4", {"4": 0.8, "5": 0.2}), *words("\n\nThe reply")], "length"),
        "cut off by max_tokens",
    ),
    Case(
        "cut_after_closed_label",
        chat(
            "Score: 4\n\nThe reply",
            [tok("Score"), tok(":"), tok(" 4", {" 4": 0.8, " 5": 0.2}), *words("\n\nThe reply")],
            "length",
        ),
        "raise --max-tokens",  # never read: asked again, cut again (issue 47)
    ),
    Case("cut_before_output", chat("", [], finish="length"), "before any output"),
    Case(
        "word_score",
        chat("Four", [tok("Four")]),
        4.0,
        method="parse",
        flag="logprobs_unavailable",
    ),
    Case(
        "unalignable",
        chat("4", [tok("X"), tok("Y")]),
        4.0,
        method="parse",
        flag="logprobs_unavailable",
    ),
    Case(
        "echo_form",
        chat(
            "Evaluation Form (return score ONLY): 4",
            [*words("Evaluation Form (return score ONLY):"), tok(" 4", {" 4": 0.9, " 5": 0.1})],
        ),
        4.1,
        method="logprobs",
    ),
    Case("empty_choices", chat("4", None, choices=[]), "no completion"),
    Case("message_null", chat(None, None), "no completion"),
]

COT = [
    Case("cot_curly_fffd", chat(COT_CURLY_TEXT, cot_curly("fffd")), 4.35, True, "logprobs"),
    Case("cot_curly_bytes", chat(COT_CURLY_TEXT, cot_curly("bytes")), 4.35, True, "logprobs"),
    Case("cot_curly_escape", chat(COT_CURLY_TEXT, cot_curly("escape")), 4.35, True, "logprobs"),
    Case(
        "cot_cut_aspect",
        chat(
            "Reasoning about tone.\nTone Matching: 2",
            words("Reasoning about tone.\nTone Matching: 2"),
            finish="length",
        ),
        "raise --max-tokens",
        True,
    ),
    Case(
        "cot_cut_score_line",
        chat("Reasoning.\nScore: 4", words("Reasoning.\nScore: 4"), finish="length"),
        "raise --max-tokens",
        True,
    ),
    Case(
        "cot_step_number",
        chat("1. Read it.\n2. Emotion: sad.\n3.", words("1. Read it.\n2. Emotion: sad.\n3.")),
        "continues the numbered list",
        True,
    ),
    Case(
        "cot_subscore_last",
        chat("Warm reply.\nTone Matching: 2", words("Warm reply.\nTone Matching: 2")),
        "sub-score",
        True,
    ),
]


def write_dialogs(path: Path, names: list[str]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for name in names:
            record = {
                "id": name,
                "turns": [
                    {"role": "user", "content": f"Case {name}: I lost my job today."},
                    {"role": "assistant", "content": "I'm so sorry. That is a hard blow."},
                ],
                "rating": 4,
            }
            f.write(json.dumps(record) + "\n")
    return path


def run_cases(
    server: FakeServer, model: str, cases: list[Case], tmp_path: Path, **task_args: Any
) -> dict[str, EvalSample]:
    for case in cases:
        server.script(Reply(respond=case.respond), when=f"Case {case.name}:")
    data = write_dialogs(tmp_path / "dialogs.jsonl", [c.name for c in cases])
    [log] = eval(
        empathy(dataset=str(data), **task_args),
        model=model,
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_retries=1,
        timeout=30,
        fail_on_error=False,
    )
    assert log.location
    log = read_eval_log(log.location)
    assert log.samples is not None
    samples = {str(s.id): s for s in log.samples}
    assert sorted(samples) == sorted(c.name for c in cases)
    return samples


def check(samples: dict[str, EvalSample], cases: list[Case]) -> None:
    problems = []
    for case in cases:
        sample = samples[case.name]
        if sample.error is not None:
            problems.append(f"{case.name}: errored: {sample.error.message[:200]}")
            continue
        score = sample.scores["empathy_scorer"]  # type: ignore[index]
        value = score.value
        unscored = isinstance(value, float) and math.isnan(value)
        metadata = score.metadata or {}
        if isinstance(case.expect, str):
            reason = metadata.get("unscored_reason", "")
            if not unscored or case.expect not in reason:
                problems.append(f"{case.name}: expected '{case.expect}', got {value} {reason!r}")
            continue
        if unscored or not math.isclose(float(value), case.expect, abs_tol=1e-6):  # type: ignore[arg-type]
            problems.append(
                f"{case.name}: expected {case.expect}, got {value} "
                f"({metadata.get('unscored_reason') or score.explanation})"
            )
            continue
        if case.method and metadata.get("method") != case.method:
            problems.append(f"{case.name}: method {metadata.get('method')}, not {case.method}")
        if case.flag and not metadata.get(case.flag):
            problems.append(f"{case.name}: no {case.flag} in {sorted(metadata)}")
    assert not problems, "\n".join(problems)


def test_score_only_answers_through_the_openai_sdk(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    samples = run_cases(openai_server, OPENAI, SCORE_ONLY, tmp_path)
    check(samples, SCORE_ONLY)
    # a judge that answered is final: the empty answers were not asked again
    assert openai_server.count("Case empty_choices:") == 1
    assert openai_server.count("Case message_null:") == 1


def test_reasoned_answers_through_the_openai_sdk(openai_server: FakeServer, tmp_path: Path) -> None:
    samples = run_cases(openai_server, OPENAI, COT, tmp_path, cot=True)
    check(samples, COT)


def test_logprobs_method_leaves_unusable_logprobs_unscored(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    cases = [
        Case("unalignable", chat("4", [tok("X"), tok("Y")]), "cannot be told"),
        Case("word_score", chat("Four", [tok("Four")]), "written as a word"),
        Case("logprob_nan", chat("4", [tok("4", {"4": 0.5}, logprob=float("nan"))]), "malformed"),
        Case("subscores_overall", chat(SUBSCORES, SUBSCORE_TOKENS), 3.7, method="logprobs"),
    ]
    check(run_cases(openai_server, OPENAI, cases, tmp_path, method="logprobs"), cases)


def test_low_mass_can_be_left_unscored(openai_server: FakeServer, tmp_path: Path) -> None:
    cases = [
        Case("low_mass", chat("4", [tok("4", {"The": 0.9, "4": 0.01, "3": 0.005})]), "low-mass"),
        Case("healthy", chat("4", [tok("4", {"4": 0.9, "5": 0.1})]), 4.1, method="logprobs"),
    ]
    check(run_cases(openai_server, OPENAI, cases, tmp_path, low_mass="unscored"), cases)


def anthropic_answer(text: str, stop: str = "end_turn") -> Callable[[dict[str, Any]], dict]:
    def respond(body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": "msg_case",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 3},
        }

    return respond


def test_answers_through_the_anthropic_sdk(anthropic_server: FakeServer, tmp_path: Path) -> None:
    cases = [
        Case("subscores_overall", anthropic_answer(SUBSCORES), 4.0, method="parse"),
        Case("score_twice", anthropic_answer("Score: 3\nScore: 4"), "ambiguous"),
        Case("echo", anthropic_answer("Empathetical responding (1–5): 5"), 5.0, method="parse"),
        Case("cut", anthropic_answer("Score: 1", "max_tokens"), "cut off by max_tokens"),
        Case("strong", anthropic_answer("4 - strong empathy"), 4.0, method="parse"),
        Case("colon", anthropic_answer("4: Demonstrates strong empathy"), 4.0, method="parse"),
        Case("paren", anthropic_answer("Score: 2 (minimal empathy)"), 2.0, method="parse"),
        Case("give", anthropic_answer("I'd give it a 4."), 4.0, method="parse"),
        Case("out_of", anthropic_answer("The score is 4 out of 5."), 4.0, method="parse"),
        Case("label_line", anthropic_answer("Score:\n4"), 4.0, method="parse"),
        Case("bullet", anthropic_answer("- Score: 4"), 4.0, method="parse"),
        Case("word", anthropic_answer("Four"), 4.0, method="parse"),
        Case("either", anthropic_answer("3 or 4"), "ambiguous"),
        Case("half", anthropic_answer("4.5"), "not a whole number"),
        Case("ten", anthropic_answer("8/10"), "another scale"),
        Case("refusal", anthropic_answer("I can't rate this."), "no score"),
    ]
    check(run_cases(anthropic_server, ANTHROPIC, cases, tmp_path), cases)


def test_default_output_bound_reaches_the_provider(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    cases = [Case("plain", chat("4", [tok("4", {"4": 0.9, "5": 0.1})]), 4.1)]
    run_cases(openai_server, OPENAI, cases, tmp_path)
    [request] = openai_server.requests
    assert request.body.get("max_tokens") == 24 or request.body.get("max_completion_tokens") == 24
    openai_server.clear()
    cot = [Case("plain", chat("Fine.\nScore: 4", words("Fine.\nScore: 4")), 4.0, cot=True)]
    (tmp_path / "cot").mkdir()
    run_cases(openai_server, OPENAI, cot, tmp_path / "cot", cot=True)
    body = openai_server.requests[0].body
    assert 512 in (body.get("max_tokens"), body.get("max_completion_tokens"))


def test_user_max_tokens_wins(openai_server: FakeServer, tmp_path: Path) -> None:
    openai_server.script(Reply(respond=chat("4", [tok("4", {"4": 1.0})])))
    data = write_dialogs(tmp_path / "d.jsonl", ["one"])
    eval(
        empathy(dataset=str(data)),
        model=OPENAI,
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_tokens=3,
    )
    body = openai_server.requests[0].body
    assert 3 in (body.get("max_tokens"), body.get("max_completion_tokens"))




# -- samples: top-ups and the minimum share ------------------------------------------------


def one_choice_by_seed(body: dict[str, Any]) -> dict[str, Any]:
    """A provider that ignores ``n`` and honours ``seed``: one answer, fixed by the seed."""
    seed = body.get("seed")
    text = str(1 + seed % 5) if isinstance(seed, int) else "3"
    return chat(text, None)(body)


def test_samples_top_ups_keep_settings_vary_the_seed_and_run_concurrently(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    openai_server.script(Reply(respond=one_choice_by_seed, delay=0.3))
    data = write_dialogs(tmp_path / "d.jsonl", ["one"])
    [log] = eval(
        empathy(dataset=str(data), method="samples", completions=5),
        model=OPENAI,
        log_dir=str(tmp_path / "logs"),
        display="none",
        temperature=0.7,
        seed=42,
    )
    bodies = [r.body for r in openai_server.requests]
    assert len(bodies) == 5  # the first call (n=5 ignored) and four top-ups
    assert {b.get("temperature") for b in bodies} == {0.7}
    assert sorted(b.get("seed") for b in bodies) == [42, 43, 44, 45, 46]
    assert openai_server.max_in_flight >= 2  # the top-ups were in flight together
    [sample] = log.samples or []
    score = sample.scores["empathy_scorer"]  # type: ignore[index]
    assert sorted(score.metadata["scores"]) == [1, 2, 3, 4, 5]
    assert score.value == pytest.approx(3.0)


def test_samples_top_ups_in_response_mode_keep_the_graders_settings(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    from inspect_ai.model import GenerateConfig, get_model

    openai_server.script(Reply(respond=one_choice_by_seed))
    grader = get_model(OPENAI, config=GenerateConfig(temperature=0.7, seed=7))
    data = write_dialogs(tmp_path / "d.jsonl", ["one"])
    eval(
        "inspect_empathy/empathy_response",
        task_args={"dataset": str(data), "grader_method": "samples", "completions": 4},
        model="empathy_baseline/lexicon",
        model_roles={"grader": grader},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    bodies = [r.body for r in openai_server.requests]
    assert {b.get("temperature") for b in bodies} == {0.7}
    assert sorted(b.get("seed") for b in bodies) == [7, 8, 9, 10]


def test_samples_need_a_minimum_share_of_valid_scores(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    few = ["4", "junk", "junk", "junk", "junk", "junk"]
    openai_server.script(Reply(texts=few), when="Case few")
    openai_server.script(Reply(texts=["4", "5", "junk", "4", "4", "5"]), when="Case most")
    data = write_dialogs(tmp_path / "d.jsonl", ["few", "most"])
    [log] = eval(
        empathy(dataset=str(data), method="samples", completions=6, min_parsed=0.8),
        model=OPENAI,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    scores = {str(s.id): s.scores["empathy_scorer"] for s in log.samples or []}  # type: ignore[index]
    assert math.isnan(scores["few"].value)  # type: ignore[arg-type]
    assert "only 1 of 6 completions" in scores["few"].metadata["unscored_reason"]
    # a user who lowers min_parsed accepts the worst-case shift: 1 unread of 6 (0.67)
    assert scores["most"].value == pytest.approx(4.4)
    assert scores["most"].metadata["partial"] is True
    assert log.results is not None
    from inspect_empathy._util.summary import summary_lines

    [line] = summary_lines(log)
    assert "1 of 2 samples scored (samples 1), 1 with human ratings; partial 1; 1 unscored" in line
    assert log.results.scores[0].unscored_samples == 1


# -- panels over epochs ---------------------------------------------------------------------


def panel_answers(script: dict[str, list[str]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Each grader model answers its scripted scores in turn; the model under evaluation
    (any other name) writes a reply."""
    calls: dict[str, int] = {}

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        model = str(body.get("model"))
        if model not in script:
            return chat("I'm so sorry, that sounds really hard.", None)(body)
        index = calls.get(model, 0)
        calls[model] = index + 1
        return chat(script[model][index % len(script[model])], None)(body)

    return respond


def test_panel_metrics_cover_every_epoch(openai_server: FakeServer, tmp_path: Path) -> None:
    script = {"gpt-4.1-mini": ["3", "4"], "gpt-4o": ["3"]}
    openai_server.script(Reply(respond=panel_answers(script)))
    data = write_dialogs(tmp_path / "d.jsonl", ["one"])
    [log] = eval(
        "inspect_empathy/empathy_response",
        task_args={"dataset": str(data), "grader_method": "parse"},
        model="openai/gpt-4o-mini",
        model_roles={"grader": ["openai/gpt-4.1-mini", "openai/gpt-4o"]},
        epochs=2,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.results is not None
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    assert metrics["judge_mean(openai/gpt-4.1-mini)"] == pytest.approx(3.5)
    assert metrics["judge_mean(openai/gpt-4o)"] == pytest.approx(3.0)
    assert len(log.samples or []) == 2  # one per epoch
    [reduction] = log.reductions or []
    assert reduction.reducer == "empathy_mean"
    [score] = reduction.samples
    assert score.value == pytest.approx((3.0 + 3.5) / 2)
    assert score.metadata is not None
    assert sorted(e["value"] for e in score.metadata["epochs"]) == [3.0, 3.5]
    assert sorted(score.metadata["judges"]["openai/gpt-4.1-mini"]["epoch_values"]) == [3.0, 4.0]


@pytest.mark.parametrize("reducer", ["median", "mode"])
def test_panel_metrics_are_withheld_under_a_reducer_that_keeps_one_epoch(
    reducer: str, openai_server: FakeServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Inspect's reducers keep epoch 1's per-judge metadata: no one-epoch figure may stand
    under an all-epoch name (3.0 and 4.0 here, where both judges average 3.25)."""
    import logging

    from inspect_ai import Epochs

    script = {"gpt-4.1-mini": ["3", "4"], "gpt-4o": ["4", "2"]}
    openai_server.script(Reply(respond=panel_answers(script)))
    data = write_dialogs(tmp_path / "d.jsonl", ["one"])
    with caplog.at_level(logging.WARNING):
        [log] = eval(
            "inspect_empathy/empathy_response",
            task_args={"dataset": str(data), "grader_method": "parse"},
            model="openai/gpt-4o-mini",
            model_roles={"grader": ["openai/gpt-4.1-mini", "openai/gpt-4o"]},
            epochs=Epochs(2, reducer),
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
    assert log.results is not None
    metrics = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    assert not any(k.startswith("judge_mean(") or k == "judge_alpha" for k in metrics), metrics
    assert "withheld" in caplog.text


# -- the scorer in a suite, and options ------------------------------------------------------


def test_scorer_metrics_stay_with_the_scorer_in_a_suite(tmp_path: Path) -> None:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
    from inspect_ai.scorer import includes

    messages = [
        ChatMessageUser(content="I lost my job today."),
        ChatMessageAssistant(content="I'm so sorry, that is a hard blow."),
    ]
    task = Task(
        dataset=[
            Sample(input=messages, target="sorry", id="a", metadata={"topic": "work"}),
            Sample(input=messages, target="sorry", id="b", metadata={"topic": "home"}),
        ],
        solver=[],
        scorer=[includes(), empathy_scorer(model="empathy_baseline/lexicon", group_by="topic")],
    )
    [log] = eval(task, model="empathy_baseline/length", log_dir=str(tmp_path), display="none")
    assert log.results is not None
    by_scorer = {s.name: set(s.metrics) for s in log.results.scores}
    assert "accuracy" in by_scorer["includes"]
    assert not any("topic" in m for m in by_scorer["includes"])
    assert {"mean", "share_ge_4", "mean(topic=work)", "mean(topic=home)"} <= by_scorer[
        "empathy_scorer"
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("method=bogus", "method must be one of"),
        ("completions=0", "completions must be at least 1"),
    ],
)
def test_bad_scoring_options_are_one_line_errors(
    option: str, message: str, tmp_path: Path
) -> None:
    import subprocess
    import sys

    extra = ["-T", "method=samples"] if option.startswith("completions") else []
    result = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "inspect_empathy/empathy"]
        + ["--model", "empathy_baseline/lexicon", "-T", option, *extra]
        + ["--log-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert message in output
    assert "Traceback" not in output


def test_other_bad_options_are_plain_errors() -> None:
    from inspect_empathy._util.compat import PrerequisiteError

    with pytest.raises(PrerequisiteError, match="low_mass must be"):
        empathy(low_mass="drop")  # type: ignore[arg-type]
    with pytest.raises(PrerequisiteError, match="min_parsed must be between 0 and 1"):
        empathy(min_parsed=2)


@pytest.mark.slow
def test_terminal_summary_counts_unscored_and_methods(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    """The end of an `inspect eval` run in a terminal says how many were scored, how,
    and why the rest were not; `auto`'s fallback to parsing is announced once."""
    import os
    import subprocess
    import sys

    openai_server.script(
        Reply(respond=chat("Score: 3\nScore: 4", words("Score: 3\nScore: 4"))), when="Case amb"
    )
    openai_server.script(Reply(respond=chat("Four", [tok("Four")])), when="Case word")
    openai_server.script(Reply(respond=chat("Four", [tok("Four")])), when="Case word2")
    data = write_dialogs(tmp_path / "d.jsonl", ["amb", "word", "word2", "fine"])
    env = {**os.environ, "COLUMNS": "400"}  # the end-of-task line on one line
    result = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "inspect_empathy/empathy"]
        + ["--model", OPENAI, "-T", f"dataset={data}", "--log-dir", str(tmp_path / "logs")],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 0, output[-2000:]
    assert (
        "3 of 4 samples scored (parse 2, logprobs 1), 3 with human ratings; fallback 2; "
        "1 unscored" in output
    ), output
    assert "1 × several different scores" in output, output
    assert output.count("gave no usable logprobs") == 1


def test_response_mode_grader_with_no_completion_is_unscored(
    openai_server: FakeServer, tmp_path: Path
) -> None:
    openai_server.script(Reply(respond=chat("4", None, choices=[])))
    data = write_dialogs(tmp_path / "d.jsonl", ["one"])
    [log] = eval(
        "inspect_empathy/empathy_response",
        task_args={"dataset": str(data)},
        model="empathy_baseline/lexicon",
        model_roles={"grader": OPENAI},
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_retries=1,
    )
    [sample] = log.samples or []
    assert sample.error is None
    score = sample.scores["empathy_scorer"]  # type: ignore[index]
    assert math.isnan(score.value)  # type: ignore[arg-type]
    assert openai_server.count() == 1


def test_explanations_render_as_written_in_markdown() -> None:
    from markdown_it import MarkdownIt

    from inspect_empathy.judge._geval import Judgement
    from inspect_empathy.scorer import panel_score, to_score

    distribution = {1: 0, 2: 0, 3: 0.1, 4: 0.6, 5: 0.3}
    low = {"low_mass": True, "score_token_mass": 0.3}
    logprobs = Judgement(4.2, "logprobs", "4", distribution, details=low)
    unscored = Judgement(None, "parse", "**7**", reason="score *7* is outside 1-5 [x](y) <b>")
    panel = panel_score([("a_b_", logprobs), ("<judge>", unscored)], "mean", {})
    for explanation in (to_score(logprobs, {}).explanation, panel.explanation):
        html = MarkdownIt().render(explanation or "")
        assert "<em>" not in html and "<strong>" not in html and "<a " not in html
        assert "0.100 × 3 + 0.600 × 4 + 0.300 × 5 = 4.200" in html
    html = MarkdownIt().render(to_score(unscored, {}).explanation or "")
    assert "score *7* is outside 1-5 [x](y) &lt;b&gt;" in html


def test_logprobs_score_whose_mass_held_keeps_its_distribution_and_a_short_text() -> None:
    from inspect_empathy.judge._geval import Judgement
    from inspect_empathy.scorer import to_score

    distribution = {1: 0.0, 2: 0.0, 3: 0.1, 4: 0.6, 5: 0.3}
    held = Judgement(4.2, "logprobs", "4", distribution, details={"score_token_mass": 0.98})
    score = to_score(held, {})
    # the viewer shows it under the score (no "(No Explanation)"): each level's probability
    assert score.explanation == "logprobs: 0.100 × 3 + 0.600 × 4 + 0.300 × 5 = 4.200"
    assert score.metadata == {
        "method": "logprobs",
        "distribution": {"1": 0.0, "2": 0.0, "3": 0.1, "4": 0.6, "5": 0.3},
        "score_token_mass": 0.98,
    }
    low = Judgement(4.2, "logprobs", "4", distribution, details={"low_mass": True,
                                                                  "score_token_mass": 0.3})
    assert "low mass: score tokens held 30.0%" in (to_score(low, {}).explanation or "")
    parsed = to_score(Judgement(4.0, "parse", "4"), {})
    assert parsed.explanation == "parse: 4"
