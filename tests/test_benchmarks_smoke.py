"""Smoke tests: each benchmark script runs end to end on a tiny size and writes its JSON.

No timing is asserted; only that the scripts work and count what they should.
The benchmarks talk only to the in-process provider or to their own fake server on
127.0.0.1 (no network, no key).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.benchmarks
"""The benchmark scripts' own smoke tests: CI runs them (`pytest -m benchmarks`); the
default run leaves them out (each starts Inspect in several child processes)."""

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"


def run_script(name: str, out: Path, *args: str) -> dict[str, Any]:
    """Run a benchmark script with ``--out`` and return the JSON it wrote."""
    proc = subprocess.run(
        [sys.executable, str(BENCH / f"{name}.py"), *args, "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert "|" in proc.stdout  # printed a table
    return json.loads((out / f"{name}.json").read_text("utf-8"))


def test_overhead_runs_both_tasks_on_the_same_samples(tmp_path: Path) -> None:
    result = run_script("overhead", tmp_path, "--sizes", "20", "--repeats", "1")
    assert [r["samples"] for r in result["summary"]] == [20]
    assert sorted(r["task"] for r in result["runs"]) == ["bare_weighted", "empathy"]
    assert all(r["samples"] == 20 for r in result["runs"])
    assert all(r["peak_rss_mb"] > 0 and r["cpu_s"] > 0 for r in result["runs"])
    assert result["summary"][0]["ratio_wall_s"] > 0
    assert result["summary"][0]["pair_ratio_wall_s"] > 0
    assert [r["task"] for r in result["runs"]] == ["bare_weighted", "empathy"]  # bare first
    assert result["machine"]["inspect_ai"] and result["settings"]["repeats"] == {"20": 1}


def test_concurrency_counts_every_request_at_the_fake_server(tmp_path: Path) -> None:
    result = run_script(
        "concurrency",
        tmp_path,
        "--connections",
        "4",
        "--rounds",
        "2",
        "--latency",
        "0.05",
        "--repeats",
        "1",
    )
    (row,) = result["summary"]
    assert row["samples"] == 8
    assert row["bound_rps"] == 4 / 0.05
    assert {r["task"] for r in result["runs"]} == {"bare", "empathy"}
    assert all(1 <= r["max_inflight"] <= 4 for r in result["runs"])
    assert row["cpu_per_request_ratio"] > 0 and row["bare_cpu_ms_per_request"] > 0


def test_cost_counts_calls_tokens_and_a_rambling_judges_bound(tmp_path: Path) -> None:
    # one run of the script (one fake server, one child per case) for both of its targets
    result = run_script(
        "cost", tmp_path, "--limit", "3",
        "--cases", "logprobs", "samples (n=20)", "parse", "logprobs, rambling judge",
    )  # fmt: skip
    cases = {c["case"]: c for c in result["cases"]}
    logprobs, samples = cases["logprobs"], cases["samples (n=20)"]
    assert logprobs["samples"] == logprobs["scored"] == 3
    assert logprobs["calls_per_sample"] == 1
    assert logprobs["output_tokens_per_sample"] <= 2
    assert samples["calls_per_sample"] == 1 and samples["request_n"] == {"20": 3}
    assert samples["output_tokens_per_sample"] == 20
    assert result["meets_target"] is True
    # the rambling judge writes 60 words before its score: the task's own bound cuts it, and
    # the call is asked once again with room (a cut answer is never read)
    rambling = cases["logprobs, rambling judge"]
    assert rambling["judge_words_before_score"] == 60
    assert rambling["request_max_tokens"] == {"24": 3, "512": 3}
    assert rambling["calls_per_sample"] == 2 and rambling["scored"] == 3
    assert rambling["max_output_tokens_per_call"] <= 512
    assert result["rambling_within_bound"] is True


def test_loader_scale_loads_every_generated_dialog(tmp_path: Path) -> None:
    result = run_script(
        "loader_scale",
        tmp_path,
        "--dialogs",
        "20",
        "--only",
        "plain_json",
        "load_dialogs_jsonl",
        "plain_csv",
        "load_dialogs_csv",
    )
    assert result["settings"]["dialogs"] == 20
    kinds = {r["kind"]: r for r in result["runs"]}
    assert set(kinds) == {"plain_json", "load_dialogs_jsonl", "plain_csv", "load_dialogs_csv"}
    assert all(r["count"] == 20 for r in kinds.values())
    assert kinds["load_dialogs_csv"]["built"] == 20


def test_overhead_breakdown_runs_the_variants_asked_for(tmp_path: Path) -> None:
    # three of its variants (each a child process running Inspect): the script's loop,
    # its variants' task arguments and its table; the other variants are the same path
    result = run_script(
        "overhead_breakdown", tmp_path, "--samples", "10", "--repeats", "1",
        "--tasks", "bare", "empathy", "prerendered_no_transcript",
    )  # fmt: skip
    tasks = [r["task"] for r in result["summary"]]
    assert tasks == ["bare", "empathy", "prerendered_no_transcript"]
    assert result["summary"][0]["ratio_cpu_s"] == 1.0


def test_rss_breakdown_runs_the_three_variants(tmp_path: Path) -> None:
    result = run_script("rss_breakdown", tmp_path, "--samples", "20")
    assert [r["variant"] for r in result["runs"]] == ["bare", "empathy_trivial_scorer", "empathy"]
    assert all(r["samples"] == 20 and r["peak_rss_mb"] > 0 for r in result["runs"])
    assert result["summary"][0]["ratio_peak_rss_mb"] == 1.0
    scorers = {r["variant"]: r["scorers"] for r in result["runs"]}
    assert scorers["empathy_trivial_scorer"] == scorers["bare"] == ["first_digit"]
    assert scorers["empathy"] == ["empathy_scorer"]


def test_startup_alternates_the_cases_and_names_heavy_modules(tmp_path: Path) -> None:
    result = run_script("startup", tmp_path, "--repeats", "1")
    cases = ["python", "inspect", "inspect+plugin", "cli --help"]
    assert [r["case"] for r in result["runs"]] == cases
    assert all(r["wall_s"] > 0 and r["cpu_s"] > 0 for r in result["runs"])
    assert result["plugin"]["heavy_modules_after_plugin_import"] == []
    assert result["settings"]["plugin_from"].startswith(str(ROOT))


def test_sequential_compares_the_rule_with_fixed_n(tmp_path: Path) -> None:
    result = run_script("sequential", tmp_path, "--dialogs", "60", "--held-out", "2")
    grid, held_out = result["results"]["grid"], result["results"]["held_out"]
    assert len(grid) == 66 and len(held_out) == 2
    for mix in [*grid.values(), *held_out.values()]:
        assert mix["dialogs"] == 60 and 4 <= mix["calls"] <= 6 and mix["max_calls"] <= 20
        assert mix["rmse_ratio"] > 0 and 0 < mix["oracle_ratio"] <= 1 + 1e-9
    assert grid["100/0/0"]["calls"] < grid["0/0/100"]["calls"] == 6
    assert result["summary"]["grid"]["worst_calls"]["calls"] <= 6


def test_sequential_e2e_counts_the_calls_inspect_made(tmp_path: Path) -> None:
    result = run_script("sequential_e2e", tmp_path, "--dialogs", "12")["result"]
    assert result["dialogs"] == 12 and result["calls_recorded_match"]
    assert result["requests"] == round(result["calls"] * 12) and 4 <= result["calls"] <= 6
    assert result["rmse_ratio"] > 0 and result["simulated_same_answers"]["calls"] <= 6


def test_per_turn_expands_one_sample_per_bot_turn(tmp_path: Path) -> None:
    result = run_script("per_turn", tmp_path, "--bot-turns", "3", "12")
    runs = {(r["bot_turns"], r["max_turns"]): r for r in result["runs"]}
    assert runs[(3, None)]["samples"] == 3 and runs[(12, 8)]["samples"] == 12
    # with max_turns every prompt is bounded: words per turn do not grow with the turns
    assert runs[(12, 8)]["words_per_turn"] < runs[(12, None)]["words_per_turn"]


def test_the_weighted_bare_task_keeps_the_score_the_plugin_keeps(tmp_path: Path) -> None:
    # bare_weighted stands for "Inspect alone, keeping what the plugin keeps": its Score must
    # carry the plugin's value, explanation and metadata for the same judge answer, or the
    # overhead measured against it would be against something else
    sys.path.insert(0, str(BENCH))
    try:
        import _bench_tasks
    finally:
        sys.path.remove(str(BENCH))
    from inspect_ai import eval as inspect_eval

    from inspect_empathy import empathy

    dataset = tmp_path / "dialogs.jsonl"
    records = [json.loads(line) for line in (ROOT / "datasets" / "empathy_reference.jsonl")
               .read_text("utf-8").splitlines()[:3]]  # fmt: skip
    dataset.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    bare_log, plugin_log = (
        inspect_eval(task, model="bench/zero", log_dir=str(tmp_path / name), display="none")[0]
        for name, task in (
            ("bare", _bench_tasks.bare_weighted(dataset=str(dataset))),
            ("plugin", empathy(dataset=str(dataset))),
        )
    )
    assert bare_log.samples and plugin_log.samples
    for bare, plugin in zip(bare_log.samples, plugin_log.samples, strict=True):
        ours = plugin.scores["empathy_scorer"]
        theirs = bare.scores["weighted_digit"]
        assert theirs.value == pytest.approx(ours.value, abs=1e-12)
        assert theirs.explanation == ours.explanation
        assert theirs.metadata == ours.metadata
        assert theirs.answer == ours.answer


def test_per_turn_cache_reads_what_the_cache_rule_allows_and_compare_prices_it(
    tmp_path: Path,
) -> None:
    args = ("--data", "synthetic", "--conversations", "2")
    result = run_script("per_turn_cache", tmp_path, *args)
    default, ordered = result["runs"]
    best = result["bounds"]["best case"]
    turns = result["settings"]["bot_turns"]
    for run in (default, ordered):
        assert run["status"] == "success" and run["scored_turns"] == run["calls"] == turns
        assert run["inspect_input_tokens_cache_read"] == run["cached_tokens"]  # Inspect reads it
        for d in (50, 90):  # compare's cost per scored dialog counts it at the cached price
            assert run[f"compare_billed_per_turn_{d}"] == pytest.approx(run[f"billed_per_turn_{d}"])
    # one connection: each turn sent after the one before it, so it reads the best case
    assert ordered["max_in_flight"] == 1
    assert ordered["cached_tokens"] == best["cached_tokens"] > 0
    assert default["cached_tokens"] <= best["cached_tokens"]
    shared, later = best["later_turns_sharing_all_but_the_tail"]
    assert shared == later == turns - 2
    assert best["billed_per_turn_90"] < best["billed_per_turn_50"] < best["input_per_turn"]
    assert result["length"]["turns_for_half_50"] is None  # 50% off never halves the bill
