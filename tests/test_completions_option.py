"""`completions` (sampled completions for method=samples) and its deprecated alias `samples`."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser

from inspect_empathy import empathy, empathy_response, empathy_scorer
from inspect_empathy import scorer as scorer_module
from inspect_empathy.errors import OptionError

DEPRECATED = "samples is deprecated: use -T completions instead"


@pytest.fixture(autouse=True)
def fresh_deprecation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees the process's first use of the alias (the warning is once per process)."""
    monkeypatch.setattr(scorer_module, "_deprecation_said", set())


def write_dialogs(path: Path, n: int) -> Path:
    records = [
        {
            "id": f"d{i}",
            "rating": 3,
            "turns": [
                {"role": "user", "content": f"My cat ran away this morning ({i})."},
                {"role": "assistant", "content": "I am so sorry. Have you looked nearby?"},
            ],
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def deprecations(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "samples is deprecated" in r.getMessage()]


def test_completions_sets_the_number_of_choices(tmp_path: Path) -> None:
    data = str(write_dialogs(tmp_path / "d.jsonl", 1))
    assert empathy(dataset=data, method="samples", completions=7).metadata["completions"] == 7
    assert empathy(dataset=data, method="samples").metadata["completions"] == 20


def test_samples_is_an_alias_that_warns_once_naming_completions(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = str(write_dialogs(tmp_path / "d.jsonl", 1))
    with caplog.at_level(logging.WARNING):
        first = empathy(dataset=data, method="samples", samples=4)
        again = empathy(dataset=data, method="samples", samples=6)
        response = empathy_response(dataset=data, grader_method="samples", samples=3)
    assert first.metadata["completions"] == 4 and again.metadata["completions"] == 6
    assert response.metadata is not None  # built, with the alias accepted
    [message] = deprecations(caplog)
    assert DEPRECATED in message


def test_the_same_value_under_both_names_is_accepted(tmp_path: Path) -> None:
    data = str(write_dialogs(tmp_path / "d.jsonl", 1))
    task = empathy(dataset=data, method="samples", completions=5, samples=5)
    assert task.metadata["completions"] == 5


@pytest.mark.parametrize("build", ["empathy", "empathy_response", "empathy_scorer"])
def test_different_values_under_both_names_are_an_option_error(
    build: str, tmp_path: Path
) -> None:
    data = str(write_dialogs(tmp_path / "d.jsonl", 1))
    with pytest.raises(OptionError, match=r"completions=3 and .*samples=5 disagree"):
        if build == "empathy":
            empathy(dataset=data, method="samples", completions=3, samples=5)
        elif build == "empathy_response":
            empathy_response(dataset=data, grader_method="samples", completions=3, samples=5)
        else:
            empathy_scorer(method="samples", completions=3, samples=5)


def test_the_alias_is_checked_like_completions(tmp_path: Path) -> None:
    data = str(write_dialogs(tmp_path / "d.jsonl", 1))
    with pytest.raises(OptionError, match="-T completions must be at least 1, not 0"):
        empathy_response(dataset=data, grader_method="samples", samples=0)
    with pytest.raises(OptionError, match="completions must be at least 1, not 0"):
        empathy_scorer(method="samples", completions=0)


def test_scorer_alias_asks_for_that_many_completions(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def sample(i: int) -> Sample:
        messages = [
            ChatMessageUser(content=f"I failed my exam ({i})."),
            ChatMessageAssistant(content="That must be so disappointing. Want to talk?"),
        ]
        return Sample(id=f"s{i}", input=messages)

    def task(**options: int) -> Task:
        judge = "empathy_baseline/lexicon"
        return Task(
            dataset=[sample(0)],
            scorer=empathy_scorer(model=judge, method="samples", **options),
        )

    with caplog.at_level(logging.WARNING):
        [old, new] = eval(
            [task(samples=3), task(completions=3)],
            model="empathy_baseline/length",
            log_dir=str(tmp_path),
            display="none",
        )
    scores = [log.samples[0].scores["empathy_scorer"] for log in (old, new)]  # type: ignore[index]
    assert [s.metadata["n_requested"] for s in scores] == [3, 3]
    assert [s.value for s in scores][0] == scores[1].value
    [message] = deprecations(caplog)
    assert message.startswith("samples is deprecated: use completions instead")


@pytest.mark.slow
def test_cli_samples_alias_still_runs_and_warns(tmp_path: Path) -> None:
    data = write_dialogs(tmp_path / "d.jsonl", 3)
    result = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "inspect_empathy/empathy"]
        + ["--model", "empathy_baseline/lexicon", "-T", f"dataset={data}"]
        + ["-T", "method=samples", "-T", "samples=5", "--log-dir", str(tmp_path / "logs")],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "COLUMNS": "400"},  # the warning on one line
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert DEPRECATED in output
    [path] = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success"
    for sample in log.samples or []:
        assert sample.scores["empathy_scorer"].metadata["n_requested"] == 5  # type: ignore[index]
        assert len(sample.output.choices) == 5
