"""The tool-call index's reads on SQLite (docs/tool-calls.md): rows by rowid (a search's
hits), a session's rows, and the calls of the sessions a caller sees, newest first, without
the full-text index (``backscroll calls``, a tool search with filters and no words)."""

from __future__ import annotations

import json
from typing import Any

from ...indexer import MAX_ROWID_DRIFT_MS, ROWID_SHIFT
from ..model import MatchFilters, SessionScope, StoredTool
from .driver import sqlite_errors
from .reads import Reads

_SELECT = ("SELECT t.rowid, t.session_pk, t.entry_id, t.block, t.call_id, t.tool, t.status, "
           "t.ts, t.duration_ms, t.result_entry_id, c.c0 FROM tool_index t "
           "JOIN tool_fts_content c ON c.id = t.rowid ")


class ToolReads(Reads):
    def tools_by_rowid(self, rowids: list[int]) -> list[StoredTool]:
        """The rows of ``rowids`` (newest first)."""
        if not rowids:
            return []
        with sqlite_errors(self.path):
            return [StoredTool._make(row) for row in self.conn.execute(
                f"{_SELECT}WHERE t.rowid IN (SELECT value FROM json_each(?)) "
                "ORDER BY t.rowid DESC", (json.dumps(rowids),))]

    def session_tools(self, pk: int) -> list[StoredTool]:
        """A session's rows, in call order (time, then block)."""
        with sqlite_errors(self.path):
            return [StoredTool._make(row) for row in self.conn.execute(
                f"{_SELECT}WHERE t.session_pk = ? ORDER BY t.ts, t.entry_id, t.block", (pk,))]

    def tool_calls(self, scope: SessionScope, filters: MatchFilters, limit: int
                   ) -> list[StoredTool]:
        """The newest ``limit`` calls of the scope's sessions passing ``filters``."""
        if not scope.pks:
            return []
        where: list[str] = []
        params: list[Any] = []
        few = len(scope.hidden) >= len(scope.pks)
        if not few:  # the scope by its smaller side
            if scope.hidden:
                where.append("+t.session_pk NOT IN (SELECT value FROM json_each(?))")
                params.append(json.dumps(sorted(scope.hidden)))
        else:
            where.append("t.session_pk IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(sorted(scope.pks)))
        if filters.tool is not None:  # a few sessions: their rows, not every call of the tool
            where.append("+t.tool = ?" if few else "t.tool = ?")
            params.append(filters.tool)
        if filters.failed:
            where.append("t.status = 'failed'")
        if filters.since_ms is not None:
            where += ["t.rowid >= ?", "t.ts >= ?"]
            params += [max(filters.since_ms, 0) << ROWID_SHIFT, filters.since_ms]
        if filters.until_ms is not None:
            bound = max(filters.until_ms + MAX_ROWID_DRIFT_MS + 1, 0)
            where += ["t.rowid < ?", "t.ts <= ?"]
            params += [min(bound, (1 << (63 - ROWID_SHIFT)) - 1) << ROWID_SHIFT,
                       filters.until_ms]
        # the rowids first: only the kept rows' text is read
        sql = (f"SELECT t.rowid FROM tool_index t {'WHERE ' + ' AND '.join(where) if where else ''} "
               "ORDER BY t.rowid DESC LIMIT ?")
        with sqlite_errors(self.path):
            rowids = [row[0] for row in self.conn.execute(sql, (*params, limit))]
        return self.tools_by_rowid(rowids)
