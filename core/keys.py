"""Session keys: ``agent:<agentId>:<rest>``, compared lower-cased."""

from __future__ import annotations

import re

from .errors import ValidationError

_KEY_RE = re.compile(r"^agent:([^:\s]+):(\S.*)$")
_AGENT_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_INCOGNITO_RE = re.compile(
    r"^agent:[^:]+:(dashboard|subagent|internal-session-effects):incognito-[^:]+$"
)


def normalize_key(key: str) -> str:
    """Return the canonical (lower-cased, stripped) form of a session key, or raise."""
    if not isinstance(key, str):
        raise ValidationError("a session key must be a string like agent:<id>:<name>")
    canonical = key.strip().lower()
    match = _KEY_RE.match(canonical)
    if not match or any(ord(c) < 32 for c in canonical):
        raise ValidationError(
            f"{key!r} is not a session key: expected agent:<agentId>:<name>, e.g. agent:main:main"
        )
    if not _AGENT_ID_RE.match(match.group(1)):
        raise ValidationError(
            f"{key!r} has an agent id that cannot name a folder "
            "(use letters, digits, '.', '_' or '-')"
        )
    return canonical


def agent_of(key: str) -> str:
    """The agent id of a (valid) session key."""
    return normalize_key(key).split(":", 2)[1]


def is_incognito(key: str) -> bool:
    return bool(_INCOGNITO_RE.match(key.lower()))


def is_main_key(key: str) -> bool:
    """``agent:<id>:main`` is the agent's main session."""
    parts = key.lower().split(":")
    return len(parts) == 3 and parts[2] == "main"
