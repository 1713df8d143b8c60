"""Issue 49.9: `compare --help` names the ranking metric; a passing gate says so in one
line; an unknown --gate-judge is a usage error (2), not a failed gate (3); the files line
names the folder once; without matplotlib the report is written without its plots, saying
in one line how to get them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from inspect_ai import eval

from inspect_empathy.cli import main
from inspect_empathy.tasks import empathy

FIXTURE = Path(__file__).parents[1] / "fixtures" / "compare" / "judges.jsonl"
LEXICON = "empathy_baseline/lexicon"
LENGTH = "empathy_baseline/length"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log_dir = tmp_path_factory.mktemp("gate_logs")
    eval(empathy(dataset=str(FIXTURE)), model=[LEXICON, LENGTH], log_dir=str(log_dir),
         log_format="eval", display="none")  # fmt: skip
    return log_dir


def test_help_names_the_ranking_metric(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "ranked by somers_d_all" in text


def test_a_passing_gate_says_so_in_one_line(
    logs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["compare", str(logs), "--resamples", "0", "--fail-under", "somers_d_all=0.1",
                 "--gate-judge", LEXICON])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert [line for line in out.splitlines() if "Gate" in line] == [
        f"Gate passed: somers_d_all >= 0.1 for {LEXICON}."
    ]


def test_an_unknown_gate_judge_is_a_usage_error(
    logs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["compare", str(logs), "--resamples", "0", "--quiet", "--fail-under",
                 "somers_d_all=0.1", "--gate-judge", "empathy_baseline/lexicn"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "--gate-judge empathy_baseline/lexicn: no such judge" in err and LEXICON in err
    assert "gate failed" not in err


def test_the_files_line_names_the_folder_once_and_without_matplotlib_writes_what_it_can(
    logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # not installed
    out = tmp_path / "report"
    assert main(["compare", str(logs), "--resamples", "0", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    [wrote] = [line for line in captured.out.splitlines() if line.startswith("Wrote")]
    assert wrote.count(str(out)) == 2 and "report: " not in wrote
    assert wrote.endswith(f"; open {out / 'report.html'}")
    assert (out / "report.html").is_file() and not list(out.glob("*.png"))
    [line] = [x for x in captured.err.splitlines() if "plots" in x]
    assert "pip install 'inspect-empathy[compare]'" in line
