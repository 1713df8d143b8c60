"""Sequential sampling end to end: ``inspect eval`` through Inspect's Anthropic provider.

A fake Anthropic Messages server on 127.0.0.1 (`fake_openai.FakeServer`, in this process)
answers each request with a score drawn from the distribution of the dialog it names (a
``[dist:N]`` marker in the dialog's first turn), one answer a call, as Claude does. The
dialogs' judges are a mix of peaked, split and flat ones (`sequential.judges`), drawn from
a generator seeded apart from the sweep's. ``inspect eval inspect_empathy/empathy -T
method=samples --model anthropic/claude-sonnet-4-6`` runs in a child process against it.
Calls per dialog are the requests the fake received; the error of each score is taken
against the exact weighted score sum p(k) k, and compared with fixed n at equal calls on the
same answers (each dialog's generator drawn again: its first n and n + 1 answers, in the
shares that give the same mean calls; ``rmse_ratio_exact``: against sqrt(mean Var / calls)).

    python benchmarks/sequential_e2e.py   # --dialogs 300 --mix 0.7 0.15 0.15 --seed 11
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import checkout_pythonpath, machine, table, write_results  # noqa: E402
from fake_openai import FakeServer, Reply, anthropic_message, prompt_text  # noqa: E402
from sequential import FAMILIES, LEVELS, population, run_answers  # noqa: E402

from inspect_empathy.judge._judge_call import PRECISION  # noqa: E402

MARKER = re.compile(r"\[dist:(\d+)\]")
MODEL = "anthropic/claude-sonnet-4-6"


def write_dialogs(path: Path, dists: np.ndarray) -> None:
    with path.open("w", encoding="utf-8") as f:
        for i in range(len(dists)):
            turns = [
                {"role": "user", "content": f"[dist:{i}] I failed my exam today."},
                {"role": "assistant", "content": "That sounds really hard. I'm sorry."},
            ]
            f.write(json.dumps({"id": f"d{i}", "turns": turns}) + "\n")


def answers(p: np.ndarray, seed: list[int], n: int) -> list[int]:
    """The first ``n`` answers the fake judge gives a dialog (its own generator)."""
    rng = np.random.default_rng(seed)
    return [int(rng.choice(LEVELS, p=p)) for _ in range(n)]


def judge(dists: np.ndarray, seed: int) -> tuple[Reply, Counter[int]]:
    """The fake judge: a score drawn from the named dialog's distribution, per request (the
    dialog's own generator, so that its answers do not depend on the order requests come)."""
    rngs = [np.random.default_rng([seed, i]) for i in range(len(dists))]
    lock = threading.Lock()
    calls: Counter[int] = Counter()

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        prompt = prompt_text(body)
        marker = MARKER.search(prompt)
        assert marker, "a rubric prompt without its dialog's marker"
        i = int(marker.group(1))
        with lock:
            calls[i] += 1
            k = int(rngs[i].choice(LEVELS, p=dists[i]))
        return anthropic_message(str(body.get("model")), str(k), None, False, len(prompt.split()))

    return Reply(respond=respond), calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogs", type=int, default=300)
    parser.add_argument("--mix", type=float, nargs=3, default=(0.7, 0.15, 0.15),
                        metavar=("PEAKED", "SPLIT", "FLAT"))  # fmt: skip
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--max-connections", type=int, default=10)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    shares = tuple(s / sum(args.mix) for s in args.mix)
    dists = population(shares, np.random.default_rng([args.seed, 3000]), args.dialogs)
    server = FakeServer("anthropic")
    reply, calls = judge(dists, args.seed)
    server.script(reply)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            dataset = Path(tmp) / "dialogs.jsonl"
            write_dialogs(dataset, dists)
            command = [
                sys.executable, "-m", "inspect_ai", "eval", "inspect_empathy/empathy",
                "-T", f"dataset={dataset}", "-T", "method=samples", "--model", MODEL,
                "--max-connections", str(args.max_connections), "--log-dir", f"{tmp}/logs",
                "--display", "none", "--log-format", "json",
            ]  # fmt: skip
            env = {**os.environ, "PYTHONPATH": checkout_pythonpath(),
                   "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "fake"}  # fmt: skip
            start = time.perf_counter()
            proc = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
            wall = time.perf_counter() - start
            if proc.returncode != 0:
                raise SystemExit(f"inspect eval failed:\n{proc.stderr[-4000:]}")
            [log_file] = Path(tmp, "logs").glob("*.json")
            log = json.loads(log_file.read_text("utf-8"))
    finally:
        in_flight = server.max_in_flight
        server.stop()
    values, drawn, stopped = {}, {}, Counter()
    for sample in log["samples"]:
        score = sample["scores"]["empathy_scorer"]
        i = int(str(sample["id"])[1:])
        values[i] = float(score["value"])
        sequential = score["metadata"]["sequential"]
        drawn[i] = sequential["calls"]
        stopped[sequential["stopped"]] += 1
    order = sorted(values)
    exact = dists[order] @ LEVELS
    var = dists[order] @ LEVELS**2 - exact**2
    per_dialog = np.array([calls[i] for i in order])
    mean_calls = float(per_dialog.mean())
    mse = float(np.mean((np.array([values[i] for i in order]) - exact) ** 2))
    # fixed n at equal calls on the same answers: each dialog's generator drawn again
    streams = np.array([answers(dists[i], [args.seed, i], 20) for i in order])
    lo, share_hi = math.floor(mean_calls), mean_calls - math.floor(mean_calls)
    fixed = [float(np.mean((streams[:, :n].mean(axis=1) - exact) ** 2)) for n in (lo, lo + 1)]
    fixed_mse = (1 - share_hi) * fixed[0] + share_hi * fixed[1]
    rmse, fixed_rmse = math.sqrt(mse), math.sqrt(fixed_mse)
    # the plugin's rule on the same answers outside Inspect (benchmarks/sequential.py)
    simulated, simulated_calls, _ = run_answers(streams, 1, 20, PRECISION, args.max_connections)
    simulated_mse = float(np.mean((simulated - exact) ** 2))
    lo_s, share_s = math.floor(simulated_calls.mean()), simulated_calls.mean() % 1
    fixed_s = [float(np.mean((streams[:, :n].mean(axis=1) - exact) ** 2)) for n in (lo_s, lo_s + 1)]
    simulated_ratio = math.sqrt(simulated_mse / ((1 - share_s) * fixed_s[0] + share_s * fixed_s[1]))
    result = {
        "mix": dict(zip(FAMILIES, shares, strict=True)), "dialogs": len(order),
        "requests": int(sum(calls.values())), "calls": mean_calls,
        "most_calls": int(per_dialog.max()),
        "calls_recorded_match": all(drawn[i] == calls[i] for i in order),
        "rmse": rmse, "rmse_fixed_at_equal_calls": fixed_rmse, "rmse_ratio": rmse / fixed_rmse,
        "rmse_ratio_exact": math.sqrt(mse * mean_calls / float(var.mean())),
        "stopped": dict(stopped), "most_requests_in_flight": in_flight, "wall_s": wall,
        "simulated_same_answers": {"calls": float(simulated_calls.mean()),
                                   "rmse_ratio": simulated_ratio},
    }  # fmt: skip
    print(table(["dialogs", "requests", "calls a dialog", "most", "RMSE", "fixed n RMSE",
                 "ratio"], [[len(order), result["requests"], f"{mean_calls:.2f}",
                             result["most_calls"], f"{rmse:.4f}", f"{fixed_rmse:.4f}",
                             f"{rmse / fixed_rmse:.3f}"]]))  # fmt: skip
    write_results(
        "sequential_e2e",
        {"machine": machine(), "settings": vars(args) | {"out": None, "model": MODEL},
         "result": result},
        args.out,
    )  # fmt: skip


if __name__ == "__main__":
    main()
