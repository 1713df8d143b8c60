"""Two rubrics of one judge model on the same dialogs are two judges: labelled by what
differs, compared with the same paired statistics."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval

from inspect_empathy.compare import compare_logs
from inspect_empathy.tasks import empathy

JUDGE = "empathy_baseline/lexicon"


def test_two_rubrics_of_one_model_are_two_judges_named_by_their_rubric(tmp_path: Path) -> None:
    for rubric in ("seed", "anchored"):
        eval(empathy(rubric=rubric), model=JUDGE, limit=30, display="none",
             log_dir=str(tmp_path / rubric))  # fmt: skip
    comparison = compare_logs([tmp_path / "seed", tmp_path / "anchored"], resamples=100)
    table = comparison.judges
    assert sorted(table["judge"]) == sorted(
        [f"{JUDGE} [rubric=seed]", f"{JUDGE} [rubric=anchored:" + table["judge"].str.extract(
            r"anchored:(\w+)")[0].dropna().iloc[0] + "]"]
    )  # fmt: skip
    assert list(table["scored"]) == [30, 30]
    [pair] = comparison.pairs.to_dict("records")
    assert {pair["judge_a"], pair["judge_b"]} == set(table["judge"])
    assert pair["n_common"] == 30 and 0.0 <= pair["p_holm"] <= 1.0
    # the offline judge reads only the dialog: both rubrics score alike, no difference found
    assert pair["diff"] == 0.0 and not pair["significant"]
