"""Agent ids and session keys ``agent:<agentId>:<rest>``: the one place that checks them.

An agent id names a folder (``<state>/agents/<id>/``), so it is the door to the filesystem:
``check_agent_id`` is called by ``StateDir`` for every path that names an agent, and by
``normalize_key`` for the agent part of every key. Both normalise before they compare:
ids and keys are compared lower-cased, after Unicode NFKC (fullwidth ``ａｇｅｎｔ`` is ``agent``).

Rules, each refused with one sentence that names it (``ValidationError``, exit 2):
- an agent id is 1 to 64 of ``a-z 0-9 . _ -``, starting with a letter or digit (so no ``..``,
  no separators, no absolute path, no ``:``);
- a key is printable ASCII without spaces, at most ``MAX_KEY_CHARS``: no control, format
  (zero-width, bidi) or look-alike characters, so two keys that look the same are the same.
"""

from __future__ import annotations

import re
import unicodedata

from .errors import ValidationError
from .redact import quoted

MAX_AGENT_ID_CHARS = 64
MAX_KEY_CHARS = 512
_AGENT_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
_KEY_RE = re.compile(r"^agent:([^:]*):(.+)$")
INCOGNITO_KINDS = ("dashboard", "subagent", "internal-session-effects")
_INCOGNITO_RE = re.compile(rf"^agent:[^:]+:({'|'.join(INCOGNITO_KINDS)}):incognito-[^:]+$")


def _canonical(value: str) -> str:
    return unicodedata.normalize("NFKC", value).strip().lower()


def check_agent_id(agent_id: str) -> str:
    """The canonical (lower-cased) agent id, or a ValidationError naming the broken rule."""
    if not isinstance(agent_id, str):
        raise ValidationError("an agent id must be text, like main or research-bot")
    canonical = _canonical(agent_id)
    if not canonical:
        raise ValidationError("an agent id cannot be empty")
    if not canonical.isprintable():
        raise ValidationError(
            f"agent id {quoted(agent_id)} contains a control or invisible character")
    if "/" in canonical or "\\" in canonical:
        raise ValidationError(
            f"agent id {quoted(agent_id)} contains a path separator: an agent id names one "
            "folder"
        )
    if canonical.startswith(".") or ".." in canonical:
        raise ValidationError(
            f"agent id {quoted(agent_id)} may not start with '.' or contain '..'")
    if ":" in canonical:
        raise ValidationError(
            f"agent id {quoted(agent_id)} contains ':', which separates the parts of a "
            "session key"
        )
    if len(canonical) > MAX_AGENT_ID_CHARS:
        raise ValidationError(
            f"agent id {quoted(agent_id)} is {len(canonical)} characters long; "
            f"the limit is {MAX_AGENT_ID_CHARS}"
        )
    if not _AGENT_ID_RE.match(canonical):
        raise ValidationError(
            f"agent id {quoted(agent_id)} can only use letters a-z, digits, '.', '_' and "
            "'-', "
            "starting with a letter or digit"
        )
    return canonical


def normalize_key(key: str) -> str:
    """The canonical (NFKC, lower-cased, stripped) form of a session key, or raise. (Every
    import calls it a few times a session: the key is redacted for a message only when one
    is raised.)"""
    if not isinstance(key, str):
        raise ValidationError("a session key must be a string like agent:<id>:<name>")
    canonical = _canonical(key)
    if len(canonical) > MAX_KEY_CHARS:
        raise ValidationError(
            f"session key {quoted(key)} is {len(canonical)} characters long; "
            f"the limit is {MAX_KEY_CHARS}"
        )
    # (printable ASCII holds one space character: ' ')
    if not (canonical.isascii() and canonical.isprintable()) or " " in canonical:
        raise ValidationError(
            f"session key {quoted(key)} has a space, a control character or a non-ASCII "
            "character (keys are printable ASCII, so two keys never look alike)"
        )
    match = _KEY_RE.match(canonical)
    if not match:
        raise ValidationError(
            f"{quoted(key)} is not a session key: expected agent:<agentId>:<name>, e.g. "
            "agent:main:main"
        )
    check_agent_id(match.group(1))
    return canonical


def agent_of(key: str) -> str:
    """The agent id of a (valid) session key."""
    return normalize_key(key).split(":", 2)[1]


def is_incognito(key: str) -> bool:
    lowered = key.lower()
    return "incognito-" in lowered and _INCOGNITO_RE.match(lowered) is not None


def is_main_key(key: str) -> bool:
    """``agent:<id>:main`` is the agent's main session."""
    parts = key.lower().split(":")
    return len(parts) == 3 and parts[2] == "main"
