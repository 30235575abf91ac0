"""Matching and ranking on PostgreSQL: the same rows as SQLite's FTS5, ranked by the same bm25.

The request, in order (one read snapshot):

1. bm25's statistics: the agent's rows and tokens (per-session counters), and per query part
   the rows holding it (``lexeme_df`` for a word, a capped count for a phrase or prefix);
2. rows whose tsvector has no positions (``fts.py``: huge rows) that could match are read and
   matched token by token in Python, with their frequencies;
3. the top rows, in one statement: visibility (the session filter), role and time run inside
   it, before the limit; with a rank window only the newest ``rank_window`` matches are
   ranked (rowids follow time: the same rows SQLite ranks); bm25 in SQL from ``ts_rank_cd``
   with unit weights (phrase occurrences) and the stored token count; ties newest first.
   When the newest matches are wanted (a window, or newest first) and many rows match, the
   statement first looks at a slice of the newest rows only, sized from the statistics,
   and widens it until it holds enough matches: the answer is the same, without reading
   every match;
4. the text of the rows kept, and only theirs.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Callable

from ...indexer import ROWID_SHIFT
from ...query import ParsedQuery
from ..model import MatchRow, SessionFilter
from .fts import (
    DAY_MS,
    CompiledQuery,
    bm25,
    bm25_sql,
    compile_query,
    days_query,
    idf,
    phrase_counts,
    token_list,
)
from .reads import Reads
from .text import load_text

UNIT_WEIGHTS = "'{1,1,1,1}'::float4[]"
# Rows counted at most for the IDF of a phrase or prefix part (_part_statistics, docs/postgres.md).
COUNT_CAP = 2_000
# How much wider than the estimate the first slice of newest rows is, and up to how long a
# slice is named to the GIN index by its days (see _sliced).
SLICE_MARGIN = 3.0
MAX_SLICE_MS = 64 * DAY_MS
# Fewer missing matches than would take this many rows to find are found by walking on.
WALK_ROWS = 20_000
# A query matching more than this share of rows is found by walking rowids newest first.
DENSE = 0.25


@dataclass(frozen=True)
class _Checked:
    """A row matched in Python (its tsvector has no positions)."""

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
        where, params, accepts = _filters(sessions, role, since_ms, until_ms)
        params.update(agent=self.agent_id, q=compiled.matches, limit=limit)
        base = f"agent_id = %(agent)s AND {where}exact AND tsv @@ %(q)s::tsquery"
        window = rank_window if order == "best" else None
        scope = nullcontext() if self.in_transaction else self.snapshot()
        with scope:
            rows_total, tokens_total = self.bm25_totals()
            params["avgdl"] = avgdl = tokens_total / rows_total if rows_total else 1.0
            checked = self._checked_rows(compiled)
            idfs, bound = self._part_statistics(compiled, checked, rows_total)
            for i, phrase in enumerate(compiled.phrases):
                params[f"idf{i}"], params[f"p{i}"] = idfs[i], phrase
            # the share of the agent's rows that may match (for the slices of _sliced)
            density = bound / rows_total if rows_total else 1.0
            if sessions.pks and not sessions.exclude:
                density *= self._share_of_rows(sessions.pks, rows_total)
            extra = [
                (row.rowid, bm25([float(f) for f in row.freqs], row.ntokens, idfs, avgdl))
                for row in checked
                if all(row.freqs) and accepts(row)
            ]
            windowed = False
            if compiled.verify_all:  # every row was matched in Python
                top: list[tuple[int, float]] = []
                cutoff = _nth_newest([r for r, _ in extra], window)
                windowed = cutoff is not None
                extra = [(r, s) for r, s in extra if cutoff is None or r >= cutoff]
            elif window and extra:  # rare: a window over SQL rows and Python-matched ones
                cutoff = self._cutoff(base, params, window, [r for r, _ in extra])
                windowed = cutoff is not None
                if cutoff is not None:
                    base += " AND rowid >= %(cutoff)s"
                    params["cutoff"] = cutoff
                    extra = [(r, s) for r, s in extra if r >= cutoff]
                top = self._top(len(compiled.phrases), base, params, order, None)[0]
            else:
                top, windowed = self._sliced(
                    len(compiled.phrases), base, params, order, window, rows_total, density,
                    restricted=bool(sessions.pks) and not sessions.exclude,
                    by_days=density < DENSE and not compiled.prefix,
                )
            ranked = sorted(
                top + extra,
                key=(lambda c: -c[0]) if order == "recent" else (lambda c: (c[1], -c[0])),
            )[:limit]
            details = self._details([rowid for rowid, _ in ranked])
        rows = [
            MatchRow(rowid, *details[rowid], score) for rowid, score in ranked if rowid in details
        ]
        return rows, windowed

    def _part_statistics(self, compiled: CompiledQuery, checked: list[_Checked],
                         rows_total: int) -> tuple[list[float], int]:
        """Each part's IDF, from the rows holding it, and an upper bound of the rows the
        whole query can match. A whole word's document frequency is stored (``lexeme_df``).
        A phrase is counted when its rarest word is in at most ``COUNT_CAP`` rows; beyond
        that it gets the IDF of its rarest word's rows (an upper bound of its own). A prefix
        is counted up to ``COUNT_CAP`` rows or just past half the rows (from there on FTS5
        clamps the IDF anyway), and beyond gets the IDF of COUNT_CAP matches. Below
        2 x COUNT_CAP rows in the agent, all of it is exact."""
        words = [
            part[:-1] if compiled.prefix and i == len(compiled.parts) - 1 else part
            for i, part in enumerate(compiled.parts)
        ]
        df = dict(self._all(
            "SELECT lexeme, rows FROM lexeme_df WHERE agent_id = %s AND lexeme = ANY(%s)",
            (self.agent_id, sorted({w for part in words for w in part})),
        )) if not compiled.verify_all else {}
        cap = min(COUNT_CAP, rows_total // 2 + 1)
        idfs, bound = [], rows_total
        for i, phrase in enumerate(compiled.phrases):
            in_python = sum(1 for row in checked if row.freqs[i])
            rarest = min((df.get(w, 0) for w in words[i]), default=rows_total)
            if compiled.verify_all:
                exact = 0
            elif compiled.lookups[i] is not None:
                exact = df.get(compiled.lookups[i], 0)
            elif words[i] == compiled.parts[i] and rarest > cap and rows_total > 2 * COUNT_CAP:
                exact = rarest  # a phrase of common words: not counted (see above)
            else:
                exact = self._one(
                    "SELECT count(*) FROM (SELECT 1 FROM message_index "
                    "WHERE agent_id = %s AND exact AND tsv @@ %s::tsquery LIMIT %s) hits",
                    (self.agent_id, phrase, cap),
                )[0]
            idfs.append(idf(rows_total, exact + in_python))
            known = compiled.lookups[i] is not None or exact < cap
            part_bound = exact if known else rarest
            if not known and compiled.prefix and i == len(compiled.parts) - 1:
                part_bound = min(part_bound, self._prefix_rows(compiled.parts[i][-1]))
            bound = min(bound, part_bound + in_python)
        return idfs, bound

    def _prefix_rows(self, prefix: str) -> int:
        """At most how many exact rows hold a word starting with ``prefix`` (the document
        frequencies of those words, added: a row holding two of them counts twice)."""
        after = prefix[:-1] + chr(ord(prefix[-1]) + 1)  # byte order is code point order
        row = self._one(
            "SELECT coalesce(sum(rows), 0) FROM lexeme_df WHERE agent_id = %s "
            "AND lexeme >= %s AND lexeme < %s",
            (self.agent_id, prefix, after),
        )
        return int(row[0])

    def _checked_rows(self, compiled: CompiledQuery) -> list[_Checked]:
        """Rows whose tsvector has no positions (or all rows, when a query token was too long
        for a lexeme) that could match some part, with each part's frequency."""
        exact_too = "" if compiled.verify_all else "NOT m.exact AND "
        found = self._all(
            "SELECT m.rowid, m.session_pk, m.role, m.ts, m.ntokens, t.body FROM message_index m "
            "JOIN message_text t USING (agent_id, rowid) "
            f"WHERE m.agent_id = %s AND {exact_too}m.tsv @@ %s::tsquery",
            (self.agent_id, compiled.candidates),
        )
        checked = []
        for rowid, session_pk, role, ts, ntokens, body in found:
            freqs = phrase_counts(token_list(load_text(body)), compiled)
            if any(freqs):
                checked.append(_Checked(rowid, session_pk, role, ts, ntokens, freqs))
        return checked

    def _cutoff(self, base: str, params: dict[str, Any], window: int, extra: list[int]
                ) -> int | None:
        """The rowid of the ``window``-th newest match among SQL rows and ``extra``."""
        newest = self._all(
            f"SELECT rowid FROM message_index WHERE {base} ORDER BY rowid DESC LIMIT %(window)s",
            {**params, "window": window},
        )
        return _nth_newest([r[0] for r in newest] + extra, window)

    def _share_of_rows(self, pks: list[int], rows_total: int) -> float:
        """The share of the agent's index rows that belong to these sessions."""
        row = self._one(
            "SELECT coalesce(sum(index_rows), 0) FROM sessions WHERE pk = ANY(%s::bigint[])",
            (list(pks),),
        )
        return min(1.0, row[0] / rows_total) if rows_total else 1.0

    def _sliced(self, parts: int, base: str, params: dict[str, Any], order: str,
                window: int | None, rows_total: int, density: float, restricted: bool,
                by_days: bool) -> tuple[list[tuple[int, float]], bool]:
        """``_top`` over the newest rows first, slice by slice. The newest ``wanted`` matches
        are the matches of the newest slice, then the newest of the slice below it, and so
        on until ``wanted`` are found: each step asks only for what is still missing, in
        rows no step read yet, and the best rows of all steps are merged by the caller.
        ``density``: the share of rows expected to match (an estimate from above).

        A slice is a rowid range, placed as if rows were spread evenly over time (a wrong
        guess only costs a wider next slice). A few sessions are read through their own
        index; a query the rowid walk would meet rarely (``by_days``) is kept to the slice's
        days by the GIN index itself."""
        walk = not restricted
        wanted = params["limit"] if order == "recent" else window
        if not wanted:  # every match is ranked
            return self._top(parts, base, params, order, None, walk)[0], False
        span = int(wanted * SLICE_MARGIN / max(density, 1e-9))
        if span < rows_total // 2:
            newest, oldest = self._one(
                "SELECT max(rowid), min(rowid) FROM message_index WHERE agent_id = %s",
                (self.agent_id,),
            )
        found: list[tuple[int, float]] = []
        have, upper = 0, None  # matches found so far; the rows below ``upper`` are unread
        while True:
            where, step = base, {**params, "limit": params["limit"]}
            if order == "recent":
                step["limit"] = wanted - have
            if upper is not None:
                where += " AND rowid < %(upper)s"
                step["upper"] = upper
            # the last few missing matches: walk on down the rowids (restricted: their index)
            few = have > 0 and (wanted - have) / max(density, 1e-9) < WALK_ROWS
            last = few or span >= rows_total // 2
            if not last:
                start = newest - (newest - oldest) * span // rows_total
                where += " AND rowid >= %(start)s"
                step["start"] = start
                ceiling = upper if upper is not None else newest
                if by_days and not restricted and ((ceiling - start) >> ROWID_SHIFT) < MAX_SLICE_MS:
                    days = days_query(start >> ROWID_SHIFT, ceiling >> ROWID_SHIFT)
                    step["q"] = f"({params['q']}) & ({days})"
            rows, count = self._top(parts, where, step, order,
                                    None if order == "recent" else wanted - have, walk)
            found += rows
            have += count
            if have >= wanted or last:
                return found, window is not None and have >= window
            upper = start
            # wider, by what the slices so far held (at least twice as wide)
            span = int(span * max(2.0, SLICE_MARGIN * wanted / max(have, 1)))

    def _top(self, parts: int, base: str, params: dict[str, Any], order: str,
             window: int | None, walk: bool = True) -> tuple[list[tuple[int, float]], int]:
        """The best (or newest) ``limit`` matching rows with their scores, in one statement;
        with ``window``, ranked among the newest ``window`` matches only. Returns the rows
        and how many matches were ranked (at most the window, or the limit when newest).
        Without ``walk`` the newest matches are not found by walking the rowid index (for a
        few sessions, their own index is cheaper)."""
        freqs = ", ".join(
            f"ts_rank_cd({UNIT_WEIGHTS}, tsv, %(p{i})s::tsquery, 0)::float8 AS f{i}"
            for i in range(parts)
        )
        score = bm25_sql(parts)
        newest_first = "ORDER BY rowid DESC" if walk else "ORDER BY rowid + 0 DESC"
        if order == "recent":
            matched = f"SELECT rowid, ntokens, tsv FROM message_index WHERE {base} " \
                      f"{newest_first} LIMIT %(limit)s"
            final = "ORDER BY rowid DESC"
        else:
            matched = f"SELECT rowid, ntokens, tsv FROM message_index WHERE {base}"
            if window:
                matched += f" {newest_first} LIMIT %(window)s"
            final = "ORDER BY score, rowid DESC LIMIT %(limit)s"
        rows = self._all(  # each CTE computed once (ts_rank_cd appears twice in the score)
            f"WITH matched AS MATERIALIZED ({matched}), "
            f"counted AS MATERIALIZED (SELECT rowid, ntokens, {freqs} FROM matched) "
            f"SELECT rowid, score, (SELECT count(*) FROM matched) FROM "
            f"(SELECT rowid, {score} AS score FROM counted) scored {final}",
            {**params, "window": window},
        )
        return [(rowid, score) for rowid, score, _count in rows], rows[0][2] if rows else 0

    def _details(self, rowids: list[int]) -> dict[int, tuple[int, str, str, int, str]]:
        if not rowids:
            return {}
        rows = self._all(
            "SELECT m.rowid, m.session_pk, m.entry_id, m.role, m.ts, t.body FROM message_index m "
            "JOIN message_text t USING (agent_id, rowid) "
            "WHERE m.agent_id = %s AND m.rowid = ANY(%s::bigint[])",
            (self.agent_id, rowids),
        )
        return {row[0]: (row[1], row[2], row[3], row[4], load_text(row[5])) for row in rows}


def _filters(sessions: SessionFilter, role: str | None, since_ms: int | None,
             until_ms: int | None) -> tuple[str, dict[str, Any], Callable[[_Checked], bool]]:
    """The filters of a match as SQL (``... AND `` to prefix the match), its parameters, and
    the same filters for rows matched in Python."""
    where: list[str] = []
    params: dict[str, Any] = {}
    filtered = bool(sessions.pks) or not sessions.exclude
    if filtered:
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
    pks = set(sessions.pks)

    def accepts(row: _Checked) -> bool:
        return (
            (not filtered or (row.session_pk in pks) != sessions.exclude)
            and (role is None or row.role == role)
            and (since_ms is None or row.ts >= since_ms)
            and (until_ms is None or row.ts <= until_ms)
        )

    return "".join(f"{clause} AND " for clause in where), params, accepts


def _nth_newest(rowids: list[int], window: int | None) -> int | None:
    """The rowid of the ``window``-th newest, or None when fewer (or no window)."""
    if not window or len(rowids) < window:
        return None
    return sorted(rowids, reverse=True)[window - 1]
