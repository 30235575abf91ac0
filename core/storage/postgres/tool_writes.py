"""The tool-call index's writes on PostgreSQL, as the SQLite backend's (docs/tool-calls.md):
inside the caller's transaction, which holds the session's row lock."""

from __future__ import annotations

from typing import Any

from ...indexer import next_rowid
from ...tool_index import ToolRow, first_rowid
from ..writeplan import place_rowids, tool_counts
from .fts import index_text
from .reads import Reads
from .text import load_text, store_text

_INSERT = (
    "INSERT INTO tool_index (agent_id, rowid, session_pk, entry_id, block, call_id, tool, "
    "status, ts, duration_ms, result_entry_id, exact, tsv, body) VALUES (%s, %s, %s, %s, %s, "
    "%s, %s, %s, %s, %s, %s, %s, %s::tsvector, %s) ON CONFLICT (agent_id, rowid) DO NOTHING"
)


class ToolWrites(Reads):
    """Tool-index methods of the writer class."""

    def _add_tools(self, head: Any, rows: list[ToolRow]) -> None:
        self._insert_tools([(head.pk, head.session_id, rows)])

    def replace_tools(self, batch: list[tuple[int, str, list[ToolRow]]]) -> None:
        if not batch:
            return
        pks = [pk for pk, _, _ in batch]
        self.conn.execute("DELETE FROM tool_index WHERE session_pk = ANY(%s::bigint[])", (pks,))
        self.conn.execute("UPDATE sessions SET tool_rows = 0, tool_chars = 0 "
                          "WHERE pk = ANY(%s::bigint[])", (pks,))
        self._insert_tools(batch)

    def _insert_tools(self, batch: list[tuple[int, str, list[ToolRow]]]) -> None:
        """Rowids placed against those stored; a rowid another transaction took meanwhile
        moves its row to the next free slot."""
        wanted = [(first_rowid(sid, row), pk, row) for pk, sid, rows in batch for row in rows]
        if not wanted:
            return
        values = []
        for rowid, pk, row in place_rowids(wanted, self._taken_tool_rowids):
            text = index_text(row.body)
            values.append([self.agent_id, rowid, pk, row.entry_id, row.block, row.call_id,
                           row.tool, row.status, row.ts, row.duration_ms, row.result_entry_id,
                           text.exact, text.tsv, store_text(row.body)])
        with self.conn.cursor() as cursor:
            cursor.executemany(_INSERT, values)
        stored = {tuple(row) for row in self.conn.execute(
            "SELECT session_pk, entry_id, block FROM tool_index WHERE session_pk = ANY(%s::bigint[])",
            (list({pk for _, pk, _ in wanted}),)).fetchall()}
        for value in values:
            if (value[2], value[3], value[4]) in stored:
                continue
            while self.conn.execute(_INSERT, value).rowcount == 0:  # taken meanwhile
                value[1] = next_rowid(value[1])
        counts = tool_counts([(pk, row) for _rowid, pk, row in wanted])
        self.conn.execute(
            "UPDATE sessions SET tool_rows = tool_rows + s.n, tool_chars = tool_chars + s.c "
            "FROM unnest(%s::bigint[], %s::int[], %s::bigint[]) AS s(pk, n, c) "
            "WHERE sessions.pk = s.pk",
            (list(counts), [c[0] for c in counts.values()], [c[1] for c in counts.values()]))

    def _taken_tool_rowids(self, rowids: list[int]) -> set[int]:
        return {row[0] for row in self.conn.execute(
            "SELECT rowid FROM tool_index WHERE agent_id = %s AND rowid = ANY(%s::bigint[])",
            (self.agent_id, rowids)).fetchall()}

    def _open_calls(self, pk: int, call_id: str | None
                    ) -> tuple[str | None, list[tuple[str, int, str | None, str]]]:
        newest = self.conn.execute(
            "SELECT entry_id FROM tool_index WHERE session_pk = %s ORDER BY ts DESC, rowid DESC "
            "LIMIT 1", (pk,)).fetchone()
        if newest is None:
            return None, []
        rows = self.conn.execute(
            "SELECT entry_id, block, call_id, tool FROM tool_index WHERE session_pk = %s "
            "AND result_entry_id IS NULL AND (entry_id = %s OR call_id = %s) ORDER BY ts, block",
            (pk, newest[0], call_id)).fetchall()
        return newest[0], [tuple(row) for row in rows]  # type: ignore[misc]

    def _call_body(self, pk: int, entry_id: str) -> str | None:
        found = self.conn.execute(
            "SELECT body FROM events WHERE session_pk = %s AND entry_id = %s ORDER BY seq LIMIT 1",
            (pk, entry_id)).fetchone()
        return found[0] if found else None

    def _answer_tool(self, pk: int, row: ToolRow) -> None:
        found = self.conn.execute(
            "SELECT rowid, body FROM tool_index WHERE session_pk = %s AND result_entry_id IS NULL "
            "AND entry_id = %s AND block = %s", (pk, row.entry_id, row.block)).fetchone()
        if found is None:
            return
        rowid, old = found
        text = index_text(row.body)
        self.conn.execute(
            "UPDATE tool_index SET status = %s, duration_ms = %s, result_entry_id = %s, "
            "exact = %s, tsv = %s::tsvector, body = %s WHERE agent_id = %s AND rowid = %s",
            (row.status, row.duration_ms, row.result_entry_id, text.exact, text.tsv,
             store_text(row.body), self.agent_id, rowid))
        self.conn.execute("UPDATE sessions SET tool_chars = tool_chars + %s WHERE pk = %s",
                          (len(row.body) - len(load_text(old)), pk))
