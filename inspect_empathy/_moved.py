"""Module paths of the flat layout (0.1, before the concept packages), still importable.

``import inspect_empathy.metrics`` or ``from inspect_empathy.loaders import jsonl`` give the
module at its new place (`MOVED`): the same object, so that patching one patches the other
and objects pickled under an old path still load. ``per_turn`` was split in two: its old
path is a module of its own holding the names of both halves (patch those at their new
places). The finder answers only for the old paths, none of which exists now
(tests/test_moved.py), and it goes before Python's own: under an old package path
(``inspect_empathy.loaders``, now `dataset.loaders`) Python's finder would load a second
copy of each module, under a name its relative imports cannot resolve.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from types import ModuleType

PACKAGE = __name__.rpartition(".")[0]

MOVED: dict[str, str | tuple[str, ...]] = {
    "_answer": "judge._answer",
    "_geval": "judge._geval",
    "_judge_call": "judge._judge_call",
    "_providers": "judge._providers",
    "_rubric": "judge._rubric",
    "_score_text": "judge._score_text",
    "baseline": "judge.baseline",
    "_samples": "dataset._samples",
    "loaders": "dataset.loaders",
    "per_turn": ("dataset.per_turn", "stats.conversation"),
    "_stats": "stats._agreement",
    "_resample": "stats._resample",
    "alt_metric": "stats.alt_metric",
    "alttest": "stats.alttest",
    "calibration": "stats.calibration",
    "consistency": "stats.consistency",
    "humans": "stats.humans",
    "metrics": "stats.metrics",
    "_compat": "_util.compat",
    "_file_kind": "_util.file_kind",
    "_summary": "_util.summary",
    "_usage": "_util.usage",
    "human_scale_cli": "cli.human_scale",
    "published_cli": "cli.published",
}
"""Old module path (below the package) -> its new path, or the paths whose names it holds."""


def new_path(old: str) -> str | tuple[str, ...] | None:
    """The new dotted path of an old one (``loaders.jsonl`` -> ``dataset.loaders.jsonl``)."""
    if not old.startswith(f"{PACKAGE}."):
        return None
    parts = old.removeprefix(f"{PACKAGE}.").split(".")
    moved = MOVED.get(parts[0])
    if moved is None:
        return None
    if isinstance(moved, tuple):
        return tuple(f"{PACKAGE}.{m}" for m in moved) if len(parts) == 1 else None
    return ".".join([f"{PACKAGE}.{moved}", *parts[1:]])


class _Finder:
    """A meta path finder and its loader (the protocol, without ``importlib.abc``: importing
    that loads ``importlib.resources`` and ``tempfile``, a few ms on every ``--help``)."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = new_path(fullname)
        if new is None:
            return None
        import importlib.util  # here: on every start it would cost contextlib, 2-3 ms

        if isinstance(new, str) and importlib.util.find_spec(new) is None:
            return None  # under an old package path, a module that never existed
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # a placeholder: exec_module puts the real module in its place

    def exec_module(self, module: ModuleType) -> None:
        new = new_path(module.__name__)
        assert new is not None
        for name in (new,) if isinstance(new, str) else new:
            part = importlib.import_module(name)
            # a caller that runs the loader by hand keeps the placeholder: give it the names
            module.__dict__.update((k, v) for k, v in vars(part).items() if not k.startswith("__"))
        if isinstance(new, str):
            # the import system returns what sys.modules holds under the old name once this ends
            sys.modules[module.__name__] = part


def install() -> None:
    """Answer the old paths, before every other finder (once per process)."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
