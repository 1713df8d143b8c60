"""The compare scale benchmark runs end to end on a tiny size and writes its JSON (no timing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.benchmarks
"""The benchmark scripts' own smoke tests: CI runs them (`pytest -m benchmarks`); the
default run leaves them out (each starts Inspect in several child processes)."""

ROOT = Path(__file__).resolve().parents[2]


def test_compare_scale_benchmark_runs_tiny(tmp_path: Path) -> None:
    run = subprocess.run(
        [
            sys.executable, str(ROOT / "benchmarks" / "compare_scale.py"), "--sizes", "2x60",
            "--naming", "folder", "files", "--resamples", "50",
            "--logs", str(tmp_path / "logs"), "--out", str(tmp_path / "results"),
        ],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads((tmp_path / "results" / "compare_scale.json").read_text())
    assert result["settings"]["sizes"] == ["2x60"]
    folder, files = result["runs"]
    assert (folder["naming"], files["naming"]) == ("folder", "files")
    for run in (folder, files):
        assert run["judges"] == 2 and run["dialogs"] == 60 and run["rows"] == 120
        assert run["tree_rss_mb"] > 0 and run["cpu_s"] > 0
    assert {"cpus", "inspect_ai"} <= set(result["machine"])
