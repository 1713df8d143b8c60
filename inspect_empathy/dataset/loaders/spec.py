"""Dataset spec files: a YAML or JSON object naming a data file, its format and mapping.

    path: my_chats.csv          # required; relative to the spec file's folder
    format: csv                 # optional when it can be inferred
    transcript: conversation    # mapping keys of the format
    rating: score
    roles: {Seeker: user, Supporter: bot}
    scale: [1, 3]

``on_invalid`` and ``max_turns`` may be set here too; arguments given to
``load_dialogs`` (or ``-T``) win over the spec.

Every path is read by one rule (`inside_folder`): resolved once, symlinks followed, and
inside the spec's folder; one that leads outside it (``../..``, an absolute path, a
symlink out of it) is refused unless the spec says ``allow_outside: true`` (the load's
notes then name each file read from outside). Nothing is expanded (``~``, ``${NAME}``)
unless the spec lists the variable: ``path: ${KUMAR2025}`` with
``environment: [KUMAR2025]`` reads the folder the user names.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._util.read import ReadError, json_text, yaml_text
from ...errors import DatasetError
from ._files import check_regular_file, inside_folder, read_text

SPEC_SUFFIXES = (".yaml", ".yml")
MAX_SPEC_BYTES = 256 * 1024
"""A spec names a file and a mapping: anything larger is refused unread."""
LOAD_KEYS = ("on_invalid", "max_turns")
PATH_KEYS = ("emotional_reactions", "interpretations", "explorations")
"""Mapping keys that hold file paths (resolved like ``path``)."""


@dataclass
class Spec:
    """A parsed spec: the source it points at, its format, mapping and load options."""

    file: Path
    source: str
    format: str | None
    mapping: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    name: str | None = None
    notes: list[str] = field(default_factory=list)
    """What the load's report should say (files read from outside the spec's folder)."""


def is_spec_object(data: Any) -> bool:
    """A parsed JSON/YAML document that is a spec, not dialog data."""
    return isinstance(data, dict) and "path" in data and "turns" not in data


def read_spec(file: Path, data: Any = None) -> Spec:
    """Parse a spec file (``data``: its already parsed JSON) and resolve its paths."""
    if data is None:
        check_regular_file(file, MAX_SPEC_BYTES)
        reader = yaml_text if file.suffix.lower() in SPEC_SUFFIXES else json_text
        try:  # the one reader of each kind (`_util.read`)
            data = reader(read_text(file), file)
        except ReadError as ex:
            raise DatasetError(str(ex)) from None
    if not isinstance(data, dict):
        raise DatasetError(f"{file}: a dataset spec must be a mapping with at least 'path'")
    if not data.get("path"):
        raise DatasetError(f"{file}: dataset spec has no 'path'")
    data = dict(data)
    for key in ("path", "format", "name"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise DatasetError(
                f"{file}: spec key {key!r} must be text, not {type(data[key]).__name__} "
                f'{data[key]!r} (quote it: {key}: "{data[key]}")'
            )
        if isinstance(data.get(key), str) and not data[key].isascii():
            try:
                data[key].encode("utf-8")
            except UnicodeEncodeError:
                raise DatasetError(
                    f"{file}: spec key {key!r} holds invalid Unicode (a lone surrogate)"
                ) from None
    name = data.pop("name", None)
    if name is not None:
        check_name(name, file)
    check_controls(data, file)
    folder = file.parent
    allow = data.pop("allow_outside", False)
    if not isinstance(allow, bool):
        raise DatasetError(f"{file}: spec key 'allow_outside' must be true or false, not {allow!r}")
    variables = _variables(data.pop("environment", None), file)
    notes: list[str] = []
    source = str(data.pop("path"))
    expanded, named = expand_variables(source, file, variables)
    if named:  # the user named this folder (an environment variable the spec lists)
        real = Path(expanded).resolve()
        notes.append(f"path {named} read from {real}")
        source = str(real)
    elif not source.startswith("hf:"):
        where = str(file)
        source = str(inside_folder(folder, source, where, "path", allow, notes, PLACE))
    fmt = data.pop("format", None)
    options = {key: data.pop(key) for key in LOAD_KEYS if key in data}
    for key in PATH_KEYS:
        if data.get(key) is not None:
            data[key] = str(inside_folder(folder, data[key], str(file), key, allow, notes, PLACE))
    return Spec(file, source, str(fmt) if fmt else None, data, options, name, notes)


PLACE = "spec's folder"
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class MissingFolder(DatasetError):
    """A spec's data folder is an environment variable that is unset: ``problem`` says so
    without the way to set it (the command that read the spec knows its own way: ``inspect
    eval`` the variable, ``inspect-empathy reproduce`` its ``--root``)."""

    def __init__(self, problem: str, variable: str) -> None:
        super().__init__(
            f"{problem}: set it to the folder of the data (e.g. {variable}=/path/to/folder "
            "before the command)"
        )
        self.problem = problem
        self.variable = variable
_NAME_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
"""Control characters a spec's ``name`` may not hold (it is shown in terminals and logs:
an escape sequence would reach the terminal raw), tab and newline included."""


def check_name(name: str, file: Path) -> None:
    """Refuse a ``name:`` holding a control character (as ids and turns are refused)."""
    found = _NAME_CONTROL.search(name)
    if found is not None:
        raise DatasetError(
            f"{file}: spec key 'name' holds the control character "
            f"U+{ord(found.group()):04X} at character {found.start() + 1}: a name is one "
            "line of plain text (a terminal escape would reach the terminal raw)"
        )


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Control characters no spec text holds (tab, newline and carriage return may, in a long
value); rater and judge names among them reach terminals and reports."""


