"""``format: raters`` on multi-chatbot corpora: one column per chatbot, judges' own replies
left out, opaque ids, values that mean "not rated"."""

from __future__ import annotations

import csv
import json
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wide_files import BOTS, contexts, corpus, ratings_grid

from inspect_empathy import load_dialogs
from inspect_empathy.dataset.loaders.raters import RESPONDER, read_rated
from inspect_empathy.dataset.loaders.spec import read_spec
from inspect_empathy.errors import DatasetError


@pytest.fixture
def multi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "published"
    monkeypatch.setenv("MULTI_ROOT", str(root))
    return corpus(root)


def _table(spec: Path, **changes: object):
    parsed = read_spec(spec)
    mapping = dict(parsed.mapping) | changes
    return read_rated(parsed.source, {k: v for k, v in mapping.items() if v is not None})


def test_one_column_per_chatbot_in_csv_and_xlsx_json_and_text_cells(multi: Path) -> None:
    table = _table(multi, own_replies=None)
    n = 14
    grid = ratings_grid(n)
    assert len(table.ids) == n * len(BOTS)
    assert table.key_columns == ("context id", RESPONDER) and table.responder == RESPONDER
    ctx = contexts(n)
    for i, c in enumerate(ctx):
        for b, bot in enumerate(BOTS):
            sid = f"{c}/{bot}"
            assert table.keys[sid] == (c, bot)
            assert table.raters["rater1"][sid] == grid["rater1"][i, b]  # CSV, JSON cells
            assert table.raters["rater2"][sid] == grid["rater2"][i, b]  # xlsx, JSON cells
            assert table.judges["gpt-4o"][sid] == grid["gpt-4o"][i, b]  # xlsx, fenced text
            assert table.judges["claude"][sid] == grid["claude"][i, b]  # CSV, fenced text
    assert any(line.startswith("rater2 (people2.xlsx): 84 of 84") for line in table.notes())


def test_the_samples_are_one_per_context_and_chatbot(multi: Path) -> None:
    dataset = load_dialogs(multi)
    assert len(dataset) == 14 * len(BOTS)
    first = dataset[0]
    assert first.id == f"ctx/0/{BOTS[0]}"
    assert first.metadata[RESPONDER] == BOTS[0] and first.metadata["context id"] == "ctx/0"
    assert first.metadata["human_ratings"] == {
        "rater1": ratings_grid(14)["rater1"][0, 0], "rater2": ratings_grid(14)["rater2"][0, 0]
    }  # fmt: skip
    assert "openai/gpt-4o says sorry (ctx/0)" in str(first.input)


def test_responders_as_a_list_or_a_map(tmp_path: Path) -> None:
    (tmp_path / "people.csv").write_text("ctx,a,b\nc1,4,2\nc2,5,1\n", encoding="utf-8")
    (tmp_path / "judge.csv").write_text("ctx,bot A,bot B\nc1,3,3\nc2,4,2\n", encoding="utf-8")
    base = {"id": "ctx", "scale": [1, 5], "raters": {"p": "people.csv"}}
    listed = read_rated(tmp_path, base | {"responders": ["a", "b"]})
    assert listed.raters["p"] == {"c1/a": 4.0, "c1/b": 2.0, "c2/a": 5.0, "c2/b": 1.0}
    mapped = read_rated(tmp_path, base | {
        "responders": {"a": "a", "b": "b"},
        "judges": {"j": {"file": "judge.csv", "responders": {"a": "bot A", "b": "bot B"}}},
    })  # fmt: skip
    assert mapped.judges["j"] == {"c1/a": 3.0, "c1/b": 3.0, "c2/a": 4.0, "c2/b": 2.0}


@pytest.mark.parametrize(
    ("responders", "message"),
    [
        ("rating", "needs {responder} once"),
        ("{responder}_score", "no column matches the responders pattern '{responder}_score'"),
        (["a", "a"], "'a' named twice"),
        (["x", "y"], "none of the responder columns 'x', 'y'"),
        (7, "responders must list the responder columns"),
    ],
)
def test_bad_responder_columns_are_named(tmp_path: Path, responders: object, message: str) -> None:
    (tmp_path / "people.csv").write_text("ctx,a,b\nc1,4,2\n", encoding="utf-8")
    mapping = {"id": "ctx", "responders": responders, "raters": {"p": "people.csv"}}
    with pytest.raises(DatasetError, match=message.replace("{", r"\{").replace("}", r"\}")):
        read_rated(tmp_path, mapping)


