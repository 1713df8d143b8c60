"""Loader scale: ``load_dialogs`` on generated 100,000-dialog JSONL, CSV and turn-per-row files.

Each loader runs in its own child process, and the kinds run interleaved (every kind once,
then again, ...). Every child imports the same modules first (inspect_ai, inspect_empathy
with its dataset and loader modules, pandas), so time and peak RSS differ only by what the
loading itself does and holds; the RSS growth during
loading is reported too. The baselines are plain ``json.loads`` per line for JSONL,
``pandas.read_csv`` for the CSV, and ``pandas.read_csv`` + ``groupby`` (the turns of each
dialog gathered into lists) for the turn-per-row file (``layout: turns``). ``csv.reader``
rows, ``pandas.read_csv`` followed by nothing but the per-row transcript parser
(``pandas_csv_turns``: what splitting every transcript into turns at load time costs;
``load_dialogs`` checks them column-wise and splits each when first read) and Inspect's own
``json_dataset`` building chat-message samples are shown for reference. Target: load time
and peak RSS <= 3x the baseline. Building the Inspect samples afterwards is measured apart
(``+ samples built``): the load is the target.

    python benchmarks/loader_scale.py                 # 100,000 dialogs
    python benchmarks/loader_scale.py --dialogs 2000
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from _common import (
    median,
    ratio,
    run_child,
    table,
    write_dialogs_csv,
    write_dialogs_jsonl,
    write_results,
)

TARGET = 3.0
CSV_MAPPING: dict[str, Any] = {
    "id": "id",
    "transcript": "transcript",
    "rating": "rating",
    "roles": {"Seeker": "user", "Supporter": "bot"},
    "scale": [1, 3],
}
TURNS_MAPPING: dict[str, Any] = {
    "layout": "turns",
    "dialog": "dialog",
    "order": "order",
    "speaker": "speaker",
    "text": "text",
    "rating": "rating",
    "roles": {"Seeker": "user", "Supporter": "bot"},
    "scale": [1, 3],
}
# (kind, file format, baseline kind or None if this is a baseline)
KINDS: list[tuple[str, str, str | None]] = [
    ("plain_json", "jsonl", None),
    ("inspect_json_dataset", "jsonl", "plain_json"),
    ("load_dialogs_jsonl", "jsonl", "plain_json"),
    ("pandas_csv", "csv", None),
    ("plain_csv", "csv", None),
    ("pandas_csv_turns", "csv", "pandas_csv"),
    ("load_dialogs_csv", "csv", "pandas_csv"),
    ("pandas_turns_groupby", "turns", None),
    ("load_dialogs_turns", "turns", "pandas_turns_groupby"),
]


def write_turns_csv(path: Path, n: int) -> int:
    """Write n dialogs one row per turn (dialog, order, speaker, text, rating on the last
    bot turn, 1-3); returns the number of rows."""
    import csv

    from _common import CSV_ROLES, base_dialogs

    rows, _ = base_dialogs()
    count = 0
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["dialog", "order", "speaker", "text", "rating"])
        for i in range(n):
            row = rows[i % len(rows)]
            turns = row["turns"]
            last_bot = max(k for k, t in enumerate(turns) if t["role"] != "user")
            rating = row.get("rating")
            rating3 = "2" if rating is None else str(1 + round((float(rating) - 1) / 2))
            for k, turn in enumerate(turns[: last_bot + 1]):
                cell = rating3 if k == last_bot else ""
                text = " ".join(turn["content"].split())
                writer.writerow([f"{row['id']}-{i}", k + 1, CSV_ROLES[turn["role"]], text, cell])
                count += 1
    return count


def child(kind: str, path: str) -> None:
    """Load the file one way and print a JSON report (runs in a child process)."""
    import csv
    import resource
    import time

    import inspect_ai.dataset  # noqa: F401 - same imports in every child
    import pandas

    import inspect_empathy
    import inspect_empathy.dataset._dataset  # noqa: F401 - the loaders too (load_dialogs imports on use)

    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start, cpu_start = time.perf_counter(), time.process_time()
    if kind == "plain_json":
        with open(path, encoding="utf-8") as f:
            loaded: Any = [json.loads(line) for line in f if line.strip()]
    elif kind == "plain_csv":
        with open(path, encoding="utf-8", newline="") as f:
            loaded = list(csv.reader(f))[1:]
    elif kind == "pandas_csv":
        loaded = pandas.read_csv(path)
    elif kind == "pandas_csv_turns":
        # read with pandas, then only split each transcript into turns (the per-row
        # parser), no other check and no records: splitting at load time; the garbage
        # collector paused as load_dialogs pauses it
        import gc

        from inspect_empathy.dataset.loaders._roles import role_map
        from inspect_empathy.dataset.loaders._transcript import parse_transcript

        roles, cache = role_map(CSV_MAPPING["roles"]), {}  # type: ignore[var-annotated]
        gc.disable()
        frame = pandas.read_csv(path, dtype=str, keep_default_na=False)
        loaded = [parse_transcript(text, roles, cache) for text in frame["transcript"]]
        gc.enable()
    elif kind == "pandas_turns_groupby":
        frame = pandas.read_csv(path)
        loaded = frame.groupby("dialog", sort=False)["text"].agg(list)
    elif kind == "load_dialogs_turns":
        loaded = inspect_empathy.load_dialogs(path, format="csv", **TURNS_MAPPING)
    elif kind == "inspect_json_dataset":
        from inspect_ai.dataset import Sample, json_dataset
        from inspect_ai.model import ChatMessageAssistant, ChatMessageUser

        def to_sample(record: dict[str, Any]) -> Sample:
            messages = [
                ChatMessageUser(content=t["content"])
                if t["role"] == "user"
                else ChatMessageAssistant(content=t["content"])
                for t in record["turns"]
            ]
            return Sample(id=record["id"], input=messages, metadata=record.get("metadata"))

        loaded = json_dataset(path, to_sample)
    elif kind == "load_dialogs_jsonl":
        loaded = inspect_empathy.load_dialogs(path)
    elif kind == "load_dialogs_csv":
        loaded = inspect_empathy.load_dialogs(path, format="csv", **CSV_MAPPING)
    else:
        raise SystemExit(f"unknown kind {kind}")
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report: dict[str, Any] = {
        "kind": kind,
        "count": len(loaded),
        "load_s": elapsed,
        "load_cpu_s": cpu,
        "rss_before_mb": rss_before,
        "peak_rss_mb": peak,
        "rss_growth_mb": peak - rss_before,
    }
    if kind.startswith("load_dialogs"):
        # DialogDataset builds each Inspect sample on first access; an eval reads them all
        start, cpu_start = time.perf_counter(), time.process_time()
        samples = list(loaded)
        report["samples_built_s"] = time.perf_counter() - start
        report["samples_built_cpu_s"] = time.process_time() - cpu_start
        report["peak_rss_with_samples_mb"] = (
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        )
        report["built"] = len(samples)
    print(json.dumps(report))


def verdict(row: dict[str, Any]) -> str:
    """The target column: yes/no for load_dialogs, "ref" for the reference, "-" baselines."""
    if "error" in row:
        return "error"
    if "meets_target" in row:
        return "yes" if row["meets_target"] else "no"
    return "ref" if row.get("baseline") else "-"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogs", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--only", nargs="+", default=None, help="kinds to run")
    parser.add_argument("--out", type=Path, default=None, help="results directory")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return {}

    kinds = [k for k in KINDS if args.only is None or k[0] in args.only]
    results: dict[str, dict[str, Any]] = {}
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-loader-") as tmp:
        files = {"jsonl": Path(tmp) / "dialogs.jsonl", "csv": Path(tmp) / "dialogs.csv",
                 "turns": Path(tmp) / "turns.csv"}  # fmt: skip
        source = write_dialogs_jsonl(files["jsonl"], args.dialogs)
        write_dialogs_csv(files["csv"], args.dialogs)
        turn_rows = write_turns_csv(files["turns"], args.dialogs)
        sizes = {fmt: p.stat().st_size / 2**20 for fmt, p in files.items()}
        for rep in range(args.repeats):
            for kind, fmt, _ in kinds:
                result = run_child(
                    [str(Path(__file__).resolve()), "--child", kind, str(files[fmt])]
                )
                if result.returncode != 0 or not result.report:
                    error = (result.stderr.strip().splitlines() or ["no output"])[-1]
                    print(f"  {kind}: failed: {error}", flush=True)
                    results[kind] = {"kind": kind, "error": error}
                    continue
                run = {**result.report, "wall_s": result.wall_s, "repeat": rep}
                if run["count"] != args.dialogs:
                    raise SystemExit(f"{kind}: loaded {run['count']} of {args.dialogs}")
                runs.append(run)
                print(
                    f"  {kind}: {run['load_s']:.2f}s (CPU {run['load_cpu_s']:.2f}s), "
                    f"peak RSS {run['peak_rss_mb']:.0f} MB "
                    f"(+{run['rss_growth_mb']:.0f} MB)",
                    flush=True,
                )

    summary: list[dict[str, Any]] = []
    for kind, fmt, baseline in kinds:
        mine = [r for r in runs if r["kind"] == kind]
        if not mine:
            summary.append({"kind": kind, "format": fmt, "error": results[kind]["error"]})
            continue
        row: dict[str, Any] = {"kind": kind, "format": fmt, "baseline": baseline}
        keys = ["load_s", "load_cpu_s", "peak_rss_mb", "rss_growth_mb"]
        if "samples_built_s" in mine[0]:
            for r in mine:
                r["with_samples_s"] = r["load_s"] + r["samples_built_s"]
                r["with_samples_cpu_s"] = r["load_cpu_s"] + r["samples_built_cpu_s"]
            keys += ["with_samples_s", "with_samples_cpu_s", "peak_rss_with_samples_mb"]
        for key in keys:
            row[key] = median([r[key] for r in mine])
        base = [r for r in runs if r["kind"] == baseline]
        if base:
            base_s = median([r["load_s"] for r in base])
            base_cpu = median([r["load_cpu_s"] for r in base])
            base_rss = median([r["peak_rss_mb"] for r in base])
            base_growth = median([r["rss_growth_mb"] for r in base])
            row["ratio_load_s"] = ratio(row["load_s"], base_s)
            row["ratio_load_cpu_s"] = ratio(row["load_cpu_s"], base_cpu)
            row["ratio_peak_rss_mb"] = ratio(row["peak_rss_mb"], base_rss)
            row["ratio_rss_growth_mb"] = ratio(row["rss_growth_mb"], base_growth)
            if "with_samples_s" in row:
                row["ratio_with_samples_s"] = ratio(row["with_samples_s"], base_s)
                row["ratio_with_samples_cpu_s"] = ratio(row["with_samples_cpu_s"], base_cpu)
                row["ratio_peak_rss_with_samples_mb"] = ratio(
                    row["peak_rss_with_samples_mb"], base_rss
                )
            if kind.startswith("load_dialogs"):
                row["meets_target"] = (
                    row["ratio_load_s"] <= TARGET and row["ratio_peak_rss_mb"] <= TARGET
                )
        summary.append(row)

    headers = [
        "loader",
        "file",
        "load s",
        "time ratio",
        "CPU ratio",
        "peak RSS MB",
        "RSS ratio",
        "RSS growth MB",
        f"<= {TARGET}",
        "+ samples built: s",
        "time ratio",
        "peak RSS MB",
        "RSS ratio",
    ]
    rows = [
        [
            r["kind"],
            r["format"],
            r.get("load_s"),
            r.get("ratio_load_s"),
            r.get("ratio_load_cpu_s"),
            r.get("peak_rss_mb"),
            r.get("ratio_peak_rss_mb"),
            r.get("rss_growth_mb"),
            verdict(r),
            r.get("with_samples_s"),
            r.get("ratio_with_samples_s"),
            r.get("peak_rss_with_samples_mb"),
            r.get("ratio_peak_rss_with_samples_mb"),
        ]
        for r in summary
    ]
    print(table(headers, rows))
    payload = {
        "target": (
            f"load_dialogs time and peak RSS <= {TARGET} x json.loads (JSONL), "
            "pandas.read_csv (CSV), pandas.read_csv + groupby (layout: turns)"
        ),
        "settings": {
            "dialogs": args.dialogs,
            "repeats": args.repeats,
            "file_mb": sizes,
            "dataset_source": source,
            "csv_mapping": CSV_MAPPING,
            "turns_mapping": TURNS_MAPPING,
            "turn_rows": turn_rows,
            "interleaved": "each repeat runs every kind once, in the order of 'summary'",
        },
        "summary": summary,
        "runs": runs,
    }
    path = write_results("loader_scale", payload, args.out)
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
