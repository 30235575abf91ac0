"""Matching and ranking on PostgreSQL: the same rows as SQLite's FTS5, ranked by the same bm25.

The request, in order (one read snapshot):

1. the agent's bm25 statistics: rows and tokens (per-session counters), and per query part
   the rows that contain it (a count on the GIN index);
2. rows whose tsvector lacks positions (``fts.py``: huge rows) that could match are read and
   checked token by token in Python, with their frequencies;
3. with a rank window, the rowid of the ``rank_window``-th newest match (rowids follow time);
4. the top rows: visibility (the session filter), role and time run inside the query, before
   the limit; bm25 in SQL from ``ts_rank_cd`` with unit weights (phrase occurrences) and the
   stored token count; ties newest first;
5. metadata and text for the rows kept only.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from ...query import ParsedQuery
from ..model import MatchRow, SessionFilter
from .fts import CompiledQuery, bm25, bm25_sql, compile_query, idf, phrase_counts, token_list
from .reads import Reads
from .text import load_text

UNIT_WEIGHTS = "'{1,1,1,1}'::float4[]"
# Rows counted at most for the IDF of a phrase or prefix part (see _exact_hits, docs/postgres.md).
COUNT_CAP = 20_000


@dataclass(frozen=True)
class _Checked:
    """A row matched in Python (no positions in its tsvector)."""

    rowid: int
    session_pk: int
    role: str
    ts: int
    ntokens: int
    freqs: list[int]


class Match(Reads):
    def match(
        self,
        query: ParsedQuery,
        sessions: SessionFilter,
        limit: int,
        order: str = "best",
        role: str | None = None,
        since_ms: int | None = None,
        until_ms: int | None = None,
        rank_window: int | None = None,
    ) -> tuple[list[MatchRow], bool]:
        compiled = compile_query(query)
        where = ["agent_id = %(agent)s"]
        params: dict[str, Any] = {"agent": self.agent_id, "q": compiled.matches}
        if sessions.pks or not sessions.exclude:
            where.append(
                "session_pk <> ALL(%(pks)s::bigint[])" if sessions.exclude
                else "session_pk = ANY(%(pks)s::bigint[])"
            )
            params["pks"] = list(sessions.pks)
        for clause, name, value in (
            ("role = %(role)s", "role", role),
            ("ts >= %(since)s", "since", since_ms),
            ("ts <= %(until)s", "until", until_ms),
        ):
            if value is not None:
                where.append(clause)
                params[name] = value

        def wanted(row: _Checked) -> bool:
            in_filter = (row.session_pk in pks) != sessions.exclude if (
                sessions.pks or not sessions.exclude
            ) else True
            return (
                all(row.freqs)
                and in_filter
                and (role is None or row.role == role)
                and (since_ms is None or row.ts >= since_ms)
                and (until_ms is None or row.ts <= until_ms)
            )

        pks = set(sessions.pks)
        scope = nullcontext() if self.in_transaction else self.snapshot()
        with scope:
            rows_total, tokens_total = self.bm25_totals()
            avgdl = tokens_total / rows_total if rows_total else 1.0
            checked = self._checked_rows(compiled)
            for i, phrase in enumerate(compiled.phrases):
                hits = sum(1 for row in checked if row.freqs[i])
                if not compiled.verify_all:
                    hits += self._exact_hits(compiled.lookups[i], phrase, rows_total)
                params[f"idf{i}"] = idf(rows_total, hits)
            params["avgdl"] = avgdl
            idfs = [params[f"idf{i}"] for i in range(len(compiled.phrases))]
            extra = [
                (row.rowid, bm25([float(f) for f in row.freqs], row.ntokens, idfs, avgdl))
                for row in checked
                if wanted(row)
            ]
            sql_side = not compiled.verify_all
            base = " AND ".join(where) + " AND exact AND tsv @@ %(q)s::tsquery"
            cutoff = None
            if order == "best" and rank_window:
                cutoff = self._cutoff(base, params, rank_window, [r for r, _ in extra], sql_side)
            if cutoff is not None:
                base += " AND rowid >= %(cutoff)s"
                params["cutoff"] = cutoff
                extra = [(r, s) for r, s in extra if r >= cutoff]
            top = self._top(compiled, base, params, order, limit) if sql_side else []
            ranked = sorted(
                top + extra,
                key=(lambda c: -c[0]) if order == "recent" else (lambda c: (c[1], -c[0])),
            )[:limit]
            details = self._details([rowid for rowid, _ in ranked])
        rows = [
            MatchRow(rowid, *details[rowid], score) for rowid, score in ranked if rowid in details
        ]
        return rows, cutoff is not None

    def _exact_hits(self, lexeme: str | None, phrase: str, rows_total: int) -> int:
        """Exact rows holding a part: a whole word's document frequency is stored; a phrase
        or a prefix is counted, up to ``COUNT_CAP`` rows (or just past half the rows: from
        there on FTS5 clamps the IDF anyway, so the answer is exact below 2 x COUNT_CAP rows)."""
        if lexeme is not None:
            row = self._one(
                "SELECT rows FROM lexeme_df WHERE agent_id = %s AND lexeme = %s",
                (self.agent_id, lexeme),
            )
            return row[0] if row else 0
        cap = min(COUNT_CAP, rows_total // 2 + 1)
        return self._one(
            "SELECT count(*) FROM (SELECT 1 FROM message_index "
            "WHERE agent_id = %s AND exact AND tsv @@ %s::tsquery LIMIT %s) hits",
            (self.agent_id, phrase, cap),
        )[0]

    def _checked_rows(self, compiled: CompiledQuery) -> list[_Checked]:
        """Rows whose tsvector has no positions (or all rows, when a query token was too long
        for a lexeme) that could match some part, with each part's frequency."""
        exact_too = "" if compiled.verify_all else "NOT exact AND "
        found = self._all(
            "SELECT rowid, session_pk, role, ts, ntokens, body FROM message_index "
            f"WHERE agent_id = %s AND {exact_too}tsv @@ %s::tsquery",
            (self.agent_id, compiled.candidates),
        )
        checked = []
        for rowid, session_pk, role, ts, ntokens, body in found:
            freqs = phrase_counts(token_list(load_text(body)), compiled)
            if any(freqs):
                checked.append(_Checked(rowid, session_pk, role, ts, ntokens, freqs))
        return checked

    def _cutoff(self, base: str, params: dict[str, Any], window: int, extra: list[int],
                sql_side: bool) -> int | None:
        """The rowid of the ``window``-th newest match, or None if fewer match."""
        if not extra:
            row = self._one(
                f"SELECT rowid FROM message_index WHERE {base} ORDER BY rowid DESC "
                "OFFSET %(skip)s LIMIT 1",
                {**params, "skip": window - 1},
            )
            return row[0] if row else None
        newest = []
        if sql_side:
            newest = [
                r[0]
                for r in self._all(
                    f"SELECT rowid FROM message_index WHERE {base} ORDER BY rowid DESC "
                    "LIMIT %(window)s",
                    {**params, "window": window},
                )
            ]
        merged = sorted(newest + extra, reverse=True)
        return merged[window - 1] if len(merged) >= window else None

    def _top(self, compiled: CompiledQuery, base: str, params: dict[str, Any], order: str,
             limit: int) -> list[tuple[int, float]]:
        freqs = ", ".join(
            f"ts_rank_cd({UNIT_WEIGHTS}, tsv, %(p{i})s::tsquery, 0)::float8 AS f{i}"
            for i in range(len(compiled.phrases))
        )
        for i, phrase in enumerate(compiled.phrases):
            params[f"p{i}"] = phrase
        score = bm25_sql(len(compiled.phrases))
        if order == "recent":
            sql = (
                f"SELECT rowid, {score} FROM (SELECT rowid, ntokens, {freqs} FROM "
                f"(SELECT rowid, ntokens, tsv FROM message_index WHERE {base} "
                "ORDER BY rowid DESC LIMIT %(limit)s) newest) counted ORDER BY rowid DESC"
            )
        else:
            sql = (
                f"SELECT rowid, score FROM (SELECT rowid, {score} AS score FROM "
                f"(SELECT rowid, ntokens, {freqs} FROM message_index WHERE {base}) counted) "
                "scored ORDER BY score, rowid DESC LIMIT %(limit)s"
            )
        return [(rowid, score) for rowid, score in self._all(sql, {**params, "limit": limit})]

    def _details(self, rowids: list[int]) -> dict[int, tuple[int, str, str, int, str]]:
        if not rowids:
            return {}
        rows = self._all(
            "SELECT rowid, session_pk, entry_id, role, ts, body FROM message_index "
            "WHERE agent_id = %s AND rowid = ANY(%s::bigint[])",
            (self.agent_id, rowids),
        )
        return {row[0]: (row[1], row[2], row[3], row[4], load_text(row[5])) for row in rows}
