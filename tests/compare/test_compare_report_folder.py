"""The report folder holds one comparison's files or none, and its CSVs read back as
written (issue 25 items 2 and 6)."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from synthetic_logs import HUMAN, sample, samples, write_log

from inspect_empathy.cli import main
from inspect_empathy.compare import CompareError, JudgeComparison, compare_logs, write_report
from inspect_empathy.compare import report as report_module
from inspect_empathy.compare.folder import PLOT_NAMES, REPORT_FILES
from inspect_empathy.compare.report import neutralise

GOOD = (4.8, 1.2, 3.9, 2.2, 3.1, 4.5)
OTHER = (3.0, 2.0, 4.0, 3.0, 3.0, 4.0)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("folder_logs")
    write_log(folder / "a.eval", "judge/a", samples(GOOD))
    write_log(folder / "b.eval", "judge/b", samples(OTHER))
    return folder


@pytest.fixture(scope="module")
def two(logs: Path) -> JudgeComparison:
    return compare_logs(logs, resamples=0)


@pytest.fixture(scope="module")
def one(logs: Path) -> JudgeComparison:
    return compare_logs(logs / "a.eval", resamples=0)


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def _siblings(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


# --- item 2: one comparison's files or none ------------------------------------------------------


def test_a_rerun_with_fewer_judges_or_no_plots_leaves_no_earlier_file(
    two: JudgeComparison, one: JudgeComparison, tmp_path: Path
) -> None:
    from inspect_empathy.compare.plots import PLOTS

    assert set(PLOTS) <= set(PLOT_NAMES)
    out = tmp_path / "report"
    first = write_report(two, out)
    assert "pairs.csv" in first and "heatmap.png" in first and set(first) <= REPORT_FILES
    second = write_report(one, out, plots=False)
    assert sorted(p.name for p in out.iterdir()) == sorted(second)
    assert not (out / "pairs.csv").exists() and not list(out.glob("*.png"))
    assert _siblings(out) == []


def test_two_runs_at_once_into_one_folder_do_not_mix(
    two: JudgeComparison,
    one: JudgeComparison,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "report"
    b_done = threading.Event()
    write_csv = report_module.write_csv
    errors: list[BaseException] = []

    def slow_for_a(frame: pd.DataFrame, path: Path) -> Path:
        written = write_csv(frame, path)
        if threading.current_thread().name == "A" and path.name == "judges.csv":
            assert b_done.wait(30)  # B writes its whole report in between
        return written

    monkeypatch.setattr(report_module, "write_csv", slow_for_a)

    def run(comparison: JudgeComparison) -> None:
        try:
            write_report(comparison, out, plots=False)
        except BaseException as ex:  # noqa: BLE001 - reported by the test
            errors.append(ex)
        finally:
            if threading.current_thread().name == "B":
                b_done.set()

    a = threading.Thread(target=run, args=(two,), name="A")
    b = threading.Thread(target=run, args=(one,), name="B")
    a.start()
    time.sleep(0.2)
    b.start()
    a.join(60)
    b.join(60)
    assert not errors
    # A swapped in last: every file is A's (two judges), none is B's
    judges = pd.read_csv(out / "judges.csv")
    assert sorted(judges["judge"]) == ["judge/a", "judge/b"]
    assert (out / "pairs.csv").is_file() and "judge/b" in (out / "report.html").read_text()
    assert '"judge/b"' in (out / "summary.json").read_text()
    assert _siblings(out) == []


def test_a_full_disk_leaves_the_previous_report_and_one_line(
    logs: Path,
    two: JudgeComparison,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "report"
    write_report(two, out, plots=False)
    before = _files(out)
    write_csv = report_module.write_csv

    def full(frame: pd.DataFrame, path: Path) -> Path:
        if path.name == "samples.csv":
            path.write_text("half a fi")
            raise OSError(28, "No space left on device", str(path))
        return write_csv(frame, path)

    monkeypatch.setattr(report_module, "write_csv", full)
    argv = ["compare", str(logs / "a.eval"), "--out", str(out), "--no-plots", "--quiet"]
    assert main([*argv, "--resamples", "0"]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (
        f"inspect-empathy compare: cannot write the report to {out}: No space left on device "
        "(writing samples.csv); the folder was left as it was"
    )
    assert _files(out) == before and _siblings(out) == []

    def interrupted(frame: pd.DataFrame, path: Path) -> Path:
        raise KeyboardInterrupt

    monkeypatch.setattr(report_module, "write_csv", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_report(two, out, plots=False)
    assert _files(out) == before and _siblings(out) == []


@pytest.mark.slow
def test_a_run_killed_mid_write_leaves_the_previous_report(logs: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    assert main(["compare", str(logs), "--out", str(out), "--quiet", "--no-plots"]) == 0
    before = _files(out)
    child = (
        "import sys, time\n"
        "from inspect_empathy.compare import report\n"
        "def stuck(*args, **kwargs):\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(60)\n"
        "report.html_report = stuck\n"
        "from inspect_empathy.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    argv = ["compare", str(logs / "a.eval"), "--out", str(out), "--quiet", "--no-plots"]
    process = subprocess.Popen(
        [sys.executable, "-c", child, *argv, "--resamples", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == "writing\n"
        [partial] = _siblings(out)  # half written: the new judges.csv is there, no report.html
        assert (out.parent / partial / "judges.csv").is_file()
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    assert _files(out) == before
    # the next run swaps in a whole report and removes what the killed run left
    assert main([*argv, "--resamples", "0"]) == 0
    assert "judge/b" not in (out / "judges.csv").read_text() and _siblings(out) == []


def test_a_folder_holding_other_files_is_never_replaced(
    two: JudgeComparison, tmp_path: Path
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    (out / "judges.csv").write_text("x")
    with pytest.raises(CompareError, match=r"holds files a report does not write \(notes.txt\)"):
        write_report(two, out, plots=False)
    assert sorted(p.name for p in out.iterdir()) == ["judges.csv", "notes.txt"]


# --- item 6: CSVs read back as written ----------------------------------------------------------

HOSTILE = [
    "cr\rsplit",
    "=1+2 after\r=HYPERLINK(1)",
    "lf\nsplit",
    "crlf\r\nsplit",
    'quote " and, comma',
    " =SUM(A1)",
    "\t=cmd",
    "\r+1",
    "\x00@x",
    "  -2+3",
    "＝1",
]


def test_every_csv_reads_back_with_the_same_rows_and_cells(tmp_path: Path) -> None:
    humans = [HUMAN[n % 6] for n in range(len(HOSTILE))]
    hostile = [sample(i, 3.0 + (n % 3) * 0.5, humans[n]) for n, i in enumerate(HOSTILE)]
    plain = [sample(i, 4.0 - (n % 2), humans[n]) for n, i in enumerate(HOSTILE)]
    logs = [
        write_log(tmp_path / "logs" / "h.json", "=judge\r@x", hostile),
        write_log(tmp_path / "logs" / "g.json", "judge/g", plain),
    ]
    comparison = compare_logs(logs, resamples=0)
    written = write_report(comparison, tmp_path / "report", plots=False)
    csvs = [name for name in written if name.endswith(".csv")]
    assert "samples.csv" in csvs and "logs.csv" in csvs
    for name in csvs:
        with open(written[name], newline="", encoding="utf-8") as handle:
            plain = list(csv.reader(handle))
        frame = pd.read_csv(written[name], dtype=str, keep_default_na=False)
        assert plain[0] == list(frame.columns), name
        assert plain[1:] == frame.to_numpy().tolist(), name
        for cell in [c for row in plain for c in row]:
            assert _number(cell) or neutralise(cell) == cell, (name, cell)
    ids = pd.read_csv(written["samples.csv"], dtype=str, keep_default_na=False)["id"]
    assert sorted(ids) == sorted(neutralise(i) for i in HOSTILE)
    assert len(ids) == len(HOSTILE)


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize(
    ("cell", "safe"),
    [
        ("=1", True), ("+1", True), ("-x", True), ("@x", True), (" =1", True),
        ("\t=1", True), ("\r\n+1", True), ("\x00@", True), ("\x1b=", True), ("\u3000=1", True),
        ("＝1", True), ("\ta", True), ("a=b", False), ("judge/a", False), ("", False),
    ],
)  # fmt: skip
def test_formula_cells_are_neutralised_after_whitespace_and_control_characters(
    cell: str, safe: bool
) -> None:
    assert neutralise(cell) == ("'" + cell if safe else cell)
    assert neutralise(3.5) == 3.5 and neutralise(-2) == -2
