"""Start-up: importing the plugin, the compare API and the CLI loads no heavy library for compare.

Inspect imports the plugin at every start, and ``inspect-empathy --help`` should be fast:
the compare and cli packages import numpy, pandas, scipy, matplotlib and
``inspect_ai.analysis`` only when a comparison runs.
"""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = r"""
import json, sys, traceback

HEAVY = {"numpy", "pandas", "scipy", "matplotlib", "krippendorff", "tqdm"}
seen = []

class Recorder:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HEAVY or name.startswith("inspect_ai.analysis"):
            files = [f.filename for f in traceback.extract_stack()]
            seen.append({"module": name, "by": [f for f in files if "inspect_empathy" in f]})
        return None

sys.meta_path.insert(0, Recorder())
import inspect_empathy
from inspect_empathy.compare import compare_judges, compare_logs, CompareError
import inspect_empathy.cli
from inspect_empathy.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
print(json.dumps(seen))
"""


def test_compare_and_cli_import_no_heavy_library() -> None:
    run = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    seen = json.loads(run.stdout.strip().splitlines()[-1])

    def ours(path: str) -> bool:
        inside = path.rsplit("inspect_empathy/", 1)[-1]
        return inside.startswith(("compare", "_compare", "cli/"))

    by_compare = [s for s in seen if any(ours(f) for f in s["by"])]
    assert by_compare == []
