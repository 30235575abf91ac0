"""What ``delete`` leaves in the state of the files that fed a session, so that ``sync`` and
``watch`` never take a deleted conversation in again (SECURITY.md 3, docs/sources.md).

Deleting a session records, in the state of each file that fed it, how many of the file's
lines had been taken in (``lines``) and the session's key (``keys``). Afterwards:

- the file grown: only its new lines are read, as before; they open the session anew, holding
  what came after the delete;
- the file read from the start (rewritten, cut shorter, a ``.zst``, or a format that needs the
  whole file again): its first ``lines`` lines are left out, except an OpenClaw or Codex
  file's first line, its header (the session id, cwd and run settings; no conversation), so
  what follows still lands in the session the file holds;
- a session store (``sessions.json``) that still names the session does not create it again,
  empty; the transcript's next line does.
- a file rewritten whole (``Doors.whole``): its follower gets the deleted keys
  (``ImportReport.deleted``) and ``importers/whole.unseen`` takes in, of a deleted
  conversation, only what follows what had been read, and nothing once the file no longer
  begins with that.
- an agent's SQLite database (``importers/sqlite_source.follow_database``, OpenClaw's store
  through its ``store`` door, which gets the keys as ``ImportReport.deleted``): a deleted
  session is not taken in again from it; an older JSON file a follower reads whole itself
  (Gemini CLI, Copilot CLI) is not taken in when its conversation was deleted
  (``importers/common.deleted_here``).

The record lives in the file state's ``context`` beside what the format needs to read on (its
*carry*): ``{"deleted": {...}, "carry": <carry>}``, a plain carry while nothing was deleted.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from .. import formats
from ..keys import normalize_key
from ..storage import AgentWriter

_MARK = "deleted"


def split(context: str | None) -> tuple[str | None, dict[str, Any]]:
    """(the format's carry, what was deleted) of a file state's ``context``."""
    if context is None or not context.startswith('{"deleted":'):
        return context, {}
    try:
        value = json.loads(context)
        deleted = value[_MARK]
        carry = value.get("carry")
    except (ValueError, TypeError, KeyError, AttributeError):
        return context, {}
    if not isinstance(deleted, dict) or not (carry is None or isinstance(carry, str)):
        return context, {}
    return carry, deleted


def join(carry: str | None, deleted: dict[str, Any]) -> str | None:
    """The ``context`` to keep for a file: its carry, with what was deleted from it."""
    if not deleted:
        return carry
    return json.dumps({_MARK: deleted, "carry": carry}, ensure_ascii=False,
                      separators=(",", ":"))


def deleted_lines(deleted: dict[str, Any]) -> int:
    lines = deleted.get("lines")
    return lines if isinstance(lines, int) and lines > 0 else 0


def deleted_keys(deleted: dict[str, Any]) -> frozenset[str]:
    keys = deleted.get("keys")
    return frozenset(k for k in keys if isinstance(k, str)) if isinstance(keys, list) else frozenset()


def after_deleted(lines: Iterable[tuple[int, bytes]], deleted: dict[str, Any],
                  kind: str) -> list[tuple[int, bytes]]:
    """The lines of a file read from the start that may be taken in: those after the ones
    a deleted session was read from (a header kept)."""
    cut = deleted_lines(deleted)
    fmt = formats.get(kind)
    header = fmt is not None and fmt.header_line  # the file's first line is its header
    return [(n, line) for n, line in lines
            if n > cut or (n == 1 and header)]


def remember(db: AgentWriter, key: str) -> list[str]:
    """Record in the state of every file that fed ``key`` that the session is deleted (call
    in one transaction with the delete); returns their paths."""
    key = normalize_key(key)
    paths = []
    for state in db.file_states().values():
        keys = [k for k in state.sessions if normalize_key(k) != key]
        if len(keys) == len(state.sessions):
            continue
        carry, deleted = split(state.context)
        deleted = {
            "lines": max(deleted_lines(deleted), state.done_lines),
            "keys": sorted(deleted_keys(deleted) | {key}),
        }
        db.save_file_state(state._replace(sessions=tuple(keys), context=join(carry, deleted)))
        paths.append(state.path)
    return paths
