"""What an agent's rows remember of the transcript files the live sources took in (SPEC 14),
as ``storage/sqlite/sources.py``: per file its identity, size, time, how far it was read and
what the format needs to read on; per source folder when it was last synced. A file's row is
written in the same transaction as the events read from it (``atomic``)."""

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
        rows = self._all(f"SELECT {COLUMNS} FROM source_files WHERE agent_id = %s "
                         "AND host = %s", (self.agent_id, self.host))
        return {row[0]: file_state_of(row) for row in rows}

    def file_state(self, path: str) -> FileState | None:
        row = self._one(f"SELECT {COLUMNS} FROM source_files WHERE agent_id = %s "
                        "AND host = %s AND path = %s", (self.agent_id, self.host, path))
        return file_state_of(row) if row else None

    def session_key_of(self, session_id: str) -> str | None:
        row = self._one("SELECT key FROM sessions WHERE agent_id = %s AND session_id = %s "
                        "AND host IN (%s, '') ORDER BY host DESC LIMIT 1",
                        (self.agent_id, session_id, self.host))
        return row[0] if row else None

    def source_syncs(self) -> dict[str, int]:
        return dict(self._all("SELECT root, synced_at FROM source_syncs WHERE agent_id = %s "
                              "AND host = %s", (self.agent_id, self.host)))


def file_state_of(row: tuple) -> FileState:
    values = list(row)
    try:
        sessions = tuple(json.loads(values[12]))
    except (TypeError, ValueError):
        sessions = ()
    values[12] = sessions
    return FileState(*values)
