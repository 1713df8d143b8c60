"""Response-level corpora at scale: the responders table and the published ids' joins.

1. ``compare.responders.responder_table`` on 10,000 responses (1,000 contexts x 10
   chatbots) rated by people and 4 judges, 1,000 bootstrap resamples of the contexts:
   CPU time (target: under 15 s; resampling by ``pd.concat`` of the drawn contexts took
   113 s). Each resample is a row of context counts and every statistic a weighted sum
   of per-context totals.
2. ``cli.published.scale_section`` on a ratings-only spec of 20,000 ids: the ids compared
   against the spec's (a set built once; built per id it was quadratic: 15.9 s).

    python benchmarks/responders_table.py
    python benchmarks/responders_table.py --contexts 200 --ids 2000   # quicker
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import write_results  # noqa: E402

from inspect_empathy.cli.published import scale_section  # noqa: E402
from inspect_empathy.compare.responders import responder_table  # noqa: E402

TARGET_SECONDS = 15.0


def responders_frame(contexts: int, bots: int, judges: int, seed: int = 0) -> pd.DataFrame:
    """People's 1-5 ratings and judges' scores (lenient, noisier judge by judge)."""
    rng = np.random.default_rng(seed)
    context = np.repeat(np.arange(contexts), bots)
    bot = np.tile(np.arange(bots), contexts)
    human = np.clip(np.rint(np.linspace(2, 4.5, bots)[bot] + rng.normal(0, 0.8, len(bot))), 1, 5)
    frame = pd.DataFrame({"context": [f"c{c}" for c in context],
                          "responder": [f"bot/{b}" for b in bot], "human": human})  # fmt: skip
    for k in range(judges):
        frame[f"judge{k}"] = np.clip(human + 0.5 + rng.normal(0, 0.7 + 0.2 * k, len(bot)), 1, 5)
    return frame


def time_responders(contexts: int, bots: int, judges: int, resamples: int) -> dict:
    frame = responders_frame(contexts, bots, judges)
    start = time.process_time()
    table = responder_table(frame, [f"judge{k}" for k in range(judges)], "shift", resamples)
    seconds = time.process_time() - start
    return {
        "responses": len(frame), "contexts": contexts, "chatbots": bots, "judges": judges,
        "resamples": resamples, "cpu_seconds": round(seconds, 3),
        "target_seconds": TARGET_SECONDS, "within_target": seconds < TARGET_SECONDS,
        "largest_abs_calibrated_bias": float(table["calibrated_bias"].abs().max()),
    }  # fmt: skip


def time_ids(ids: int) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        values = np.random.default_rng(1).integers(1, 6, ids)
        rows = "\n".join(f"d{i},{v}" for i, v in enumerate(values))
        (root / "people.csv").write_text("id,v\n" + rows + "\n", encoding="utf-8")
        spec = root / "ids.yaml"
        spec.write_text("format: raters\npath: .\nid: id\ndimension: v\nscale: [1, 5]\n"
                        "raters: {people: people.csv}\njudges: {j: people.csv}\n",
                        encoding="utf-8")  # fmt: skip
        samples = pd.DataFrame({"id": [f"d{i}" for i in range(ids)], "judge": "inspect",
                                "score": values.astype(float)})  # fmt: skip
        start = time.process_time()
        scale_section(SimpleNamespace(samples=samples), [str(spec)])
        seconds = time.process_time() - start
    return {"ids": ids, "cpu_seconds": round(seconds, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contexts", type=int, default=1000)
    parser.add_argument("--chatbots", type=int, default=10)
    parser.add_argument("--judges", type=int, default=4)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--ids", type=int, default=20_000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    results = {
        "responder_table": time_responders(args.contexts, args.chatbots, args.judges,
                                           args.resamples),  # fmt: skip
        "scale_section_ids": time_ids(args.ids),
    }
    for name, row in results.items():
        print(name, row)
    print(f"wrote {write_results('responders_table', results, args.out)}")


if __name__ == "__main__":
    main()
