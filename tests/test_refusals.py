"""A bad option is a one-line refusal before any model call, in every display mode."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from inspect_empathy.errors import OptionError
from inspect_empathy.tasks import empathy, empathy_response


@pytest.mark.parametrize(
    ("completions", "message"),
    [(0, "at least 1, not 0"), (-3, "at least 1, not -3"), (2.5, "a whole number, not 2.5"),
     (True, "a whole number, not True")],
)  # fmt: skip
def test_completions_below_one_is_refused_whatever_the_method(
    completions: object, message: str
) -> None:
    for method in ("auto", "logprobs", "parse", "samples"):
        with pytest.raises(OptionError, match=f"^-T completions must be {message}$"):
            empathy(method=method, completions=completions)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match=f"^-T completions must be {message}$"):
        empathy_response(completions=completions)  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize("display", ["none", "plain"])
def test_a_refusal_reaches_the_terminal_in_every_display_mode(display: str, tmp_path: Path) -> None:
    inspect = Path(sys.executable).parent / "inspect"
    done = subprocess.run(
        [str(inspect), "eval", "inspect_empathy/empathy", "--model", "empathy_baseline/lexicon",
         "-T", "completions=0", "--display", display, "--log-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1
    said = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert said == ["-T completions must be at least 1, not 0"], said
