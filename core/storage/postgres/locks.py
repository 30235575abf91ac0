"""Finding the session a write is for, within its host, and locking its row (``FOR UPDATE``):
the write path's first step (``writes.py``), and where a host claims a session a team server
stored before it kept hosts (schema 5)."""

from __future__ import annotations

from typing import Any


def locked(writer: Any, column: str, value: str, host: str | None = None,
           legacy: bool = True) -> tuple | None:
    """The session of ``host`` (None: the writer's own) by key or session id, locked; with
    ``legacy``, else one stored before hosts were (host ""), which the host then claims.
    ``writer``: a writer handle (its ``conn``, ``agent_id`` and ``host``)."""
    host = host or writer.host
    row = writer.conn.execute(
        "SELECT pk, key, session_id, created_at, last_seq, leaf_id, state, indexer_version, "
        f"branch_seq, host FROM sessions WHERE agent_id = %s AND {column} = %s "
        "AND host = ANY(%s::text[]) ORDER BY host DESC LIMIT 1 FOR UPDATE",
        (writer.agent_id, value, [host, ""] if legacy else [host]),
    ).fetchone()
    if row is not None and row[9] != host:  # claimed, unless the host holds its key or id
        writer.conn.execute(
            "UPDATE sessions s SET host = %s WHERE pk = %s AND NOT EXISTS (SELECT 1 FROM "
            "sessions o WHERE o.agent_id = s.agent_id AND o.host = %s "
            "AND (o.key = s.key OR o.session_id = s.session_id))", (host, row[0], host))
    return row[:9] if row is not None else None
