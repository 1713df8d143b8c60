"""However logs are named (a folder, files, a glob, ``file://`` addresses, an eval-set folder,
``.json`` logs), they are found as the same paths and read by the same reader: the plain-JSON
one (`_logged.fast_samples`), never Inspect's slower fallbacks."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from fixture_logs import JUDGES_JSONL, LENGTH, LEXICON, judge

from inspect_empathy.compare import _logged, load_scores
from inspect_empathy.compare.logs import find_logs, local_path


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("named logs")  # a space: Inspect does not encode it
    judge(root, JUDGES_JSONL, LEXICON)
    judge(root, JUDGES_JSONL, LENGTH)
    return root


@pytest.fixture
def readers(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many logs each reader was asked to read."""
    used: Counter[str] = Counter()

    def counting(name: str, reader):  # noqa: ANN001, ANN202
        def read(path: str):  # noqa: ANN202
            used[name] += 1
            return reader(path)

        return read

    readers = tuple((name, counting(name, reader)) for name, reader in _logged.READERS)
    monkeypatch.setattr("inspect_empathy.compare.logs.READERS", readers)
    return used


def namings(folder: Path) -> dict[str, list[str]]:
    files = sorted(str(p) for p in folder.glob("*.eval"))
    return {
        "folder": [str(folder)],
        "files": files,
        "glob": [str(folder / "*.eval")],
        "file://": [f"file://{p}" for p in files],
        "file:// encoded": [f"file://{p.replace(' ', '%20')}" for p in files],
        "relative": [os.path.relpath(p) for p in files],
    }


def test_every_naming_finds_the_same_plain_paths(folder: Path) -> None:
    found = {kind: find_logs(sources) for kind, sources in namings(folder).items()}
    expected = sorted(str(p.resolve()) for p in folder.glob("*.eval"))
    assert len(expected) == 2
    for kind, paths in found.items():
        assert sorted(paths) == expected, kind
        assert not any(p.startswith("file:") for p in paths), kind


def test_a_folder_is_read_by_the_same_reader_as_its_files(
    folder: Path, readers: Counter[str]
) -> None:
    scores = {}
    for kind, sources in namings(folder).items():
        readers.clear()
        scores[kind] = load_scores(sources).samples.set_index(["judge", "id"])["score"]
        assert readers == Counter({_logged.FAST: 2}), kind  # one plain-JSON read per log
    for kind, series in scores.items():
        pd.testing.assert_series_equal(series, scores["files"], obj=kind)


def test_eval_set_folders_and_json_logs_take_the_plain_json_reader(
    folder: Path, tmp_path: Path, readers: Counter[str]
) -> None:
    from inspect_ai import eval

    from inspect_empathy.tasks import empathy

    eval(
        empathy(dataset=str(JUDGES_JSONL)), model=LEXICON, log_dir=str(tmp_path / "json"),
        log_format="json", display="none",
    )  # fmt: skip
    nested = tmp_path / "eval-set" / "retry-1"
    nested.mkdir(parents=True)
    for path in folder.glob("*.eval"):
        shutil.copy(path, nested / path.name)
    readers.clear()
    loaded = load_scores([tmp_path / "json"])
    assert readers == Counter({_logged.FAST: 1}) and len(loaded.samples) == 30
    readers.clear()
    loaded = load_scores([tmp_path / "eval-set"])
    assert readers == Counter({_logged.FAST: 2}) and loaded.samples["judge"].nunique() == 2


def test_a_log_the_json_reader_cannot_read_falls_back_to_inspect(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = load_scores([folder]).samples.set_index(["judge", "id"])
    used: Counter[str] = Counter()

    def unreadable(path: str):  # noqa: ANN202
        used["refused"] += 1
        raise ValueError("not this layout")

    def inspect(path: str):  # noqa: ANN202
        used[_logged.INSPECT] += 1
        return _logged.inspect_samples(path)

    monkeypatch.setattr(
        "inspect_empathy.compare.logs.READERS",
        ((_logged.FAST, unreadable), (_logged.INSPECT, inspect)),
    )
    slow = load_scores([folder]).samples.set_index(["judge", "id"])
    assert used == Counter({"refused": 2, _logged.INSPECT: 2})
    columns = ["score", "human", "dialog", "reply", "calls", "input_tokens", "reply_words"]
    pd.testing.assert_frame_equal(slow[columns], fast[columns])


def test_addresses_that_are_not_local_files_are_refused() -> None:
    from inspect_empathy.compare import CompareError

    with pytest.raises(CompareError, match="not a local file:// address"):
        local_path("file://otherhost/logs/a.eval")
    with pytest.raises(CompareError, match="matches no log file or folder"):
        find_logs(["/nonexistent-folder-xyz/*.eval"])
    with pytest.raises(CompareError, match="no such log file or folder"):
        find_logs(["file:///nonexistent-folder-xyz/a.eval"])
