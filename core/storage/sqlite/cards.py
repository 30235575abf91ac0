"""Sessions as a list of conversations shows them (the browser's home, filters): the columns
migration 5 keeps (title, message count, last activity, cwd), read without the transcripts,
with the caller's sessions and the filters inside the query, before the limit."""

from __future__ import annotations

import json
from typing import Any

from ..model import CardFilter, SessionFilter, SessionRow
from .reads import SESSION_COLUMNS, SESSIONS_JOIN, Reads

CARD_COLUMNS = f"{SESSION_COLUMNS}, s.cwd, s.title, s.messages, s.last_message_at"
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


class CardReads(Reads):
    def session_cards(
        self, sessions: SessionFilter, cards: CardFilter = CardFilter(), limit: int | None = None
    ) -> list[SessionRow]:
        """The sessions of ``sessions`` that pass ``cards``, newest activity first, with the
        columns a list shows."""
        where, params = session_clause(sessions)
        more, more_params = card_clause(cards)
        where += more
        sql = f"SELECT {CARD_COLUMNS} {SESSIONS_JOIN}"
        if where:
            sql += f" WHERE {' AND '.join(where)}"
        sql += f" ORDER BY {ACTIVITY} DESC, s.key"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [SessionRow(*row) for row in self._all(sql, [*params, *more_params])]

    def session_pks_passing(self, cards: CardFilter) -> set[int]:
        """Every session that passes ``cards`` (a search narrows the visible sessions by it)."""
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
