"""The few Inspect internals the plugin needs that have no public equivalent.

Each is imported here only, and tests/test_compat.py fails loudly when Inspect moves one.
"""

from __future__ import annotations

from inspect_ai._util.error import PrerequisiteError
from inspect_ai.model._model import active_model

__all__ = ["PrerequisiteError", "active_model"]
"""`PrerequisiteError`: an error Inspect prints as one plain message, without a traceback.
`active_model`: the model under evaluation, or None outside ``eval()``."""
