"""The ``inspect-empathy`` console script: ``compare LOGS... [--out DIR]``."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest
from inspect_ai import eval

from inspect_empathy.cli import main
from inspect_empathy.tasks import empathy

FIXTURE = Path(__file__).parents[1] / "fixtures" / "compare" / "judges.jsonl"
LEXICON = "empathy_baseline/lexicon"
LENGTH = "empathy_baseline/length"


@pytest.fixture(scope="module")
def judge_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log_dir = tmp_path_factory.mktemp("cli_logs")
    eval(
        empathy(dataset=str(FIXTURE)),
        model=[LEXICON, LENGTH],
        log_dir=str(log_dir),
        log_format="eval",
        display="none",
    )
    return log_dir


def test_console_script_is_declared() -> None:
    scripts = importlib.metadata.entry_points(group="console_scripts", name="inspect-empathy")
    assert [s.value for s in scripts] == ["inspect_empathy.cli:main"]


def test_compare_prints_ranked_tables_and_writes_report(
    judge_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    code = main(["compare", str(judge_logs), "--out", str(out), "--resamples", "300"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    text = captured.out
    assert f"Floor: {LEXICON} is an offline baseline" in text
    assert "Best agreement" not in text  # baselines are floors, never announced as best
    table = text.split("Judges (ranked):")[1].split("Pairs (same dialogs):")[0]
    assert "| Spearman [95% CI]" in table
    assert table.index(f"| 1    | {LEXICON}") < table.index(f"| 2    | {LENGTH}")
    assert "p (Holm)" in text
    assert "Length bias:" in text and "| human" in text
    for name in ("judges.csv", "judges.md", "pairs.csv", "report.html", "agreement.png"):
        assert (out / name).is_file(), name
    assert "reading logs" in captured.err  # the progress bar


def test_compare_quiet_no_plots(
    judge_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    assert main(["compare", str(judge_logs), "--out", str(out), "--quiet", "--no-plots"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "reading logs" not in captured.err
    assert (out / "report.html").is_file()
    assert not list(out.glob("*.png"))


def test_compare_reports_missing_logs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(tmp_path / "missing")]) == 1
    assert "no such log file or folder" in capsys.readouterr().err


def test_compare_rejects_negative_resamples(
    judge_logs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(judge_logs), "--resamples", "-1"]) == 2
    assert "--resamples must be >= 0" in capsys.readouterr().err


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "compare" in capsys.readouterr().out


def test_compare_requires_logs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["compare"])
    assert exit_info.value.code == 2
    assert "LOGS" in capsys.readouterr().err
