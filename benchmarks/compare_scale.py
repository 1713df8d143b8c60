"""Compare at scale: ``compare_logs`` + ``write_report`` on 5 judges x 10,000 dialogs.

Target (issue 15 item 5): under 2 GB peak RSS and within 60 s wall on two cores.

The logs are built cheaply with Inspect's public log API: one tiny real eval
gives a valid log header, and each judge's log gets 10,000 synthetic
``EvalSample`` objects (a two-turn dialog, a human rating, an emotion, an
``empathy_scorer`` score with its metadata, token usage), written with
``write_eval_log``. One judge leaves 5% of the dialogs unscored and has 1%
errored samples, so every code path runs. The comparison itself runs in a child
process (wall time and peak RSS from ``os.wait4``), once per repeat, and the
child reports its phases (reading logs, statistics, report files)::

    python benchmarks/compare_scale.py                    # --judges 5 --samples 10000
    python benchmarks/compare_scale.py --samples 500 --out /tmp/bench   # quick check
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, check, median, run_child, table, write_results  # noqa: E402

TARGET = {"peak_rss_mb": 2048, "wall_s": 60}
EMOTIONS = ["grief", "anxiety", "frustration", "joy", "loneliness", "shame", "anger", "fear"]


def build_logs(folder: Path, judges: int, samples: int, seed: int = 0) -> list[Path]:
    """``judges`` synthetic logs of ``samples`` dialogs each (cached in ``folder``)."""
    import numpy as np
    from inspect_ai import eval
    from inspect_ai.log import EvalError, EvalSample, read_eval_log, write_eval_log
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelUsage
    from inspect_ai.scorer import Score

    from inspect_empathy.tasks import empathy

    marker = folder / f"built_{judges}x{samples}.json"
    if marker.exists():
        return [Path(p) for p in json.loads(marker.read_text())]
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tiny = Path(tmp) / "tiny.jsonl"
        dialog = {
            "id": "t1",
            "turns": [
                {"role": "user", "content": "I lost my job today."},
                {"role": "assistant", "content": "That sounds really hard. I'm sorry."},
            ],
            "rating": 4,
        }
        tiny.write_text(json.dumps(dialog) + "\n")
        [template] = eval(
            empathy(dataset=str(tiny)), model="empathy_baseline/lexicon", log_dir=tmp,
            display="none",
        )  # fmt: skip
        template = read_eval_log(template.location)
    template.location = None
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, size=samples).astype(float)
    words = rng.integers(5, 120, size=samples)
    paths = []
    for j in range(judges):
        model = f"bench/judge-{j + 1}"
        noise = 0.4 + 0.3 * j
        values = np.clip(human + rng.normal(0, noise, size=samples), 1, 5)
        rows = []
        for i in range(samples):
            unscored = j == judges - 1 and i % 20 == 0
            errored = j == judges - 1 and i % 100 == 1
            reply = " ".join(["word"] * int(words[i]))
            meta = {"human_rating": float(human[i]), "method": "logprobs", "raw": "4"}
            scores = {}
            if not errored:
                value = math.nan if unscored else float(values[i])
                if unscored:
                    meta["unscored_reason"] = "no score in the answer"
                scores["empathy_scorer"] = Score(value=value, metadata=meta)
            rows.append(
                EvalSample(
                    id=f"d{i:06d}",
                    epoch=1,
                    input=[
                        ChatMessageUser(content=f"Dialog {i}: something happened to me."),
                        ChatMessageAssistant(content=reply),
                    ],
                    target="",
                    metadata={"human_rating": float(human[i]), "emotion": EMOTIONS[i % 8]},
                    scores=scores,
                    model_usage={model: ModelUsage(input_tokens=400, output_tokens=2,
                                                   total_tokens=402)},
                    error=EvalError(message="HTTP 500", traceback="", traceback_ansi="")
                    if errored
                    else None,
                )
            )
        log = template.model_copy(deep=True)
        log.eval.model = model
        log.eval.eval_id = f"bench-eval-{j}"
        log.eval.task_id = f"bench-task-{j}"
        log.eval.dataset.samples = samples
        log.samples = rows
        path = folder / f"2026-01-01T00-00-0{j}-00-00_empathy_bench{j}.eval"
        write_eval_log(log, str(path))
        paths.append(path)
        print(f"built {path.name} ({samples} samples)", file=sys.stderr)
    marker.write_text(json.dumps([str(p) for p in paths]))
    return paths


def child(logs: list[str], out: str, resamples: int) -> None:
    """Run the comparison and the report; print the phase timings as JSON."""
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
        "judges": len(comparison.judges),
        "dialogs": int(comparison.samples["id"].nunique()),
        "common": comparison.common,
        "rows": len(comparison.samples),
    }
    print(json.dumps(report))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", type=int, default=5)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--logs", type=Path, default=None, help="cache folder for the logs")
    parser.add_argument("--out", type=Path, default=None, help="results folder")
    parser.add_argument("--child", nargs="+", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--report-dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.report_dir, args.resamples)
        return
    cache = args.logs or Path(tempfile.gettempdir()) / "inspect_empathy_compare_scale"
    paths = build_logs(cache / f"{args.judges}x{args.samples}", args.judges, args.samples)
    runs: list[dict[str, Any]] = []
    for repeat in range(args.repeats):
        with tempfile.TemporaryDirectory() as report_dir:
            result = run_child(
                [
                    str(Path(__file__).resolve()),
                    "--resamples", str(args.resamples), "--report-dir", report_dir,
                    "--child", *map(str, paths),
                ]  # fmt: skip
            )
        check(result, "compare")
        runs.append(
            {
                "repeat": repeat + 1,
                "wall_s": result.wall_s,
                "cpu_s": result.cpu_s,
                "peak_rss_mb": result.peak_rss_mb,
                **result.report,
            }
        )
    wall = median([r["wall_s"] for r in runs])
    rss = max(r["peak_rss_mb"] for r in runs)
    headers = ["repeat", "wall s", "cpu s", "peak MB", "read s", "stats s", "report s"]
    print(
        table(
            headers,
            [
                [r["repeat"], r["wall_s"], r["cpu_s"], r["peak_rss_mb"], r["read_s"],
                 r["statistics_s"], r["report_s"]]
                for r in runs
            ],
        )  # fmt: skip
    )
    met = wall <= TARGET["wall_s"] and rss <= TARGET["peak_rss_mb"]
    print(f"median wall {wall:.1f} s, peak RSS {rss:.0f} MB: target {'met' if met else 'MISSED'}")
    path = write_results(
        "compare_scale",
        {
            "target": f"compare_logs + write_report on 5 judges x 10,000 dialogs: wall <= "
            f"{TARGET['wall_s']} s and peak RSS <= {TARGET['peak_rss_mb']} MB on two cores",
            "settings": {
                "judges": args.judges,
                "samples": args.samples,
                "resamples": args.resamples,
                "repeats": args.repeats,
                "plots": True,
                "logs": "synthetic EvalSample objects written with write_eval_log",
            },
            "median_wall_s": wall,
            "max_peak_rss_mb": rss,
            "target_met": met,
            "runs": runs,
        },
        args.out,
    )
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    main()
