"""docs/comparison.md, "The same numbers in pandas": its code block, run on small logs,
gives the ranked Spearman, MAE and coverage of ``compare`` (issue 26 item 14)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from synthetic_logs import samples, write_log

from inspect_empathy.compare import compare_logs

DOC = Path(__file__).parents[2] / "docs" / "comparison.md"


def _block() -> str:
    text = DOC.read_text()
    section = text[text.index("## The same numbers in pandas") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_pandas_recipe_matches_compare(tmp_path: Path) -> None:
    write_log(tmp_path / "a.eval", "judge/a", samples((4.8, 1.2, 4.1, 2.2, 3.0, 4.9)))
    write_log(tmp_path / "b.eval", "judge/b", samples((4.0, 3.5, 2.0, math.nan, 3.0, 5.0)))
    code = _block()
    assert 'logs = "logs/judges"' in code
    namespace: dict = {}
    exec(code.replace('logs = "logs/judges"', f"logs = {str(tmp_path)!r}"), namespace)
    judges = compare_logs(tmp_path, resamples=0).judges.set_index("judge")
    for judge in ("judge/a", "judge/b"):
        assert namespace["spearman"][judge] == pytest.approx(judges.loc[judge, "spearman"])
        assert namespace["mae"][judge] == pytest.approx(judges.loc[judge, "mae"])
        assert namespace["coverage"][judge] == pytest.approx(judges.loc[judge, "coverage"])
    assert len(namespace["common"]) == judges["n_common"].iloc[0] == 5
    assert "unscored_reason" in namespace["samples"]  # the SampleColumn path resolves
