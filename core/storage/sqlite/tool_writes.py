"""The tool-call index's writes on SQLite (docs/tool-calls.md): rows of new calls, a call
answered by a later append, a session's rows replaced by a rebuild or removed with it. Always
inside the caller's transaction, the one that writes the session's message rows."""

from __future__ import annotations

import json
from typing import Any

from ...tool_index import ToolRow, first_rowid
from ..writeplan import place_rowids, tool_counts
from .reads import Reads, scope_text

_COLUMNS = "rowid, session_pk, entry_id, block, call_id, tool, status, ts, duration_ms, result_entry_id"


class ToolWrites(Reads):
    """Tool-index methods of the writer class (``self.conn`` in a transaction)."""

    def _add_tools(self, head: Any, rows: list[ToolRow]) -> None:
        self._insert_tools([(head.pk, head.session_id, rows)])

    def replace_tools(self, batch: list[tuple[int, str, list[ToolRow]]]) -> None:
        """Replace the tool rows of sessions ``(pk, session_id, rows)`` (a rebuild's; a
        delete's, with none)."""
        if not batch:
            return
        pks = json.dumps([pk for pk, _, _ in batch])
        self.conn.execute(
            "DELETE FROM tool_fts WHERE rowid IN (SELECT rowid FROM tool_index "
            "WHERE session_pk IN (SELECT value FROM json_each(?)))", (pks,))
        self.conn.execute(
            "DELETE FROM tool_index WHERE session_pk IN (SELECT value FROM json_each(?))", (pks,))
        self.conn.execute(
            "UPDATE index_state SET tool_rows = 0, tool_chars = 0 "
            "WHERE session_pk IN (SELECT value FROM json_each(?))", (pks,))
        self._insert_tools(batch)

    def _insert_tools(self, batch: list[tuple[int, str, list[ToolRow]]]) -> None:
        """Rowids placed against the stored ones, then two ``executemany`` in rowid order
        (Writes._insert_rows says why)."""
        wanted = [(first_rowid(sid, row), pk, row) for pk, sid, rows in batch for row in rows]
        if not wanted:
            return
        placed = place_rowids(wanted, self._taken_tool_rowids)
        scopes = {pk: self._tool_scope(pk) for pk, _, _ in batch}
        self.conn.executemany(
            f"INSERT INTO tool_index ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(rowid, pk, r.entry_id, r.block, r.call_id, r.tool, r.status, r.ts, r.duration_ms,
              r.result_entry_id) for rowid, pk, r in placed])
        self.conn.executemany("INSERT INTO tool_fts (rowid, body, scope) VALUES (?, ?, ?)",
                              [(rowid, r.body, scopes[pk]) for rowid, pk, r in placed])
        counts = tool_counts([(pk, row) for _rowid, pk, row in placed])
        # OR FAIL: no statement journal, so FTS5 keeps pending rows pending (Writes._insert_row)
        self.conn.executemany(
            "UPDATE OR FAIL index_state SET tool_rows = tool_rows + ?, tool_chars = tool_chars + ? "
            "WHERE session_pk = ?", [(n, c, pk) for pk, (n, c) in counts.items()])

    def _taken_tool_rowids(self, rowids: list[int]) -> set[int]:
        return {r[0] for r in self.conn.execute(
            "SELECT rowid FROM tool_index WHERE rowid IN (SELECT value FROM json_each(?))",
            (json.dumps(rowids),))}

    def _tool_scope(self, pk: int) -> str:
        tree = self.conn.execute(
            "SELECT tree FROM index_state WHERE session_pk = ?", (pk,)).fetchone()
        return scope_text(pk, tree[0] if tree else "")

    def _open_calls(self, pk: int, call_id: str | None
                    ) -> tuple[str | None, list[tuple[str, int, str | None, str]]]:
        newest = self.conn.execute(
            "SELECT entry_id FROM tool_index WHERE session_pk = ? ORDER BY ts DESC, rowid DESC "
            "LIMIT 1",
            (pk,)).fetchone()
        if newest is None:
            return None, []
        rows = self.conn.execute(
            "SELECT entry_id, block, call_id, tool FROM tool_index INDEXED BY tool_index_open "
            "WHERE session_pk = ? AND result_entry_id IS NULL AND (entry_id = ? OR call_id = ?) "
            "ORDER BY ts, block",
            (pk, newest[0], call_id)).fetchall()
        return newest[0], [tuple(row) for row in rows]  # type: ignore[misc]

    def _call_body(self, pk: int, entry_id: str) -> str | None:
        found = self.conn.execute(
            "SELECT body FROM events WHERE session_pk = ? AND seq = (SELECT min(seq) FROM events "
            "WHERE session_pk = ? AND entry_id = ?)", (pk, pk, entry_id)).fetchone()
        return found[0] if found else None

    def _answer_tool(self, pk: int, row: ToolRow) -> None:
        found = self.conn.execute(
            "SELECT t.rowid, length(c.c0) FROM tool_index t JOIN tool_fts_content c "
            "ON c.id = t.rowid WHERE t.session_pk = ? AND t.result_entry_id IS NULL "
            "AND t.entry_id = ? AND t.block = ?",
            (pk, row.entry_id, row.block)).fetchone()
        if found is None:
            return
        rowid, old_chars = found
        self.conn.execute(
            "UPDATE OR FAIL tool_index SET status = ?, duration_ms = ?, result_entry_id = ? "
            "WHERE rowid = ?", (row.status, row.duration_ms, row.result_entry_id, rowid))
        self.conn.execute("UPDATE tool_fts SET body = ? WHERE rowid = ?", (row.body, rowid))
        self.conn.execute(
            "UPDATE OR FAIL index_state SET tool_chars = tool_chars + ? WHERE session_pk = ?",
            (len(row.body) - (old_chars or 0), pk))
