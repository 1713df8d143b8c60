"""README: under 150 lines, and every offline command it shows runs as written from a clone
(the files it names ship), the CI gate example passing on the offline judges."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SET_UP = (
    "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/inspect eval "
    "inspect_empathy/empathy --model empathy_baseline/lexicon"
)


def commands() -> list[str]:
    """The offline commands of README's bash blocks: those run from the clone's venv,
    except the set-up commands (the installs)."""
    blocks = re.findall(r"```bash\n(.*?)```", README, flags=re.DOTALL)
    found = []
    for block in blocks:
        for line in block.splitlines():
            line = line.strip()
            if line.startswith(".venv/bin/") and "pip install" not in line:
                found.append(line)
    return found


def test_readme_is_short_and_keeps_the_set_up_commands() -> None:
    assert len(README.splitlines()) < 150
    assert SET_UP in README
    assert '.venv/bin/pip install -e ".[test]" && .venv/bin/pytest' in README
    for name in ("Gemini 2.5 Pro", "GPT-4o", "Claude 3.7", "empathy_scorer()", "somers_d_all"):
        assert name in README, name


def test_every_file_an_offline_command_names_ships() -> None:
    named = [
        word.split("=", 1)[-1]
        for command in commands()
        for word in shlex.split(command)
        if word.split("=", 1)[-1].startswith("examples/")
    ]
    assert named, "README's offline commands name the example files"
    for path in named:
        assert (ROOT / path).is_file(), path


@pytest.mark.slow
def test_every_offline_command_runs_as_written(tmp_path: Path) -> None:
    """In a folder holding the clone's examples and venv, each command exits 0 (the gate
    included), in README's order."""
    for name in ("examples", ".venv"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "COLUMNS": "120"}
    env.pop("INSPECT_LOG_DIR", None)
    for command in commands():
        done = subprocess.run(
            command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=300,
            env=env,
        )  # fmt: skip
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert (tmp_path / "report" / "report.html").is_file()


def test_a_wrong_gate_judge_lists_the_judges() -> None:
    from inspect_empathy.compare.gate import gate_failures

    class Comparison:
        import pandas as pd

        judges = pd.DataFrame(
            {"judge": ["a/one", "b/two"], "baseline": [False, False], "somers_d_all": [0.5, 0.4]}
        )
        common = 10

    [failure] = gate_failures(Comparison(), [("somers_d_all", 0.1)], None, ["a/on"])  # type: ignore[arg-type]
    assert failure == (
        "--gate-judge a/on: no such judge in the comparison (its judges: a/one, b/two)"
    )


@pytest.mark.parametrize("metric", ["somers_d_all", "somers_d_low"])
def test_the_gate_takes_the_headline(metric: str) -> None:
    from inspect_empathy.compare.gate import parse_under

    assert parse_under(f"{metric}=0.3") == (metric, 0.3)
