"""How compare reads an ``.eval`` log (issue 51): each sample parsed for what the comparison
reads, members read at their offsets, the header without the reductions, a record made whole
only when its sample has another. Each gives what the plain reading gave: the same samples,
rows, header and errors, on a real judge-mode log with its events."""

from __future__ import annotations

import io
import json
import math
import shutil
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
from fixture_logs import JUDGES_JSONL, judge, records, reply
from synthetic_logs import samples, write_log

from inspect_empathy._util.usage import model_calls
from inspect_empathy.compare import _logged, checks, compare_logs, logs
from inspect_empathy.compare.checks import LogProblem


@pytest.fixture(scope="module")
def real_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A judge-mode log of the 30 comparison dialogs by a judge that refuses some (unscored)
    and fails on others (errored samples): every sample with its events."""
    rows = records(JUDGES_JSONL)
    log = judge(
        tmp_path_factory.mktemp("reading"), JUDGES_JSONL, "cmpfix/picky",
        refuse=[reply(r) for r in rows[::7]], fail=[reply(r) for r in rows[2::11]],
    )  # fmt: skip
    return Path(str(log.location))


def _members(path: Path) -> list[zipfile.ZipInfo]:
    with zipfile.ZipFile(path) as archive:
        return [i for i in archive.infolist() if i.filename.startswith("samples/")]


def _shown(sample: _logged.LoggedSample) -> list[Any]:
    """A sample as compare reads it, NaN comparable (its events: the calls they hold)."""
    return [
        sample.id, sample.epoch, repr(sample.input), repr(sample.metadata), repr(sample.scores),
        repr(sample.model_usage), sample.error, sample.invalidated, model_calls(sample.events),
    ]  # fmt: skip


def _plain(path: Path) -> list[_logged.LoggedSample]:
    """Each sample record as the plain reading read it: the member whole, through ``json``."""
    with zipfile.ZipFile(path) as archive:
        return [_logged.from_json(json.loads(archive.read(i))) for i in _members(path)]


def test_each_sample_reads_as_its_whole_json(real_log: Path) -> None:
    plain = _plain(real_log)
    read = list(_logged.fast_samples(str(real_log)))
    assert len(read) == len(plain) == 30
    assert [_shown(s) for s in read] == [_shown(s) for s in plain]
    assert any(s.error for s in read) and any(s.events for s in read)
    assert all(s.once for s in read)  # no member name given twice


def test_the_rows_are_those_of_the_whole_json(
    real_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _logged.read_header(str(real_log))
    rows = logs.read_rows(str(real_log), log)
    monkeypatch.setattr(_logged, "parse_sample", json.loads)
    monkeypatch.setattr(_logged, "_zstd_member", lambda *args: None)  # zipfile reads all
    monkeypatch.setattr(logs, "_dialogs", {})
    plain = logs.read_rows(str(real_log), log)
    assert list(rows) == list(plain)
    for column in rows:
        assert repr(rows[column]) == repr(plain[column]), column
    assert {"calls", "input_tokens"} <= set(rows) and rows["calls"][0] == 1


@pytest.mark.parametrize(
    "text",
    [
        b'{"id": "a\\ud800", "epoch": 1, "input": "x"}',  # a lone surrogate: json reads it
        b'{"id": "a", "epoch": 1, "input": "x", "events": [1, {"event": "model"}]}',
        b'{"id": "a", "epoch": 1, "input": "x", "events": null}',
        b'\xef\xbb\xbf{"id": "a", "epoch": 1, "input": "x"}',  # a byte-order mark
        b'{"id": "a", "epoch": 1, "input": "x", "scores": {"s": {"value": NaN}}}',
        b'{"id": "a", "id": "b", "epoch": 1, "input": "x"}',  # the last key wins
    ],
)
def test_what_the_slim_parse_refuses_is_read_as_json_reads_it(text: bytes) -> None:
    got, expected = _logged.parse_sample(text), json.loads(text)
    assert repr(_shown(_logged.from_json(got))) == repr(_shown(_logged.from_json(expected)))


def test_bad_json_raises_what_json_raises() -> None:
    text = b'{"id": "a", "epoch": 1, "input": [1, 2,}'
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as got:
        _logged.parse_sample(text)
    assert str(got.value) == str(expected.value)


def _data_offset(path: Path, member: zipfile.ZipInfo) -> int:
    with open(path, "rb") as file:
        file.seek(member.header_offset)
        name, extra = struct.unpack("<HH", file.read(30)[26:30])
    return member.header_offset + 30 + name + extra


def test_members_read_at_their_offsets_are_zipfiles(real_log: Path, tmp_path: Path) -> None:
    """Every member as ``archive.read`` gives it; a stored member through ``zipfile``; a
    damaged one raises what ``zipfile`` raises."""
    members = _members(real_log)
    with zipfile.ZipFile(real_log) as archive:
        expected = [archive.read(m) for m in members]
    assert list(_logged._members(str(real_log), members)) == expected
    stored = tmp_path / "stored.eval"
    with zipfile.ZipFile(real_log) as source, zipfile.ZipFile(stored, "w") as copy:
        for info in source.infolist():
            copy.writestr(info.filename, source.read(info), compress_type=zipfile.ZIP_STORED)
    assert list(_logged._members(str(stored), _members(stored))) == expected
    damaged = tmp_path / "damaged.eval"
    shutil.copy(real_log, damaged)
    member = members[3]
    data = bytearray(damaged.read_bytes())
    data[_data_offset(damaged, member) + member.compress_size // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    with zipfile.ZipFile(damaged) as archive, pytest.raises(Exception) as plain:
        archive.read(member)
    with pytest.raises(Exception) as direct:
        list(_logged._members(str(damaged), [member]))
    assert (type(direct.value), str(direct.value)) == (type(plain.value), str(plain.value))


def test_the_header_is_inspects_header(real_log: Path, tmp_path: Path) -> None:
    """The header read alone is Inspect's header-only read but the reductions; a log without
    ``header.json`` (a run that did not finish) is read by Inspect."""
    from inspect_ai.log import read_eval_log

    inspect = read_eval_log(str(real_log), header_only=True)
    alone = _logged.read_header(str(real_log))
    assert inspect.reductions and alone.reductions is None
    assert alone.location == str(real_log)
    assert alone.model_dump(exclude={"reductions"}) == inspect.model_dump(exclude={"reductions"})
    unfinished = tmp_path / "unfinished.eval"
    with zipfile.ZipFile(real_log) as source, zipfile.ZipFile(unfinished, "w") as copy:
        for info in source.infolist():
            if info.filename != "header.json":
                copy.writestr(info, source.read(info))
    expected = read_eval_log(str(unfinished), header_only=True)
    assert _logged.read_header(str(unfinished)).model_dump() == expected.model_dump()


def _copy_member(log: Path, sample_id: str, name: str, value: float | None = None) -> None:
    """A record of ``sample_id`` (epoch 1) added under another member name ``name``: the
    same, or with the score ``value``."""
    with zipfile.ZipFile(log) as archive:
        data = json.loads(archive.read(f"samples/{sample_id}_epoch_1.json"))
    if value is not None:
        data["scores"]["empathy_scorer"]["value"] = value
    with zipfile.ZipFile(log, "a") as archive:
        archive.writestr(f"samples/{name}_epoch_1.json", json.dumps(data))


def test_a_sample_recorded_under_a_second_name_counts_once(tmp_path: Path) -> None:
    """Each member name is given once, so the reader says each record is its sample's only
    one; the second record of d2 under another name makes every record whole: the same
    record counts once, as a copy."""
    log = write_log(tmp_path / "a.eval", "judge/a", samples((4.8, 1.2, 3.9, 2.2, 3.1, 4.5)))
    _copy_member(log, "d2", "d2-copy")
    assert all(s.once for s in _logged.fast_samples(str(log)))
    rows = logs.read_rows(str(log), _logged.read_header(str(log)))
    assert rows.count == 6 and sorted(rows["id"]) == ["d1", "d2", "d3", "d4", "d5", "d6"]
    assert "1 sample(s) recorded more than once with the same answer and score" in rows.repeats
    comparison = compare_logs(log, resamples=0)
    assert (comparison.logs["samples"] == 6).all()


def test_a_differing_record_under_a_second_name_is_refused(tmp_path: Path) -> None:
    log = write_log(tmp_path / "b.eval", "judge/b", samples((3.0, 1.0, 4.0, 3.0, 3.0, 4.0)))
    _copy_member(log, "d2", "d2-edited", 5.0)
    with pytest.raises(LogProblem, match=r"sample id 'd2' appears 2 times in epoch 1 "
                                         r"with different scores \(1, 5\)"):  # fmt: skip
        logs.read_rows(str(log), _logged.read_header(str(log)))


def test_records_are_made_whole_for_repeated_samples_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A re-run's two records under one member name are made whole (the later one read);
    the samples recorded once are not."""
    log = write_log(tmp_path / "c.eval", "judge/c", samples((3.0, 1.0, 4.0, 3.0, 3.0, 4.0)))
    with zipfile.ZipFile(log) as archive:
        data = json.loads(archive.read("samples/d3_epoch_1.json"))
    attempt = dict(data, error={"message": "HTTP 500", "traceback": "", "traceback_ansi": ""})
    original = log.read_bytes()
    with (
        zipfile.ZipFile(log, "w") as archive,
        zipfile.ZipFile(io.BytesIO(original)) as source,
        pytest.warns(UserWarning, match="Duplicate name"),
    ):  # the errored attempt first, then the record that replaced it
        for info in source.infolist():
            if info.filename == "samples/d3_epoch_1.json":
                archive.writestr(info.filename, json.dumps(attempt))
            archive.writestr(info, source.read(info))
    made: list[str] = []

    def whole(sample: _logged.LoggedSample) -> checks.Record:
        made.append(sample.id)
        return checks.record(sample)

    monkeypatch.setattr(logs, "record", whole)
    rows = logs.read_rows(str(log), _logged.read_header(str(log)))
    assert made == ["d3", "d3"]
    assert rows.count == 6 and "re-run after an attempt that did not finish" in rows.repeats
    d3 = rows["id"].index("d3")
    assert rows["score"][d3] == 4.0 and not rows["errored"][d3]
    assert not any(math.isnan(v) for v in rows["score"])
