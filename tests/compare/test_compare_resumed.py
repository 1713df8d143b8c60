"""Logs of a resumed eval set, and logs edited to hold a sample twice (issue 46).

An eval set killed mid-run and run again: Inspect recovers the killed log from its sample
buffer (the samples in flight become cancelled records), seeds the new log with it, and
writes each re-run sample under its old member name, so the finished ``.eval`` holds those
samples twice; Inspect's readers take the last record. Compare reads them the same way. A
log that holds two finished records of one sample with different scores is refused.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from fake_servers import FakeServer, Reply
from fixture_logs import JUDGES_JSONL, records, write_jsonl
from synthetic_logs import samples, write_log

from inspect_empathy.cli import main
from inspect_empathy.compare import CompareError, compare_logs
from inspect_empathy.compare.fit import CalibrateError, calibrate_logs

JUDGES = ("openai/gpt-4o-mini", "openai/gpt-4o", "openai/gpt-4.1-mini")
DIALOGS = 40
"""Enough samples that the re-run records stay below the tenth of the file at which Inspect
compacts a finished log (its ``COMPACT_DEAD_BYTES_FRACTION``), which would drop them."""
ANSWERED = 30
"""Answers before the fake judge holds every further request (the kill comes then)."""
IN_FLIGHT = 2
"""Samples each judge's task runs at once (``--max-connections``): held at the kill."""


def _dataset(path: Path) -> Path:
    """The 30 comparison dialogs and 10 more (another id, the reply lengthened)."""
    rows = records(JUDGES_JSONL)
    more = []
    for index, row in enumerate(rows[: DIALOGS - len(rows)]):
        copy = json.loads(json.dumps(row))
        copy["id"] = f"cmp-{len(rows) + index + 1:03d}"
        copy["turns"][-1]["content"] += " Take care."
        more.append(copy)
    return write_jsonl(path, rows + more)


def _repeated_members(log: Path) -> list[str]:
    """Sample members a finished ``.eval`` holds more than once."""
    with zipfile.ZipFile(log) as archive:
        names = Counter(n for n in archive.namelist() if n.startswith("samples/"))
    return [name for name, count in names.items() if count > 1]


@pytest.mark.slow
def test_an_eval_set_killed_and_resumed_is_compared(tmp_path: Path) -> None:
    """``inspect eval-set`` of three judges, SIGKILLed while each task has two samples in
    flight (the fake judge answers 30 requests and holds the rest), then run again: the
    finished logs hold the re-run samples twice, and all three judges are compared."""
    dataset = _dataset(tmp_path / "dialogs.jsonl")
    logs = tmp_path / "logs"
    server = FakeServer("openai")
    server.script(Reply(), times=ANSWERED)
    server.script(Reply(delay=600))  # held until the server stops
    env = {
        **os.environ, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "test",
        "XDG_DATA_HOME": str(tmp_path / "data"),  # Inspect's sample buffer, read on resume
        "INSPECT_DISPLAY": "none", "NO_COLOR": "1",
    }  # fmt: skip
    command = [
        sys.executable, "-m", "inspect_ai", "eval-set", "inspect_empathy/empathy",
        "--model", ",".join(JUDGES), "-T", f"dataset={dataset}", "--log-dir", str(logs),
        "--max-connections", str(IN_FLIGHT),
    ]  # fmt: skip
    try:
        run = subprocess.Popen(
            command, cwd=tmp_path, env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            # every task's slots held: the answered samples are done, two per task in flight
            deadline = time.monotonic() + 300  # a hang fails the test; speed does not matter
            while server.count() < ANSWERED + IN_FLIGHT * len(JUDGES):
                assert run.poll() is None, run.communicate()[1]
                assert time.monotonic() < deadline, "the eval set never reached the kill"
                time.sleep(0.05)
        finally:
            os.killpg(run.pid, signal.SIGKILL)
            run.communicate()
        server.heal()
        again = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
            check=False,
        )  # fmt: skip
        assert again.returncode == 0, again.stderr
    finally:
        server.stop()
    finished = [p for p in logs.glob("*.eval") if _repeated_members(p)]
    assert finished, "Inspect wrote no re-run sample twice: the scenario was not reproduced"

    assert main(["compare", str(logs), "--resamples", "0", "--quiet"]) == 0
    comparison = compare_logs(logs, resamples=0)
    assert sorted(comparison.judge_names) == sorted(JUDGES)
    assert len(comparison.samples) == DIALOGS * len(JUDGES)
    compared = comparison.logs[comparison.logs["set_apart"] == ""]
    assert len(compared) == len(JUDGES) and (compared["samples"] == DIALOGS).all()
    repeated = compared[compared["log"].isin({str(p) for p in finished})]
    assert repeated["records"].str.contains("re-run").all(), repeated["records"].tolist()


def _append_member(log: Path, sample_id: str, value: float) -> None:
    """Append a record of ``sample_id`` (epoch 1) under its own member name, with another
    score: an ``.eval`` holding the sample twice (``write_eval_log`` would keep only the
    last record of an id and epoch)."""
    name = f"samples/{sample_id}_epoch_1.json"
    with zipfile.ZipFile(log) as archive:
        data = json.loads(archive.read(name))
    data["scores"]["empathy_scorer"]["value"] = value
    with zipfile.ZipFile(log, "a") as archive, pytest.warns(UserWarning, match="Duplicate"):
        archive.writestr(name, json.dumps(data))


def test_a_log_edited_to_hold_a_differing_duplicate_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """d2 (scored 1) appended again scored 5: compare, calibrate and the command line refuse
    the log, naming it, the sample and both scores."""
    write_log(tmp_path / "a.eval", "judge/a", samples((4.8, 1.2, 3.9, 2.2, 3.1, 4.5)))
    edited = write_log(tmp_path / "b.eval", "judge/b", samples((3.0, 1.0, 4.0, 3.0, 3.0, 4.0)))
    _append_member(edited, "d2", 5.0)
    expected = "sample id 'd2' appears 2 times in epoch 1 with different scores (1, 5)"

    comparison = compare_logs(tmp_path, resamples=0)
    assert comparison.judge_names == ["judge/a"]
    assert any(w.startswith(f"{edited}: skipped (") and expected in w for w in comparison.warnings)
    with pytest.raises(CompareError, match=r"b\.eval: skipped .*'d2' .*\(1, 5\)"):
        compare_logs(edited, resamples=0)
    with pytest.raises(CalibrateError, match=r"b\.eval: cannot calibrate on it .*\(1, 5\)"):
        calibrate_logs([edited])
    assert main(["compare", str(edited), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert str(edited) in err and expected in err
