"""The command line's two subcommands share their arguments' definitions."""

from __future__ import annotations

import argparse

import pytest

from inspect_empathy.cli import COMMANDS, _parser, main
from inspect_empathy.compare.comparison import CALIBRATION_METHODS


def subcommands() -> dict[str, argparse.ArgumentParser]:
    [action] = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_every_subcommand_takes_logs_and_has_a_handler() -> None:
    parsers = subcommands()
    assert set(parsers) == set(COMMANDS)
    assert {"compare", "calibrate", "reproduce"} <= set(parsers)
    for name, parser in parsers.items():
        if name not in ("compare", "calibrate"):  # reproduce takes spec files, not logs
            continue
        [logs] = [a for a in parser._actions if a.dest == "logs"]
        # compare: LOGS may be left out when --published names specs (checked in the handler)
        assert (logs.nargs, logs.metavar) == ("*" if name == "compare" else "+", "LOGS"), name
        assert parser.formatter_class is argparse.RawDescriptionHelpFormatter


def test_both_subcommands_offer_the_compare_calibration_methods() -> None:
    parsers = subcommands()
    [compare] = [a for a in parsers["compare"]._actions if a.dest == "calibration_method"]
    [calibrate] = [a for a in parsers["calibrate"]._actions if a.dest == "method"]
    assert list(compare.choices) == list(calibrate.choices) == list(CALIBRATION_METHODS)


def test_calibrate_requires_logs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["calibrate", "--out", "x.json"])
    assert "LOGS" in capsys.readouterr().err


def test_calibrate_given_a_spec_says_what_it_needs_in_one_line(tmp_path, capsys) -> None:
    """A dataset spec named where logs go: one line a user can act on, not Inspect's raw
    'No recorder for location'."""
    spec = tmp_path / "bots.yaml"
    spec.write_text("format: raters\npath: .\nid: ctx\n", encoding="utf-8")
    assert main(["calibrate", str(spec), "--out", str(tmp_path / "cal.json")]) == 1
    err = capsys.readouterr().err
    assert "No recorder" not in err and len(err.strip().splitlines()) == 1
    assert f"{spec} is a dataset spec, not an Inspect log" in err
    assert f"compare --published {spec}" in err


def test_a_missing_extra_is_one_line_naming_it(monkeypatch, capsys) -> None:
    from inspect_empathy import cli

    def needs_matplotlib(args):
        raise ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib")

    monkeypatch.setitem(cli.COMMANDS, "compare", needs_matplotlib)
    assert cli.main(["compare", "logs"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "pip install 'inspect-empathy[compare]'" in line


def test_reproduce_without_the_data_folder_names_its_root_option(monkeypatch, capsys) -> None:
    """Issue 49.12: the spec's unset folder variable is told as reproduce takes it (--root),
    not as an ``inspect eval`` command."""
    monkeypatch.delenv("KUMAR2025", raising=False)
    assert main(["reproduce", "kumar2025"]) == 1
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "inspect eval" not in line
    assert "inspect-empathy reproduce kumar2025 --root /path/to/folder" in line
