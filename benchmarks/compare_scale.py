"""Compare at scale: ``load_scores`` + ``build_comparison`` + the report, 10k to 1M rows.

Targets: 1,000,000 judge-dialog rows (20 judges x 50,000 dialogs) compared in under 5
minutes of CPU and under 4 GB (the sum of the resident memory of the comparison's
processes, sampled); every way of naming the logs costs the same (``--naming folder``, the
README's ``compare FOLDER``, against ``files``, ``glob`` and ``file://``).

The logs are written straight into Inspect's ``.eval`` layout (a zip of one JSON file per
sample, zstd-compressed as Inspect writes them, with the summaries, reductions and a header
from a tiny real eval): one judge-mode log per judge, each of ``--samples`` dialogs (a
two-turn dialog, a human rating, an emotion, an ``empathy_scorer`` score, token usage).
The last judge leaves 5% of the dialogs unscored and has 1% errored samples, so every code
path runs. Each comparison runs in a child process (CPU time from ``os.wait4``, the worker
processes it reaps included), and the child reports its phases (reading logs, statistics,
report files) and the peak of its process tree's summed RSS::

    python benchmarks/compare_scale.py                           # 5x2000 ... 20x50000
    python benchmarks/compare_scale.py --sizes 20x50000 --naming folder files
    python benchmarks/compare_scale.py --sizes 2x500 --out /tmp/bench   # quick check
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, check, median, run_child, table, write_results  # noqa: E402

TARGET = {"rows": 1_000_000, "cpu_s": 300, "tree_rss_mb": 4096}
EMOTIONS = ["grief", "anxiety", "frustration", "joy", "loneliness", "shame", "anger", "fear"]
SIZES = ["5x2000", "5x20000", "20x50000"]
NAMINGS = ("folder", "files", "glob", "file://")
ZSTD = 93
"""The zip compression Inspect writes ``.eval`` files with (zstd)."""


def _template(tmp: Path) -> dict[str, bytes]:
    """The entries of a tiny real judge-mode log (its header and journal)."""
    from inspect_ai import eval

    from inspect_empathy.tasks import empathy

    tiny = tmp / "tiny.jsonl"
    dialog = {
        "id": "t1",
        "turns": [
            {"role": "user", "content": "I lost my job today."},
            {"role": "assistant", "content": "That sounds really hard. I'm sorry."},
        ],
        "rating": 4,
    }
    tiny.write_text(json.dumps(dialog) + "\n")
    [log] = eval(
        empathy(dataset=str(tiny)), model="empathy_baseline/lexicon", log_dir=str(tmp),
        display="none",
    )  # fmt: skip
    with zipfile.ZipFile(log.location.removeprefix("file://")) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _write_log(
    path: Path, template: dict[str, bytes], model: str, index: int, values: Any, human: Any,
    words: Any, faulty: bool,
) -> None:  # fmt: skip
    """One judge's log in Inspect's ``.eval`` layout."""
    import inspect_ai._util.zipfile as inspect_zip  # Inspect's zstd support for zipfile

    # one zstd compressor per entry is made with Inspect's thread pool (0.5 ms an entry):
    # single-threaded, as small entries need, writing is fifteen times faster
    inspect_zip._ZSTD_THREADS = 0

    header = json.loads(template["header.json"])
    header["eval"].update(model=model, eval_id=f"bench-eval-{index}", task_id=f"bench-{index}")
    header["eval"]["dataset"]["samples"] = len(values)
    header["eval"]["dataset"].pop("sample_ids", None)
    start = json.loads(template["_journal/start.json"])
    start["eval"] = header["eval"]
    summaries, reduced = [], []
    usage = {model: {"input_tokens": 400, "output_tokens": 2, "total_tokens": 402}}
    with zipfile.ZipFile(path, "w", compression=ZSTD) as archive:
        archive.writestr("_journal/start.json", json.dumps(start))
        for i, value in enumerate(values):
            sample_id = f"d{i:06d}"
            unscored, errored = faulty and i % 20 == 0, faulty and i % 100 == 1
            meta = {"human_rating": float(human[i]), "method": "logprobs", "raw": "4"}
            if unscored:
                meta["unscored_reason"] = "no score in the answer"
            score = {"value": math.nan if unscored else float(value), "metadata": meta,
                     "history": []}  # fmt: skip
            reply = " ".join(["word"] * int(words[i]))
            summary = {
                "id": sample_id,
                "epoch": 1,
                "input": [
                    {"id": f"u{i}", "content": f"Dialog {i}: something happened to me.",
                     "role": "user"},
                    {"id": f"a{i}", "content": reply, "role": "assistant"},
                ],  # fmt: skip
                "target": "",
                "metadata": {"human_rating": float(human[i]), "emotion": EMOTIONS[i % 8]},
                "scores": {} if errored else {"empathy_scorer": score},
                "model_usage": usage,
                "role_usage": {},
            }
            sample = summary | {
                "messages": [],
                "output": {"model": "", "choices": [], "completion": ""},
                "store": {},
                "events": [],
                "attachments": {},
                "events_data": {"messages": [], "calls": []},
            }
            if errored:
                sample["error"] = {"message": "HTTP 500", "traceback": "", "traceback_ansi": ""}
                summary["error"] = "HTTP 500"
            else:
                reduced.append({"value": score["value"], "sample_id": sample_id})
            archive.writestr(f"samples/{sample_id}_epoch_1.json", json.dumps(sample))
            summaries.append(summary | {"completed": True, "message_count": 0})
        archive.writestr("_journal/summaries/1.json", json.dumps(summaries))
        archive.writestr("summaries.json", json.dumps(summaries))
        reductions = json.loads(template["reductions.json"])
        for reduction in reductions:
            reduction["samples"] = reduced
        archive.writestr("reductions.json", json.dumps(reductions))
        archive.writestr("header.json", json.dumps(header))


def build_logs(folder: Path, judges: int, samples: int, seed: int = 0) -> list[Path]:
    """``judges`` synthetic judge-mode logs of ``samples`` dialogs each (cached in
    ``folder``, which holds nothing else)."""
    import numpy as np

    marker = folder.parent / f"{folder.name}.built.json"
    if marker.exists():
        return [Path(p) for p in json.loads(marker.read_text())]
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        template = _template(Path(tmp))
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, size=samples).astype(float)
    words = rng.integers(5, 120, size=samples)
    paths = []
    for j in range(judges):
        noise = 0.4 + 0.3 * (j % 10)
        values = np.clip(human + rng.normal(0, noise, size=samples), 1, 5)
        path = folder / f"2026-01-01T00-00-{j:02d}-00-00_empathy_bench{j}.eval"
        _write_log(path, template, f"bench/judge-{j + 1}", j, values, human, words,
                   faulty=j == judges - 1)  # fmt: skip
        paths.append(path)
        print(f"built {path.name} ({samples} samples)", file=sys.stderr)
    marker.write_text(json.dumps([str(p) for p in paths]))
    return paths


def sources(folder: Path, paths: list[Path], naming: str) -> list[str]:
    """The logs as ``compare`` is given them under ``naming``."""
    if naming == "folder":
        return [str(folder)]
    if naming == "glob":
        return [str(folder / "*.eval")]
    if naming == "file://":
        return [f"file://{p}" for p in paths]
    return [str(p) for p in paths]


class TreeMemory:
    """Samples the summed RSS of this process and its children (the log readers)."""

    def __init__(self, interval: float = 0.2) -> None:
        import psutil

        self.process = psutil.Process()
        self.peak = 0
        self.interval = interval
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        import psutil

        while not self.done.wait(self.interval):
            total = 0
            for proc in [self.process, *self.process.children(recursive=True)]:
                try:
                    total += proc.memory_info().rss
                except psutil.Error:
                    continue
            self.peak = max(self.peak, total)

    def stop(self) -> float:
        self.done.set()
        self.thread.join()
        return self.peak / 2**20


def child(logs: list[str], out: str, resamples: int) -> None:
    """Run the comparison and the report; print the phase timings as JSON."""
    memory = TreeMemory()
    start = time.perf_counter()
    from inspect_empathy.compare.logs import load_scores
    from inspect_empathy.compare.report import write_all
    from inspect_empathy.compare.tables import build_comparison

    loaded = load_scores(logs, progress=True)
    read = time.perf_counter()
    comparison = build_comparison(loaded, resamples=resamples, seed=0, progress=True)
    stats = time.perf_counter()
    write_all(comparison, Path(out), plots=True)
    done = time.perf_counter()
    report = {
        "read_s": read - start,
        "statistics_s": stats - read,
        "report_s": done - stats,
        "tree_rss_mb": memory.stop(),
        "judges": len(comparison.judges),
        "dialogs": int(comparison.samples["id"].nunique()),
        "common": comparison.common,
        "rows": len(comparison.samples),
    }
    print(json.dumps(report))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=SIZES, help="JUDGESxDIALOGS each")
    parser.add_argument("--naming", nargs="+", default=["folder"], choices=NAMINGS)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--logs", type=Path, default=None, help="cache folder for the logs")
    parser.add_argument("--out", type=Path, default=None, help="results folder")
    parser.add_argument("--name", default="compare_scale", help="results file name")
    parser.add_argument("--child", nargs="+", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--report-dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.report_dir, args.resamples)
        return
    cache = args.logs or Path(tempfile.gettempdir()) / "inspect_empathy_compare_scale"
    runs: list[dict[str, Any]] = []
    for size in args.sizes:
        judges, samples = (int(x) for x in size.split("x"))
        folder = cache / size
        paths = build_logs(folder, judges, samples)
        for repeat in range(args.repeats):
            for naming in args.naming:  # interleaved: folder, files, folder, files, ...
                with tempfile.TemporaryDirectory() as report_dir:
                    result = run_child(
                        [
                            str(Path(__file__).resolve()),
                            "--resamples", str(args.resamples), "--report-dir", report_dir,
                            "--child", *sources(folder, paths, naming),
                        ]  # fmt: skip
                    )
                check(result, "compare")
                run = {
                    "size": size,
                    "naming": naming,
                    "repeat": repeat + 1,
                    "wall_s": result.wall_s,
                    "cpu_s": result.cpu_s,
                    "peak_rss_mb": result.peak_rss_mb,
                    **result.report,
                }
                runs.append(run)
                print(
                    f"{size} {naming} rep {repeat + 1}: cpu {run['cpu_s']:.1f} s, wall "
                    f"{run['wall_s']:.1f} s, tree RSS {run['tree_rss_mb']:.0f} MB",
                    file=sys.stderr,
                )
    headers = ["size", "naming", "rows", "wall s", "cpu s", "cpu ms/1k rows", "tree MB",
               "read s", "stats s", "report s"]  # fmt: skip
    print(
        table(
            headers,
            [
                [r["size"], r["naming"], r["rows"], r["wall_s"], r["cpu_s"],
                 1000 * r["cpu_s"] / r["rows"], r["tree_rss_mb"], r["read_s"],
                 r["statistics_s"], r["report_s"]]
                for r in runs
            ],
        )  # fmt: skip
    )
    big = [r for r in runs if r["rows"] >= TARGET["rows"]]
    met = bool(big) and all(
        r["cpu_s"] <= TARGET["cpu_s"] and r["tree_rss_mb"] <= TARGET["tree_rss_mb"] for r in big
    )
    path = write_results(
        args.name,
        {
            "target": f"{TARGET['rows']:,} judge-dialog rows: CPU <= {TARGET['cpu_s']} s and "
            f"summed RSS <= {TARGET['tree_rss_mb']} MB on two cores; every naming alike",
            "settings": {
                "sizes": args.sizes,
                "naming": args.naming,
                "resamples": args.resamples,
                "repeats": args.repeats,
                "plots": True,
                "logs": "synthetic judge-mode .eval logs written in Inspect's layout",
            },
            "median_cpu_s": {
                f"{s} {n}": median([r["cpu_s"] for r in runs if (r["size"], r["naming"]) == (s, n)])
                for s in args.sizes
                for n in args.naming
            },
            "target_met": met if big else None,
            "runs": runs,
        },
        args.out,
    )
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    main()