def check_controls(data: Any, file: Path, where: str = "", depth: int = 0) -> None:
    """Refuse a control character in any key or text of a spec (`_CONTROL`), naming the
    key path (``raters.expert1``), the character and its position."""
    if depth > 50:
        return  # deeper than any spec: its values are read (and checked) by the loaders
    if isinstance(data, dict):
        items: list[tuple[Any, Any]] = list(data.items())
    elif isinstance(data, list):
        items = list(enumerate(data))
    else:
        return
    for key, value in items:
        at = f"{where}.{key}" if where else str(key)
        for text, what in ((key, "key"), (value, "value")):
            found = _CONTROL.search(text) if isinstance(text, str) else None
            if found is not None:
                raise DatasetError(
                    f"{file}: spec {what} {at!r} holds the control character "
                    f"U+{ord(found.group()):04X} at character {found.start() + 1}: a spec "
                    "holds plain text (a terminal escape would reach the terminal raw)"
                )
        check_controls(value, file, at, depth + 1)


def _variables(value: Any, file: Path) -> tuple[str, ...]:
    """The environment variables a spec says its ``path`` reads (``environment: [NAME]``)."""
    if value is None:
        return ()
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(
        isinstance(n, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n) for n in names
    ):
        raise DatasetError(
            f"{file}: spec key 'environment' lists the environment variables the path reads "
            f"(environment: [NAME]), not {value!r}"
        )
    return tuple(names)


def expand_variables(path: str, file: Path, allowed: tuple[str, ...] = ()) -> tuple[str, str]:
    """``path`` with each ``${NAME}`` replaced by the environment variable NAME, and the
    names (empty when there were none). A spec whose data lives in a folder of the user's
    (a download of a published repository) says ``path: ${KUMAR2025}`` and lists the
    variable (``environment: [KUMAR2025]``); the folder is then the spec's one input.
    A variable the spec does not list, or one that is unset, is an error naming it; so is
    a path starting with ``~`` (never expanded)."""
    names = _VARIABLE.findall(path)
    if not names:
        return path, ""
    unlisted = [n for n in names if n not in allowed]
    if unlisted:
        raise DatasetError(
            f"{file}: path {path!r} names the environment variable {unlisted[0]}, which the "
            "spec does not list: a spec reads an environment variable only when it says so "
            f"(environment: [{unlisted[0]}])"
        )
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        raise MissingFolder(
            f"{file}: path {path!r} needs the environment variable {missing[0]}", missing[0]
        )
    expanded = _VARIABLE.sub(lambda m: os.environ[m.group(1)], path)
    if expanded.startswith("~"):
        raise DatasetError(
            f"{file}: path {path!r} expands to {expanded!r}: '~' is not expanded; set "
            f"{names[0]} to an absolute folder"
        )
    return expanded, "${" + "}, ${".join(names) + "}"
