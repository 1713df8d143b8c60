"""Compare at scale: ``load_scores`` + ``build_comparison`` + the report on logs cloned
from a real judge-mode eval.

Target: 10 judges x 100,000 dialogs (1,000,000 judge-dialog rows) compared, report
included, in at most 5 minutes of CPU and 4 GB (the sum of the resident memory of the
comparison's processes, sampled); every way of naming the logs costs the same
(``--naming folder``, the README's ``compare FOLDER``, against ``files``, ``glob`` and
``file://``).

The logs are made from one real eval: judge mode on the bundled dialogs with the offline
lexicon judge (``empathy_baseline/lexicon``). Each of its samples is cloned whole (events,
messages, output, attachments, scores, metadata: about 13 KB of JSON and 14 events) under a
new id, its first user turn marked with the clone's number wherever the sample holds it, and
each judge's own score; the summaries, reductions, journal and header are Inspect's, filled
in. The first judge re-ran every 250th sample after an errored attempt and the second
recorded every 500th twice (a resumed eval set's records, both kept); the last judge leaves
5% of the dialogs unscored and has 1% errored. Each comparison runs in a child process (CPU
time from ``os.wait4``, the worker processes it reaps included), and the child reports its
phases (reading logs, statistics, report files) and the peak of its process tree's summed
RSS::

    python benchmarks/compare_scale.py                           # 10 judges x 100,000
    python benchmarks/compare_scale.py --sizes 10x100000 --naming folder files
    python benchmarks/compare_scale.py --sizes 2x500 --out /tmp/bench   # quick check
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import threading
import time
import warnings
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, check, median, run_child, table, write_results  # noqa: E402

TARGET = {"rows": 1_000_000, "cpu_s": 300, "tree_rss_mb": 4096}
SIZES = ["10x100000"]
NAMINGS = ("folder", "files", "glob", "file://")
ZSTD = 93
"""The zip compression Inspect writes ``.eval`` files with (zstd)."""
BASE_MODEL = "empathy_baseline/lexicon"
"""The offline judge the real eval runs (no network, no key)."""
VALUE = 97531.125
"""A score value no judge writes: the place each clone's value goes in a template."""
RERUN_EVERY, COPY_EVERY = 250, 500
"""The first judge re-ran every 250th sample after an errored attempt (both records kept, as
a resumed eval set writes them); the second recorded every 500th sample twice alike."""
UNSCORED_EVERY, ERRORED_EVERY = 20, 100
"""The last judge leaves every 20th dialog unscored and errored on every 100th."""


def real_log(tmp: Path, dialogs: int) -> Path:
    """A judge-mode log of the bundled dialogs (the first ``dialogs``), judged by the
    offline lexicon judge: Inspect's own samples, events and summaries."""
    from inspect_ai import eval

    from inspect_empathy.tasks import empathy

    [log] = eval(
        empathy(), model=BASE_MODEL, log_dir=str(tmp), display="none", limit=dialogs,
    )  # fmt: skip
    if log.status != "success":
        raise SystemExit(f"the real eval failed: {log.error}")
    return Path(log.location.removeprefix("file://"))


