"""What one agent's database remembers of the transcript files it took in (SPEC 14): per file
its identity, size and time, how far it was read and what the format needs to read on; per
source folder when it was last synced. The rows of a file are written inside the same
transaction as the events read from it (``atomic``), so after a crash the two agree."""

from __future__ import annotations

import json

from ..model import FileState
from .reads import Reads

COLUMNS = (
    "path, kind, root, device, inode, size, mtime_ns, done_bytes, done_lines, head_hash, "
    "tail_hash, context, sessions, synced_at, missing_since, problem"
)


class SourceReads(Reads):
    def file_states(self) -> dict[str, FileState]:
        """Every file taken in, by path (a few thousand rows: read whole by each sync)."""
        rows = self._all(f"SELECT {COLUMNS} FROM source_files")
        return {row[0]: file_state_of(row) for row in rows}

    def file_state(self, path: str) -> FileState | None:
        row = self._one(f"SELECT {COLUMNS} FROM source_files WHERE path = ?", (path,))
        return file_state_of(row) if row else None

    def session_key_of(self, session_id: str) -> str | None:
        """The key a session is stored under, found by its session id."""
        row = self._one("SELECT key FROM sessions WHERE session_id = ?", (session_id,))
        return row[0] if row else None

    def source_syncs(self) -> dict[str, int]:
        """When each source folder was last synced (epoch ms), by folder."""
        return dict(self._all("SELECT root, synced_at FROM source_syncs"))


def file_state_of(row: tuple) -> FileState:
    values = list(row)
    try:
        sessions = tuple(json.loads(values[12]))
    except (TypeError, ValueError):
        sessions = ()
    values[12] = sessions
    return FileState(*values)