def test_own_replies_are_left_out_and_counted(multi: Path) -> None:
    table = _table(multi)
    assert table.own_left_out == {"gpt-4o": 14, "claude": 14}
    assert not [sid for sid in table.judges["gpt-4o"] if table.keys[sid][1] == "openai/gpt-4o"]
    assert not [sid for sid in table.judges["claude"] if table.keys[sid][1] == "claude|3.7"]
    assert len(table.judges["gpt-4o"]) == 14 * (len(BOTS) - 1)
    assert ("gpt-4o: 14 rating(s) of its own model's replies (openai/gpt-4o) left out "
            "(own_replies)") in table.notes()  # fmt: skip


@pytest.mark.parametrize(
    ("own", "message"),
    [
        ({"gpt-4o": "openai/gpt-4"}, "no responder 'openai/gpt-4' in the corpus"),
        ({"gpt4": "openai/gpt-4o"}, "own_replies names 'gpt4', not one of the judges"),
    ],
)
def test_own_replies_naming_nothing_is_an_error(multi: Path, own: dict, message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        _table(multi, own_replies=own)


def test_own_replies_needs_responders(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("id,v\n1,3\n", encoding="utf-8")
    mapping = {"id": "id", "dimension": "v", "raters": {"p": "r.csv"},
               "judges": {"j": "r.csv"}, "own_replies": {"j": "x"}}  # fmt: skip
    with pytest.raises(DatasetError, match="own_replies needs the responders"):
        read_rated(tmp_path, mapping)


def test_two_keys_that_would_show_as_one_id_are_refused(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("a,b,v\nx/y,z,3\nx,y/z,4\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="both read as 'x/y/z'"):
        read_rated(tmp_path, {"id": ["a", "b"], "dimension": "v", "raters": {"p": "r.csv"}})


# --------------------------------------------------------------------------- opaque ids

_ID_TEXT = st.text(
    alphabet=st.sampled_from(list(string.ascii_letters + "/|,#: ") + ["é", "ü", "ж", "中"]),
    min_size=1, max_size=8,
).map(str.strip).filter(bool)  # fmt: skip


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(
    ctx=st.lists(_ID_TEXT, min_size=2, max_size=5, unique=True),
    bots=st.lists(_ID_TEXT, min_size=4, max_size=6, unique=True),
)
def test_ids_with_any_characters_keep_their_contexts_and_responders(
    tmp_path_factory: pytest.TempPathFactory, ctx: list[str], bots: list[str]
) -> None:
    """Whatever the ids hold, the responders table sees every chatbot and every context
    (the ids are never split), in the long layout (an id column) and the wide one."""
    from types import SimpleNamespace

    from inspect_empathy.compare.responders import published_responders, responder_table

    folder = tmp_path_factory.mktemp("ids")
    rows = [(c, b, 1 + min(j, 4)) for c in ctx for j, b in enumerate(bots)]
    with (folder / "long.csv").open("w", encoding="utf-8", newline="") as file:
        csv.writer(file).writerows([("ctx", "bot", "v"), *rows])
    with (folder / "wide.csv").open("w", encoding="utf-8", newline="") as file:
        csv.writer(file).writerows(
            [("ctx", *bots)] + [(c, *[json.dumps({"v": v}) for cc, _, v in rows if cc == c])
                                for c in ctx]
        )  # fmt: skip
    long = {"id": ["ctx", "bot"], "responder": "bot", "dimension": "v",
            "raters": {"p": "long.csv"}, "judges": {"j": "long.csv"}}  # fmt: skip
    wide = {"id": "ctx", "responders": bots, "dimension": "v",
            "raters": {"p": {"file": "wide.csv", "read": "json", "attribute": "v"}},
            "judges": {"j": {"file": "wide.csv", "read": "json", "attribute": "v"}}}  # fmt: skip
    for mapping in (long, wide):
        try:
            table = read_rated(folder, mapping)
        except DatasetError as ex:  # two keys that join to one id: refused, never merged
            assert "both read as" in str(ex)
            continue
        frame = published_responders(SimpleNamespace(table=table))
        assert sorted(frame["responder"].unique()) == sorted(bots)
        assert frame["context"].nunique() == len(ctx)
        result = responder_table(frame, ["j"], resamples=20).iloc[0]
        assert result["responders"] == len(bots) and result["contexts"] == len(ctx)
        assert result["ranking_spearman"] == pytest.approx(1.0)


# --------------------------------------------------------------------------- missing values


def _people(folder: Path, cells: str) -> dict:
    (folder / "dialogs.csv").write_text("id,context,response\n1,hi,hello\n2,sad,sorry\n"
                                        "3,tired,rest\n", encoding="utf-8")  # fmt: skip
    (folder / "a.csv").write_text("id,v\n1,4\n2,3\n3,5\n", encoding="utf-8")
    (folder / "b.csv").write_text("id,v\n" + cells, encoding="utf-8")
    return {"id": "id", "dimension": "v", "scale": [1, 5],
            "dialogs": {"file": "dialogs.csv"}, "raters": {"a": "a.csv", "b": "b.csv"}}  # fmt: skip


def test_values_that_mean_not_rated_are_missing_and_counted(tmp_path: Path) -> None:
    mapping = _people(tmp_path, "1,0\n2,NA\n3,4\n") | {"missing_values": [0, "NA"]}
    table = read_rated(tmp_path, mapping)
    assert table.raters["b"] == {"3": 4.0} and not table.rater_bad
    assert "b (b.csv): 3 of 3 rows joined; 2 cell(s) marked missing (missing_values)" in (
        table.notes())  # fmt: skip


def test_an_out_of_scale_rating_is_named_by_file_row_and_column(tmp_path: Path) -> None:
    mapping = _people(tmp_path, "1,0\n2,6\n3,4\n")
    with pytest.raises(DatasetError) as caught:
        list(load_dialogs(_spec(tmp_path, mapping)))
    text = str(caught.value)
    assert "b.csv: row 2, column v" in text and "b.csv: row 3, column v" in text
    assert "outside the scale 1-5" in text


def _spec(folder: Path, mapping: dict) -> Path:
    import yaml

    spec = folder / "spec.yaml"
    spec.write_text(yaml.safe_dump({"format": "raters", "path": ".", **mapping}),
                    encoding="utf-8")  # fmt: skip
    return spec


def test_without_attribute_the_dimension_names_it_so_one_spec_serves_each(multi: Path) -> None:
    parsed = read_spec(multi)
    mapping = dict(parsed.mapping) | {"dimension": "fluency"}
    for group in ("raters", "judges"):
        mapping[group] = {name: {k: v for k, v in entry.items() if k != "attribute"}
                          for name, entry in mapping[group].items()}  # fmt: skip
    table = read_rated(parsed.source, mapping)
    assert set(table.raters["rater1"].values()) == {5.0}
    assert set(table.judges["claude"].values()) == {4.0}


def test_own_replies_in_one_row_per_response(tmp_path: Path) -> None:
    rows = "ctx,bot,v\nc1,gpt/4o,4\nc1,other,2\nc2,gpt/4o,5\nc2,other,3\n"
    (tmp_path / "r.csv").write_text(rows, encoding="utf-8")
    mapping = {"id": ["ctx", "bot"], "responder": "bot", "dimension": "v",
               "raters": {"p": "r.csv"}, "judges": {"gpt": "r.csv"},
               "own_replies": {"gpt": "gpt/4o"}}  # fmt: skip
    table = read_rated(tmp_path, mapping)
    assert table.judges["gpt"] == {"c1/other": 2.0, "c2/other": 3.0}
    assert table.own_left_out == {"gpt": 2}
    with pytest.raises(DatasetError, match="give responder .* or responders"):
        read_rated(tmp_path, mapping | {"responders": ["a"]})


def test_cells_as_judges_and_exports_write_them(tmp_path: Path) -> None:
    """A stringified Python dict, a nested attribute, and an answer whose JSON follows other
    braces are read; a cell with no such object is a bad cell naming what it holds."""
    rows = [
        ["ctx", "a", "b"],
        ["c1", "{'empathy': 4, 'note': 'kind'}", '{"scores": {"empathy": 2}}'],
        ["c2", 'I use {braces} here. {"empathy": 5, "why": "warm"} done',
         '{"scores": {"empathy": 3}}'],
        ["c3", "{'empathy': }", '{"scores": {}}'],
    ]  # fmt: skip
    with (tmp_path / "j.csv").open("w", encoding="utf-8", newline="") as file:
        csv.writer(file).writerows(rows)
    mapping = {"id": "ctx", "responders": ["a", "b"], "scale": [1, 5], "judges": {
        "ja": {"file": "j.csv", "read": "text", "attribute": "empathy", "responders": ["a"]},
        "jb": {"file": "j.csv", "read": "json", "attribute": "scores.empathy",
               "responders": ["b"]},
    }}  # fmt: skip
    table = read_rated(tmp_path, mapping)
    assert table.judges["ja"] == {"c1/a": 4.0, "c2/a": 5.0}
    assert table.judges["jb"] == {"c1/b": 2.0, "c2/b": 3.0}
    assert "c3/a" in table.judge_bad["ja"] and "c3/b" in table.judge_bad["jb"]
    assert "no attribute 'scores.empathy'" in str(table.judge_bad["jb"]["c3/b"])


def test_a_semicolon_separated_export_is_read(tmp_path: Path) -> None:
    """A header with no comma and a semicolon: the semicolon separates (a comma in a cell
    is then text)."""
    (tmp_path / "p.csv").write_text("\ufeffctx;bot one;b\nc,1;4;2\nc2;5;1\n", encoding="utf-8")
    table = read_rated(tmp_path, {"id": "ctx", "responders": ["bot one", "b"],
                                  "raters": {"p": "p.csv"}})  # fmt: skip
    assert table.raters["p"] == {"c,1/bot one": 4.0, "c,1/b": 2.0, "c2/bot one": 5.0,
                                 "c2/b": 1.0}  # fmt: skip


def test_a_bare_responder_pattern_never_takes_the_id_column(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text("ctx,a,b\nc1,4,2\n", encoding="utf-8")
    table = read_rated(tmp_path, {"id": "ctx", "responders": "{responder}",
                                  "raters": {"p": "p.csv"}})  # fmt: skip
    assert table.raters["p"] == {"c1/a": 4.0, "c1/b": 2.0}


def test_an_empty_reply_cell_is_no_response_counted(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("ctx,prompt,a reply,b reply\nc1,hi,hello,\nc2,sad,sorry,"
                                    "there there\n", encoding="utf-8")  # fmt: skip
    (tmp_path / "p.csv").write_text("ctx,a,b\nc1,4,\nc2,5,3\n", encoding="utf-8")
    mapping = {"id": "ctx", "responders": ["a", "b"], "raters": {"p": "p.csv"},
               "dialogs": {"file": "d.csv", "context": "prompt",
                           "response": "{responder} reply"}}  # fmt: skip
    spec = _spec(tmp_path, mapping)
    dataset = load_dialogs(spec)
    assert [s.id for s in dataset] == ["c1/a", "c2/a", "c2/b"]
    excluded = dataset.load_report.summary()["excluded"]
    assert excluded == {"empty reply cells (that responder has no reply in that context)": 1}


def test_file_level_responders_alone_are_read(tmp_path: Path) -> None:
    """Every file naming its own responder columns is enough: no spec-level responders:."""
    (tmp_path / "people.csv").write_text("ctx,a,b\nc1,4,2\nc2,5,1\n", encoding="utf-8")
    (tmp_path / "judge.csv").write_text("ctx,bot A,bot B\nc1,3,3\nc2,4,2\n", encoding="utf-8")
    table = read_rated(tmp_path, {"id": "ctx", "scale": [1, 5],
        "raters": {"p": {"file": "people.csv", "responders": ["a", "b"]}},
        "judges": {"j": {"file": "judge.csv", "responders": {"a": "bot A", "b": "bot B"}}},
    })  # fmt: skip
    assert table.raters["p"] == {"c1/a": 4.0, "c1/b": 2.0, "c2/a": 5.0, "c2/b": 1.0}
    assert table.judges["j"] == {"c1/a": 3.0, "c1/b": 3.0, "c2/a": 4.0, "c2/b": 2.0}
    with pytest.raises(DatasetError, match=r"raters.p do\(es\) not: give the spec a top-level "
                       r"responders: .* or a responders: in every file's entry"):  # fmt: skip
        read_rated(tmp_path, {"id": "ctx", "dimension": "a", "raters": {"p": "people.csv"},
                              "judges": {"j": {"file": "judge.csv",
                                               "responders": {"a": "bot A", "b": "bot B"}}}})
