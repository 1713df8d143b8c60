"""A calibration map bound to its run: by content (an eval set resumed after the file
changed), by rubric (name and content hash), by judge (checked before the first call)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval, eval_set
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import get_model
from kettle_judge import Judge

from inspect_empathy import tasks
from inspect_empathy._util.compat import PrerequisiteError
from inspect_empathy.errors import OptionError
from inspect_empathy.stats.calibration import Calibration, CalibrationError, same_rubric

FIXTURE = Path(__file__).parents[1] / "fixtures" / "reliability" / "dialogs.jsonl"


def maps_in(log: EvalLog) -> set[str]:
    found = set()
    for sample in read_eval_log(str(log.location)).samples or []:
        if sample.scores:
            found.add(str(sample.scores["empathy_scorer"].metadata["calibration"]))
    return found


@pytest.mark.parametrize("how", ["task", "name"])
def test_an_eval_set_resumed_after_the_map_changed_never_mixes_two_maps(
    tmp_path: Path, how: str
) -> None:
    """An eval set stops on an error with one dialog scored; the map's file changes (shift
    +0.5 to -1.0); the set is run again. Resumed, its other dialogs would be scored with the
    new map (exit 0, one log, two maps): the run's task carries the map's content in its
    version, so Inspect finds no log of this task and stops before any call. With the file
    unchanged, the set resumes and finishes with the one map."""
    path = tmp_path / "c.json"
    Calibration("shift", {"offset": 0.5}, 30).to_json(path)
    judge = Judge()
    model = get_model("mockllm/model", custom_outputs=judge)
    args = {"dataset": str(FIXTURE), "method": "parse", "calibration": str(path)}

    def run() -> tuple[bool, list[EvalLog]]:
        task: Any = tasks.empathy(**args) if how == "task" else "inspect_empathy/empathy"
        return eval_set(
            [task], task_args=args if how == "name" else None, log_dir=str(tmp_path / "logs"),
            model=model, display="none", retry_attempts=0, max_retries=0,
        )  # fmt: skip

    original = path.read_bytes()
    judge.broken = True
    done, [first] = run()
    assert not done and first.status == "error"
    digest = first.eval.metadata["calibration"]["sha256"][:16]
    assert str(first.eval.task_version).endswith(".calibration." + digest)
    Calibration("shift", {"offset": -1.0}, 30).to_json(path)
    judge.broken, judge.calls = False, 0
    if how == "name":  # built inside eval_set, as `inspect eval-set` builds it: the file named
        with pytest.raises(OptionError, match=f"eval-set: the calibration map {path} changed"):
            run()
    else:  # built before eval_set: Inspect's own refusal, which names no file
        with pytest.raises(PrerequisiteError, match="not associated with a task"):
            run()
    assert judge.calls == 0
    [only] = [read_eval_log(str(p)) for p in (tmp_path / "logs").glob("*.eval")]
    assert len(maps_in(only)) == 1
    # the same map: the set resumes, and every dialog is scored with it
    path.write_bytes(original)
    done, [resumed] = run()
    assert done and resumed.status == "success"
    assert len(maps_in(resumed)) == 1
    logged = read_eval_log(str(resumed.location)).samples or []
    values = [s.scores["empathy_scorer"].value for s in logged if s.scores]
    assert len(values) == 6 and values == [3.5] * 6  # 3 + 0.5, every dialog by the one map


# --- the rubric the map was fitted on --------------------------------------------------------


def write(tmp_path: Path, name: str, **identity: str) -> str:
    path = tmp_path / f"{name}.json"
    Calibration("shift", {"offset": -0.5}, 30, **identity).to_json(path)
    return str(path)


def test_the_rubric_check_compares_the_maps_rubric_with_the_runs(tmp_path: Path) -> None:
    """Judge mode checked every map against the seed: a map fitted under ``anchored`` was
    refused under ``anchored`` and a seed map applied under ``anchored``. The run's rubric,
    its name and content hash, is compared with the map's."""
    from inspect_empathy.judge._rubric import load_rubric

    anchored = load_rubric("anchored").identity()
    fitted = write(tmp_path, "anchored", rubric=f"anchored:{anchored['sha256'][:8]}")
    seed = write(tmp_path, "seed", rubric="seed")
    response = {"self_grading": True}
    for make, extra in ((tasks.empathy, {}), (tasks.empathy_response, response)):
        make(dataset=str(FIXTURE), calibration=fitted, rubric="anchored", **extra)
        with pytest.raises(OptionError, match=r"rubric 'seed', not 'anchored:[0-9a-f]{8}'"):
            make(dataset=str(FIXTURE), calibration=seed, rubric="anchored", **extra)
        with pytest.raises(OptionError, match=r"rubric 'anchored:[0-9a-f]{8}', not 'seed'"):
            make(dataset=str(FIXTURE), calibration=fitted, **extra)
    # a file that happens to be called seed.txt is not the seed
    own = tmp_path / "seed.txt"
    own.write_text(load_rubric().text.replace("Evaluation Steps", "Steps"), "utf-8")
    with pytest.raises(OptionError, match=r"rubric 'seed', not 'seed:[0-9a-f]{8} \("):
        tasks.empathy(dataset=str(FIXTURE), calibration=seed, rubric=str(own))


