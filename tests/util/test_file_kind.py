"""Every file option refuses a non-regular file at once, saying what it is (one helper,
`_util.file_kind.file_problem`): a FIFO would make a reader wait for ever, a device never end."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inspect_empathy._util.file_kind import file_problem, kind_of

KINDS = {
    "fifo": "is a FIFO (named pipe), not a regular file",
    "folder": "is a folder",
    "device": "is a character device, not a regular file",
}


def make(kind: str, folder: Path, name: str) -> Path:
    if kind == "device":
        if not Path("/dev/null").exists():
            pytest.skip("no /dev/null")
        return Path("/dev/null")
    path = folder / name
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    return path


def finishes(call: Callable[[], Any], seconds: float = 20) -> BaseException:
    """The exception ``call`` raises, asserting it returns at all (a hang guard, not a
    timing: a FIFO opened for reading blocks until a writer comes)."""
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as ex:  # noqa: BLE001 - handed back to the test
            outcome.append(ex)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"still running after {seconds} s (hang), or no error"
    return outcome[0]


def _dataset(path: Path, folder: Path) -> None:
    from inspect_empathy.dataset._dataset import load_dialogs

    load_dialogs(str(path))


def _spec(path: Path, folder: Path) -> None:
    from inspect_empathy.dataset._dataset import load_dialogs

    spec = folder / "spec.yaml"
    spec.write_text(f"path: {path}\nformat: jsonl\nallow_outside: true\n", "utf-8")
    load_dialogs(str(spec))


def _rubric(path: Path, folder: Path) -> None:
    from inspect_empathy.judge._rubric import load_rubric

    load_rubric(str(path))


def _calibration(path: Path, folder: Path) -> None:
    from inspect_empathy.stats.calibration import load

    load(path)


def _prices(path: Path, folder: Path) -> None:
    from inspect_empathy.compare.prices import load_prices

    load_prices(path)


def _ratings(path: Path, folder: Path) -> None:
    from inspect_empathy.compare.ppi import read_ratings

    read_ratings(path)


def _rater_file(path: Path, folder: Path) -> None:
    from inspect_empathy.dataset._dataset import load_dialogs

    (folder / "d.csv").write_text("id,context,response\na,I feel low,That sounds hard\n", "utf-8")
    (folder / "r.csv").write_text("id,level\na,1\n", "utf-8")
    spec = folder / "raters.yaml"
    spec.write_text(
        "format: raters\npath: .\nid: [id]\ndimension: level\nscale: [0, 2]\n"
        "dialogs: {file: d.csv, context: context, response: response}\n"
        f"raters: {{one: r.csv, two: {path.name}}}\n",
        "utf-8",
    )
    load_dialogs(str(spec))


def _system_prompt(path: Path, folder: Path) -> None:
    from inspect_empathy.solver import reply_system_prompt

    reply_system_prompt(str(path))  # it was taken as the prompt's text, the path itself


OPTIONS = {
    "dataset": _dataset, "spec": _spec, "rubric": _rubric, "calibration": _calibration,
    "prices": _prices, "ratings": _ratings, "rater file": _rater_file,
    "system prompt": _system_prompt,
}  # fmt: skip


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("option", list(OPTIONS))
def test_every_file_option_refuses_a_non_regular_file_at_once(
    tmp_path: Path, option: str, kind: str
) -> None:
    if option == "rater file" and kind == "device":
        pytest.skip("/dev/null lies outside the spec's folder: refused as outside it")
    path = make(kind, tmp_path, "x.json")
    raised = finishes(lambda: OPTIONS[option](path, tmp_path))
    assert isinstance(raised, ValueError), repr(raised)
    assert KINDS[kind] in str(raised), str(raised)
    assert str(path) in str(raised) or path.name in str(raised)


def test_what_a_path_is() -> None:
    assert file_problem(__file__)[1] == ""
    assert file_problem("/no/such/file.json") == (None, "no such file")
    assert kind_of(os.stat(Path(__file__).parents[1]).st_mode) == "a folder"


@pytest.mark.parametrize("kind", ["fifo", "device"])
@pytest.mark.parametrize("command", ["compare", "calibrate"])
def test_a_log_that_is_not_a_file_is_named_for_what_it_is(
    tmp_path: Path, kind: str, command: str
) -> None:
    """A folder is a log source (its logs are read); a FIFO or a device was "no such log
    file or folder"."""
    from inspect_empathy.compare import compare_logs
    from inspect_empathy.compare.fit import calibrate_logs

    path = make(kind, tmp_path, "run.eval")
    call = compare_logs if command == "compare" else calibrate_logs
    raised = finishes(lambda: call([str(path)]))
    assert isinstance(raised, ValueError), repr(raised)
    assert f"{path}: {KINDS[kind]}" in str(raised)
