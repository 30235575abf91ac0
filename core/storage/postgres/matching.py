"""Matching on PostgreSQL: the same rows as SQLite's FTS5, and the same statistics, for
``core/rank.py`` to rank (one ranking rule for both backends).

A request, in one read snapshot:

1. rows whose tsvector has no positions (``fts.py``: huge rows) that could match are read and
   matched token by token in Python (rare);
2. the newest matches among the sessions asked for, newest first (``window`` of them to
   rank, or ``limit`` newest), the filters inside the statement: the GIN index finds the
   matches, the rowid order is the index's own;
3. when rows were found, the statistics of the visible sessions (``scope``): their rows and
   characters (per-session counters) and, per query part, its matches counted up to
   ``window``; past that, about how many visible rows are at least as new as the
   ``window``-th newest match, which rank.py scales from;
4. the text of the rows kept, and only theirs.

The visible sessions are named by the smaller side: the sessions a caller sees, or the few
it does not (the operator's case).
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, NamedTuple

from ...query import ParsedQuery
from ..match_entry import MatchEntryPoints
from ..model import CorpusStats, Matches, MatchFilters, MatchRow, PartCount, SessionScope
from .fts import CompiledQuery, compile_query, phrase_counts, token_list
from .text import load_text
from .tool_reads import ToolReads


class Index(NamedTuple):
    """One index: the messages' (text apart, in message_text) or the tool calls' (text inline,
    issue 26), matched, counted and ranked by the same code."""

    table: str
    text: str  # the row's text, as an expression over ``m``
    label: str  # what a MatchRow's role holds
    counters: str  # the sessions' columns counting its rows and characters


MESSAGES = Index("message_index", "(SELECT t.body FROM message_text t WHERE t.agent_id = "
                 "m.agent_id AND t.rowid = m.rowid)", "m.role", "index_rows, index_chars")
TOOLS = Index("tool_index", "m.body", "'tool'", "tool_rows, tool_chars")


@dataclass(frozen=True)
class _Checked:
    """A row matched in Python (its tsvector has no positions)."""

    rowid: int
    session_pk: int
    role: str
    ts: int
    freqs: list[int]
    tool: str = ""  # tool rows: the tool's name and the call's status
    status: str = ""


class Matching(ToolReads, MatchEntryPoints):
    """As the SQLite backend's (``match`` and ``match_tools``: storage/match_entry.py)."""

    MESSAGES_INDEX = MESSAGES
    TOOLS_INDEX = TOOLS

    def _match(
        self,
        ix: Index,
        query: ParsedQuery,
        scope: SessionScope,
        window: int,
        limit: int,
        order: str,
        filters: MatchFilters,
        within: SessionScope | None,
        texts: bool = True,
    ) -> Matches:
        """The visible matches to rank, newest first, and the statistics of every row of
        ``scope`` to rank them with. Every match is searched (no work budget:
        ``searched_since`` stays None)."""
        rows_of = scope if within is None else within
        if not rows_of.pks:
            return Matches([], False, CorpusStats(0, 0, ()))
        compiled = compile_query(query)
        wanted = limit if order == "recent" else window
        with nullcontext() if self.in_transaction else self.snapshot():
            checked = self._checked_rows(compiled, ix)
            newest = self._newest(compiled.matches, compiled.verify_all, rows_of, filters,
                                  wanted + 1, [c for c in checked if all(c.freqs)], ix)
            windowed = order == "best" and len(newest) > window
            rows = self._rows(newest[:wanted], ix, texts)
            if not rows:
                return Matches([], False, CorpusStats(0, 0, ()))
            visible_rows, chars = self._totals(scope, ix)
            # the only part, unfiltered, was counted by the query for the rows
            reuse = (len(compiled.phrases) == 1 and not filters and within is None
                     and order == "best")
            edges: list[tuple[int | None, int | None]] = []
            counts = []
            for i, phrase in enumerate(compiled.phrases):
                found = newest if reuse else self._newest(
                    phrase, compiled.verify_all, scope, MatchFilters(), window + 1,
                    [c for c in checked if c.freqs[i]], ix,
                )
                if len(found) > window:
                    edges = edges or [self._edges(scope, ix)]
                    counts.append(PartCount(window, _newer(edges[0], found[window - 1],
                                                           visible_rows)))
                else:
                    counts.append(PartCount(len(found)))
        return Matches(rows, windowed, CorpusStats(visible_rows, chars, tuple(counts)))

    # ------------------------------------------------------------------ the steps

    def _visible(self, scope: SessionScope, params: dict[str, Any]) -> str:
        """The condition on ``session_pk`` naming the scope by its smaller side."""
        if len(scope.hidden) < len(scope.pks):
            params["hidden"] = sorted(scope.hidden)
            return "session_pk <> ALL(%(hidden)s::bigint[])"
        params["pks"] = sorted(scope.pks)
        return "session_pk = ANY(%(pks)s::bigint[])"

    def _newest(self, tsquery: str, python_only: bool, scope: SessionScope,
                filters: MatchFilters, n: int, checked: list[_Checked],
                ix: Index = MESSAGES) -> list[int]:
        """Rowids of the newest ``n`` matches among the scope's sessions, newest first: the
        exact rows the index finds, and those matched in Python."""
        params: dict[str, Any] = {"agent": self.agent_id, "q": tsquery, "n": n}
        where = [self._visible(scope, params)]
        for clause, name, value in (
            ("role = %(role)s", "role", filters.role),
            ("ts >= %(since)s", "since", filters.since_ms),
            ("ts <= %(until)s", "until", filters.until_ms),
        ):
            if value is not None:
                where.append(clause)
                params[name] = value
        if filters.tool is not None:  # ASCII case folded, as SQLite's NOCASE
            where.append('lower(tool COLLATE "C") = lower(%(tool)s COLLATE "C")')
            params["tool"] = filters.tool
        if filters.failed:
            where.append("status = 'failed'")
        found = [] if python_only else [row[0] for row in self._all(
            f"SELECT rowid FROM {ix.table} WHERE agent_id = %(agent)s AND exact "
            f"AND tsv @@ %(q)s::tsquery AND {' AND '.join(where)} ORDER BY rowid DESC LIMIT %(n)s",
            params,
        )]
        extra = [
            c.rowid for c in checked
            if c.session_pk in scope.pks
            and (filters.role is None or c.role == filters.role)
            and (filters.tool is None or c.tool.lower() == filters.tool.lower())
            and (not filters.failed or c.status == "failed")
            and (filters.since_ms is None or c.ts >= filters.since_ms)
            and (filters.until_ms is None or c.ts <= filters.until_ms)
        ]
        return sorted(found + extra, reverse=True)[:n] if extra else found

    def _totals(self, scope: SessionScope, ix: Index = MESSAGES) -> tuple[int, int]:
        """Index rows and their characters of the scope's sessions (the counters kept per
        session by the write path)."""
        params: dict[str, Any] = {"agent": self.agent_id}
        where = self._visible(scope, params).replace("session_pk", "pk")
        row = self._one(
            f"SELECT {', '.join(f'coalesce(sum({c.strip()}), 0)' for c in ix.counters.split(','))} "
            f"FROM sessions WHERE agent_id = %(agent)s AND {where}",
            params,
        )
        return int(row[0]), int(row[1])

    def _edges(self, scope: SessionScope, ix: Index = MESSAGES) -> tuple[int | None, int | None]:
        """The newest and the oldest rowid of the scope's rows."""
        params: dict[str, Any] = {"agent": self.agent_id}
        where = self._visible(scope, params)
        newest, oldest = self._one(
            f"SELECT max(rowid), min(rowid) FROM {ix.table} WHERE agent_id = %(agent)s "
            f"AND {where}",
            params,
        )
        return newest, oldest

    def _checked_rows(self, compiled: CompiledQuery, ix: Index = MESSAGES) -> list[_Checked]:
        """Rows whose tsvector has no positions (or all rows, when a query token was too long
        for a lexeme) that could match some part, with each part's frequency."""
        exact_too = "" if compiled.verify_all else "NOT m.exact AND "
        tool = "m.tool, m.status" if ix is TOOLS else "'', ''"
        found = self._all(
            f"SELECT m.rowid, m.session_pk, {ix.label}, m.ts, {ix.text}, {tool} "
            f"FROM {ix.table} m WHERE m.agent_id = %s AND {exact_too}m.tsv @@ %s::tsquery",
            (self.agent_id, compiled.candidates),
        )
        checked = []
        for rowid, session_pk, role, ts, body, tool_name, status in found:
            freqs = phrase_counts(token_list(load_text(body or "")), compiled)
            if any(freqs):
                checked.append(_Checked(rowid, session_pk, role, ts, freqs, tool_name, status))
        return checked

    def rows_with_text(self, rowids: list[int]) -> list[MatchRow]:
        return self._rows(rowids)

    def _rows(self, rowids: list[int], ix: Index = MESSAGES, texts: bool = True
              ) -> list[MatchRow]:
        """The kept rows with their text (unless not ``texts``: an empty one), newest first.
        Each text is looked up by its key (a join would tempt the planner to hash the whole
        text table for a thousand rows)."""
        if not rowids:
            return []
        if not texts:
            plain = self._all(
                f"SELECT m.rowid, m.session_pk, m.entry_id, {ix.label}, m.ts FROM {ix.table} m "
                "WHERE m.agent_id = %s AND m.rowid = ANY(%s::bigint[]) ORDER BY m.rowid DESC",
                (self.agent_id, rowids),
            )
            return [MatchRow(*row, "") for row in plain]
        rows = self._all(
            f"SELECT m.rowid, m.session_pk, m.entry_id, {ix.label}, m.ts, {ix.text} "
            f"FROM {ix.table} m WHERE m.agent_id = %s AND m.rowid = ANY(%s::bigint[]) "
            "ORDER BY m.rowid DESC",
            (self.agent_id, rowids),
        )
        return [MatchRow(*row[:5], load_text(row[5] or "")) for row in rows]


def _newer(edges: tuple[int | None, int | None], rowid: int, rows: int) -> int:
    """About how many of the scope's ``rows`` rows have a rowid at least ``rowid``, as if
    spread evenly between the newest and the oldest (the SQLite backend's estimate, so both
    rank alike)."""
    newest, oldest = edges
    if newest is None or oldest is None:
        return 0
    if rowid <= oldest:
        return rows
    return max(1, round(rows * (newest - rowid + 1) / (newest - oldest + 1)))
