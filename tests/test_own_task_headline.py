"""Issue 49.3: `empathy_scorer()` in a task of one's own, beside another scorer, is what the
log list and the log header show (`inspect_ai.log.headline_metric`): README's own-task
example and examples/my_task.py, run as they are."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.log import headline_metric

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def readme_task() -> Task:
    section = README.split("## Your own task", 1)[1]
    code = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)[0]
    namespace: dict[str, Any] = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102
    return namespace["my_chatbot"]()


def example_task() -> Task:
    namespace: dict[str, Any] = {}
    path = ROOT / "examples" / "my_task.py"
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)  # noqa: S102
    return namespace["my_chatbot"]()


@pytest.mark.parametrize("make", [readme_task, example_task], ids=["readme", "examples"])
def test_the_log_list_shows_the_empathy_headline(make: Any, tmp_path: Path) -> None:
    [log] = eval(make(), model="empathy_baseline/length",
                 model_roles={"grader": "empathy_baseline/lexicon"},
                 log_dir=str(tmp_path), display="none")  # fmt: skip
    assert log.status == "success", log.error
    assert log.results is not None and len(log.results.scores) == 2  # includes() kept
    resolved = headline_metric(log)
    assert resolved is not None
    assert (resolved.score.scorer, resolved.name) == ("empathy_scorer", "mean")
