"""Start-up: what the plugin adds to every Inspect start, and ``inspect-empathy --help``.

Inspect imports every installed plugin's entry point (``inspect_empathy._registry``) when
it starts, also for tasks that are not ours. Each case runs in its own fresh process,
the cases alternating within each repeat (interleaved, so machine load falls on all):

- ``python``: the interpreter alone (``python -c pass``), for reference;
- ``inspect``: ``python -c "import inspect_ai"``, Inspect's own start-up;
- ``inspect+plugin``: ``python -c "import inspect_ai, inspect_empathy._registry"``;
- ``cli --help``: ``python -m inspect_empathy.cli --help``.

The plugin's share is ``inspect+plugin`` minus ``inspect`` (medians, wall and CPU).
``--plugin-path DIR`` imports ``inspect_empathy`` from another checkout (e.g. a worktree
of an older commit) to compare before and after.

    python benchmarks/startup.py                   # 10 repeats
    python benchmarks/startup.py --repeats 3 --name startup_before --plugin-path ../old
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from _common import ROOT, check, median, run_child, table, write_results

# -P: the working directory (this checkout) is not put first on sys.path, so that
# ``--plugin-path`` decides which inspect_empathy is imported
CASES: dict[str, list[str]] = {
    "python": ["-P", "-c", "pass"],
    "inspect": ["-P", "-c", "import inspect_ai"],
    "inspect+plugin": ["-P", "-c", "import inspect_ai, inspect_empathy._registry"],
    "cli --help": ["-P", "-m", "inspect_empathy.cli", "--help"],
}
HEAVY = ("numpy", "scipy", "pandas", "matplotlib")
PROBE = (
    "import json, sys, inspect_ai, inspect_empathy._registry; "
    f"print(json.dumps({{'heavy': sorted(m for m in {HEAVY!r} if m in sys.modules), "
    "'from': inspect_empathy.__file__}))"
)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument(
        "--plugin-path", type=Path, default=ROOT, help="checkout to import inspect_empathy from"
    )
    parser.add_argument("--name", default="startup", help="results file name (no .json)")
    parser.add_argument("--out", type=Path, default=None, help="results directory")
    args = parser.parse_args(argv)
    plugin = args.plugin_path.resolve()
    env = {"PYTHONPATH": os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")])}

    probe = run_child(["-P", "-c", PROBE], env=env)
    check(probe, "import probe")
    runs: list[dict[str, Any]] = []
    for rep in range(args.repeats):
        for case, command in CASES.items():  # python, inspect, inspect+plugin, cli, ...
            result = run_child(command, env=env)
            if result.returncode != 0:
                raise SystemExit(f"{case} failed (exit {result.returncode}):\n{result.stderr}")
            runs.append({"case": case, "repeat": rep, "wall_s": result.wall_s,
                         "cpu_s": result.cpu_s, "peak_rss_mb": result.peak_rss_mb})  # fmt: skip
        print(f"  repeat {rep + 1}/{args.repeats} done", flush=True)

    def med(case: str, key: str) -> float:
        return median([r[key] for r in runs if r["case"] == case])

    summary = [
        {"case": case, **{k: med(case, k) for k in ("wall_s", "cpu_s", "peak_rss_mb")}}
        for case in CASES
    ]
    added = {
        "plugin_added_wall_s": med("inspect+plugin", "wall_s") - med("inspect", "wall_s"),
        "plugin_added_cpu_s": med("inspect+plugin", "cpu_s") - med("inspect", "cpu_s"),
        "ratio_wall_s": med("inspect+plugin", "wall_s") / med("inspect", "wall_s"),
        "ratio_cpu_s": med("inspect+plugin", "cpu_s") / med("inspect", "cpu_s"),
        "plugin_added_peak_rss_mb": med("inspect+plugin", "peak_rss_mb")
        - med("inspect", "peak_rss_mb"),
        "cli_help_wall_s": med("cli --help", "wall_s"),
        "cli_help_cpu_s": med("cli --help", "cpu_s"),
        "heavy_modules_after_plugin_import": probe.report["heavy"],
    }
    rows = [[s["case"], s["wall_s"], s["cpu_s"], s["peak_rss_mb"]] for s in summary]
    print(table(["case", "wall s", "CPU s", "peak RSS MB"], rows))
    print(
        f"plugin adds {added['plugin_added_wall_s']:+.3f} s wall, "
        f"{added['plugin_added_cpu_s']:+.3f} s CPU to Inspect's start "
        f"({added['ratio_cpu_s']:.2f}x CPU); heavy modules loaded: "
        f"{added['heavy_modules_after_plugin_import'] or 'none'}"
    )
    payload = {
        "settings": {
            "repeats": args.repeats,
            "python": sys.executable,
            "plugin_from": probe.report["from"],
            "cases": {k: " ".join(["python", *v]) for k, v in CASES.items()},
            "order": "python, inspect, inspect+plugin, cli --help, ... (each in its own process)",
        },  # fmt: skip
        "summary": summary,
        "plugin": added,
        "runs": runs,
    }
    path = write_results(args.name, payload, args.out)
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
