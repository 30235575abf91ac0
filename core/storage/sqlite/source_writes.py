"""Writing what the live sources took in from each file (see ``sources.py``); loaded only by
processes that write."""

from __future__ import annotations

import json
from typing import Iterable

from ...keys import normalize_key
from ..model import FileState, SessionMeta
from .imports import Imports
from .sources import COLUMNS, SourceReads
from .writes import _lower


class SourceWrites(Imports, SourceReads):
    def save_file_state(self, state: FileState, moved_from: str | None = None) -> None:
        """Insert or replace a file's row (``moved_from``: its row under the name it had);
        call inside ``atomic()`` with the events read from it."""
        with self.transaction() as conn:
            if moved_from is not None:
                conn.execute("DELETE FROM source_files WHERE path = ?", (moved_from,))
            conn.execute(
                f"INSERT OR REPLACE INTO source_files ({COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    state.path,
                    state.kind,
                    state.root,
                    state.device,
                    state.inode,
                    state.size,
                    state.mtime_ns,
                    state.done_bytes,
                    state.done_lines,
                    state.head_hash,
                    state.tail_hash,
                    state.context,
                    json.dumps(list(state.sessions)),
                    state.synced_at,
                    state.missing_since,
                    state.problem,
                ),
            )

    def relink_session(self, meta: SessionMeta) -> bool:
        """A session store names the session ``meta.session_id`` anew: take its links and
        label, and its key when it is stored under the placeholder an import without a store
        entry gave it (``agent:<id>:import:<sessionId>``). True when something changed."""
        key = normalize_key(meta.key)
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT pk, key, spawned_by, parent_key, label FROM sessions WHERE session_id = ?",
                (meta.session_id,),
            ).fetchone()
            if row is None:
                return False
            pk, stored_key, *links = row
            placeholder = f"agent:{self.agent_id}:import:{meta.session_id}".lower()
            taken = conn.execute("SELECT 1 FROM sessions WHERE key = ?", (key,)).fetchone()
            new_key = key if stored_key == placeholder and not taken else stored_key
            wanted = [_lower(meta.spawned_by), _lower(meta.parent_key), meta.label or links[2]]
            if new_key == stored_key and wanted == links:
                return False
            conn.execute(
                "UPDATE sessions SET key = ?, spawned_by = ?, parent_key = ?, label = ? "
                "WHERE pk = ?",
                (new_key, *wanted, pk),
            )
        return True

    def rekey_session(self, session_id: str, key: str, label: str | None) -> bool:
        """Move the session ``session_id`` to ``key`` (and give it ``label``): a window its agent
        replaced (an OpenClaw store's reset) leaves the node's key to the new one. False when
        there is no such session, or ``key`` names another one."""
        key = normalize_key(key)
        with self.transaction() as conn:
            row = conn.execute("SELECT pk, key, label FROM sessions WHERE session_id = ?",
                               (session_id,)).fetchone()
            if row is None or (row[1] == key and label in (None, row[2])):
                return False
            if row[1] != key and conn.execute("SELECT 1 FROM sessions WHERE key = ?",
                                              (key,)).fetchone():
                return False
            conn.execute("UPDATE sessions SET key = ?, label = coalesce(?, label) WHERE pk = ?",
                         (key, label, row[0]))
        return True

    def mark_archived(self, session_id: str, archived: bool = True) -> bool:
        """Say whether the session ``session_id``'s transcript is in a cold archive (an OpenClaw
        store's cold window): a stored flag, never read from its label."""
        with self.transaction() as conn:
            changed = conn.execute("UPDATE sessions SET archived = ? WHERE session_id = ? "
                                   "AND archived != ?", (int(archived), session_id,
                                                         int(archived))).rowcount
        return changed > 0

    def mark_missing(self, paths: Iterable[str], since: int) -> None:
        """These files are gone from disk: their rows (and sessions) stay, marked."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE source_files SET missing_since = ? WHERE missing_since IS NULL "
                "AND path IN (SELECT value FROM json_each(?))",
                (since, json.dumps(list(paths))),
            )

    def record_sync(self, roots: Iterable[tuple[str, str]], when: int) -> None:
        """Source folders ``(root, kind)`` were synced at ``when``."""
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO source_syncs (root, kind, synced_at) VALUES (?, ?, ?)",
                [(root, kind, when) for root, kind in roots],
            )
