"""The viewer's log list ranks judges by a headline that skipping cannot win.

The list shows each log's headline metric (`inspect_ai.log.headline_metric`). A twin of a
judge that leaves the hard dialogs unscored, identical wherever it answers, has the better
Spearman over its own scored dialogs; by the headline it must rank below the judge that
scored everything, and its coverage must say why.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.log import EvalLog, headline_metric
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from inspect_empathy import empathy
from inspect_empathy.stats.metrics import somers_d_all
from inspect_empathy.tasks import TASK_VERSION

N, HARD = 30, {3, 8, 13, 19, 24, 28}
"""Dialogs, and those the judge gets wrong (its twin leaves them unscored)."""


def write_dialogs(path: Path) -> Path:
    rows = [
        {
            "id": f"d{i:02d}",
            "rating": 1 + i % 5,
            "turns": [
                {"role": "user", "content": f"Something happened to me today (case {i})."},
                {"role": "assistant", "content": f"I hear you. Tell me more about it ({i})."},
            ],
        }
        for i in range(N)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def judge(skip_hard: bool):
    """A judge that rates each dialog at its human rating, except the hard ones (the
    opposite end of the scale); its twin (``skip_hard``) answers those with no score."""

    def answer(messages, tools, tool_choice, config) -> ModelOutput:
        prompt = messages[-1].text
        case = int(prompt.split("(case ")[1].split(")")[0])
        rating = 1 + case % 5
        text = str(rating)
        if case in HARD:
            text = "I would rather not say." if skip_hard else str(6 - rating)
        output = ModelOutput.from_content("mockllm/model", text)
        output.usage = ModelUsage(input_tokens=400, output_tokens=1, total_tokens=401)
        return output

    return answer


def run(tmp_path: Path, skip_hard: bool, epochs: int = 1) -> EvalLog:
    dataset = write_dialogs(tmp_path / "d.jsonl")
    model = get_model("mockllm/model", custom_outputs=judge(skip_hard))
    [log] = eval(
        empathy(dataset=str(dataset), method="parse"),
        model=model,
        log_dir=str(tmp_path / ("twin" if skip_hard else "judge")),
        display="none",
        epochs=epochs,
    )
    assert log.status == "success"
    return log


def test_a_judge_that_skips_hard_dialogs_ranks_below_the_judge_that_scored_them(
    tmp_path: Path,
) -> None:
    full, twin = run(tmp_path, skip_hard=False), run(tmp_path, skip_hard=True)
    shown = {}
    for name, log in (("full", full), ("twin", twin)):
        resolved = headline_metric(log)
        assert resolved is not None and resolved.name == "somers_d_all"
        shown[name] = resolved.metric.value
    assert shown["twin"] < shown["full"]
    assert str(full.eval.task_version).startswith(TASK_VERSION + "+dataset.")  # in every log
    metrics = {
        name: {k: m.value for k, m in log.results.scores[0].metrics.items()}  # type: ignore[union-attr]
        for name, log in (("full", full), ("twin", twin))
    }
    # by Spearman over its own scored dialogs the twin would have come first
    assert metrics["twin"]["spearman"] > metrics["full"]["spearman"]
    # coverage, beside the headline: scored / samples in the run
    assert metrics["full"]["coverage"] == 1.0
    assert metrics["twin"]["coverage"] == pytest.approx((N - len(HARD)) / N)
    # the same holds when a run is cut with --limit: the run's own size is the base
    [limited] = eval(
        empathy(dataset=str(tmp_path / "d.jsonl"), method="parse"),
        model=get_model("mockllm/model", custom_outputs=judge(True)),
        limit=10,
        log_dir=str(tmp_path / "limited"),
        display="none",
    )
    coverage = limited.results.scores[0].metrics["coverage"].value  # type: ignore[union-attr]
    assert coverage == pytest.approx(8 / 10)


def test_one_headline_in_the_log_list_and_in_compare(tmp_path: Path) -> None:
    """The figure the viewer's log list shows for a judge is the one compare ranks by and
    shows first (judges.csv, the terminal, the report), with its interval."""
    from inspect_empathy.compare import compare_logs, write_report

    full, twin = run(tmp_path, skip_hard=False), run(tmp_path, skip_hard=True)
    comparison = compare_logs([full.location, twin.location], resamples=200)
    table = comparison.judges
    assert list(table.columns[:3]) == ["rank", "judge", "somers_d_all"]
    for log in (full, twin):
        shown = headline_metric(log)
        assert shown is not None
        [row] = [
            r for _, r in table.iterrows() if r["scored"] == log.results.scores[0].scored_samples
        ]  # type: ignore[union-attr]
        assert row["somers_d_all"] == pytest.approx(shown.metric.value, abs=1e-12)
        assert row["somers_d_low"] <= row["somers_d_all"] <= row["somers_d_high"]
    assert list(table["scored"]) == [N, N - len(HARD)]  # ranked by the headline
    out = write_report(comparison, tmp_path / "report", plots=False)
    csv = out["judges.csv"].read_text().splitlines()[0]
    assert csv.startswith("rank,judge,somers_d_all,somers_d_low,somers_d_high,")
    markdown = out["report.md"].read_text()
    header = next(line for line in markdown.splitlines() if line.startswith("| rank"))
    assert [c.strip() for c in header.split("|")[1:4]] == [
        "rank", "judge", r"somers\_d\_all \[95% CI\]",
    ]  # fmt: skip


def test_somers_d_all_never_rises_by_leaving_dialogs_unscored() -> None:
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(3, 30)
        human = [float(rng.randint(1, 5)) for _ in range(n)]
        scores = [min(5.0, max(1.0, h + rng.gauss(0, rng.uniform(0.2, 2)))) for h in human]
        if rng.random() < 0.3:
            scores = [float(round(s)) for s in scores]
        full = somers_d_all(scores, human, 0)
        kept = sorted(rng.sample(range(n), rng.randint(0, n - 1)))
        twin = somers_d_all([scores[i] for i in kept], [human[i] for i in kept], n - len(kept))
        assert full != full or twin <= full + 1e-12  # NaN: no pair people told apart


def test_somers_d_all_is_somers_d_when_all_are_scored() -> None:
    from scipy.stats import somersd

    judge_scores = [1.2, 2.0, 2.0, 3.5, 4.1, 3.9, 5.0, 1.0]
    human = [1, 2, 3, 3, 4, 5, 5, 2]
    expected = somersd(human, judge_scores).statistic  # D(judge | human)
    assert somers_d_all(judge_scores, [float(h) for h in human], 0) == pytest.approx(expected)
    assert somers_d_all([], [], 4) == -1.0  # nothing scored: every pair against people


def test_the_end_of_run_line_names_the_judge(tmp_path: Path) -> None:
    from inspect_empathy._util.summary import summary_lines

    [line] = summary_lines(run(tmp_path, skip_hard=True))
    assert line.startswith(f"empathy_scorer (judge: mockllm/model): {N - len(HARD)} of {N}")
    assert f"; {len(HARD)} unscored: {len(HARD)} × " in line


def test_the_end_of_run_line_says_its_reasons_are_counted_per_epoch(tmp_path: Path) -> None:
    """With epochs the unscored count is of dialogs and the reasons are of epochs: the line
    says so, rather than '6 unscored: 12 × ...'."""
    from inspect_empathy._util.summary import summary_lines

    [line] = summary_lines(run(tmp_path, skip_hard=True, epochs=2))
    assert f"{N - len(HARD)} of {N} samples scored" in line
    reasons = f"reasons over the 2 epochs of each dialog: {2 * len(HARD)} × "
    assert f"; {len(HARD)} unscored: {reasons}" in line


OTHER_TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from inspect_ai.solver import solver


@solver
def answer():
    async def solve(state, generate):
        state.output.completion = "yes"
        return state
    return solve


@task
def other():
    return Task(dataset=[Sample(input="say yes", target="yes")], solver=answer(), scorer=match())
"""


@pytest.mark.slow
def test_another_task_runs_without_a_word_or_a_hook_from_the_plugin(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "other.py").write_text(OTHER_TASK, encoding="utf-8")
    code = (
        "from inspect_ai import eval\n"
        "from inspect_ai.hooks._hooks import get_all_hooks\n"
        f"[log] = eval('other.py', model='mockllm/model', log_dir={str(tmp_path)!r})\n"
        "assert log.status == 'success', log.error\n"
        "print('ENABLED', [type(h).__name__ for h in get_all_hooks() if h.enabled()])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    output = done.stdout + done.stderr
    assert "ENABLED []" in output  # the plugin is installed (its entry point loaded) but inert
    assert "hooks enabled" not in output and "empathy" not in output.lower(), output
