"""The tool-call index's reads on PostgreSQL, as the SQLite backend's (sqlite/tool_reads.py)."""

from __future__ import annotations

from typing import Any

from ..model import MatchFilters, SessionScope, StoredTool
from .reads import Reads
from .text import load_text

_SELECT = ("SELECT rowid, session_pk, entry_id, block, call_id, tool, status, ts, duration_ms, "
           "result_entry_id, body FROM tool_index ")


def _stored(row: Any) -> StoredTool:
    return StoredTool(*row[:10], load_text(row[10]))


class ToolReads(Reads):
    def tools_by_rowid(self, rowids: list[int]) -> list[StoredTool]:
        if not rowids:
            return []
        return [_stored(row) for row in self._all(
            f"{_SELECT}WHERE agent_id = %s AND rowid = ANY(%s::bigint[]) ORDER BY rowid DESC",
            (self.agent_id, rowids))]

    def session_tools(self, pk: int) -> list[StoredTool]:
        return [_stored(row) for row in self._all(
            f"{_SELECT}WHERE session_pk = %s ORDER BY ts, entry_id COLLATE \"C\", block", (pk,))]

    def tool_calls(self, scope: SessionScope, filters: MatchFilters, limit: int
                   ) -> list[StoredTool]:
        if not scope.pks:
            return []
        params: dict[str, Any] = {"agent": self.agent_id, "n": limit}
        where = ["agent_id = %(agent)s"]
        if len(scope.hidden) < len(scope.pks):
            if scope.hidden:
                where.append("session_pk <> ALL(%(hidden)s::bigint[])")
                params["hidden"] = sorted(scope.hidden)
        else:
            where.append("session_pk = ANY(%(pks)s::bigint[])")
            params["pks"] = sorted(scope.pks)
        if filters.tool is not None:
            where.append('lower(tool COLLATE "C") = lower(%(tool)s COLLATE "C")')
            params["tool"] = filters.tool
        if filters.failed:
            where.append("status = 'failed'")
        if filters.since_ms is not None:
            where.append("ts >= %(since)s")
            params["since"] = filters.since_ms
        if filters.until_ms is not None:
            where.append("ts <= %(until)s")
            params["until"] = filters.until_ms
        return [_stored(row) for row in self._all(
            f"{_SELECT}WHERE {' AND '.join(where)} ORDER BY rowid DESC LIMIT %(n)s", params)]
