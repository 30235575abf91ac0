"""Matching in one agent database (SPEC 5, 12): the caller's sessions become part of the FTS5
query, so rows of hidden sessions are skipped by the index instead of read and dropped.

Every index row carries its scope (core/tree_tags.py) in the ``scope`` column: ``s<pk>`` for its
session and ``t<pk>`` for the session and each one it descends from. A plan says which rows
may match, by the size of what has to be named:

- ``everything``: every row but those of a few hidden sessions (``NOT scope : (s1 OR ...)``),
  the operator's plan;
- ``anchor``: a ``tree`` caller's whole tree by its tree tag, plus or minus a few sessions;
- ``list``: a few sessions by their own tags;
- ``chunks``: more sessions, a ``list`` query per chunk of tags, merged (cost grows with the
  sessions named);
- ``stream``: the index's matches newest first, each looked up and kept if its session is
  visible (cost grows with the hidden matches passed over; chosen when the visible
  sessions hold a large share of the rows).

Whatever the plan, exactly the rows of the given sessions can match. Rows are found newest
first, so "the newest N matches" (the rank window, ``recent`` order) costs N rows, not every
match. ``match_all_then_filter`` is the straightforward plan (bm25 over every match, then the
session filter), kept as the benchmark's baseline and the tests' oracle.
"""

from __future__ import annotations

import heapq
import json
from itertools import islice
from typing import Any, Callable, Iterable, NamedTuple

from ...indexer import MAX_ROWID_DRIFT_MS, ROWID_SHIFT
from ...query import ParsedQuery
from ...rank import holding
from ..match_entry import MatchEntryPoints
from ..model import CorpusStats, Matches, MatchFilters, MatchRow, PartCount, SessionScope
from .driver import sqlite_errors
from .reads import SUMS, own_tag, tree_tag
from .tool_reads import ToolReads

MAX_TAGS = 48  # scope tags in one MATCH expression (an OR of tags costs per tag and per row)
# Estimated FTS5 work (tokens x matches of the rarest token) a query may cost before only the
# newest messages are searched (see Matching.match); ~0.4 us each, measured at 1M messages.
WORK_BUDGET = 60_000
# "chunks" costs about CHUNK_COST row lookups of "stream" per session named: the planner
# takes whichever of the two should pass over fewer rows.
CHUNK_COST = 120


class Index(NamedTuple):
    """One full-text index and its row table: the messages', or the tool calls' (issue 26).
    Both are matched, counted and ranked by the same code."""

    fts: str
    rows: str
    label: str  # what a MatchRow's role holds
    sums: str  # rows and characters per session (index_state)
    totals: str  # every session's


MESSAGES = Index("message_fts", "message_index", "m.role", SUMS,
                 "SELECT rows, chars FROM index_totals")
_TOOL_SUMS = "SELECT coalesce(sum(tool_rows), 0), coalesce(sum(tool_chars), 0) FROM index_state"
TOOLS = Index("tool_fts", "tool_index", "'tool'", _TOOL_SUMS, _TOOL_SUMS)


class _Group(NamedTuple):
    """Rows whose scope holds any ``include`` tag (every row when None) and no ``exclude``."""

    include: tuple[str, ...] | None
    exclude: tuple[str, ...] = ()

    def expr(self, body: str | None) -> str:
        """The MATCH expression: ``body`` (a body-column query) within this group."""
        terms = [] if body is None else [body]
        if self.include is not None:
            terms.append(f"scope : ({' OR '.join(self.include)})")
        expr = " AND ".join(f"({t})" for t in terms)
        if self.exclude:
            expr = f"({expr}) NOT scope : ({' OR '.join(self.exclude)})"
        return expr


class Plan(NamedTuple):
    kind: str  # everything | anchor | list | chunks | stream
    groups: tuple[_Group, ...] = ()  # tag plans: disjoint groups, their rows unioned
    sessions: tuple[int, ...] = ()  # stream: the visible sessions


