"""Response-level corpora: bias, responder ranking and calibrated bias per judge."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from inspect_empathy.compare.responders import published_responders, responder_table


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    quality = {"bot_a": 4.2, "bot_b": 3.4, "bot_c": 2.6, "bot_d": 1.8}
    for context in range(12):
        for bot, q in quality.items():
            human = float(np.clip(q + rng.normal(0, 0.4), 1, 5))
            rows.append({"context": f"c{context}", "responder": bot, "human": human,
                         "harsh": float(np.clip(human - 1.0, 1, 5)),  # same order, 1 lower
                         "reversed": 6.0 - human})  # fmt: skip
    return pd.DataFrame(rows)


def test_bias_ranking_and_calibrated_bias() -> None:
    table = responder_table(_frame(), ["harsh", "reversed"], resamples=200).set_index("judge")
    harsh, rev = table.loc["harsh"], table.loc["reversed"]
    assert harsh["responses"] == 48 and harsh["contexts"] == 12 and harsh["responders"] == 4
    assert harsh["bias"] == pytest.approx(-0.95, abs=0.06)
    assert harsh["bias_low"] < harsh["bias"] < harsh["bias_high"] < 0
    assert harsh["ranking_spearman"] == pytest.approx(1.0)
    assert rev["ranking_spearman"] == pytest.approx(-1.0)
    # a shift fitted without each context removes most of a constant offset
    assert abs(harsh["calibrated_bias"]) < 0.1
    assert harsh["calibrated_bias_low"] <= harsh["calibrated_bias"] <= harsh["calibrated_bias_high"]


def test_responders_from_a_published_spec() -> None:
    from types import SimpleNamespace

    from inspect_empathy.loaders.raters import RatedTable

    ids = ["c1/a", "c1/b", "c2/a", "c2/b"]
    table = RatedTable(
        ids=ids, raters={"p": {"c1/a": 5.0, "c1/b": 1.0, "c2/a": 4.0, "c2/b": 2.0}},
        judges={"j": {"c1/a": 7.0, "c2/a": 5.0}}, judge_bad={}, rater_bad={},
        scale=(1.0, 5.0), judge_scales={"j": (1.0, 7.0)}, sources=[], dimension="empathy",
        keys={"c1/a": ("c1", "a"), "c1/b": ("c1", "b"), "c2/a": ("c2", "a"),
              "c2/b": ("c2", "b")},
        key_columns=("ctx", "bot"), responder="bot",
    )  # fmt: skip
    pub = SimpleNamespace(mapping={"id": ["ctx", "bot"], "responder": "bot"}, table=table)
    frame = published_responders(pub)
    assert list(frame["context"]) == ["c1", "c1", "c2", "c2"]
    assert list(frame["responder"]) == ["a", "b", "a", "b"]
    assert frame.loc["c1/a", "j"] == 5.0 and np.isnan(frame.loc["c1/b", "j"])
    assert frame.loc["c2/a", "j"] == pytest.approx(1 + (5 - 1) * 4 / 6)


def test_compare_published_prints_the_responder_table(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    from inspect_empathy.cli import main

    frame = _frame()
    frame["ctx"], frame["bot"] = frame["context"], frame["responder"]
    frame[["ctx", "bot", "human"]].round(0).to_csv(tmp_path / "people.csv", index=False)
    frame[["ctx", "bot", "harsh"]].round(0).to_csv(tmp_path / "judge.csv", index=False)
    spec = tmp_path / "bots.yaml"
    spec.write_text(
        "format: raters\npath: .\nid: [ctx, bot]\nresponder: bot\nscale: [1, 5]\n"
        "raters: {people: {file: people.csv, column: human}}\n"
        "judges: {harsh: {file: judge.csv, column: harsh}}\n",
        encoding="utf-8",
    )
    assert main(["compare", "--published", str(spec), "--resamples", "50", "--quiet"]) == 0
    assert main(["compare", "--published", str(spec), "--resamples", "50", "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "Responders (bots: 4 responders in 12 contexts" in out
    assert "| harsh | 48 | 0 | -" in out
