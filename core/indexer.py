"""What the index holds for a transcript: extraction + redaction + CJK segmentation.

``INDEXER_VERSION`` names these rules. A session indexed under another version is dirty, so
changing extraction or redaction rebuilds every session in the background (SPEC 3, 8).
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any, Iterable, NamedTuple

from .bounds import cut_text
from .keys import is_incognito
from .redact import REDACTION_VERSION, redact
from .textseg import segment

if TYPE_CHECKING:  # the tree rules load when rows are built, not when a search starts
    from .transcript import Branch

# Bump when extraction (which entries, which blocks) or segmentation changes.
# 2: incognito sessions are not indexed; 3: a message over bounds.MAX_MESSAGE_CHARS is cut;
# 4: rows carry their scope (the sessions a caller may see are selected inside MATCH);
# 5: a NUL character is held as a space (SQLite's length() stops at a NUL);
# 6: tool calls indexed (core/tool_index.py: the second index, over the active branch's calls);
# 7: session facts (a rebuild computes each session's facts and usage: core/facts.py);
# 8: a tool result's tail redacted with the text before it, tool names redacted, a NUL in a
#    model, tool name, call id or path held as U+FFFD (rows stored before could hold a secret)
EXTRACTION_VERSION = 8
INDEXER_VERSION = EXTRACTION_VERSION * 1000 + REDACTION_VERSION

# rowid = (message time in ms) << ROWID_SHIFT | slot. The slot separates messages of the same
# millisecond; when all slots of a millisecond are taken the row moves to the next one.
ROWID_SHIFT = 12
SLOT_MASK = (1 << ROWID_SHIFT) - 1
MAX_TS = (1 << (62 - ROWID_SHIFT)) - 1
MAX_ROWID_DRIFT_MS = 60_000


class IndexRow(NamedTuple):
    entry_id: str
    role: str
    ts: int  # epoch ms
    body: str  # redacted, segmented text as stored in message_fts


def row_for(entry_id: str, role: str, ts: int, text: str) -> IndexRow:
    """The row of one message: cut to ``MAX_MESSAGE_CHARS`` (with a marker), then redacted
    and segmented; a message is stored whole, but never indexed or searched whole. A NUL is
    a separator like any control character, held as a space: SQLite's text functions stop
    at a NUL, so a row holding one would not have the length its index state records."""
    text = text.replace("\0", " ")
    return IndexRow(entry_id, role, min(max(ts, 0), MAX_TS), segment(redact(cut_text(text))))


def rows_for_branch(branch: Branch, default_ts: int = 0) -> list[IndexRow]:
    """Index rows of an active branch; a message with no time at all gets ``default_ts``
    (the session's creation time), the same rule the live write path uses."""
    from .transcript import indexable

    rows: list[IndexRow] = []
    for seq, event in branch.path:
        try:
            message = indexable(event, default_ts)
            if message is not None:
                rows.append(
                    row_for(message.entry_id, message.role, message.timestamp_ms, message.text)
                )
        except Exception as err:  # one bad event never stops a rebuild; verify does the same
            branch.problems.append(f"event {seq}: cannot be indexed ({type(err).__name__}); skipped")
    return rows


def expected_rows(
    events: Iterable[tuple[int, dict[str, Any]]], default_ts: int = 0
) -> tuple[list[IndexRow], Branch]:
    from .transcript import active_branch

    branch = active_branch(events)
    return rows_for_branch(branch, default_ts), branch


def session_rows(
    key: str, events: Iterable[tuple[int, dict[str, Any]]], default_ts: int = 0
) -> tuple[list[IndexRow], Branch]:
    """What the index holds for a session. Incognito sessions hold nothing: nobody may
    search them, and their words must not even shift the ranking statistics of others."""
    rows, branch = expected_rows(events, default_ts)
    return ([] if not indexes_session(key) else rows), branch


def indexes_session(key: str) -> bool:
    return not is_incognito(key)


def first_rowid(session_id: str, row: IndexRow) -> int:
    """Where a row's rowid search starts: deterministic, spread over the millisecond's slots."""
    slot = zlib.crc32(f"{session_id}\0{row.entry_id}".encode()) & SLOT_MASK
    return (row.ts << ROWID_SHIFT) | slot


def next_rowid(rowid: int) -> int:
    """The next candidate after a collision: the next slot, carrying into the next ms."""
    return rowid + 1
