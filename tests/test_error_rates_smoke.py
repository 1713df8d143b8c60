"""benchmarks/error_rates.py runs on a tiny size and writes its JSON (no figures checked:
the benchmark is not a test; its committed results are benchmarks/results/error_rates.json)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.benchmarks
"""The benchmark scripts' own smoke tests: CI runs them (`pytest -m benchmarks`); the
default run leaves them out (each starts Inspect in several child processes)."""

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "error_rates.py"


def test_error_rates_runs_and_writes_every_figure(tmp_path: Path) -> None:
    args = ["--reps", "4", "--ci-reps", "2", "--check", "2", "--fwer-reps", "4", "--sizes", "50",
            "--alt-reps", "20", "--alt-datasets", "1", "--alt-raters", "3", "--alt-dialogs", "30",
            "--alt-spreads", "close"]
    subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    result = json.loads((tmp_path / "error_rates.json").read_text())
    row = result["sizes"]["50"]
    for key in ("ci_coverage", "type_I_0.05", "holm_fwer", "power_0.05", "tail_p_le_0.005"):
        assert key in row
    assert set(row["ci_coverage"]) == {"spearman", "mae", "qwk"}
    alt = result["alt_test_power"]["rows"][0]
    assert {"pass_rate", "stated", "independent", "gap"} <= set(alt)
