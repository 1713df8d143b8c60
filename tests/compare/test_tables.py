"""The judges table's denominators: a dialog left out by design for a judge (its own
model's reply, ``comparison.LEFT_OUT``) is outside its coverage and its headline, where a
dialog it left unscored counts against it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspect_empathy.compare.comparison import LEFT_OUT
from inspect_empathy.compare.tables import common_dialogs, judge_table
from inspect_empathy.stats._agreement import somers_d_all


def _rows(judge: str, scores: list[float], status: list[str], human: np.ndarray) -> list[dict]:
    return [
        {"id": f"d{i}", "judge": judge, "model": judge, "method": "logprobs", "score": s,
         "status": st_, "human": h, "tokens": math.nan, "reply_words": math.nan,
         "log": "x", "unscored_reason": None if st_ == "scored" else st_}
        for i, (s, st_, h) in enumerate(zip(scores, status, human, strict=True))
    ]  # fmt: skip


@settings(max_examples=30, deadline=None)
@given(data=st.data(), n=st.integers(6, 40))
def test_left_out_dialogs_are_outside_coverage_and_headline(data: st.DataObject, n: int) -> None:
    human = np.array(data.draw(st.lists(st.integers(1, 5), min_size=n, max_size=n)), float)
    status = data.draw(
        st.lists(st.sampled_from(["scored", "unscored", LEFT_OUT]), min_size=n, max_size=n)
    )
    raw = data.draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
    scores = [float(v) if s == "scored" else math.nan for v, s in zip(raw, status, strict=True)]
    other = _rows("other", [float(v) for v in human], ["scored"] * n, human)
    samples = pd.DataFrame(_rows("judge", scores, status, human) + other)
    table, common = judge_table(samples, 0, 0)
    row = table.set_index("judge").loc["judge"]
    left = status.count(LEFT_OUT)
    scored, unscored = status.count("scored"), status.count("unscored")
    assert (row["dialogs"], row["left_out"]) == (n - left, left)
    assert (row["scored"], row["unscored"]) == (scored, unscored)
    if n > left:
        assert row["coverage"] == pytest.approx(scored / (n - left))
        assert bool(row["low_coverage"]) == (unscored > 0)
    # the headline: every dialog the judge was to score, an unscored one against it
    kept = np.array([s == "scored" for s in status])
    x = np.array(scores)[kept]
    expected = somers_d_all(x, human[kept], unscored) if n > left else math.nan
    assert row["somers_d_all"] == pytest.approx(expected, nan_ok=True)
    # the common set: only the dialogs it scored, for every judge alike
    if scored:
        assert set(common_dialogs(samples, ["judge", "other"])) == {
            f"d{i}" for i in range(n) if status[i] == "scored"
        }
        assert common == scored
