"""Issue 49.10: a misspelt baseline judge or task argument is refused in one line, without a
traceback, naming what is valid (Inspect passes ``-T`` arguments a task does not name to its
``**kwargs``; without them it drops them with a warning and runs on the defaults)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspect_empathy.errors import OptionError
from inspect_empathy.tasks import empathy, empathy_response

INSPECT = Path(sys.executable).with_name("inspect")


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "250"}
    return subprocess.run(
        [str(INSPECT), "eval", *args, "--limit", "2", "--log-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
    )  # fmt: skip


def said(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]


def test_a_misspelt_baseline_is_one_line(tmp_path: Path) -> None:
    done = run(tmp_path, "inspect_empathy/empathy", "--model", "empathy_baseline/lexicn")
    assert done.returncode != 0
    lines = said(done)
    assert lines == ["empathy_baseline/lexicn is not a baseline judge: lexicon or length"], lines


def test_a_misspelt_task_argument_is_refused_in_one_line(tmp_path: Path) -> None:
    done = run(tmp_path, "inspect_empathy/empathy", "--model", "empathy_baseline/lexicon",
               "-T", "metod=samples")  # fmt: skip
    assert done.returncode != 0
    lines = said(done)
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert lines[0].startswith("-T metod: not an argument of empathy (did you mean method?)")
    assert "dataset, method, completions" in lines[0] and "per_turn" in lines[0]
    assert not list(tmp_path.glob("*.eval"))  # refused before any run


@pytest.mark.parametrize("task", [empathy, empathy_response])
def test_both_tasks_refuse_an_unknown_argument(task: object) -> None:
    with pytest.raises(OptionError, match="not an argument of"):
        task(dataset="default", grader_metod="parse")  # type: ignore[operator]
