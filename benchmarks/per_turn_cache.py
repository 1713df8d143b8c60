"""Per-turn runs against a judge that caches prompt prefixes as OpenAI documents: per scored
turn, the prompt tokens, the cached ones and the input billed at a 50% and a 90% discount, as
the plugin sends the turns and at best under the cache rule.

Data (``--data``): ESConv's ``FailedESConv.json`` where it is (``../shared/data/esconv/``
beside the checkout: its conversations with a survey score, every bot turn), else
``synthetic``: ``--conversations`` ESConv-shaped conversations (10-30 bot turns, seeded,
utterances as long as ESConv's on average: 49 characters for the help seeker, 63 for the
supporter). Only counts are written.

The turns are judged with ``-T per_turn=true`` by ``openai/gpt-4o-mini`` through Inspect's real
provider against the fake server (`fake_openai.FakeServer`) with a prompt cache modelled on
https://platform.openai.com/docs/guides/prompt-caching: a token is 4 characters; a prompt of
1,024 tokens or more is cached once its call has been answered; a later prompt that starts
with a cached one is reported with ``usage.prompt_tokens_details.cached_tokens`` = the longest
shared prefix of 1,024 + 128 j tokens; calls in flight at the same time find nothing of each
other. Billed input = uncached + (1 - discount) x cached tokens: 50% off (gpt-4o, gpt-4o-mini),
90% off (gpt-5 family, Claude's cache reads).

Runs, each in its own child process: this checkout at Inspect's default concurrency (what a
user gets), the same with ``--max-connections 1`` (every turn after the one before it, in
order), and any ``--also`` revisions (``git archive``). "best case" is computed, not run: each
turn reads from the cache all it shares with the conversation's previous turn, under the same
rule; no order of the turns reads more (a turn shares at most the shorter prompt's dialog with
another turn of its conversation, and only the rubric's head, under 1,024 tokens, with any
other conversation). "no minimum" drops the 1,024-token minimum and the 128-token steps.
"length" models a conversation on the data's mean first prompt and growth per bot turn and
finds the fewest bot turns whose best case bills at most half the prompt tokens.

    python benchmarks/per_turn_cache.py                     # ESConv where present
    python benchmarks/per_turn_cache.py --also REV          # and a git revision's run
    python benchmarks/per_turn_cache.py --latency 0.5 --no-one-connection --also REV
    python benchmarks/per_turn_cache.py --data synthetic --conversations 4
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(1, str(ROOT))
from _common import table, write_results  # noqa: E402

ESCONV = ROOT.parent / "shared" / "data" / "esconv" / "FailedESConv.json"
CHARS_PER_TOKEN = 4
MIN_CACHED = 1024
INCREMENT = 128
DISCOUNTS = (0.5, 0.9)
MODEL = "openai/gpt-4o-mini"
SEEKER_CHARS, SUPPORTER_CHARS = 49, 63
"""ESConv's mean utterance length in characters (its help seeker, its supporter)."""
WORDS = (
    "i feel really tired of it all and my friends do not call me anymore since the move "
    "that sounds hard it makes sense you would feel alone what has helped you before "
    "work school family sleep worry money exam partner lonely anxious sad hope try talk"
).split()


def tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def cacheable(shared: int) -> int:
    """The tokens of a shared prefix of ``shared`` tokens the cache rule reads."""
    return shared - (shared - MIN_CACHED) % INCREMENT if shared >= MIN_CACHED else 0


def utterance(rng: random.Random, mean: int) -> str:
    target = max(8, int(rng.expovariate(1 / mean)))
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < target:
        words.append(rng.choice(WORDS))
    return " ".join(words).capitalize() + "."


