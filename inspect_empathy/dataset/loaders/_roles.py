"""Role labels: the ones known by default, a ``roles`` mapping, one label to ``user`` or ``bot``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import DatasetError
from ._problems import UNKNOWN_ROLE, RecordProblem

USER_LABELS = frozenset({"user", "human", "seeker", "speaker", "customer", "client", "usr"})
BOT_LABELS = frozenset(
    {"assistant", "bot", "ai", "chatbot", "supporter", "listener", "agent", "sys", "model"}
)
DEFAULT_ROLES: dict[str, str] = {
    **{label: "user" for label in USER_LABELS},
    **{label: "bot" for label in BOT_LABELS},
}
"""Role labels known without a ``roles`` mapping (matched case-insensitively)."""


def role_map(roles: Mapping[str, str] | None) -> dict[str, str]:
    """Label -> ``user``/``bot`` (lower-cased labels); defaults when ``roles`` is None.

    A ``roles`` mapping replaces the defaults: only its labels are accepted.
    Values may be ``user``/``bot`` or any default label (``assistant``, ``human``).
    """
    if roles is None:
        return DEFAULT_ROLES
    if not isinstance(roles, Mapping) or not roles:
        raise DatasetError(f"roles must map labels to user or bot, got {roles!r}")
    mapped: dict[str, str] = {}
    for label, role in roles.items():
        target = DEFAULT_ROLES.get(str(role).strip().lower())
        if target is None:
            raise DatasetError(f"roles: {label!r} maps to {role!r}; use user or bot")
        mapped[str(label).strip().lower()] = target
    return mapped


def parse_role(label: Any, roles: Mapping[str, str] = DEFAULT_ROLES) -> str:
    """``user`` or ``bot`` for a role label, or a RecordProblem for an unknown one."""
    role = roles.get(str(label).strip().lower())
    if role is None:
        known = ", ".join(sorted(roles))
        raise RecordProblem(UNKNOWN_ROLE, f"unknown role label {label!r} (known: {known})")
    return role
