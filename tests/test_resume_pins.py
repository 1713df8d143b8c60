"""Issue 48.2, 48.3: everything a run read is pinned on resume. A retried log (``eval-retry``,
an eval set resumed) is never finished on a dataset or rubric file that changed since:
the run stops before any model call, one line naming the file."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval, eval_retry, eval_set
from inspect_ai.log import EvalLog
from inspect_ai.model import get_model
from kettle_judge import Judge

from inspect_empathy import tasks
from inspect_empathy.errors import OptionError
from inspect_empathy.judge._rubric import load_rubric

FIXTURE = Path(__file__).parent / "fixtures" / "reliability" / "dialogs.jsonl"


def interrupted(tmp_path: Path, **args: Any) -> tuple[EvalLog, Judge, dict[str, Any]]:
    """A judge-mode log with one dialog scored and the others errored."""
    judge = Judge(broken=True)
    options: dict[str, Any] = {"log_dir": str(tmp_path / "logs"), "display": "none"}
    [log] = eval(
        tasks.empathy(method="parse", **args),
        model=get_model("mockllm/model", custom_outputs=judge),
        fail_on_error=False, max_retries=0, **options,
    )  # fmt: skip
    assert log.samples and sum(1 for s in log.samples if s.error) == 5
    return log, judge, options


def edited_dataset(tmp_path: Path) -> Path:
    path = tmp_path / "dialogs.jsonl"
    shutil.copy(FIXTURE, path)
    return path


def edited_rubric(tmp_path: Path) -> Path:
    path = tmp_path / "rubric.txt"
    path.write_text(load_rubric().text, encoding="utf-8")
    return path


def change(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":  # a dialog dropped and a rating changed
        lines = text.splitlines()
        path.write_text("\n".join(lines[1:]).replace('"rating": 4', '"rating": 2') + "\n", "utf-8")
    else:
        path.write_text(text.replace("Evaluation Steps", "Steps to follow"), "utf-8")


@pytest.mark.parametrize(("what", "make"), [("dataset", edited_dataset), ("rubric", edited_rubric)])
def test_eval_retry_stops_when_a_file_it_read_changed(tmp_path: Path, what: str, make: Any) -> None:
    """Retried after the file changed, the errored dialogs were judged on the new file (and a
    deleted dialog dropped without a word) beside the one judged on the old, exit 0."""
    path = make(tmp_path)
    args = {"dataset": str(path)} if what == "dataset" else {"dataset": str(FIXTURE),
                                                              "rubric": str(path)}  # fmt: skip
    log, judge, options = interrupted(tmp_path, **args)
    pinned = log.eval.task_version
    assert str(pinned).startswith(tasks.TASK_VERSION + "+dataset.") and ".rubric." in pinned
    change(path)  # read again in this process: the rubric cache is keyed by the file's stamp
    judge.calls = 0
    with pytest.raises(OptionError, match=f"eval-retry: the {what} .*{path.name} changed"):
        eval_retry(str(log.location), **options)
    assert judge.calls == 0


def test_an_eval_set_resumed_after_the_dataset_changed_stops(tmp_path: Path) -> None:
    """The task's version carries the dataset's and the rubric's content: an eval set
    resumed on a changed file finds no log of its task and stops before any call; with
    the file as it was, it resumes and finishes."""
    path = edited_dataset(tmp_path)
    original = path.read_bytes()
    judge = Judge(broken=True)
    model = get_model("mockllm/model", custom_outputs=judge)

    def run() -> tuple[bool, list[EvalLog]]:
        # by name, as `inspect eval-set` gives it: Inspect builds the task inside eval_set
        return eval_set(
            ["inspect_empathy/empathy"], task_args={"dataset": str(path), "method": "parse"},
            log_dir=str(tmp_path / "logs"), model=model, display="none", retry_attempts=0,
            max_retries=0,
        )  # fmt: skip

    done, _ = run()
    assert not done
    change(path)
    judge.broken, judge.calls = False, 0
    with pytest.raises(OptionError, match=f"eval-set: the dataset {path} changed since the logs"):
        run()
    assert judge.calls == 0
    path.write_bytes(original)
    done, [log] = run()
    assert done and log.status == "success" and judge.calls == 5


def test_the_pins_are_the_content_not_the_name(tmp_path: Path) -> None:
    """Two loads of one file pin alike; a copy of it under another name too."""
    copy = edited_dataset(tmp_path)
    first = tasks.empathy(dataset=str(FIXTURE)).version
    assert tasks.empathy(dataset=str(copy)).version == first
    change(copy)
    assert tasks.empathy(dataset=str(copy)).version != first
