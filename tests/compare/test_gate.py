"""The CI gate names why a figure it needs is missing (``compare --fail-under``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from synthetic_logs import sample, write_log

from inspect_empathy.cli import main

HUMANS = [1.0, 2.0, 3.0, 4.0, 5.0] * 4


def gate(tmp_path: Path, capsys: pytest.CaptureFixture[str], threshold: str) -> str:
    argv = ["compare", str(tmp_path / "logs"), "--quiet", "--resamples", "0"]
    assert main([*argv, "--fail-under", threshold]) == 3
    return capsys.readouterr().err


def test_constant_scores_fail_the_gate_for_no_variation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """20 dialogs, one score: Spearman is undefined because nothing varies, not because
    there are too few dialogs (the reason the gate gave)."""
    rows = [sample(f"d{i}", 3.0, h) for i, h in enumerate(HUMANS)]
    write_log(tmp_path / "logs" / "a.eval", "judge/a", rows)
    err = gate(tmp_path, capsys, "spearman=0.6")
    assert "judge/a: spearman cannot be computed (no variation: the judge gave all 20 common " in (
        err
    )
    assert "same score 3)" in err and "too few dialogs" not in err


def test_constant_human_ratings_and_too_few_dialogs_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [sample(f"d{i}", 1.0 + i % 5, 4.0) for i in range(20)]
    write_log(tmp_path / "logs" / "a.eval", "judge/a", rows)
    err = gate(tmp_path, capsys, "kendall=0.1")
    assert "(no variation: the human ratings of all 20 common dialogs are 4)" in err
    write_log(tmp_path / "logs" / "a.eval", "judge/a", [sample("d1", 2.0, 3.0)])
    err = gate(tmp_path, capsys, "spearman=0.1")
    assert "(too few dialogs: 1 on the common set, 3 needed)" in err
