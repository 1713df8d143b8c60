"""What Inspect is running again, read while it re-creates a task: the log of an
``eval-retry`` and the logs in the folder of an eval set run again.

Kept apart from the statistics so that building a task imports nothing heavy."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def retried_log_metadata() -> dict[str, Any] | None:
    """The metadata of the log Inspect is retrying while it re-creates the task from it
    (``inspect eval-retry``, an eval set resuming), or None when this is a fresh run.

    Inspect re-creates a retried task by calling the task function with the log's
    ``task_args`` from ``resolve_previous_tasks`` (inspect_ai/_eval/loader.py), whose
    local ``previous_task`` holds the log: it is read from the call stack, since
    Inspect passes the task nothing that says it is a retry.
    """
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "resolve_previous_tasks" and "inspect_ai" in (
            frame.f_code.co_filename
        ):
            previous = frame.f_locals.get("previous_task")
            spec = getattr(getattr(previous, "log", None), "eval", None)
            if spec is not None:
                return dict(getattr(spec, "metadata", None) or {})
        frame = frame.f_back  # type: ignore[assignment]
    return None


def eval_set_logs_metadata(task: str) -> tuple[str, list[dict[str, Any]]]:
    """The log folder of the eval set whose tasks Inspect is resolving (an eval set run
    again), and the metadata of the logs of ``task`` in it; ``("", [])`` outside an eval set.

    Inspect pairs an eval set's tasks with the logs in its folder by an identity holding the
    task's version, and refuses a folder holding a log of no task it was given, without
    naming why; read here, as `retried_log_metadata` reads a retried log, from the call
    stack (``eval_set``'s own ``log_dir``, inspect_ai/_eval/evalset.py).
    """
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "eval_set" and code.co_filename.endswith("evalset.py"):
            log_dir = frame.f_locals.get("log_dir")
            if not isinstance(log_dir, str) or not Path(log_dir).is_dir():
                return "", []
            from inspect_ai.log import list_eval_logs, read_eval_log

            found = []
            for info in list_eval_logs(log_dir, recursive=False):
                try:
                    header = read_eval_log(info, header_only=True)
                except Exception:  # noqa: BLE001 - Inspect names unreadable logs itself
                    continue
                if header.eval.task.split("/")[-1] == task:
                    found.append(dict(header.eval.metadata or {}))
            return log_dir, found
        frame = frame.f_back  # type: ignore[assignment]
    return "", []
