"""What browsing reads on PostgreSQL, as ``storage/sqlite/browsing.py``: sessions as a list of
conversations shows them (cwd, title, message count, last activity, kept in ``sessions``),
with the caller's sessions and the filters inside the query, before the limit; some events
of one session; the hits of a query inside one session."""

from __future__ import annotations

import json
from typing import Any

from ...query import ParsedQuery
from ..model import BranchRow, CardFilter, MatchFilters, SessionFilter, SessionRow
from ..stored import parse_events
from .fts import compile_query
from .matching import Matching
from .reads import SESSION_COLUMNS, session_row

CARD_COLUMNS = f"{SESSION_COLUMNS}, cwd, title, index_rows, last_message_at, host"
ACTIVITY = "coalesce(last_message_at, updated_at)"  # as sessions_by_activity indexes it


def session_clause(sessions: SessionFilter, params: dict[str, Any]) -> list[str]:
    if not sessions.pks and sessions.exclude:
        return []
    params["pks"] = list(sessions.pks)
    return ["pk <> ALL(%(pks)s::bigint[])" if sessions.exclude else "pk = ANY(%(pks)s::bigint[])"]


def card_clause(cards: CardFilter, params: dict[str, Any]) -> list[str]:
    """Its source, its project (the cwd or below it), when it was last active."""
    where: list[str] = []
    if cards.sources is not None:
        where.append("source = ANY(%(sources)s::text[])")
        params["sources"] = list(cards.sources)
    if cards.project is not None:
        project = cards.project.rstrip("/") or "/"
        below = project if project.endswith("/") else f"{project}/"
        where.append("(cwd = %(project)s OR left(cwd, %(below_len)s) = %(below)s)")
        params.update(project=project, below_len=len(below), below=below)
    if cards.since_ms is not None:
        where.append(f"{ACTIVITY} >= %(card_since)s")
        params["card_since"] = cards.since_ms
    if cards.until_ms is not None:
        where.append(f"{ACTIVITY} <= %(card_until)s")
        params["card_until"] = cards.until_ms
    if cards.host is not None:
        where.append("host = %(card_host)s")
        params["card_host"] = cards.host
    return where


class BrowseReads(Matching):
    def session_cards(
        self, sessions: SessionFilter, cards: CardFilter = CardFilter(), limit: int | None = None
    ) -> list[SessionRow]:
        """The sessions of ``sessions`` that pass ``cards``, newest activity first, with the
        columns a list shows."""
        params: dict[str, Any] = {"agent": self.agent_id}
        where = ["agent_id = %(agent)s", *session_clause(sessions, params),
                 *card_clause(cards, params)]
        sql = (f"SELECT {CARD_COLUMNS} FROM sessions WHERE {' AND '.join(where)} "
               f"ORDER BY {ACTIVITY} DESC, key COLLATE \"C\"")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [session_row(row) for row in self._all(sql, params)]

    def session_pks_passing(self, cards: CardFilter) -> set[int]:
        params: dict[str, Any] = {"agent": self.agent_id}
        where = ["agent_id = %(agent)s", *card_clause(cards, params)]
        return {row[0] for row in self._all(
            f"SELECT pk FROM sessions WHERE {' AND '.join(where)}", params
        )}

    def projects(self, sessions: SessionFilter) -> list[tuple[str, int]]:
        """(cwd, sessions) of the filter's sessions that name one, most sessions first."""
        params: dict[str, Any] = {"agent": self.agent_id}
        where = ["agent_id = %(agent)s", "cwd IS NOT NULL", *session_clause(sessions, params)]
        rows = self._all(
            f"SELECT cwd, count(*) FROM sessions WHERE {' AND '.join(where)} "
            "GROUP BY cwd ORDER BY count(*) DESC, cwd COLLATE \"C\"",
            params,
        )
        return [(cwd, int(count)) for cwd, count in rows]

    def tree_events(self, session_pk: int) -> list[tuple[int, dict[str, Any]]]:
        """Every event of the session, reduced to what the tree rules and an outline read
        (as the SQLite backend's; here the events are parsed in Python)."""
        out = []
        for seq, event in self.events(session_pk):
            reduced: dict[str, Any] = {
                "type": event.get("type"), "id": _scalar(event.get("id")),
                "parentId": _scalar(event.get("parentId")),
                "timestamp": _scalar(event.get("timestamp")),
            }
            if "targetId" in event:
                reduced["targetId"] = _scalar(event["targetId"])
            if event.get("appendMode") is not None:
                reduced["appendMode"] = _scalar(event["appendMode"])
            message = event.get("message")
            if isinstance(message, dict) and message.get("role") is not None:
                reduced["message"] = {"role": _scalar(message["role"]),
                                      "timestamp": _scalar(message.get("timestamp"))}
            out.append((seq, reduced))
        return out

    def branch_messages(self, session_pk: int, last_seq: int) -> list[BranchRow] | None:
        current = self._one("SELECT branch_seq FROM sessions WHERE pk = %s", (session_pk,))
        if current is None or current[0] != last_seq:
            return None
        return [
            (seq, entry_id, role, None if at is None else int(at))
            for seq, entry_id, role, at in self._all(
                "SELECT seq, entry_id, role, at FROM branch_messages WHERE session_pk = %s "
                "ORDER BY seq",
                (session_pk,),
            )
        ]

    def events_at(self, session_pk: int, seqs: list[int]) -> dict[int, dict[str, Any]]:
        rows = self._all(
            "SELECT seq, body FROM events WHERE session_pk = %s AND seq = ANY(%s::int[])",
            (session_pk, list(seqs)),
        )
        return dict(parse_events(rows))

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
        each): the index's exact rows, and those matched in Python."""
        compiled = compile_query(query)
        wanted = sorted(set(session_pks))
        params: dict[str, Any] = {"agent": self.agent_id, "q": compiled.matches, "pks": wanted}
        where = []
        for clause, name, value in (
            ("role = %(role)s", "role", filters.role),
            ("ts >= %(since)s", "since", filters.since_ms),
            ("ts <= %(until)s", "until", filters.until_ms),
        ):
            if value is not None:
                where.append(f" AND {clause}")
                params[name] = value
        found = [] if compiled.verify_all else self._all(
            "SELECT rowid, session_pk, entry_id FROM message_index WHERE agent_id = %(agent)s "
            "AND session_pk = ANY(%(pks)s::bigint[]) AND exact AND tsv @@ %(q)s::tsquery"
            f"{''.join(where)}",
            params,
        )
        named = set(wanted)
        checked = [c.rowid for c in self._checked_rows(compiled)
                   if c.session_pk in named and all(c.freqs)
                   and (filters.role is None or c.role == filters.role)
                   and (filters.since_ms is None or c.ts >= filters.since_ms)
                   and (filters.until_ms is None or c.ts <= filters.until_ms)]
        if checked:
            found = [*found, *self._all(
                "SELECT rowid, session_pk, entry_id FROM message_index WHERE agent_id = %s "
                "AND rowid = ANY(%s::bigint[])", (self.agent_id, checked),
            )]
        out: dict[int, list[str]] = {pk: [] for pk in session_pks}
        for _rowid, pk, entry_id in sorted(found):
            if len(out[pk]) < limit:
                out[pk].append(entry_id)
        return out


def _scalar(value: Any) -> Any:
    """What SQLite's ``json_extract`` gives for a value: a scalar as is, an object or array
    as its JSON text."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return value