def _walk(value: Any, old: str, new: str) -> Any:
    """``value`` with ``old`` replaced by ``new`` in every string it holds."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_walk(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: _walk(v, old, new) for k, v in value.items()}
    return value


def _dumps(value: Any) -> str:
    """JSON as Inspect writes it (compact, UTF-8)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class Clones:
    """Templates of one real log's samples, summaries and reductions: each clone gets a new
    id, a dialog of its own (the first user turn marked with the clone's number wherever the
    sample holds it: input, events, attachments, messages) and its judge's score."""

    def __init__(self, path: Path) -> None:
        import inspect_ai.log  # noqa: F401  (Inspect's zstd support for zipfile)

        with zipfile.ZipFile(path) as archive:
            members = {name: archive.read(name) for name in archive.namelist()}
        self.header = json.loads(members["header.json"])
        self.start = json.loads(members["_journal/start.json"])
        self.reductions = json.loads(members["reductions.json"])
        summaries = {s["id"]: s for s in json.loads(members["summaries.json"])}
        reduced = {r["sample_id"]: r for r in self.reductions[0]["samples"]}
        self.base: list[dict[str, Any]] = []
        for name in sorted(members):
            if not name.startswith("samples/"):
                continue
            sample = json.loads(members[name])
            self.base.append(
                self._templates(sample, summaries[sample["id"]], reduced[sample["id"]])
            )
        self.sizes = [len(members[n]) for n in members if n.startswith("samples/")]
        self.events = [len(json.loads(members[n])["events"]) for n in members
                       if n.startswith("samples/")]  # fmt: skip

    @staticmethod
    def _templates(sample: dict[str, Any], summary: dict[str, Any],
                   reduced: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
        """One base sample's templates: ``scored``, ``unscored``, ``errored`` (sample and
        summary each), ``reduced``, and its human rating."""
        first = sample["input"].split("\n", 1)[0] if isinstance(sample["input"], str) else None
        if first is None:
            first = next(m["content"] for m in sample["input"] if m["role"] == "user")
        first = first.removeprefix("USER: ")
        marked = first + " (case @@K@@)"

        def prepare(record: dict[str, Any]) -> dict[str, Any]:
            record = _walk(record, first, marked)
            record = _walk(record, BASE_MODEL, "@@MODEL@@")
            record["id"] = "@@ID@@"
            if "uuid" in record:
                record["uuid"] = "@@UUID@@"
            return record

        def score(record: dict[str, Any], unscored: bool) -> None:
            for holder in [record.get("scores", {}).get("empathy_scorer")] + [
                e.get("score") for e in record.get("events", []) if e.get("event") == "score"
            ]:
                if not holder:
                    continue
                holder["value"] = VALUE
                holder["explanation"] = "logprobs: @@V3@@"
                if unscored:
                    holder["metadata"] = {"unscored_reason": "no score in the answer",
                                          **holder.get("metadata", {})}  # fmt: skip

        def errored(record: dict[str, Any], is_summary: bool) -> None:
            record["scores"] = {}
            message = "RuntimeError('HTTP 500 from the provider')"
            if is_summary:
                record["error"] = message
                return
            record["error"] = {"message": message, "traceback": "Traceback ...\n" + message,
                               "traceback_ansi": message}  # fmt: skip
            events = record.get("events", [])
            cut = next((i for i, e in enumerate(events) if e.get("name") == "scorers"), None)
            record["events"] = events[:cut]

        out: dict[str, Any] = {"human": float(sample["metadata"]["human_rating"])}
        for kind in ("scored", "unscored", "errored"):
            for what, record in (("sample", sample), ("summary", summary)):
                copy = prepare(json.loads(json.dumps(record)))
                if what == "sample" and copy.get("events"):
                    for event in copy["events"]:
                        if event.get("event") == "sample_init":
                            event["sample"]["id"] = "@@ID@@"
                if kind == "errored":
                    errored(copy, what == "summary")
                else:
                    score(copy, kind == "unscored")
                out[f"{kind}_{what}"] = _dumps(copy)
        reduction = _walk(_walk(reduced, first, marked), BASE_MODEL, "@@MODEL@@")
        reduction["sample_id"] = "@@ID@@"
        reduction["value"] = VALUE
        reduction["explanation"] = "logprobs: @@V3@@"
        out["reduced"] = _dumps(reduction)
        return out

    def fill(self, template: str, model: str, sample_id: str, k: int, value: float,
             uuid: str) -> str:  # fmt: skip
        """A template with a clone's id, dialog mark, judge and score."""
        number = "NaN" if math.isnan(value) else repr(value)
        shown = "none" if math.isnan(value) else f"{value:.3f}"
        return (
            template.replace("@@MODEL@@", model).replace("@@ID@@", sample_id)
            .replace("@@K@@", str(k)).replace("@@UUID@@", uuid).replace(repr(VALUE), number)
            .replace("@@V3@@", shown)
        )  # fmt: skip


def _write_log(path: Path, clones: Clones, model: str, index: int, values: Any,
               kinds: list[str], repeats: str) -> dict[str, int]:  # fmt: skip
    """One judge's log in Inspect's ``.eval`` layout: every sample whole (events, messages,
    output, attachments), the summaries, reductions, journal and header."""
    import inspect_ai._util.zipfile as inspect_zip  # Inspect's zstd support for zipfile

    # one zstd compressor per entry is made with Inspect's thread pool (0.5 ms an entry):
    # single-threaded, as small entries need, writing is fifteen times faster
    inspect_zip._ZSTD_THREADS = 0

    samples = len(values)
    base = clones.base
    ids = [f"c{k:07d}" for k in range(samples)]
    header = json.loads(json.dumps(clones.header))
    header = json.loads(_dumps(header).replace(BASE_MODEL, model))
    header["eval"].update(eval_id=f"bench-eval-{index}", task_id=f"bench-{index}",
                          run_id=f"bench-run-{index}",
                          created=f"2026-01-01T00:00:{index:02d}+00:00")  # fmt: skip
    header["eval"]["dataset"].update(samples=samples, sample_ids=ids)
    header["results"].update(total_samples=samples, completed_samples=samples)
    start = json.loads(_dumps(clones.start).replace(BASE_MODEL, model))
    start["eval"] = header["eval"]
    counts = {"records": 0, "reruns": 0, "copies": 0, "unscored": 0, "errored": 0}
    summaries, reduced = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name": a re-run sample's second record
        with zipfile.ZipFile(path, "w", compression=ZSTD) as archive:
            archive.writestr("_journal/start.json", _dumps(start))
            for k, (sample_id, value, kind) in enumerate(zip(ids, values, kinds, strict=True)):
                templates = base[k % len(base)]
                member = f"samples/{sample_id}_epoch_1.json"
                uuid = f"u{index:02d}{k:07d}"
                if repeats == "rerun" and k % RERUN_EVERY == 7:
                    attempt = clones.fill(templates["errored_sample"], model, sample_id, k,
                                          value, uuid + "a")  # fmt: skip
                    archive.writestr(member, attempt)
                    counts["reruns"] += 1
                    counts["records"] += 1
                text = clones.fill(templates[f"{kind}_sample"], model, sample_id, k, value, uuid)
                archive.writestr(member, text)
                counts["records"] += 1
                if repeats == "copies" and k % COPY_EVERY == 11:
                    archive.writestr(member, text)
                    counts["copies"] += 1
                    counts["records"] += 1
                counts[kind] = counts.get(kind, 0) + 1
                summaries.append(
                    clones.fill(templates[f"{kind}_summary"], model, sample_id, k, value, uuid)
                )
                if kind != "errored":
                    reduced.append(clones.fill(templates["reduced"], model, sample_id, k, value,
                                               uuid))  # fmt: skip
            chunk = 1000
            for n, first in enumerate(range(0, len(summaries), chunk)):
                part = summaries[first : first + chunk]
                archive.writestr(f"_journal/summaries/{n + 1}.json", "[" + ",".join(part) + "]")
            archive.writestr("summaries.json", "[" + ",".join(summaries) + "]")
            reductions = json.loads(_dumps(clones.reductions).replace(BASE_MODEL, model))
            reductions[0]["samples"] = []
            text = _dumps(reductions)
            cut = text.index('"samples":[]') + len('"samples":[')
            archive.writestr("reductions.json", text[:cut] + ",".join(reduced) + text[cut:])
            archive.writestr("header.json", _dumps(header))
    return counts


def build_logs(folder: Path, judges: int, samples: int, seed: int = 0) -> list[Path]:
    """``judges`` judge-mode logs of ``samples`` dialogs each, cloned from a real eval
    (cached in ``folder``, which holds nothing else; ``folder``.built.json says how they
    were made)."""
    import numpy as np

    marker = folder.parent / f"{folder.name}.built.json"
    if marker.exists():
        return [Path(p) for p in json.loads(marker.read_text())["logs"]]
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        clones = Clones(real_log(Path(tmp), min(samples, 135)))
    rng = np.random.default_rng(seed)
    human = np.array([clones.base[k % len(clones.base)]["human"] for k in range(samples)])
    paths, built = [], []
    for j in range(judges):
        noise = 0.4 + 0.3 * (j % 10)
        values = np.clip(human + rng.normal(0, noise, size=samples), 1, 5).tolist()
        kinds = ["scored"] * samples
        if j == judges - 1:
            for k in range(samples):
                if k % ERRORED_EVERY == 1:
                    kinds[k] = "errored"
                elif k % UNSCORED_EVERY == 0:
                    kinds[k] = "unscored"
                    values[k] = math.nan
        repeats = {0: "rerun", 1: "copies"}.get(j, "") if j < judges - 1 else ""
        path = folder / f"2026-01-01T00-00-{j:02d}-00-00_empathy_bench{j}.eval"
        counts = _write_log(path, clones, f"bench/judge-{j + 1}", j, values, kinds, repeats)
        paths.append(path)
        built.append({"log": path.name, "bytes": path.stat().st_size, **counts})
        print(f"built {path.name} ({samples} samples, {path.stat().st_size >> 20} MB)",
              file=sys.stderr)  # fmt: skip
    info = {
        "logs": [str(p) for p in paths],
        "real_sample_bytes": statistics.mean(clones.sizes),
        "real_sample_events": statistics.mean(clones.events),
        "built": built,
    }
    marker.write_text(json.dumps(info, indent=1))
    return paths


def _built(folder: Path) -> dict[str, Any]:
    """How the logs of ``folder`` were made (`build_logs`' record), without their paths."""
    info = json.loads((folder.parent / f"{folder.name}.built.json").read_text())
    return {k: v for k, v in info.items() if k != "logs"}


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


def _cpu() -> float:
    """CPU seconds of this process and of the children it has reaped (the log readers)."""
    import resource

    own, reaped = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime


def child(logs: list[str], out: str, resamples: int) -> None:
    """Run the comparison and the report; print the phase timings (wall and CPU) as JSON."""
    import os

    memory = TreeMemory()
    load = os.getloadavg()
    start, cpu0 = time.perf_counter(), _cpu()
    from inspect_empathy.compare.logs import load_scores
    from inspect_empathy.compare.report import write_all
    from inspect_empathy.compare.tables import build_comparison

    loaded = load_scores(logs, progress=True)
    read, cpu1 = time.perf_counter(), _cpu()
    comparison = build_comparison(loaded, resamples=resamples, seed=0, progress=True)
    stats, cpu2 = time.perf_counter(), _cpu()
    write_all(comparison, Path(out), plots=True)
    done, cpu3 = time.perf_counter(), _cpu()
    report = {
        "read_s": read - start,
        "statistics_s": stats - read,
        "report_s": done - stats,
        "read_cpu_s": cpu1 - cpu0,
        "statistics_cpu_s": cpu2 - cpu1,
        "report_cpu_s": cpu3 - cpu2,
        "tree_rss_mb": memory.stop(),
        "load_average_before": [round(x, 2) for x in load],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
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
    cache = args.logs or Path(tempfile.gettempdir()) / "inspect_empathy_compare_scale_real"
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
                            "--resamples",
                            str(args.resamples),
                            "--report-dir",
                            report_dir,
                            "--child",
                            *sources(folder, paths, naming),
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
    headers = ["size", "naming", "rows", "wall s", "cpu s", "tree MB", "read cpu s",
               "stats cpu s", "report cpu s", "load before"]  # fmt: skip
    print(
        table(
            headers,
            [
                [
                    r["size"],
                    r["naming"],
                    r["rows"],
                    r["wall_s"],
                    r["cpu_s"],
                    r["tree_rss_mb"],
                    r["read_cpu_s"],
                    r["statistics_cpu_s"],
                    r["report_cpu_s"],
                    r["load_average_before"][0],
                ]
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
                "logs": "judge-mode .eval logs cloned sample by sample from a real eval",
                "built": {size: _built(cache / size) for size in args.sizes},
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
