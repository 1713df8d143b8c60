"""Peak RSS breakdown: the ``empathy`` task, the same task with the bare task's trivial
scorer, and the bare task, each in its own child process on the same samples.

Says how much of judge mode's extra peak memory goes with its scorer (score metadata,
metrics) and how much with the rest (dataset, sample metadata, imports).

    python benchmarks/rss_breakdown.py --samples 6000
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from _common import check, median, run_child, table, write_dialogs_jsonl, write_results

VARIANTS = ("bare", "empathy_trivial_scorer", "empathy")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=6000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="results directory")
    args = parser.parse_args(argv)
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-rss-") as tmp:
        dataset = Path(tmp) / "dialogs.jsonl"
        source = write_dialogs_jsonl(dataset, args.samples)
        for rep in range(args.repeats):
            for variant in VARIANTS:
                extra = ["-T", "scorer=trivial"] if variant == "empathy_trivial_scorer" else []
                result = run_child(
                    [
                        "benchmarks/_run_eval.py",
                        "--task",
                        "bare" if variant == "bare" else "empathy",
                        "--dataset",
                        str(dataset),
                        "--log-dir",
                        str(Path(tmp) / "logs"),
                        *extra,
                    ]
                )
                check(result, f"{variant} eval")
                run = {"variant": variant, "repeat": rep, "peak_rss_mb": result.peak_rss_mb,
                       "cpu_s": result.cpu_s, "samples": result.report["samples"],
                       "scorers": sorted(result.report["scores"])}  # fmt: skip
                print(f"  {variant:<24} rep {rep}: rss {run['peak_rss_mb']:.0f} MB", flush=True)
                runs.append(run)
    bare = median([r["peak_rss_mb"] for r in runs if r["variant"] == "bare"])
    summary = []
    for variant in VARIANTS:
        rss = median([r["peak_rss_mb"] for r in runs if r["variant"] == variant])
        summary.append({"variant": variant, "peak_rss_mb": rss, "ratio_peak_rss_mb": rss / bare,
                        "extra_mb": rss - bare})  # fmt: skip
    print(table(["variant", "peak RSS MB", "vs bare", "extra MB"],
                [[r["variant"], r["peak_rss_mb"], r["ratio_peak_rss_mb"], r["extra_mb"]]
                 for r in summary]))  # fmt: skip
    payload = {
        "settings": {"samples": args.samples, "repeats": args.repeats, "model": "bench/zero",
                     "dataset_source": source,
                     "order": "bare, empathy_trivial_scorer, empathy (each in its own process)"},
        "summary": summary,
        "runs": runs,
    }  # fmt: skip
    path = write_results("rss_breakdown", payload, args.out)
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
