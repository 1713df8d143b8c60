"""The few Inspect internals the plugin needs that have no public equivalent.

Each is imported here only, and tests/util/test_compat.py fails loudly when Inspect moves one.
"""

from __future__ import annotations

import sys

from inspect_ai._util.error import PrerequisiteError
from inspect_ai.model._model import active_model

__all__ = ["PrerequisiteError", "active_model", "loading_tasks"]
"""`PrerequisiteError`: an error Inspect prints as one plain message, without a traceback.
`active_model`: the model under evaluation, or None outside ``eval()`` (``eval_set()`` leaves
its last model active after it returns: see `loading_tasks`)."""

_TASK_LOADERS = frozenset({"resolve_tasks", "create_tasks", "resolve_previous_task"})
"""The functions of ``inspect_ai/_eval/loader.py`` that construct tasks by name."""


def loading_tasks() -> bool:
    """True when Inspect is constructing tasks by name (``inspect eval``, ``eval()`` or
    ``eval_set()`` given a task name, ``eval-retry``): its model and model roles are then
    the run's. A Task built in Python outside that (the model roles unknown yet, or stale:
    ``eval_set()`` leaves its last model active) returns False. Should Inspect rename the
    loaders, this returns False and checks wait for the run (`graded_generate`)."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name in _TASK_LOADERS and code.co_filename.replace("\\", "/").endswith(
            "inspect_ai/_eval/loader.py"
        ):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False
