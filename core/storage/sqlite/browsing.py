"""What browsing reads: sessions as a list of conversations shows them (the columns migration
5 keeps: title, message count, last activity, cwd; read without the transcripts, with the
caller's sessions and the filters inside the query, before the limit), some events of one
session (a window of a long conversation), and the hits of a query inside one session."""

from __future__ import annotations

import json
from typing import Any

from ...bounds import decode_json
from ...errors import ValidationError
from ...query import ParsedQuery
from ..model import BranchRow, CardFilter, MatchFilters, SessionFilter, SessionRow
from .matching import MAX_TAGS, Matching, _body, _filter_sql
from .reads import SESSION_COLUMNS, SESSIONS_JOIN, own_tag, session_row

CARD_COLUMNS = f"{SESSION_COLUMNS}, s.cwd, s.title, i.rows, s.last_message_at"
ACTIVITY = "coalesce(s.last_message_at, s.updated_at)"  # as sessions_by_activity indexes it


def session_clause(sessions: SessionFilter, column: str = "s.pk") -> tuple[list[str], list[Any]]:
    """``column`` among (or, excluding, outside) the filter's sessions."""
    if not sessions.pks and sessions.exclude:
        return [], []
    listed = "NOT IN" if sessions.exclude else "IN"
    return [f"{column} {listed} (SELECT value FROM json_each(?))"], [json.dumps(sessions.pks)]