def plan_for(scope: SessionScope, row_counts: Callable[[], tuple[int, int]], window: int) -> Plan:
    """The cheapest exact way to name ``scope.pks`` (see the module docstring);
    ``row_counts()`` gives (visible rows, all rows) when the choice needs them."""
    # Only what a plan names is sorted or walked: either side may hold every session of the
    # database (the operator's pks, a small caller's hidden ones), and this runs every search.
    options: list[tuple[int, Plan]] = []
    if len(scope.hidden) <= MAX_TAGS:
        excluded = _tags(scope.hidden)
        options.append((len(excluded), Plan("everything", (_Group(None, excluded),))))
    if scope.anchor is not None and len(scope.pks) - len(scope.covered) < MAX_TAGS:
        extra = scope.pks - scope.covered
        minus = scope.covered & scope.hidden  # walks the smaller of the two
        if 1 + len(extra) + len(minus) <= MAX_TAGS:
            include = (tree_tag(scope.anchor),) + _tags(extra)
            options.append((len(include) + len(minus),
                            Plan("anchor", (_Group(include, _tags(minus)),))))
    if len(scope.pks) <= MAX_TAGS:
        options.append((len(scope.pks), Plan("list", (_Group(_tags(scope.pks)),))))
    if options:
        return min(options, key=lambda option: option[0])[1]
    # Many sessions on both sides: chunks of tags cost per session named, a stream per
    # hidden match passed over (about window * all / visible rows for a common word).
    pks = sorted(scope.pks)
    visible_rows, all_rows = row_counts()
    passed = window * all_rows / max(visible_rows, 1)
    if len(pks) * CHUNK_COST < passed:
        chunks = [pks[i : i + MAX_TAGS] for i in range(0, len(pks), MAX_TAGS)]
        groups = tuple(_Group(tuple(own_tag(p) for p in chunk)) for chunk in chunks)
        return Plan("chunks", groups)
    return Plan("stream", sessions=tuple(pks))


def _tags(pks: Iterable[int]) -> tuple[str, ...]:
    return tuple(own_tag(p) for p in sorted(pks))


