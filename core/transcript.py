"""Transcript events in the OpenClaw entry format: validation, the active branch, indexable text.

The tree rules, in one place (used by the live write path, reconciliation and verify):

- Entries form a tree through ``parentId``. A canonical entry (see ``CANONICAL_TYPES``) that
  is not ``appendMode: "side"`` becomes the new *active leaf*. A ``leaf`` control sets the
  active leaf to its ``targetId`` (``null`` = nothing visible); a control naming an unknown id
  is ignored. Non-canonical rows and side entries never move the leaf.
- A canonical entry without ``parentId`` is a child of the current leaf (older appenders, and
  flat legacy files: with no parent links at all the transcript reads as a flat list).
- The *active branch* is the path from the active leaf back to the root, oldest first.

Bad trees are read as far as they are sound:
- a duplicate id: the first entry with that id wins, later ones are ignored;
- a missing parent: the path stops at the entry whose parent is missing (it acts as a root);
- a cycle: the walk stops at the first entry it would visit twice.
Each such problem is reported once per rebuild, never raised.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterable, NamedTuple

from .bounds import check_id, decode_json
from .errors import ValidationError

CANONICAL_TYPES = frozenset(
    {
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
INDEXED_ROLES = ("user", "assistant")
TOOL_ROLES = ("toolResult", "tool", "bashExecution")
SHOWN_ROLES = (*INDEXED_ROLES, *TOOL_ROLES)  # the messages a conversation shows
TEXT_BLOCK_TYPES = frozenset({"text", "input_text", "output_text"})


# One JSON line, decoded within the entry bounds (``bounds.py``: size, nesting depth, valid
# Unicode); a ValidationError gives the reason (callers add the place). Every JSON line of a
# transcript is decoded here: parse_event, append, every importer, stored events.
decode_line = decode_json


def parse_event(line: str | bytes | Any) -> dict[str, Any]:
    """Parse and validate one event; raise ValidationError with the reason (no location).
    A line (text or bytes) is decoded within the entry bounds; anything else is taken as an
    already decoded JSON value."""
    event = decode_line(line) if isinstance(line, (str, bytes)) else line
    if not isinstance(event, dict):
        raise ValidationError("an event must be a JSON object")
    kind = event.get("type")
    if not isinstance(kind, str) or not kind:
        raise ValidationError('an event needs a string "type"')
    for name in ("id", "parentId", "targetId"):
        check_id(name, event.get(name))
    entry_id = event.get("id")
    if kind == "session" and entry_id is not None and (not isinstance(entry_id, str) or not entry_id):
        raise ValidationError('the "id" of a session header must be a non-empty string')
    if (
        kind != "session"
        and entry_id is not None
        and (not isinstance(entry_id, str) or not entry_id)
    ):
        raise ValidationError('"id" must be a non-empty string')
    if kind != "session" and isinstance(entry_id, str) and entry_id.startswith("#"):
        raise ValidationError('an "id" may not start with "#" (reserved for entries without one)')
    parent = event.get("parentId")
    if parent is not None and not isinstance(parent, str):
        raise ValidationError('"parentId" must be a string or null')
    if kind == "leaf":
        target = event.get("targetId")
        if target is not None and not isinstance(target, str):
            raise ValidationError('"targetId" of a leaf control must be a string or null')
    if kind == "message":
        message = event.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ValidationError('a message event needs "message": {"role": ..., "content": ...}')
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise ValidationError('"message.content" must be a string or a list of blocks')
    return event


def node_id(event: dict[str, Any], seq: int) -> str:
    """The id an entry is known by in the tree; id-less legacy entries get a private one."""
    entry_id = event.get("id")
    return entry_id if isinstance(entry_id, str) and entry_id else f"#{seq}"


def moves_leaf(event: dict[str, Any]) -> bool:
    return event.get("type") in CANONICAL_TYPES and event.get("appendMode") != "side"


class Step(NamedTuple):
    """What one event does to the tree (``advance``). A tuple, not a dataclass: one is made
    per event of every log the tree rules fold, and a frozen dataclass costs a third of it."""

    leaf: str | None  # the active leaf after the event
    node: str | None = None  # the id the event adds to the tree; None: it adds none
    parent: str | None = None  # that node's parent
    extends: bool = False  # the node hangs from the previous leaf and becomes the leaf
    problem: str | None = None  # a broken-tree rule applied (reported, never raised)


def advance(
    leaf: str | None, seq: int, event: dict[str, Any], known: Callable[[str], bool]
) -> Step:
    """Apply one event (the ``seq``-th of its transcript) to the active leaf ``leaf``.

    The incremental step of the tree rules: ``active_branch`` folds it over a whole log, and
    the live write path applies it to one new event (``known`` tells whether an id is already
    in the tree: a dict lookup there, a database lookup here).
    """
    kind = event.get("type")
    if kind == "session":
        return Step(leaf)
    if kind == "leaf":
        target = event.get("targetId")
        if "targetId" in event and target is None:
            return Step(None)
        if isinstance(target, str) and known(target):
            return Step(target)
        return Step(leaf, problem=f"event {seq}: leaf control names unknown entry, ignored")
    eid = node_id(event, seq)
    if known(eid):
        return Step(leaf, problem=f"event {seq}: duplicate id {eid!r}, ignored")
    parent = event.get("parentId") or None
    if not moves_leaf(event):
        return Step(leaf, node=eid, parent=parent)
    if parent is None:
        parent = leaf
    return Step(eid, node=eid, parent=parent, extends=parent == leaf)


def keeps_branch(leaf: str | None, step: Step, adopted: bool) -> bool:
    """Whether the active branch after ``step`` (taken at leaf ``leaf``) is the one before
    it, plus the node the step added when it extends the branch: stored branch messages
    then stay current by adding that node's message. Any other leaf move (a rewind, a
    leaf control, a new branch) needs the branch computed again; so does a node that does
    not move the leaf (a side entry) but is ``adopted``: an entry already stored names it
    as its missing parent, so the branch may now run on through it."""
    return (step.extends or step.leaf == leaf) and not adopted


@dataclass
class Branch:
    """The active branch of a transcript, and what was wrong with its tree."""

    path: list[tuple[int, dict[str, Any]]]
    leaf: str | None
    problems: list[str] = field(default_factory=list)


def active_branch(events: Iterable[tuple[int, dict[str, Any]]]) -> Branch:
    """Compute the active branch of ``(seq, event)`` pairs given in file order."""
    nodes: dict[str, tuple[int, dict[str, Any], str | None]] = {}
    leaf: str | None = None
    problems: list[str] = []
    for seq, event in events:
        step = advance(leaf, seq, event, nodes.__contains__)
        if step.problem:
            problems.append(step.problem)
        if step.node is not None:
            nodes[step.node] = (seq, event, step.parent)
        leaf = step.leaf
    path: list[tuple[int, dict[str, Any]]] = []
    seen: set[str] = set()
    current = leaf
    while current is not None:
        if current in seen:
            problems.append(f"entry {current!r}: parent links form a cycle; branch cut there")
            break
        seen.add(current)
        node = nodes.get(current)
        if node is None:
            problems.append(f"entry {path[-1][1].get('id')!r}: parent {current!r} is missing")
            break
        path.append((node[0], node[1]))
        current = node[2]
    path.reverse()
    return Branch(path=path, leaf=leaf, problems=problems)


class BranchMessage(NamedTuple):
    """A message of the active branch a conversation shows (``SHOWN_ROLES``): what its
    outline keeps. ``entry_id`` is the id as written (None: none, or not a string); ``at`` its
    time in epoch ms, None when it has no plausible one (read as the session's start)."""

    seq: int
    entry_id: str | None
    role: str
    at: int | None


def branch_message(seq: int, event: dict[str, Any]) -> BranchMessage | None:
    """The event as a shown message of its branch, or None when a conversation does not
    show it (not a message, or a role it leaves out). Rebuilds store these, the write path
    adds one per extending append, and an outline computed from the log uses the same rule."""
    message = event.get("message")
    if event.get("type") != "message" or not isinstance(message, dict):
        return None
    role = message.get("role")
    if role not in SHOWN_ROLES:
        return None
    entry_id = event.get("id")
    at = timestamp_ms(event, -1)
    return BranchMessage(seq, entry_id if isinstance(entry_id, str) else None, role,
                         None if at < 0 else at)


def shown_messages(path: Iterable[tuple[int, dict[str, Any]]]) -> list[BranchMessage]:
    """The messages of a branch's ``path`` a conversation shows (``branch_message``)."""
    return [found for seq, event in path if (found := branch_message(seq, event)) is not None]


@dataclass(frozen=True)
class IndexableMessage:
    entry_id: str
    role: str
    timestamp_ms: int
    text: str


# Times outside years 1970..9999 are not times: JSON allows Infinity, NaN and 1e300.
MAX_TIME_MS = 253_402_300_799_000


def _number(value: Any) -> float | None:
    """A finite JSON number (a huge integer counts as infinite: no time is that far)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if abs(value) <= MAX_TIME_MS * 1000 else None
    if isinstance(value, float) and math.isfinite(value):
        return value
    return None


def timestamp_ms(event: dict[str, Any], default: int = 0) -> int:
    """Message time: ``message.timestamp`` (ms, or s when small), else the entry's ISO time;
    anything that is not a plausible time gives ``default``."""
    message = event.get("message")
    if isinstance(message, dict):
        value = _number(message.get("timestamp"))
        if value is not None and value > 0:
            ms = int(value * 1000) if value < 100_000_000_000 else int(value)
            if ms <= MAX_TIME_MS:
                return ms
    return iso_to_ms(event.get("timestamp"), default)


def iso_to_ms(value: Any, default: int = 0) -> int:
    number = _number(value)
    if number is not None:
        return int(number) if 0 <= number <= MAX_TIME_MS else default
    if isinstance(value, str) and value:
        try:
            ms = int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
        except (ValueError, OverflowError, OSError):
            return default
        return ms if 0 <= ms <= MAX_TIME_MS else default
    return default


def message_text(content: Any) -> str:
    """User-visible text of a message: the string, or its text blocks joined by newlines."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") in TEXT_BLOCK_TYPES
        and isinstance(block.get("text"), str)
    ]
    return "\n".join(parts)


def runtime_context(message: dict[str, Any]) -> bool:
    """Whether a user message is context OpenClaw's runtime injected (``"runtimeContext":
    {"retained": ...}``), not the user's words: shown as context, never indexed."""
    return message.get("role") == "user" and isinstance(message.get("runtimeContext"), dict)


def indexable(event: dict[str, Any], default_ts: int = 0) -> IndexableMessage | None:
    """The text the index holds for an entry, or None: only user/assistant text with an id.

    Tool calls, tool results, thinking blocks and images never enter the index.
    """
    if event.get("type") != "message":
        return None
    entry_id = event.get("id")
    message = event.get("message")
    if not isinstance(entry_id, str) or not entry_id or not isinstance(message, dict):
        return None
    role = message.get("role")
    if role not in INDEXED_ROLES or runtime_context(message):
        return None
    text = message_text(message.get("content"))
    if not text.strip():
        return None
    return IndexableMessage(entry_id, role, timestamp_ms(event, default_ts), text)
