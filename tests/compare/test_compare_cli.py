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


@pytest.mark.slow
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
    # the headline first, the figure the viewer's log list shows
    assert table.splitlines()[1].startswith("| # | judge") and "| somers_d_all [95% CI] |" in table
    assert table.index("somers_d_all") < table.index("| Spearman")
    assert table.index(f"| 1 | {LEXICON}") < table.index(f"| 2 | {LENGTH}")
    assert "Holm p" in text
    # a terminal's 100 columns; the wide tables are in the report
    assert max(len(line) for line in text.splitlines() if line.startswith("|")) <= 100
    assert "Length bias" not in text and "Length bias" in (out / "report.md").read_text()
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


def test_compare_skips_a_truncated_log_names_it_and_writes_the_report(
    judge_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    folder = tmp_path / "logs"
    shutil.copytree(judge_logs, folder)
    bad = folder / "2026-01-01T00-00-00-00-00_empathy_broken.eval"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    out = tmp_path / "report"
    assert main(["compare", str(folder), "--out", str(out), "--resamples", "0", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"warning: {bad}: skipped (unreadable log" in err
    assert (out / "report.html").is_file() and (out / "report.md").is_file()


def test_compare_dataset_option_must_match(
    judge_logs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(judge_logs), "--dataset", "nonesuch", "--quiet"]) == 1
    assert "no dataset matches 'nonesuch' (found: judges@" in capsys.readouterr().err
    assert main(["compare", str(judge_logs), "--dataset", "judges", "--quiet"]) == 0


def test_a_failing_plot_is_left_out_and_the_report_still_written(
    judge_logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_empathy.compare import compare_logs, plots, write_report

    def broken(comparison: object, path: Path) -> Path:
        raise ValueError("Unknown symbol: \\foo")

    monkeypatch.setitem(plots.PLOTS, "histograms", broken)
    comparison = compare_logs(judge_logs, resamples=0)
    written = write_report(comparison, tmp_path / "report")
    assert "histograms.png" not in written and "heatmap.png" in written
    assert any("plot histograms.png left out: ValueError" in w for w in comparison.warnings)
    assert "plot histograms.png left out" in written["report.html"].read_text()