def write_conversations(path: Path, n: int, seed: int = 51) -> None:
    """``n`` synthetic conversations of 10-30 bot turns."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            turns = []
            for _ in range(rng.randint(10, 30)):
                turns.append({"role": "user", "content": utterance(rng, SEEKER_CHARS)})
                turns.append({"role": "assistant", "content": utterance(rng, SUPPORTER_CHARS)})
            f.write(json.dumps({"id": f"c{i}", "turns": turns, "rating": 1 + i % 5}) + "\n")


def caching_server(latency: float) -> Any:
    """The fake OpenAI server with a prompt cache (see the module's docstring)."""
    from fake_openai import FakeServer, prompt_text

    class CachingServer(FakeServer):
        def __init__(self) -> None:
            super().__init__("openai", latency=latency)
            self.cached_prefixes: set[bytes] = set()
            self.totals = {"calls": 0, "prompt_tokens": 0, "cached_tokens": 0}
            self.local = threading.local()

        @staticmethod
        def key(text: str, size: int) -> bytes:
            return hashlib.blake2b(text[: size * CHARS_PER_TOKEN].encode()).digest()

        def _take(self, path: str, body: dict[str, Any]) -> Any:
            reply = super()._take(path, body)
            text = prompt_text(body)
            count, cached, size = tokens(text), 0, MIN_CACHED
            with self._lock:  # what was cached when the request arrived
                while size <= count and self.key(text, size) in self.cached_prefixes:
                    cached, size = size, size + INCREMENT
            self.local.seen = (text, count, cached)
            return reply

        def answer(self, body: dict[str, Any], reply: Any) -> dict[str, Any]:
            payload = super().answer(body, reply)
            text, count, cached = self.local.seen
            usage = payload["usage"]
            usage["prompt_tokens"] = count
            usage["total_tokens"] = count + usage["completion_tokens"]
            usage["prompt_tokens_details"] = {"cached_tokens": cached}
            with self._lock:  # cached once answered
                for size in range(MIN_CACHED, count + 1, INCREMENT):
                    self.cached_prefixes.add(self.key(text, size))
                self.totals["calls"] += 1
                self.totals["prompt_tokens"] += count
                self.totals["cached_tokens"] += cached
            return payload

    return CachingServer()


def child(args: argparse.Namespace) -> None:
    """One run in this process: the plugin from ``--source``, the fake in a thread."""
    sys.path.insert(0, args.source)
    server = caching_server(args.latency)
    os.environ.update({"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "test"})
    from inspect_ai import eval as inspect_eval

    import inspect_empathy
    from inspect_empathy.tasks import empathy

    assert Path(inspect_empathy.__file__).is_relative_to(args.source), inspect_empathy.__file__
    connections = {"max_connections": args.max_connections} if args.max_connections else {}
    with tempfile.TemporaryDirectory() as logs:
        start = time.perf_counter()
        [log] = inspect_eval(
            empathy(dataset=args.data, per_turn=True),
            model=MODEL,
            log_dir=logs,
            display="none",
            **connections,
        )
        wall = time.perf_counter() - start
        usage = log.stats.model_usage.get(MODEL)
        scored = sum(1 for s in log.samples or [] if s.scores)
        compared = compare_cost(logs)
    server.stop()
    print(
        "RESULT "
        + json.dumps(
            {
                "status": log.status,
                "scored_turns": scored,
                **server.totals,
                "max_in_flight": server.max_in_flight,
                "wall_s": round(wall, 1),
                "inspect_input_tokens": usage.input_tokens if usage else None,
                "inspect_input_tokens_cache_read": usage.input_tokens_cache_read if usage else None,
                **compared,
            }
        )
    )


def compare_cost(logs: str) -> dict[str, float]:
    """``compare``'s cost per scored dialog of the run's log, with input at 1 per million
    tokens, cached input at the discount's price and output free: the billed input per turn."""
    from inspect_empathy.compare import compare_logs

    costs = {}
    for d in DISCOUNTS:
        prices = Path(logs) / f"prices_{int(d * 100)}.json"
        price = {"input": 1, "output": 0, "input_cache_read": 1 - d}
        prices.write_text(json.dumps({MODEL: price}), encoding="utf-8")
        judges = compare_logs(logs, resamples=0, prices=str(prices)).judges
        costs[f"compare_billed_per_turn_{int(d * 100)}"] = judges["cost_per_dialog"].iloc[0] * 1e6
    return costs


def run(label: str, source: str, args: argparse.Namespace, data: str, connections: int) -> Any:
    command = [
        sys.executable,
        __file__,
        "--child",
        "--source",
        source,
        "--data",
        data,
        "--latency",
        str(args.latency),
        "--max-connections",
        str(connections),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "INSPECT_"))}
    env["PYTHONPATH"] = source
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"{label} run failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    result = json.loads(lines[-1].removeprefix("RESULT "))
    result["label"] = label
    return per_turn(result)


def conversation_prompts(data: str) -> list[list[str]]:
    """Each conversation's judge prompts, turn 1 first (the plugin's own rendering)."""
    from inspect_empathy.dataset._dataset import load_dialogs

    prompts: dict[str, list[tuple[int, str]]] = {}
    for sample in load_dialogs(data).per_turn().as_prompts():
        meta = sample.metadata or {}
        prompts.setdefault(meta["conversation"], []).append((meta["turn"], str(sample.input)))
    return [[text for _, text in sorted(turns)] for turns in prompts.values()]


def rubric_tail() -> str:
    """What the rubric puts after the dialog."""
    from inspect_empathy.judge._rubric import render_prompt

    return render_prompt("\x00").split("\x00")[1]


def best_case(conversations: list[list[str]]) -> dict[str, Any]:
    """Each turn reads all it shares with its conversation's previous turn: under the cache
    rule ("best case") and without its minimum and steps ("no minimum"); and how many turns
    share all of the previous prompt but (part of) the rubric's tail."""
    total = cached = unbounded = turns = whole = 0
    tail = rubric_tail()
    for prompts in conversations:
        previous = ""
        for text in prompts:
            turns += 1
            total += tokens(text)
            shared = len(os.path.commonprefix([previous, text]))
            cached += cacheable(shared // CHARS_PER_TOKEN)
            unbounded += shared // CHARS_PER_TOKEN
            whole += bool(previous) and tail.endswith(previous[shared:])
            previous = text
    rows = {}
    for label, read in (("best case", cached), ("no minimum", unbounded)):
        rows[label] = per_turn(
            {"label": label, "scored_turns": turns, "prompt_tokens": total, "cached_tokens": read}
        )
    later = turns - len(conversations)
    rows["best case"]["later_turns_sharing_all_but_the_tail"] = [whole, later]
    return rows


def per_turn(result: dict[str, Any]) -> dict[str, Any]:
    scored = max(result["scored_turns"], 1)
    result["input_per_turn"] = result["prompt_tokens"] / scored
    result["cached_per_turn"] = result["cached_tokens"] / scored
    for d in DISCOUNTS:
        billed = result["prompt_tokens"] - d * result["cached_tokens"]
        result[f"billed_per_turn_{int(d * 100)}"] = billed / scored
        result[f"billed_over_prompt_{int(d * 100)}"] = billed / max(result["prompt_tokens"], 1)
    return result


def by_turn(conversations: list[list[str]]) -> list[dict[str, Any]]:
    """Per bot turn k: how many prompts, their mean tokens, how many can be cached at all
    (sharing 1,024 tokens or more with turn k - 1)."""
    rows: dict[int, dict[str, Any]] = {}
    for prompts in conversations:
        for k, text in enumerate(prompts, start=1):
            row = rows.setdefault(k, {"turn": k, "prompts": 0, "tokens": 0, "cacheable": 0})
            row["prompts"] += 1
            row["tokens"] += tokens(text)
            if k > 1:
                shared = len(os.path.commonprefix([prompts[k - 2], text])) // CHARS_PER_TOKEN
                row["cacheable"] += shared >= MIN_CACHED
    for row in rows.values():
        row["mean_tokens"] = round(row.pop("tokens") / row["prompts"])
    return [rows[k] for k in sorted(rows)]


def length_needed(conversations: list[list[str]], most: int = 400) -> dict[str, Any]:
    """A conversation modelled on the data (mean first prompt, mean growth per bot turn,
    the rubric's tail): its best case billed over its prompt tokens by length, and the
    fewest bot turns at which that is at most half (None: not within ``most``)."""
    first = statistics.mean(tokens(p[0]) for p in conversations)
    growth = statistics.mean(
        (tokens(p[-1]) - tokens(p[0])) / (len(p) - 1) for p in conversations if len(p) > 1
    )
    tail = tokens(rubric_tail())
    result: dict[str, Any] = {
        "first_prompt_tokens": round(first, 1),
        "tokens_per_bot_turn": round(growth, 1),
        "tail_tokens": tail,
    }
    lengths = sorted(len(p) for p in conversations)
    for d in DISCOUNTS:
        prompt = billed = 0.0
        ratios = {}
        for n in range(1, most + 1):
            size = first + growth * (n - 1)
            shared = first + growth * (n - 2) - tail if n > 1 else 0
            prompt += size
            billed += size - d * cacheable(int(shared))
            ratios[n] = billed / prompt
        median = statistics.median_low(lengths)
        result[f"ratio_at_median_{median}_turns_{int(d * 100)}"] = round(ratios[median], 3)
        result[f"turns_for_half_{int(d * 100)}"] = next(
            (n for n, r in ratios.items() if r <= 0.5), None
        )
        result[f"ratio_at_{most}_turns_{int(d * 100)}"] = round(ratios[most], 3)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ESCONV) if ESCONV.is_file() else "synthetic")
    parser.add_argument("--conversations", type=int, default=40, help="synthetic data only")
    parser.add_argument("--also", nargs="*", default=[], help="git revisions to run too")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument(
        "--one-connection",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run this checkout with --max-connections 1",
    )
    parser.add_argument("--name", default="per_turn_cache", help="results file name (no .json)")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--source", default=str(ROOT), help=argparse.SUPPRESS)
    parser.add_argument("--max-connections", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data
        if data == "synthetic":
            data = str(Path(tmp) / "esconv_shaped.jsonl")
            write_conversations(Path(data), args.conversations)
        runs = [run("this checkout", str(ROOT), args, data, 0)]
        if args.one_connection:
            runs.append(run("this checkout, one connection", str(ROOT), args, data, 1))
        for revision in args.also:
            source = Path(tmp) / revision
            source.mkdir()
            archive = subprocess.run(
                ["git", "archive", revision], cwd=ROOT, capture_output=True, check=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
            runs.append(run(revision, str(source), args, data, 0))
        conversations = conversation_prompts(data)
    bounds = best_case(conversations)
    turns = by_turn(conversations)
    length = length_needed(conversations)
    columns = [
        "run",
        "turns",
        "wall s",
        "in flight",
        "prompt / turn",
        "cached / turn",
        "billed / turn (50% off)",
        "billed / turn (90% off)",
    ]
    print(
        table(
            columns,
            [
                [
                    r["label"],
                    r["scored_turns"],
                    r.get("wall_s"),
                    r.get("max_in_flight"),
                    f"{r['input_per_turn']:.0f}",
                    f"{r['cached_per_turn']:.0f}",
                    f"{r['billed_per_turn_50']:.0f} ({r['billed_over_prompt_50']:.3f})",
                    f"{r['billed_per_turn_90']:.0f} ({r['billed_over_prompt_90']:.3f})",
                ]
                for r in [*runs, *bounds.values()]
            ],
        )
    )
    print(
        table(
            ["bot turn", "prompts", "mean tokens", "cacheable"],
            [[t["turn"], t["prompts"], t["mean_tokens"], t["cacheable"]] for t in turns],
        )
    )
    print(", ".join(f"{k}: {v}" for k, v in length.items()))
    lengths = [len(p) for p in conversations]
    settings = {
        "data": "ESConv (FailedESConv.json)" if data == str(ESCONV) else "synthetic",
        "conversations": len(conversations),
        "bot_turns": sum(lengths),
        "bot_turns_range": [min(lengths), max(lengths)],
        "bot_turns_median": statistics.median_low(lengths),
        "latency_s": args.latency,
        "model": MODEL,
        "chars_per_token": CHARS_PER_TOKEN,
        "min_cached_tokens": MIN_CACHED,
        "increment": INCREMENT,
        "command": " ".join(["python benchmarks/per_turn_cache.py", *sys.argv[1:]]),
    }
    write_results(
        args.name,
        {"settings": settings, "runs": runs, "bounds": bounds, "by_turn": turns, "length": length},
        args.out,
    )


if __name__ == "__main__":
    main()