def test_same_rubric_needs_the_name_and_the_content() -> None:
    bundled = {"name": "anchored", "sha256": "0123456789abcdef", "source": "bundled"}
    assert same_rubric("anchored:01234567", bundled)
    assert not same_rubric("anchored:01234568", bundled)
    assert not same_rubric("no_steps:01234567", bundled)
    assert same_rubric("anchored", bundled)  # a log from before hashes: the bundled one
    assert not same_rubric("anchored", {**bundled, "source": "/x/anchored.txt"})
    assert not same_rubric("anchored:0123", bundled)  # too short to name content


# --- the judge the map was fitted on: checked before the first call -------------------------


def test_judge_mode_refuses_another_judges_map_before_any_call(tmp_path: Path) -> None:
    judge = Judge()
    model = get_model("mockllm/model", custom_outputs=judge)
    other = write(tmp_path, "gpt", judge="openai/gpt-4o")
    [log] = eval(
        tasks.empathy(dataset=str(FIXTURE), method="parse", calibration=other), model=model,
        log_dir=str(tmp_path / "logs"), display="none",
    )  # fmt: skip
    assert log.status == "error" and log.error is not None
    assert "judge 'openai/gpt-4o', not 'mockllm/model'" in log.error.message
    assert judge.calls == 0  # it was found after every judge call
    # by name, Inspect knows the model as it builds the task: refused at once, one line
    with pytest.raises(OptionError, match=f"calibration file {other}: fitted on the scores"):
        eval(
            "inspect_empathy/empathy", model=model, display="none",
            task_args={"dataset": str(FIXTURE), "calibration": other},
            log_dir=str(tmp_path / "named"),
        )  # fmt: skip
    assert judge.calls == 0
    mine = write(tmp_path, "mine", judge="mockllm/model")
    [log] = eval(
        tasks.empathy(dataset=str(FIXTURE), method="parse", calibration=mine), model=model,
        log_dir=str(tmp_path / "mine_logs"), display="none",
    )  # fmt: skip
    assert log.status == "success" and judge.calls == 6


def test_response_mode_refuses_another_graders_map_before_any_call(tmp_path: Path) -> None:
    replies, grader = Judge(), Judge()
    other = write(tmp_path, "gpt", judge="openai/gpt-4o")
    options: dict[str, Any] = {
        "model": get_model("mockllm/model", custom_outputs=replies),
        "model_roles": {"grader": get_model("mockllm/model", custom_outputs=grader)},
        "display": "none",
    }
    [log] = eval(
        tasks.empathy_response(dataset=str(FIXTURE), grader_method="parse", calibration=other),
        log_dir=str(tmp_path / "logs"), **options,
    )  # fmt: skip
    assert log.status == "error" and log.error is not None
    assert "judge 'openai/gpt-4o', not 'mockllm/model'" in log.error.message
    assert replies.calls == grader.calls == 0
    panel = write(tmp_path, "panel", judge="panel(mockllm/model, mockllm/model#2)")
    options["model_roles"] = {"grader": [get_model("mockllm/model", custom_outputs=grader)] * 2}
    [log] = eval(
        tasks.empathy_response(dataset=str(FIXTURE), grader_method="parse", calibration=panel),
        log_dir=str(tmp_path / "panel"), **options,
    )  # fmt: skip
    assert log.status == "success", log.error
    assert Counter(maps_in(log)) and grader.calls == 12


def test_a_map_without_a_recorded_judge_adds_no_step(tmp_path: Path) -> None:
    task = tasks.empathy(dataset=str(FIXTURE), calibration=write(tmp_path, "anonymous"))
    assert task.setup is None
    with pytest.raises(CalibrationError):
        Calibration("shift", {"offset": 0.0}, 3, judge="a").check_identity("b", None, "m")
