"""What kind of session a key names, as OpenClaw's ``sessions_list`` classifies it.

OpenClaw (``classifySessionKind`` in ``src/agents/tools/sessions-helpers.ts``, beside the
``sessions_list`` tool) derives a session's kind from its key alone, in this order:

1. ``main``: the agent's main session (``agent:<id>:main``; OpenClaw's ``main`` alias);
2. ``cron``: the key, or its rest after ``agent:<id>:``, starts with ``cron:``;
3. ``hook``: ... starts with ``hook:``;
4. ``node``: ... starts with ``node-`` or ``node:``;
5. ``group``: the key holds ``:group:`` or ``:channel:`` (a chat group or channel);
6. ``other``: anything else (a direct chat, a subagent, an imported transcript).

OpenClaw tests the prefixes on the key as its gateway shows it; backscroll stores every key
in the ``agent:<id>:<rest>`` form, so the prefixes are tested on the rest as well (OpenClaw's
own ``isCronSessionKey`` looks at the rest the same way). Keys are compared lower-cased.
``session_kind`` is the one place this rule lives: lists, filters and answers call it.
"""

from __future__ import annotations

from typing import Iterable

from .errors import ValidationError

SESSION_KINDS = ("main", "group", "cron", "hook", "node", "other")


def session_kind(key: str) -> str:
    """``main``, ``group``, ``cron``, ``hook``, ``node`` or ``other`` for a session key."""
    key = key.lower()
    parts = key.split(":", 2)
    rest = parts[2] if len(parts) == 3 and parts[0] == "agent" else key
    if rest == "main" or key == "main":
        return "main"
    for shape in (key, rest):
        if shape.startswith("cron:"):
            return "cron"
        if shape.startswith("hook:"):
            return "hook"
        if shape.startswith(("node-", "node:")):
            return "node"
    if ":group:" in key or ":channel:" in key:
        return "group"
    return "other"


def check_kinds(kinds: Iterable[str] | None) -> frozenset[str] | None:
    """The kinds a list keeps (None: every kind). Values are lower-cased; an empty list keeps
    every kind, as in OpenClaw. A value that is not a kind is bad input here, one sentence
    (OpenClaw drops it silently, which can turn a typo into "every kind")."""
    if kinds is None:
        return None
    if isinstance(kinds, str):
        kinds = [kinds]
    wanted = set()
    for kind in kinds:
        value = kind.strip().lower() if isinstance(kind, str) else kind
        if value not in SESSION_KINDS:
            raise ValidationError(f"kinds must be among {', '.join(SESSION_KINDS)}, not {kind!r}")
        wanted.add(value)
    return frozenset(wanted) or None
