"""Per-turn expansion on long conversations: samples, prompt size and build cost per bot turn.

One conversation of B bot turns (B = 10, 50, 200, 800 by default; every turn about 25 words)
is loaded and expanded to one judge-mode sample per bot turn (``-T per_turn=true``), with no
``max_turns`` (each prompt holds its whole prefix) and with ``max_turns=8``. Reported: the
samples, the prompt words in all, per sample and per bot turn, the wall time of building
every sample, and the peak of Python allocations while doing so (tracemalloc). Linear in B
means constant per bot turn: with ``max_turns`` every number per turn stays flat; without
it the prompt words grow with the prefix itself (B(B+1)/2 turns in all), and nothing else does.

    python benchmarks/per_turn.py            # --bot-turns 10 50 200 800
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _common import machine, table, write_results  # noqa: E402

from inspect_empathy.dataset._dataset import load_dialogs  # noqa: E402

USER = "I keep thinking about the move and whether I made the right call leaving everyone I know behind"  # noqa: E501
BOT = "That sounds like a lot to carry, and it makes sense to wonder; what part of it weighs on you most today"  # noqa: E501


def conversation(path: Path, bot_turns: int) -> str:
    turns = []
    for i in range(bot_turns):
        turns.append({"role": "user", "content": f"{USER} ({i})."})
        turns.append({"role": "assistant", "content": f"{BOT} ({i})?"})
    path.write_text(json.dumps({"id": "long", "turns": turns, "rating": 4}) + "\n", "utf-8")
    return str(path)


def measure(source: str, max_turns: int | None) -> dict[str, Any]:
    tracemalloc.start()
    start = time.perf_counter()
    data = load_dialogs(source, max_turns=max_turns).per_turn().as_prompts()
    samples = list(data)
    wall = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    words = sum(len(str(s.input).split()) for s in samples)
    return {"samples": len(samples), "prompt_words": words, "wall_s": wall, "peak_mb": peak / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bot-turns", type=int, nargs="+", default=[10, 50, 200, 800])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for b in args.bot_turns:
            source = conversation(Path(tmp) / f"long{b}.jsonl", b)
            for max_turns in (None, 8):
                result = measure(source, max_turns)
                runs.append({"bot_turns": b, "max_turns": max_turns, **result,
                             "words_per_turn": result["prompt_words"] / b,
                             "ms_per_turn": 1000 * result["wall_s"] / b,
                             "kb_per_turn": 1000 * result["peak_mb"] / b})  # fmt: skip
    print(table(
        ["bot turns", "max_turns", "samples", "prompt words", "words / turn", "ms / turn",
         "peak KB / turn"],
        [[r["bot_turns"], r["max_turns"] or "-", r["samples"], r["prompt_words"],
          f"{r['words_per_turn']:.0f}", f"{r['ms_per_turn']:.3f}", f"{r['kb_per_turn']:.1f}"]
         for r in runs],
    ))  # fmt: skip
    write_results("per_turn", {"machine": machine(), "settings": {"bot_turns": args.bot_turns},
                               "runs": runs}, args.out)  # fmt: skip


if __name__ == "__main__":
    main()
