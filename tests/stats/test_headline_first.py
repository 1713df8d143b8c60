"""Issue 49.7 / 49.2: the headline comes first, counts are whole numbers, and a run with
human ratings leads with agreement in the log list (`inspect_ai.log.headline_metric`) in
every mode."""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import headline_metric

from inspect_empathy import empathy_scorer
from inspect_empathy.tasks import empathy

FIXTURE = Path(__file__).parents[1] / "fixtures" / "compare" / "judges.jsonl"
LEXICON = "empathy_baseline/lexicon"


def write_unrated(path: Path) -> Path:
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]
    for row in rows:
        row.pop("rating", None)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_headline_is_the_scorers_first_metric(tmp_path: Path) -> None:
    [log] = eval(empathy(dataset=str(FIXTURE)), model=LEXICON, log_dir=str(tmp_path),
                 display="none")  # fmt: skip
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    assert list(metrics)[:4] == ["somers_d_all", "mean", "stderr", "coverage"]


def test_without_ratings_the_scorer_leads_with_the_mean(tmp_path: Path) -> None:
    data = write_unrated(tmp_path / "unrated.jsonl")
    [log] = eval(empathy(dataset=str(data)), model=LEXICON, log_dir=str(tmp_path),
                 display="none")  # fmt: skip
    assert log.results is not None
    assert list(log.results.scores[0].metrics)[:3] == ["mean", "stderr", "coverage"]
    resolved = headline_metric(log)
    assert resolved is not None and resolved.name == "mean"


def test_empathy_scorer_alone_in_a_task_of_ones_own_leads_with_agreement(
    tmp_path: Path,
) -> None:
    # no headline declared: Inspect's convention, the first scorer's first metric
    samples = [
        Sample(input="I lost my job.", target="x", metadata={"human_rating": 1 + i % 5},
               id=i)  # fmt: skip
        for i in range(6)
    ]
    task = Task(dataset=MemoryDataset(samples), scorer=empathy_scorer(model=LEXICON))
    [log] = eval(task, model=LEXICON, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    resolved = headline_metric(log)
    assert resolved is not None and resolved.name == "somers_d_all"


def write_rated_per_conversation(path: Path) -> Path:
    rows = [
        {
            "id": f"c{i}",
            "rating": 1 + i % 5,
            "metadata": {"rating_scope": "conversation"},
            "turns": [
                {"role": "user", "content": "I lost my job."},
                {"role": "assistant", "content": "That is hard. " * (i + 1)},
                {"role": "user", "content": "I feel useless."},
                {"role": "assistant", "content": "I am so sorry, that sounds painful." if i % 2
                 else "ok"},
            ],
        }
        for i in range(6)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_per_turn_run_rated_per_conversation_leads_with_agreement(tmp_path: Path) -> None:
    data = write_rated_per_conversation(tmp_path / "conv.jsonl")
    [log] = eval(empathy(dataset=str(data), per_turn=True), model=LEXICON,
                 log_dir=str(tmp_path), display="none")  # fmt: skip
    resolved = headline_metric(log)
    assert resolved is not None and resolved.name == "conv_spearman"
    assert resolved.score.scorer == "empathy_scorer"
