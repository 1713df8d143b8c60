"""load_dialogs: sources, the dataset it returns, the task's dataset options and the CLI."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.dataset import MemoryDataset

from inspect_empathy import DatasetError, empathy, load_dialogs
from inspect_empathy.dataset._dataset import DialogDataset, bundled_path, skipped_summary

FIXTURES = Path(__file__).parents[1] / "fixtures" / "loaders"
INVALID = FIXTURES / "invalid"


def test_bundled_default() -> None:
    dataset = load_dialogs("default")
    assert isinstance(dataset, DialogDataset)
    assert len(dataset) >= 100
    assert dataset.location == str(bundled_path("default"))
    assert skipped_summary(dataset)["format"] == "jsonl"  # type: ignore[index]


def test_unknown_source_names_the_bundled_sets() -> None:
    with pytest.raises(DatasetError, match="no such file \\(bundled datasets: default\\)"):
        load_dialogs("defualt")


def test_samples_are_built_on_first_access_and_kept() -> None:
    dataset = load_dialogs(FIXTURES / "dialogs.jsonl")
    assert dataset._samples == [None] * 4
    first = dataset[0]
    assert dataset[0] is first
    assert dataset._samples[1] is None
    assert dataset[-1].id == "j4"
    with pytest.raises(IndexError):
        dataset[4]


def test_slice_filter_and_sort_behave_like_a_memory_dataset() -> None:
    dataset = load_dialogs(FIXTURES / "dialogs.jsonl")
    memory = MemoryDataset(list(load_dialogs(FIXTURES / "dialogs.jsonl")))
    assert [s.id for s in dataset[1:3]] == [s.id for s in memory[1:3]] == ["j2", "j3"]
    rated = dataset.filter(lambda s: s.metadata["human_rating"] is not None, name="rated")
    assert [s.id for s in rated] == ["j1", "j2", "j3"]
    assert rated.name == "rated"
    dataset.sort(key=lambda s: s.metadata["transcript"])
    memory.sort(key=lambda s: s.metadata["transcript"])
    assert [s.id for s in dataset] == [s.id for s in memory]


def test_shuffle_with_a_seed_matches_memory_dataset() -> None:
    ours = load_dialogs(FIXTURES / "support_chats.yaml", shuffle=True, seed=7)
    memory = MemoryDataset(list(load_dialogs(FIXTURES / "support_chats.yaml")))
    memory.shuffle(seed=7)
    assert ours.shuffled
    assert [s.id for s in ours] == [s.id for s in memory]
    assert [r.id for r in ours.records] == [s.id for s in ours]


def test_max_turns_from_the_loader() -> None:
    dataset = load_dialogs(FIXTURES / "support_chats.yaml", max_turns=2)
    first = dataset[0]
    assert first.input[0].text == "[2 earlier turns left out]"
    assert first.metadata["turns_left_out"] == 2
    assert "turns_left_out" not in dataset[1].metadata  # two turns: nothing left out


@pytest.mark.parametrize("bad", [-1, "two", 1.5, True])
def test_max_turns_must_be_a_positive_whole_number(bad) -> None:
    with pytest.raises(DatasetError, match="max_turns must be a whole number"):
        load_dialogs(FIXTURES / "dialogs.jsonl", max_turns=bad)


def test_cut_reply_for_response_mode() -> None:
    sample = load_dialogs(FIXTURES / "dialogs.jsonl", cut_reply=True)[0]
    assert [m.role for m in sample.input] == ["user"]
    assert sample.metadata["reference_rating"] == 4.0


def test_load_dialogs_returns_records() -> None:
    records = load_dialogs(FIXTURES / "dialogs.jsonl").records
    assert [r.id for r in records] == ["j1", "j2", "j3", "j4"]
    with pytest.raises(DatasetError, match="bad JSON"):
        load_dialogs(INVALID / "bad_json.jsonl")


def test_skipped_summary_is_none_for_other_datasets() -> None:
    assert skipped_summary(MemoryDataset([])) is None


def test_empathy_task_passes_dataset_options_through(tmp_path: Path) -> None:
    source = tmp_path / "pairs.data"  # a name that does not tell the format
    source.write_bytes((FIXTURES / "pairs.tsv").read_bytes())
    task = empathy(dataset=str(source), format="tsv", max_turns=3, on_invalid="fail")
    assert [s.id for s in task.dataset] == ["t1", "t2"]
    assert task.dataset[1].metadata["turns_left_out"] == 1
    assert task.metadata["dataset"]["format"] == "tsv"  # type: ignore[index]


def test_skipped_records_are_counted_in_the_eval_log(tmp_path: Path) -> None:
    task = empathy(dataset=str(INVALID / "missing_field.jsonl"), on_invalid="skip")
    [log] = eval(task, model="empathy_baseline/lexicon", log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    assert log.eval.metadata is not None
    summary = log.eval.metadata["dataset"]
    assert summary["loaded"] == 1
    assert summary["skipped"] == {"missing field": 3}
    assert log.eval.dataset.samples == 1


def test_invalid_dataset_fails_before_any_model_call(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="missing field 'id'"):
        empathy(dataset=str(INVALID / "missing_field.jsonl"))


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    inspect = Path(sys.executable).with_name("inspect")
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [str(inspect), "eval", "inspect_empathy/empathy", "--model", "empathy_baseline/lexicon",
         "--log-dir", str(cwd / "logs"), *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=300,
    )  # fmt: skip


@pytest.mark.slow
def test_cli_prints_dataset_errors_plainly_and_exits_non_zero(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "a", "turns": []}) + "\n" + "{not json\n", encoding="utf-8")
    result = run_cli("-T", "dataset=bad.jsonl", cwd=tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "Traceback" not in output
    assert "bad.jsonl: 2 invalid record(s)" in output
    assert "bad.jsonl:1: empty dialog" in output
    assert "bad.jsonl:2: bad JSON" in output
    assert not (tmp_path / "logs").exists() or not list((tmp_path / "logs").iterdir())


def test_spec_file_by_task_argument(tmp_path: Path) -> None:
    spec = tmp_path / "chats.yaml"
    spec.write_text(
        f"path: {FIXTURES / 'support_chats.csv'}\nallow_outside: true\nformat: csv\nid: chat_id\n"
        "transcript: conversation\nrating: score\nscale: [1, 3]\n",
        encoding="utf-8",
    )
    # task arguments as the command line passes them (-T dataset=... -T max_turns=2)
    [log] = eval(
        "inspect_empathy/empathy", task_args={"dataset": str(spec), "max_turns": "2"},
        model="empathy_baseline/lexicon", log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    assert log.status == "success", log.error
    assert log.results is not None
    from inspect_empathy._util.summary import summary_lines

    assert f"{len(log.samples or [])} with human ratings" in summary_lines(log)[0]
    # max_turns=2 reached the loader as the command line's string
    left_out = {s.id: s.metadata.get("turns_left_out") for s in log.samples or []}
    assert left_out == {"c-001": 2, "c-002": None, "c-003": None}


def test_spec_options_apply_when_the_task_leaves_them_unset(tmp_path: Path) -> None:
    spec = tmp_path / "lenient.yaml"
    spec.write_text(
        f"path: {INVALID / 'missing_field.jsonl'}\nallow_outside: true\n"
        "on_invalid: skip\nmax_turns: 1\n",
        encoding="utf-8",
    )
    task = empathy(dataset=str(spec))
    assert [s.id for s in task.dataset] == ["ok1"]
    assert task.dataset[0].metadata["turns_left_out"] == 1
    assert task.metadata["dataset"]["skipped_total"] == 3  # type: ignore[index]
    with pytest.raises(DatasetError, match="3 invalid record"):
        empathy(dataset=str(spec), on_invalid="fail")


def test_default_sort_key_is_inspects_input_length() -> None:
    """Our `input_length` measures as Inspect's own (private) ``sample_input_len``: this fails
    loudly if Inspect changes how its datasets sort by default."""
    from inspect_ai.dataset import Sample
    from inspect_ai.dataset._dataset import sample_input_len

    from inspect_empathy.dataset._dataset import input_length

    dataset = load_dialogs(FIXTURES / "support_chats.yaml")
    samples = [*dataset, Sample(input="a prompt"), *dataset.as_prompts()]
    assert [input_length(s) for s in samples] == [sample_input_len(s) for s in samples]
    lengths = [input_length(s) for s in dataset]
    dataset.sort()
    assert [input_length(s) for s in dataset] == sorted(lengths)


def test_iterating_builds_every_sample_once_and_restores_the_collector() -> None:
    import gc

    from inspect_empathy.dataset import _dataset as dataset_module

    dataset = load_dialogs(FIXTURES / "support_chats.yaml")
    first = dataset[1]
    assert dataset._samples.count(None) == len(dataset) - 1  # one read, one built
    old, dataset_module.BUILD_CHUNK = dataset_module.BUILD_CHUNK, 2
    try:
        assert gc.isenabled()
        samples = list(dataset)
        assert gc.isenabled() and samples[1] is first and None not in dataset._samples
        assert [s.id for s in samples] == [r.id for r in dataset.records]
    finally:
        dataset_module.BUILD_CHUNK = old


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("format: jsonl\nbogus: 1\n", "format 'jsonl' does not take bogus"),
        ("format: jsonl\non_invalid: maybe\n", "on_invalid must be 'fail' or 'skip'"),
        ("format: jsonl\nmax_turns: -1\n", "max_turns must be a whole number"),
    ],
)
def test_an_option_error_names_the_spec_file_that_set_it(
    tmp_path: Path, spec: str, message: str
) -> None:
    data = tmp_path / "dialogs.jsonl"
    data.write_text(bundled_path("default").read_text(encoding="utf-8"), encoding="utf-8")
    path = tmp_path / "support.yaml"
    path.write_text(f"path: dialogs.jsonl\n{spec}", encoding="utf-8")
    with pytest.raises(DatasetError) as raised:
        load_dialogs(path)
    assert str(raised.value).startswith(f"{path}: ") and message in str(raised.value)


def test_an_option_error_names_the_data_file(tmp_path: Path) -> None:
    data = tmp_path / "dialogs.jsonl"
    data.write_text(bundled_path("default").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(DatasetError, match=f"^{data}: format 'jsonl' does not take bogus"):
        load_dialogs(data, bogus=1)