def card_clause(cards: CardFilter) -> tuple[list[str], list[Any]]:
    """The filters on ``sessions s``: its source, its project (the cwd or below it), when it
    was last active."""
    where: list[str] = []
    params: list[Any] = []
    if cards.sources is not None:
        where.append("s.source IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(list(cards.sources)))
    if cards.project is not None:
        project = cards.project.rstrip("/") or "/"
        below = project if project.endswith("/") else f"{project}/"
        where.append("(s.cwd = ? OR substr(s.cwd, 1, ?) = ?)")
        params += [project, len(below), below]
    if cards.since_ms is not None:
        where.append(f"{ACTIVITY} >= ?")
        params.append(cards.since_ms)
    if cards.until_ms is not None:
        where.append(f"{ACTIVITY} <= ?")
        params.append(cards.until_ms)
    return where, params


class BrowseReads(Matching):
    def session_cards(
        self, sessions: SessionFilter, cards: CardFilter = CardFilter(), limit: int | None = None
    ) -> list[SessionRow]:
        """The sessions of ``sessions`` that pass ``cards``, newest activity first, with the
        columns a list shows."""
        if cards.host is not None and cards.host != self.host:
            return []  # a local store has one host
        where, params = session_clause(sessions)
        more, more_params = card_clause(cards)
        where += more
        sql = f"SELECT {CARD_COLUMNS} {SESSIONS_JOIN}"
        if where:
            sql += f" WHERE {' AND '.join(where)}"
        sql += f" ORDER BY {ACTIVITY} DESC, s.key"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [session_row(row, self.host) for row in self._all(sql, [*params, *more_params])]

    def session_pks_passing(self, cards: CardFilter) -> set[int]:
        """Every session that passes ``cards`` (a search narrows the visible sessions by it)."""
        if cards.host is not None and cards.host != self.host:
            return set()
        where, params = card_clause(cards)
        sql = "SELECT s.pk FROM sessions s" + (f" WHERE {' AND '.join(where)}" if where else "")
        return {row[0] for row in self._all(sql, params)}

    def projects(self, sessions: SessionFilter) -> list[tuple[str, int]]:
        """(cwd, sessions) of the filter's sessions that name one, most sessions first."""
        where, params = session_clause(sessions)
        where.append("s.cwd IS NOT NULL")
        return [
            (cwd, count)
            for cwd, count in self._all(
                f"SELECT s.cwd, count(*) FROM sessions s WHERE {' AND '.join(where)} "
                "GROUP BY s.cwd ORDER BY count(*) DESC, s.cwd",
                params,
            )
        ]

    def tree_events(self, session_pk: int) -> list[tuple[int, dict[str, Any]]]:
        """Every event of a session reduced to what the tree rules and an outline read (type,
        id, parentId, targetId, appendMode, timestamp, a message's role and timestamp), taken
        out by SQLite's JSON functions: for a long conversation several times cheaper than
        decoding whole events. A row that is not a JSON object is left out, as ``events``
        leaves it out (the result columns are computed only for rows that pass WHERE)."""
        rows = self._all(
            "SELECT seq, kind, json_extract(body, '$.id'), json_extract(body, '$.parentId'), "
            "json_type(body, '$.targetId'), json_extract(body, '$.targetId'), "
            "json_extract(body, '$.appendMode'), json_extract(body, '$.timestamp'), "
            "json_extract(body, '$.message.role'), json_extract(body, '$.message.timestamp') "
            "FROM events WHERE session_pk = ? "
            "AND CASE WHEN json_valid(body) THEN json_type(body) = 'object' ELSE 0 END "
            "ORDER BY seq",
            (session_pk,),
        )
        out = []
        for seq, kind, eid, parent, target_type, target, mode, ts, role, message_ts in rows:
            event: dict[str, Any] = {"type": kind, "id": eid, "parentId": parent, "timestamp": ts}
            if target_type is not None:
                event["targetId"] = target
            if mode is not None:
                event["appendMode"] = mode
            if role is not None:
                event["message"] = {"role": role, "timestamp": message_ts}
            out.append((seq, event))
        return out

    def branch_messages(self, session_pk: int, last_seq: int) -> list[BranchRow] | None:
        current = self._one("SELECT branch_seq FROM index_state WHERE session_pk = ?",
                            (session_pk,))
        if current is None or current[0] != last_seq:
            return None
        return self._all(
            "SELECT seq, entry_id, role, at FROM branch_messages WHERE session_pk = ? "
            "ORDER BY seq",
            (session_pk,),
        )

    def events_at(self, session_pk: int, seqs: list[int]) -> dict[int, dict[str, Any]]:
        """The events ``seqs`` of a session, parsed (within the entry bounds but their size,
        as ``events`` reads them); one that does not parse is left out."""
        rows = self._all(
            "SELECT seq, body FROM events WHERE session_pk = ? AND seq IN "
            "(SELECT value FROM json_each(?))",
            (session_pk, json.dumps(seqs)),
        )
        found: dict[int, dict[str, Any]] = {}
        for seq, body in rows:
            try:
                event = decode_json(body, max_bytes=None)
            except ValidationError:
                continue
            if isinstance(event, dict):
                found[seq] = event
        return found

    def session_hit_ids(
        self,
        query: ParsedQuery,
        session_pk: int,
        limit: int,
        filters: MatchFilters = MatchFilters(),
    ) -> list[str]:
        """Entry ids of the session's messages that match, oldest first (at most ``limit``)."""
        return self.sessions_hit_ids(query, [session_pk], limit, filters)[session_pk]

    def sessions_hit_ids(
        self,
        query: ParsedQuery,
        session_pks: list[int],
        limit: int,
        filters: MatchFilters = MatchFilters(),
    ) -> dict[int, list[str]]:
        """Each session's matching messages' entry ids, oldest first (at most ``limit``
        each). The sessions are selected inside the MATCH expression by their scope tags, as
        a search selects a caller's sessions (matching.py), up to MAX_TAGS a statement: only
        their own rows are read, and a common word's index is walked once, not once per
        session."""
        where, params = _filter_sql(filters)
        found: dict[int, list[str]] = {pk: [] for pk in session_pks}
        pks = sorted(found)
        for at in range(0, len(pks), MAX_TAGS):
            tags = " OR ".join(own_tag(pk) for pk in pks[at : at + MAX_TAGS])
            expr = f"({_body(query.fts)}) AND (scope : ({tags}))"
            rows = self._all(
                "SELECT m.session_pk, m.entry_id FROM message_fts f JOIN message_index m "
                f"ON m.rowid = f.rowid WHERE message_fts MATCH ?"
                f"{''.join(' AND ' + w for w in where)} ORDER BY f.rowid",
                (expr, *params),
            )
            for pk, entry_id in rows:
                ids = found[pk]
                if len(ids) < limit:
                    ids.append(entry_id)
        return found
