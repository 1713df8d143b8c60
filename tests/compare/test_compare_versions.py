"""Issue 48.8: a log of an older task version (its judge input or headline may differ) is
named by compare, in the warnings (the terminal) and the Logs section's compared cell. The
part of the version before ``+`` is compared: the input pins after it differ from run to run."""

from __future__ import annotations

from pathlib import Path

from synthetic_logs import samples, write_log

from inspect_empathy.cli import main
from inspect_empathy.compare import compare_logs
from inspect_empathy.tasks import TASK_VERSION

SCORES = (4.0, 2.0, 4.0, 2.0, 3.0, 5.0)


def test_an_older_task_version_is_named(tmp_path: Path, capsys) -> None:
    new = write_log(tmp_path / "logs" / "new.json", "openai/new", samples(SCORES),
                    task_version=f"{TASK_VERSION}+dataset.0123456789abcdef")  # fmt: skip
    pinned = write_log(tmp_path / "logs" / "pinned.json", "openai/pinned", samples(SCORES),
                       task_version=f"{TASK_VERSION}+dataset.fedcba9876543210")  # fmt: skip
    old = write_log(tmp_path / "logs" / "old.json", "openai/old", samples(SCORES),
                    task_version="1.2.0+dataset.0123456789abcdef")  # fmt: skip
    comparison = compare_logs([new, pinned, old], resamples=0)
    named = [w for w in comparison.warnings if "older than" in w]
    assert len(named) == 1 and "old.json" in named[0]
    assert f"task version 1.2.0, older than {TASK_VERSION}" in named[0]
    assert "judge input or headline may differ" in named[0]
    logs = comparison.logs.set_index(comparison.logs["log"].map(lambda p: Path(p).name))
    assert "older than" in logs.loc["old.json", "records"]
    assert logs.loc["new.json", "records"] == logs.loc["pinned.json", "records"] == ""
    assert main(["compare", str(new), str(pinned), str(old), "--resamples", "0",
                 "--out", str(tmp_path / "report")]) == 0  # fmt: skip
    shown = capsys.readouterr()
    assert f"task version 1.2.0, older than {TASK_VERSION}" in shown.out + shown.err
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    logs_section = report.split("## Logs", 1)[1].split("## Method", 1)[0]
    assert "older than" in logs_section


def test_logs_of_one_version_are_not_named(tmp_path: Path) -> None:
    first = write_log(tmp_path / "a.json", "openai/a", samples(SCORES),
                      task_version=f"{TASK_VERSION}+dataset.0123456789abcdef")  # fmt: skip
    second = write_log(tmp_path / "b.json", "openai/b", samples(SCORES),
                       task_version=f"{TASK_VERSION}+rubric.0123456789abcdef")  # fmt: skip
    comparison = compare_logs([first, second], resamples=0)
    assert not [w for w in comparison.warnings if "task version" in w]
