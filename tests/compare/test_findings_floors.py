"""Issue 49.1: a model judge below an offline floor is never "Best agreement with humans";
the findings say it is below the floor, first."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixture_logs import JUDGES_JSONL, LENGTH, LEXICON, judge, records, reply

from inspect_empathy.cli import main
from inspect_empathy.compare import compare_logs
from inspect_empathy.compare.report import headline

WEAK = "cmpfix/weak"
FULL = "cmpfix/full"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("floors")
    # a judge that refuses all but five dialogs: each refusal counts against its headline
    refused = [reply(r) for r in records()[5:]]
    judge(root / "weak", JUDGES_JSONL, WEAK, refuse=refused)
    judge(root / "full", JUDGES_JSONL, FULL)
    judge(root / "floors", JUDGES_JSONL, LEXICON)
    judge(root / "floors", JUDGES_JSONL, LENGTH)
    return root


def test_a_judge_below_a_floor_is_said_to_be_below_it_first(
    logs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    comparison = compare_logs([logs / "weak", logs / "floors"], resamples=0)
    table = comparison.judges.set_index("judge")
    assert table.loc[WEAK, "somers_d_all"] < table.loc[LEXICON, "somers_d_all"]
    lines = headline(comparison)
    assert not any("Best agreement" in line for line in lines)
    assert lines[0].startswith(f"Below the offline floor: {WEAK}"), lines
    assert LEXICON in lines[0]
    assert main(["compare", str(logs / "weak"), str(logs / "floors"), "--resamples", "0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Below the offline floor: {WEAK}") and "Best agreement" not in out


def test_a_judge_above_every_floor_is_still_best(logs: Path) -> None:
    comparison = compare_logs([logs / "full", logs / "floors"], resamples=0)
    lines = headline(comparison)
    assert not any(line.startswith("Below") for line in lines)
    assert any(line.startswith(f"Best agreement with humans: {FULL}") for line in lines)
