"""A calibration file applied to new scores: judge mode, response mode, the scorer."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.log import read_eval_log

from inspect_empathy._util.compat import PrerequisiteError
from inspect_empathy.stats.calibration import fit_calibration
from inspect_empathy.tasks import empathy, empathy_response

FIXTURE = Path(__file__).parents[1] / "fixtures" / "reliability" / "dialogs.jsonl"


@pytest.fixture
def shift_file(tmp_path: Path) -> Path:
    """A shift map fitted on pairs where people rate one point below the judge."""
    judge = [2.0, 3.0, 4.0, 5.0, 3.5]
    path = tmp_path / "calibration.json"
    fit_calibration(judge, [j - 1.0 for j in judge], "shift", fitted_on=["a.eval"]).to_json(path)
    return path


def scores(log_location: str) -> tuple[list[float], list[float]]:
    log = read_eval_log(log_location)
    values, raw = [], []
    for sample in log.samples or []:
        score = sample.scores["empathy_scorer"]  # type: ignore[index]
        if isinstance(score.value, float) and math.isnan(score.value):
            continue
        values.append(float(score.value))  # type: ignore[arg-type]
        raw.append(float(score.metadata["uncalibrated"]))  # type: ignore[index]
    return values, raw


def test_judge_mode_applies_the_map_and_keeps_the_raw_score(
    shift_file: Path, tmp_path: Path
) -> None:
    [log] = eval(
        empathy(dataset=str(FIXTURE), calibration=str(shift_file)),
        model="empathy_baseline/lexicon",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.location
    values, raw = scores(log.location)
    assert values and len(values) == len(raw)
    assert values == pytest.approx([max(1.0, r - 1.0) for r in raw])
    provenance = (log.eval.metadata or {})["calibration"]
    assert provenance["method"] == "shift" and provenance["n"] == 5
    assert provenance["fitted_on"] == ["a.eval"]
    [sample] = [s for s in read_eval_log(log.location).samples or [] if s.scores][:1]
    assert "calibration.json (shift, n=5, sha256 " in sample.scores["empathy_scorer"].metadata[
        "calibration"
    ]


def test_response_mode_applies_the_map(shift_file: Path, tmp_path: Path) -> None:
    [log] = eval(
        empathy_response(dataset=str(FIXTURE), calibration=str(shift_file)),
        model="empathy_baseline/length",
        model_roles={"grader": "empathy_baseline/lexicon"},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.location
    values, raw = scores(log.location)
    assert values == pytest.approx([max(1.0, r - 1.0) for r in raw])


@pytest.mark.parametrize("content", [None, "{not json", '{"format": "other"}'])
def test_a_bad_calibration_file_is_a_plain_error(
    content: str | None, tmp_path: Path
) -> None:
    path = tmp_path / "cal.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(PrerequisiteError, match=f"calibration file {path}"):
        empathy(dataset=str(FIXTURE), calibration=str(path))


def test_compare_reads_the_judges_own_scores_from_a_calibrated_log(
    shift_file: Path, tmp_path: Path
) -> None:
    from inspect_empathy.compare import compare_judges

    for name, calibration in (("plain", None), ("calibrated", str(shift_file))):
        eval(
            empathy(dataset=str(FIXTURE), calibration=calibration),
            model="empathy_baseline/lexicon",
            log_dir=str(tmp_path / name),
            display="none",
        )
    plain = compare_judges(str(tmp_path / "plain"), resamples=50)
    calibrated = compare_judges(str(tmp_path / "calibrated"), resamples=50)
    assert calibrated["mean_score"].tolist() == pytest.approx(plain["mean_score"].tolist())
    assert calibrated["mae"].tolist() == pytest.approx(plain["mae"].tolist())


def test_a_map_that_merges_levels_moves_no_rank_or_self_consistency_metric(
    tmp_path: Path,
) -> None:
    """An isotonic map is flat between 3 and 4: the calibrated scores tie dialogs the judge
    told apart, and epochs the judge scored 3 and 4 agree after it. The log's Spearman,
    Kendall, Pearson, headline Somers' D and self-consistency stay the judge's own (as
    compare shows them); MAE is the calibrated scores'."""
    from collections import Counter

    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from inspect_empathy.stats.calibration import Calibration

    flat = tmp_path / "flat.json"
    Calibration("isotonic", {"x": [1.0, 3.0, 4.0, 5.0], "y": [1.0, 4.0, 4.0, 5.0]}, 40).to_json(
        flat
    )
    asked: Counter[str] = Counter()

    def answer(messages, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001
        prompt = messages[-1].text
        asked[prompt] += 1
        level = 2 + len(prompt) % 3 + (asked[prompt] - 1)  # 2-4, and one higher the 2nd time
        output = ModelOutput.from_content("mockllm/model", str(min(level, 5)))
        output.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)
        return output

    found = {}
    for name, calibration in (("raw", None), ("flat", str(flat))):
        asked.clear()
        [log] = eval(
            empathy(dataset=str(FIXTURE), method="parse", calibration=calibration),
            model=get_model("mockllm/model", custom_outputs=answer), epochs=2,
            log_dir=str(tmp_path / name), display="none",
        )  # fmt: skip
        assert log.status == "success" and log.results is not None
        found[name] = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    raw, flat_metrics = found["raw"], found["flat"]
    assert raw["self_flip"] > 0 and raw["spearman"] == raw["spearman"]  # a real, defined test
    for key in ("spearman", "kendall", "pearson", "somers_d_all", "self_flip", "self_alpha"):
        assert flat_metrics[key] == pytest.approx(raw[key]), key
    assert flat_metrics["mae"] != pytest.approx(raw["mae"])


def test_a_map_belongs_to_its_judge_and_rubric(tmp_path: Path) -> None:
    """A map records whose scores it was fitted on (``calibrate`` writes both): another
    judge's run fails naming both judges, another rubric is refused when the task is built;
    a map without them (written by hand, or before) is applied as before."""
    from inspect_empathy.errors import OptionError
    from inspect_empathy.stats.calibration import Calibration

    def write(name: str, **identity: str) -> str:
        path = tmp_path / f"{name}.json"
        Calibration("shift", {"offset": -0.5}, 30, **identity).to_json(path)
        return str(path)

    lexicon = write("lexicon", judge="empathy_baseline/lexicon", rubric="seed")
    [log] = eval(
        empathy(dataset=str(FIXTURE), calibration=lexicon), model="empathy_baseline/length",
        log_dir=str(tmp_path / "other"), display="none",
    )  # fmt: skip
    assert log.status == "error" and log.error is not None
    assert "'empathy_baseline/lexicon', not 'empathy_baseline/length'" in log.error.message
    [log] = eval(
        empathy(dataset=str(FIXTURE), calibration=lexicon), model="empathy_baseline/lexicon",
        log_dir=str(tmp_path / "same"), display="none",
    )  # fmt: skip
    assert log.status == "success"
    with pytest.raises(OptionError, match="rubric 'anchored:.*', not 'seed'"):
        empathy(dataset=str(FIXTURE), calibration=write("anchored", rubric="anchored:0123abcd"))
    [log] = eval(
        empathy(dataset=str(FIXTURE), calibration=write("anonymous")),
        model="empathy_baseline/length", log_dir=str(tmp_path / "old"), display="none",
    )  # fmt: skip
    assert log.status == "success"
