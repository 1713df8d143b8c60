"""The plugin's public exceptions, in one place."""

from __future__ import annotations

import re
import sys

from ._util.compat import PrerequisiteError

__all__ = ["DatasetError", "JudgeServiceError", "OptionError", "verbatim_for_rich"]

_COLON = re.compile(r":(?=\S)")


def verbatim_for_rich(text: str) -> str:
    """Text that rich's ``print`` shows exactly as given.

    Brackets are escaped (else ``[x]`` reads as markup), and an empty markup tag
    follows every colon that precedes text, so that no ``:name:`` pair (as in
    ``file.csv:100:``) is left for rich to replace with an emoji.
    """
    from rich.markup import escape

    return _COLON.sub(":[bold][/bold]", escape(text))


class _PlainError(PrerequisiteError, ValueError):  # type: ignore[misc]
    """An error Inspect prints as one plain message, verbatim, without a traceback
    (``inspect eval`` exits non-zero); ``str()`` is the message as given."""

    prefix = ""

    def __init__(self, message: str) -> None:
        Exception.__init__(self, message)
        # Inspect prints ``message`` with rich's print: keep it verbatim
        self.message = verbatim_for_rich(f"{self.prefix}{message}")
        _say_when_quiet()

    def __str__(self) -> str:
        return str(self.args[0])


_hooked = False


def _say_when_quiet() -> None:
    """Make an uncaught refusal reach stderr under ``--display none`` too: Inspect prints a
    `_PlainError` with rich's console, which that display silences, so the run exited 1
    without a word. Installed once, on the first refusal made; it adds nothing where the
    console is not quiet (Inspect prints the message there)."""
    global _hooked
    if _hooked:
        return
    _hooked = True
    previous = sys.excepthook

    def hook(kind: type[BaseException], error: BaseException, traceback: object) -> None:
        if isinstance(error, _PlainError):
            import rich

            if rich.get_console().quiet:
                print(f"{error.prefix}{error}", file=sys.stderr)
        previous(kind, error, traceback)  # type: ignore[arg-type]

    sys.excepthook = hook


class DatasetError(_PlainError):
    """A dataset could not be loaded; the message lists every problem found, each with
    its file, record (line) and problem."""

    prefix = "Dataset error: "


class OptionError(_PlainError):
    """A task or scorer option is invalid (``-T method=bogus``, a bad calibration file)."""


class JudgeServiceError(_PlainError):
    """A judge's service answered in a shape the provider Inspect chose cannot read; the
    message names the remedy (`judge._providers.unreadable_content`)."""

    prefix = "Judge service: "
