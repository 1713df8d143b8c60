"""Issue 28 items 1-2: the alternative-annotator test and the judge's agreement with itself.

The alt-test is checked against the method's own worked numbers: the authors' notebook
(github.com/nitaytech/AltTest @ 18428b1, ``alt_test_example.ipynb``, cell "Example
(paper's data)") prints, for the CEBaB star ratings (10 raters, 1-5, negative RMSE,
epsilon 0.1), each LLM's winning rate and advantage probability; the fixture
``tests/fixtures/alttest/cebab_stars.json`` holds that repository's
``data/cebab_stars/{human,llm}_annotations.json`` in a compact form. Per-rater p-values
and the Benjamini-Yekutieli decisions are checked against a plain loop with
``scipy.stats.ttest_1samp`` and ``scipy.stats.false_discovery_control``; the
self-consistency figures against numpy and a hand-written ordinal Krippendorff's alpha.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from inspect_ai import eval
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.scorer import SampleScore, Score
from inspect_ai.tool import ToolChoice, ToolInfo
from scipy import stats

from inspect_empathy.compare import compare_logs, write_report
from inspect_empathy.stats.alt_metric import alt_test_metric
from inspect_empathy.stats.alttest import alt_test, by_rejections
from inspect_empathy.stats.consistency import self_consistency, self_consistency_figures
from inspect_empathy.tasks import empathy

FIXTURE = Path(__file__).parents[1] / "fixtures" / "alttest" / "cebab_stars.json"

# alt_test_example.ipynb, printed output for cebab_stars (epsilon 0.1, neg_rmse)
PAPER = {
    "gemini_flash": (0.60, 0.82),
    "gemini_pro": (0.80, 0.87),
    "gpt-4o": (0.90, 0.90),
    "llama-31": (0.60, 0.85),
    "gpt-4o-mini": (0.90, 0.89),
    "mistral-v03": (0.50, 0.83),
}


def _decode(text: str) -> list[float]:
    return [math.nan if c == "." else float(c) for c in text]


@pytest.fixture(scope="module")
def cebab() -> tuple[pd.DataFrame, dict[str, pd.Series]]:
    data = json.loads(FIXTURE.read_text())
    ratings = pd.DataFrame({k: _decode(v) for k, v in data["humans"].items()})
    llms = {k: pd.Series(_decode(v)) for k, v in data["llms"].items()}
    return ratings, llms


def test_reproduces_the_papers_worked_numbers(cebab) -> None:
    ratings, llms = cebab
    for name, (winning_rate, advantage) in PAPER.items():
        result = alt_test(llms[name], ratings, epsilon=0.1)
        assert result.tested == 10
        assert round(result.winning_rate, 2) == winning_rate, name
        assert round(result.advantage_probability, 2) == advantage, name
        assert result.passed == (winning_rate >= 0.5)


def _reference(judge: pd.Series, ratings: pd.DataFrame, epsilon: float) -> list[tuple]:
    """The procedure written as a plain loop over raters and dialogs (scipy's t-test)."""
    out = []
    for rater in ratings.columns:
        diffs, judge_ind = [], []
        for i in ratings.index:
            mine = ratings.at[i, rater]
            others = [ratings.at[i, r] for r in ratings.columns if r != rater]
            others = [o for o in others if not math.isnan(o)]
            if math.isnan(mine) or not others or math.isnan(judge[i]):
                continue
            h = -math.sqrt(sum((mine - o) ** 2 for o in others) / len(others))
            f = -math.sqrt(sum((judge[i] - o) ** 2 for o in others) / len(others))
            judge_ind.append(int(f >= h))
            diffs.append(int(h >= f) - int(f >= h))
        p = stats.ttest_1samp(diffs, epsilon, alternative="less").pvalue
        out.append((rater, len(diffs), float(np.mean(judge_ind)), float(p)))
    return out


def test_per_rater_p_values_and_by_decisions_match_scipy(cebab) -> None:
    ratings, llms = cebab
    judge = llms["gemini_flash"]
    result = alt_test(judge, ratings, epsilon=0.1)
    expected = _reference(judge, ratings, 0.1)
    got = result.raters.set_index("rater")
    for rater, n, rho_f, p in expected:
        assert got.at[rater, "n"] == n
        assert got.at[rater, "judge_wins"] == pytest.approx(rho_f, abs=1e-12)
        assert got.at[rater, "p_value"] == pytest.approx(p, rel=1e-9)
    adjusted = stats.false_discovery_control([p for *_, p in expected], method="by")
    assert list(got["won"]) == list(adjusted <= 0.05)
    assert got["advantage"].to_numpy() == pytest.approx(
        (got["judge_wins"] - got["rater_wins"]).to_numpy()
    )


def test_by_rejections_match_scipy() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = rng.uniform(0, 0.05, size=int(rng.integers(1, 12))) ** rng.uniform(0.5, 2)
        expected = stats.false_discovery_control(p, method="by") <= 0.05
        assert list(by_rejections(p, 0.05)) == list(expected)


def test_epsilon_and_small_raters(cebab) -> None:
    ratings, llms = cebab
    strict = alt_test(llms["gpt-4o"], ratings, epsilon=0.0)
    lenient = alt_test(llms["gpt-4o"], ratings, epsilon=0.3)
    assert strict.winning_rate <= 0.9 <= lenient.winning_rate
    few = alt_test(llms["gpt-4o"], ratings.iloc[:100], epsilon=0.1)
    assert few.tested < 10 and few.skipped and "< 30" in few.skipped[0]
    with pytest.raises(ValueError, match="epsilon"):
        alt_test(llms["gpt-4o"], ratings, epsilon=1.5)


# --- self-consistency ---------------------------------------------------------------------


def _ordinal_alpha(units: list[list[int]]) -> float:
    """Krippendorff's ordinal alpha from the coincidence matrix (Krippendorff 2011,
    'Computing Krippendorff's alpha-reliability', section C), values 1-5."""
    o = np.zeros((5, 5))
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for a in range(m):
            for b in range(m):
                if a != b:
                    o[values[a] - 1, values[b] - 1] += 1 / (m - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()

    def delta(c: int, k: int) -> float:
        lo, hi = min(c, k), max(c, k)
        return (n_c[lo : hi + 1].sum() - (n_c[lo] + n_c[hi]) / 2) ** 2

    d_o = sum(o[c, k] * delta(c, k) for c in range(5) for k in range(5))
    d_e = sum(n_c[c] * n_c[k] * delta(c, k) for c in range(5) for k in range(5))
    return 1 - (n - 1) * d_o / d_e


def test_self_consistency_figures_by_hand() -> None:
    rng = np.random.default_rng(3)
    truth = rng.uniform(1, 5, size=60)
    epochs = [list(np.clip(t + rng.normal(0, 0.5, size=3), 1, 5)) for t in truth]
    epochs[0][1] = None  # an unscored epoch: the dialog keeps its two others
    epochs[1] = [2.0, None, None]  # one scored epoch: left out
    figures = self_consistency_figures(epochs)
    kept = [[v for v in e if v is not None] for e in epochs]
    kept = [k for k in kept if len(k) >= 2]
    assert figures["self_dialogs"] == len(kept) == 59
    assert figures["self_epochs"] == 3
    assert figures["self_sd"] == pytest.approx(
        math.sqrt(np.mean([np.var(k, ddof=1) for k in kept]))
    )
    rounded = [[int(math.floor(v + 0.5)) for v in k] for k in kept]
    assert figures["self_flip"] == pytest.approx(np.mean([len(set(r)) > 1 for r in rounded]))
    assert figures["self_alpha"] == pytest.approx(_ordinal_alpha(rounded), abs=1e-9)
    assert self_consistency_figures([[3.0], [None, 2.0]]) == {}


def _sample_score(i: int, value: float, metadata: dict, sample_metadata: dict | None = None):
    return SampleScore(
        score=Score(value=value, metadata=metadata),
        sample_id=f"d{i}",
        sample_metadata=sample_metadata or {},
    )


def test_self_consistency_metric_reads_the_reducers_epochs() -> None:
    values = [[4.0, 4.0], [2.0, 3.0], [5.0, 4.6], [1.0, 1.4]]
    scores = [
        _sample_score(i, float(np.mean(v)), {"epochs": [{"value": x} for x in v]})
        for i, v in enumerate(values)
    ]
    got = self_consistency()(scores)
    figures = self_consistency_figures(values)
    # the counts are the end-of-task line's, as whole numbers, not metrics
    assert got == pytest.approx({k: figures[k] for k in ("self_sd", "self_flip", "self_alpha")},
                                nan_ok=True)  # fmt: skip
    assert got["self_flip"] == 0.25
    # one epoch, or a reducer that kept no epochs: nothing
    assert self_consistency()([_sample_score(0, 3.0, {})]) == {}


def test_alt_test_metric_with_three_raters(cebab) -> None:
    ratings, llms = cebab
    subset = ratings[["w197", "w40", "w2"]]
    subset = subset[subset.notna().sum(axis=1) >= 2]
    judge = llms["gpt-4o"]
    scores = []
    for i in subset.index:
        raters = {r: v for r, v in subset.loc[i].items() if not math.isnan(v)}
        metadata = {
            "human_rating": float(np.median(list(raters.values()))),
            "human_rating_scale": [1, 5],
            "human_ratings": raters,
        }
        scores.append(_sample_score(i, float(judge[i]), {}, metadata))
    got = alt_test_metric(epsilon=0.1)(scores)
    direct = alt_test(judge.loc[subset.index], subset, epsilon=0.1)
    assert got["alt_raters"] == direct.tested
    assert got["alt_winning_rate"] == direct.winning_rate
    assert got["alt_advantage_probability"] == pytest.approx(direct.advantage_probability)
    assert got["alt_passed"] == float(direct.winning_rate >= 0.5)
    for _, row in direct.raters.iterrows():
        assert got[f"alt_p({row['rater']})"] == pytest.approx(row["p_value"])
    # fewer than three raters in the data: nothing
    assert (
        alt_test_metric()([s for s in scores if "w2" not in s.sample_metadata["human_ratings"]])
        == {}
    )


# --- in a run and in compare --------------------------------------------------------------


@modelapi(name="wobbly")
class WobblyJudge(ModelAPI):
    """A judge that answers the dialog's true level, off by one at random now and then."""

    def __init__(self, model_name: str, base_url=None, api_key=None, config=GenerateConfig(), **_):  # noqa: B008, ANN001
        super().__init__(model_name, base_url, api_key, [], config)
        self.rng = np.random.default_rng(7)

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:  # fmt: skip
        text = input[-1].text
        level = int(text.split("[level ")[-1][0]) if "[level " in text else 3
        level = int(np.clip(level + self.rng.choice([-1, 0, 0, 0, 1]), 1, 5))
        return ModelOutput.from_content(self.model_name, str(level))


@pytest.fixture(scope="module")
def three_rater_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("selfcheck")
    rng = np.random.default_rng(11)
    rows = []
    for i in range(40):
        level = int(rng.integers(1, 6))
        ratings = [int(np.clip(level + rng.choice([-1, 0, 0, 1]), 1, 5)) for _ in range(3)]
        transcript = f"User: I feel low today, number {i}.\nBot: I hear you [level {level}]."
        rows.append({"id": f"d{i:02d}", "transcript": transcript, "a": ratings[0],
                     "b": ratings[1], "c": ratings[2]})  # fmt: skip
    pd.DataFrame(rows).to_csv(root / "dialogs.csv", index=False)
    (root / "spec.yaml").write_text("path: dialogs.csv\nratings: [a, b, c]\nscale: [1, 5]\n")
    logs = eval(
        empathy(dataset=str(root / "spec.yaml"), method="parse"),
        model=["wobbly/judge", "empathy_baseline/lexicon"],
        epochs=2,
        log_dir=str(root / "logs"),
        display="none",
    )
    assert all(log.status == "success" for log in logs)
    return root / "logs"


@pytest.mark.slow
def test_metrics_in_the_log_and_columns_in_compare(three_rater_logs: Path, tmp_path: Path) -> None:
    from inspect_ai.log import list_eval_logs, read_eval_log

    from inspect_empathy._util.summary import summary_lines

    metrics, lines = {}, {}
    for info in list_eval_logs(str(three_rater_logs)):
        log = read_eval_log(info)
        found = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
        metrics[log.eval.model] = found
        lines[log.eval.model] = summary_lines(log)[0]
    wobbly = metrics["wobbly/judge"]
    assert 0 < wobbly["self_flip"] < 1 and wobbly["self_sd"] > 0 and "self_dialogs" not in wobbly
    assert "; 40 scored in two epochs or more" in lines["wobbly/judge"]
    assert metrics["empathy_baseline/lexicon"]["self_flip"] == 0.0
    assert 0 <= wobbly["alt_winning_rate"] <= 1 and wobbly["alt_raters"] == 3
    assert {"alt_p(a)", "alt_advantage(b)", "alt_epsilon"} <= set(wobbly)

    comparison = compare_logs(three_rater_logs, resamples=0, alt_epsilon=0.15)
    judges = comparison.judges.set_index("judge")
    row = judges.loc["wobbly/judge"]
    assert row["self_flip"] == pytest.approx(wobbly["self_flip"])
    assert row["self_alpha"] == pytest.approx(wobbly["self_alpha"])
    assert row["alt_epsilon"] == 0.15
    assert len(comparison.alt_test) == 2 * 3
    written = write_report(comparison, tmp_path / "report", plots=False)
    assert "alt_test.csv" in written
    table = pd.read_csv(written["alt_test.csv"])
    assert set(table["rater"]) == {"a", "b", "c"}
    md = written["report.md"].read_text()
    html = written["report.html"].read_text()
    for text in (md, html):
        assert "alternative-annotator test" in text and "agree with itself" in text
    assert "self_alpha" in pd.read_csv(written["judges.csv"]).columns
