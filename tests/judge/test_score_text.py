"""The parse table in docs/scoring.md, checked row by row against the parser."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inspect_empathy.judge._score_text import ScoreParseError, parse_score

DOC = Path(__file__).resolve().parents[2] / "docs" / "scoring.md"


def table_rows() -> list[tuple[str, bool, str]]:
    """(answer, cot, result) for each row of the doc's parse table."""
    text = DOC.read_text("utf-8")
    section = text.split("## Which answer, which score: one verdict or none", 1)[1]
    section = section.split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[1] not in ("yes", "no"):
            continue
        answer, cot, result = cells
        literal = re.match(r"`(.*)`", answer)
        answer = literal.group(1).replace("\\n", "\n") if literal else ""
        rows.append((answer, cot == "yes", result))
    return rows


ROWS = table_rows()


def test_the_table_is_there() -> None:
    assert len(ROWS) >= 30


@pytest.mark.parametrize(("answer", "cot", "result"), ROWS)
def test_parse_table_row(answer: str, cot: bool, result: str) -> None:
    if result.startswith("refused: "):
        with pytest.raises(ScoreParseError) as refused:
            parse_score(answer)
        assert result.removeprefix("refused: ") in str(refused.value)
    else:
        match = parse_score(answer)
        assert match.score == int(result)
        # the position points at what wrote the score
        written = answer[match.start : match.end]
        assert written.translate(str.maketrans("４", "4")).startswith(result) or match.word


def test_score_position_is_the_overall_not_a_sub_score() -> None:
    text = "Relevance: 5\nTone Matching: 4\nOverall: 4"
    match = parse_score(text)
    assert text[: match.start].endswith("Overall: ")


def test_first_of_equal_candidates_is_the_score_position() -> None:
    text = "4 - strong empathy; I give it 4"
    assert parse_score(text).start == 0


def test_cot_score_after_reasoning_numbers() -> None:
    text = "A four-step plan, 2 cues.\nScore: 5"
    match = parse_score(text)
    assert match.score == 5 and text[match.start] == "5" and match.start == len(text) - 1


def test_the_judge_answer_corpus_gives_no_wrong_number() -> None:
    """benchmarks/verdicts.py on tests/fixtures/judge_answers.jsonl (255 answers in the styles
    of 15 judge families, written apart from the parser): no wrong number, and at least 97%
    of the clear verdicts scored."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "verdicts.py"
    spec = importlib.util.spec_from_file_location("verdicts_benchmark", path)
    assert spec is not None and spec.loader is not None
    verdicts = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(verdicts)
    result = verdicts.measure()
    assert result["answers"] >= 200 and result["kinds"]["revision"] >= 40
    assert result["wrong_numbers"] == 0, result["wrong"]
    assert result["clear_scored"] >= 0.97, result["missed"]