class Matching(ToolReads, MatchEntryPoints):
    """Matching methods of the reader and writer classes, over the reads (``match`` and
    ``match_tools``: storage/match_entry.py)."""

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
        """The visible matches to rank, newest first, and the statistics to rank them with.

        ``best``: every visible match, or the newest ``window`` when there are more
        (``windowed``); ``recent``: the newest ``limit``. ``filters`` and ``within`` (fewer
        sessions: a session filter) narrow the rows returned, not the statistics: those are
        of every row of ``scope`` (a caller's corpus does not change with a filter), and each
        part is counted up to ``window`` matches (rank.py scales from there).

        A query whose every token is common costs FTS5 about (tokens x matches of its rarest
        token) to evaluate (a long phrase of common words matching nothing scans them all).
        When that estimate, from visible counts only, passes ``WORK_BUDGET``, only the newest
        share of the visible messages it affords is searched; if that share holds fewer
        matches than were asked for, ``searched_since`` says where the search stopped.
        """
        if not (scope.pks if within is None else within.pks):
            return Matches([], False, CorpusStats(0, 0, ()))
        with sqlite_errors(self.path):
            plan = plan_for(scope, lambda: self._row_counts(scope, ix), window)
            rows_plan = plan if within is None else plan_for(
                within, lambda: self._row_counts(within, ix), window
            )
            span = _Span(self, plan, scope, ix)  # the visible rows' totals and time span, when needed
            tokens = _tokens(query)
            counted: dict[tuple[str, bool], PartCount] = {}
            bound = None
            if len(tokens) > 1:
                for token in dict.fromkeys(tokens):
                    found = self._newest(plan, _token_body(*token), window + 1, MatchFilters(),
                                         ix=ix)
                    counted[token] = _part_count(span, found, window)
                    # The rarest token has at most these: within budget whatever the others
                    # hold (a CJK word's characters, each counted, cost a caller who sees
                    # 1,000 sessions ~1.5 ms apiece); unused counts are made where needed.
                    if len(found) <= window and len(tokens) * len(found) <= WORK_BUDGET:
                        break
                else:
                    rarest = min(holding(counted[t], span.rows) for t in counted)
                    work = len(tokens) * rarest
                    if work > WORK_BUDGET:
                        bound = span.share(WORK_BUDGET / work)
            wanted = limit if order == "recent" else window
            newest = self._newest(rows_plan, _body(query.fts), wanted + 1, filters, bound, ix)
            windowed = order == "best" and len(newest) > window
            cut = bound is not None and len(newest) <= wanted
            rows = self._rows(newest[:wanted], ix, texts)
            counts: list[PartCount] = []
            reuse = (len(query.parts) == 1 and not filters and within is None
                     and order == "best" and bound is None)
            for k, part in enumerate(query.parts if rows else ()):
                own = _tokens_of(query, k)
                if len(own) == 1 and own[0] in counted:  # a word: counted above
                    counts.append(counted[own[0]])
                    continue
                # the only part, unfiltered, was counted by the candidate query itself
                found = newest if reuse else self._newest(plan, _body(part), window + 1,
                                                          MatchFilters(), bound, ix)
                counts.append(_part_count(span, found, window, bound))
            stats = CorpusStats(*(span.totals() if rows else (0, 0)), tuple(counts))
        return Matches(rows, windowed, stats, bound >> ROWID_SHIFT if cut and bound else None)

    # ------------------------------------------------------------------ the steps

    def _totals(self, scope: SessionScope, ix: Index = MESSAGES) -> tuple[int, int]:
        """Rows and characters of the visible sessions: summed over them when they are the
        smaller side, else every session's less the hidden ones'."""
        sql = f"{ix.sums} WHERE session_pk IN (SELECT value FROM json_each(?))"
        if len(scope.pks) <= len(scope.hidden):
            return self._one(sql, (json.dumps(sorted(scope.pks)),))
        rows, chars = self._every_session_totals(ix)
        if not scope.hidden:
            return rows, chars
        hidden_rows, hidden_chars = self._one(sql, (json.dumps(sorted(scope.hidden)),))
        return rows - hidden_rows, chars - hidden_chars

    def _row_counts(self, scope: SessionScope, ix: Index = MESSAGES) -> tuple[int, int]:
        return self._totals(scope, ix)[0], self._every_session_totals(ix)[0]

    def _every_session_totals(self, ix: Index = MESSAGES) -> tuple[int, int]:
        """Rows and characters of every session: for messages the row schema migration 8's
        triggers keep (summed again only if someone deleted that row; ``verify`` names it);
        for tool calls summed (a tool search is the operator's, and rarer)."""
        return self._one(ix.totals) or self._one(ix.sums)

    def _newest(self, plan: Plan, body: str, n: int, filters: MatchFilters,
                since: int | None = None, ix: Index = MESSAGES) -> list[int]:
        """Rowids of the newest ``n`` matches of ``body`` the plan allows (at or after rowid
        ``since``), newest first."""
        where, params = _filter_sql(filters)
        if since is not None:
            where.append("f.rowid >= ?")
            params.append(since)
        join = f"JOIN {ix.rows} m ON m.rowid = f.rowid " if where or plan.kind == "stream" else ""
        if plan.kind == "stream":
            # "+": never drive the query from the session index (a MATCH per row is slow)
            where.append("+m.session_pk IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(plan.sessions))
            exprs = [body]
        else:
            exprs = [group.expr(body) for group in plan.groups]
        sql = (
            f"SELECT f.rowid FROM {ix.fts} f {join}WHERE {ix.fts} MATCH ?"
            f"{''.join(' AND ' + w for w in where)} ORDER BY f.rowid DESC LIMIT ?"
        )
        found = [
            [r[0] for r in self.conn.execute(sql, (expr, *params, n))] for expr in exprs
        ]
        if len(found) == 1:
            return found[0]
        return list(islice(heapq.merge(*found, reverse=True), n))

    def rows_with_text(self, rowids: list[int]) -> list[MatchRow]:
        with sqlite_errors(self.path):
            return self._rows(rowids)

    def _rows(self, rowids: list[int], ix: Index = MESSAGES, texts: bool = True
              ) -> list[MatchRow]:
        """The kept rows with their text (unless not ``texts``: an empty one), newest first.
        The text is read from the index's own content table (FTS5's ``%_content``): a join
        through the virtual table would cost several times more; it is most of the cost (a
        thousand rows: ~2 ms with it, ~0.9 without, at 1M). The rowids are integers this
        module produced, so they are written into the statement (cheaper than a parameter
        SQLite has to parse as JSON)."""
        if not rowids:
            return []
        listed = ",".join(str(int(rowid)) for rowid in rowids)
        if not texts:
            found = self.conn.execute(
                f"SELECT m.rowid, m.session_pk, m.entry_id, {ix.label}, m.ts, '' FROM {ix.rows} m "
                f"WHERE m.rowid IN ({listed}) ORDER BY m.rowid DESC"
            ).fetchall()
            return [MatchRow._make(row) for row in found]
        found = self.conn.execute(
            f"SELECT m.rowid, m.session_pk, m.entry_id, {ix.label}, m.ts, c.c0 FROM {ix.rows} m "
            f"JOIN {ix.fts}_content c ON c.id = m.rowid WHERE m.rowid IN ({listed}) "
            "ORDER BY m.rowid DESC"
        ).fetchall()
        return [MatchRow._make(row) for row in found]

    def _visible_edge(self, plan: Plan, scope: SessionScope, direction: str,
                      ix: Index = MESSAGES) -> int | None:
        """The newest (DESC) or oldest (ASC) visible rowid."""
        if plan.kind == "stream":
            row = self._one(
                f"SELECT rowid FROM {ix.rows} WHERE +session_pk IN "
                f"(SELECT value FROM json_each(?)) ORDER BY rowid {direction} LIMIT 1",
                (json.dumps(plan.sessions),),
            )
            return row[0] if row else None
        edges = []
        for group in plan.groups:
            if group.include is None:
                row = self._one(
                    f"SELECT rowid FROM {ix.rows} WHERE +session_pk NOT IN "
                    f"(SELECT value FROM json_each(?)) ORDER BY rowid {direction} LIMIT 1",
                    (json.dumps(sorted(scope.hidden)),),
                )
            else:
                row = self._one(
                    f"SELECT rowid FROM {ix.fts} WHERE {ix.fts} MATCH ? "
                    f"ORDER BY rowid {direction} LIMIT 1",
                    (group.expr(None),),
                )
            if row:
                edges.append(row[0])
        if not edges:
            return None
        return max(edges) if direction == "DESC" else min(edges)

    # ------------------------------------------------------------------ the baseline

    def match_all_then_filter(
        self, query: ParsedQuery, pks: Iterable[int], limit: int, order: str = "best",
        filters: MatchFilters = MatchFilters(),
    ) -> list[tuple[MatchRow, float]]:
        """The straightforward plan: FTS5's bm25 over every match, then keep the rows of
        ``pks``; the top ``limit`` with their bm25 (lower is better). Not used by search."""
        where, params = _filter_sql(filters)
        where.append("+m.session_pk IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(sorted(pks)))
        order_by = "f.rowid DESC" if order == "recent" else "score, f.rowid DESC"
        with sqlite_errors(self.path):
            top = self.conn.execute(
                "SELECT f.rowid, bm25(message_fts, 1.0, 0.0) AS score FROM message_fts f "
                "JOIN message_index m ON m.rowid = f.rowid WHERE message_fts MATCH ? AND "
                f"{' AND '.join(where)} ORDER BY {order_by} LIMIT ?",
                (_body(query.fts), *params, limit),
            ).fetchall()
            rows = {row.rowid: row for row in self._rows([r[0] for r in top])}
        return [(rows[rowid], score) for rowid, score in top]


class _Span:
    """The visible rows on the time axis: how many, the newest and the oldest rowid. Rows
    newer than a point are estimated as if spread evenly between them: counting them in the
    index would cost as many steps as rows (a rare word's thousandth match may lie a month
    back), and what needs the number (rank.py's estimate of a common part's frequency, the
    share of messages a costly query may search) needs no more than an estimate."""

    def __init__(self, db: Matching, plan: Plan, scope: SessionScope, ix: Index = MESSAGES
                 ) -> None:
        self.db, self.plan, self.scope, self.ix = db, plan, scope, ix
        self._totals: tuple[int, int] | None = None
        self._edges: tuple[int | None, int | None] | None = None

    def totals(self) -> tuple[int, int]:
        """The visible rows and their characters."""
        if self._totals is None:
            self._totals = self.db._totals(self.scope, self.ix)
        return self._totals

    @property
    def rows(self) -> int:
        return self.totals()[0]

    def edges(self) -> tuple[int | None, int | None]:
        if self._edges is None:
            self._edges = (self.db._visible_edge(self.plan, self.scope, "DESC", self.ix),
                           self.db._visible_edge(self.plan, self.scope, "ASC", self.ix))
        return self._edges

    def newer(self, rowid: int) -> int:
        """About how many visible rows have a rowid at least ``rowid``."""
        newest, oldest = self.edges()
        if newest is None or oldest is None:
            return 0
        if rowid <= oldest:
            return self.rows
        return max(1, round(self.rows * (newest - rowid + 1) / (newest - oldest + 1)))

    def share(self, fraction: float) -> int:
        """A rowid bound (a whole millisecond, so "since" is exact) leaving about
        ``fraction`` of the visible rows at or after it."""
        newest, oldest = self.edges()
        if newest is None or oldest is None:
            return 0
        bound = newest - int((newest - oldest) * min(fraction, 1.0))
        return bound >> ROWID_SHIFT << ROWID_SHIFT


def _part_count(span: _Span, found: list[int], cap: int, since: int | None = None) -> PartCount:
    """Matches found, up to ``cap``; past it (or when only rows at or after ``since`` were
    searched), with the visible rows of the stretch searched, to scale from."""
    if len(found) > cap:
        return PartCount(cap, span.newer(found[cap - 1]))
    if since is not None:
        return PartCount(len(found), span.newer(since))
    return PartCount(len(found))


def _body(expr: str) -> str:
    return f"body : ({expr})"


def _tokens(query: ParsedQuery) -> list[tuple[str, bool]]:
    """Every token of the query, with whether it matches as a prefix."""
    return [token for k in range(len(query.phrases)) for token in _tokens_of(query, k)]


def _tokens_of(query: ParsedQuery, k: int) -> list[tuple[str, bool]]:
    phrase = query.phrases[k]
    last = query.prefix and k == len(query.phrases) - 1
    return [(tok, last and i == len(phrase) - 1) for i, tok in enumerate(phrase)]


def _token_body(token: str, prefix: bool) -> str:
    quoted = token.replace('"', '""')
    return _body(f'"{quoted}" *' if prefix else f'"{quoted}"')


def _filter_sql(filters: MatchFilters) -> tuple[list[str], list[Any]]:
    """Filters on the joined ``message_index m``; the time range also bounds ``f.rowid``
    (rowids follow message time, at most MAX_ROWID_DRIFT_MS late), which the index applies."""
    where: list[str] = []
    params: list[Any] = []
    if filters.role is not None:
        where.append("m.role = ?")
        params.append(filters.role)
    if filters.tool is not None:  # tool rows: the column compares ignoring ASCII case
        where.append("m.tool = ?")
        params.append(filters.tool)
    if filters.failed:
        where.append("m.status = 'failed'")
    if filters.since_ms is not None:
        where += ["f.rowid >= ?", "m.ts >= ?"]
        params += [max(filters.since_ms, 0) << ROWID_SHIFT, filters.since_ms]
    if filters.until_ms is not None:
        where += ["f.rowid < ?", "m.ts <= ?"]
        bound = max(filters.until_ms + MAX_ROWID_DRIFT_MS + 1, 0)
        params += [min(bound, (1 << (63 - ROWID_SHIFT)) - 1) << ROWID_SHIFT, filters.until_ms]
    return where, params
