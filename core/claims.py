"""Storage side of reconciliation: session claims with leases, batched rebuilds, progress.

Part of the storage layer (all SQL of the index rebuild lives here); ``reconcile.py`` holds
the logic. Every write is a short ``BEGIN IMMEDIATE`` transaction, so a live writer waits for
at most one batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .indexer import INDEXER_VERSION, IndexRow
from .store import AgentDB, now_ms

_PENDING = (
    "(i.state = 'dirty' OR (i.state = 'clean' AND i.indexer_version != :version) "
    "OR (i.state = 'claimed' AND i.claim_expires < :now))"
)


@dataclass(frozen=True)
class Claim:
    session_pk: int
    key: str
    session_id: str
    created_at: int
    seen_seq: int  # transcript length when claimed: publish only if it is unchanged


@dataclass(frozen=True)
class Progress:
    state: str
    run_id: str | None
    started_at: int | None
    updated_at: int | None
    sessions_done: int
    sessions_total: int
    messages_done: int
    current_session: str | None
    owner: str | None
    lease_expires: int | None

    @property
    def running(self) -> bool:
        return self.state == "running" and (self.lease_expires or 0) >= now_ms()

    @property
    def rate(self) -> float:
        """Messages indexed per second over the run so far."""
        if not self.started_at or not self.updated_at or self.updated_at <= self.started_at:
            return 0.0
        return self.messages_done * 1000 / (self.updated_at - self.started_at)

    def as_json(self) -> dict[str, Any]:
        return {
            "state": "running" if self.running else "idle",
            "sessionsDone": self.sessions_done,
            "sessionsTotal": self.sessions_total,
            "messagesIndexed": self.messages_done,
            "rate": round(self.rate, 1),
            "startedAt": self.started_at,
            "updatedAt": self.updated_at,
            "currentSession": self.current_session,
        }


def pending_count(db: AgentDB) -> tuple[int, int]:
    """(sessions needing a rebuild, their stored events)."""
    row = db.conn.execute(
        f"SELECT count(*), coalesce(sum(s.last_seq), 0) FROM index_state i "
        f"JOIN sessions s ON s.pk = i.session_pk WHERE {_PENDING}",
        {"version": INDEXER_VERSION, "now": now_ms()},
    ).fetchone()
    return row[0], row[1]


def read_progress(db: AgentDB) -> Progress:
    row = db.conn.execute(
        "SELECT state, run_id, started_at, updated_at, sessions_done, sessions_total, "
        "messages_done, current_session, owner, lease_expires FROM reconcile_progress "
        "WHERE id = 1"
    ).fetchone()
    return Progress(*row)


def start_run(db: AgentDB, owner: str, run_id: str, lease_ms: int) -> bool:
    """Take the agent's reconciler lease (compare-and-set); False if another holds it."""
    now = now_ms()
    total, _events = pending_count(db)
    with db.transaction() as conn:
        cursor = conn.execute(
            "UPDATE reconcile_progress SET state = 'running', owner = :owner, run_id = :run, "
            "lease_expires = :expires, started_at = :now, updated_at = :now, "
            "sessions_done = 0, sessions_total = :total, messages_done = 0, "
            "current_session = NULL "
            "WHERE id = 1 AND (state != 'running' OR lease_expires < :now OR owner = :owner)",
            {"owner": owner, "run": run_id, "expires": now + lease_ms, "now": now,
             "total": total},
        )
        return cursor.rowcount == 1


def renew_run(db: AgentDB, owner: str, lease_ms: int, done: int, messages: int,
              current: str | None, extra_total: int = 0) -> bool:
    """Extend the lease and publish progress; False if the lease was lost."""
    now = now_ms()
    with db.transaction() as conn:
        cursor = conn.execute(
            "UPDATE reconcile_progress SET lease_expires = ?, updated_at = ?, sessions_done = ?, "
            "messages_done = ?, current_session = ?, "
            "sessions_total = max(sessions_total + ?, ?) "
            "WHERE id = 1 AND owner = ? AND state = 'running'",
            (now + lease_ms, now, done, messages, current, extra_total, done, owner),
        )
        return cursor.rowcount == 1


def finish_run(db: AgentDB, owner: str) -> None:
    with db.transaction() as conn:
        conn.execute(
            "UPDATE reconcile_progress SET state = 'idle', updated_at = ?, lease_expires = NULL, "
            "current_session = NULL WHERE id = 1 AND owner = ?",
            (now_ms(), owner),
        )


def claim_sessions(db: AgentDB, owner: str, lease_ms: int, max_sessions: int,
                   max_events: int) -> list[Claim]:
    """Claim pending sessions, oldest first, up to a batch's worth of events (at least one)."""
    now = now_ms()
    params = {"version": INDEXER_VERSION, "now": now}
    with db.transaction() as conn:
        candidates = conn.execute(
            f"SELECT s.pk, s.key, s.session_id, s.created_at, s.last_seq FROM index_state i "
            f"JOIN sessions s ON s.pk = i.session_pk WHERE {_PENDING} "
            f"ORDER BY s.pk LIMIT :limit",
            {**params, "limit": max_sessions},
        )
        claims: list[Claim] = []
        events = 0
        for pk, key, session_id, created_at, last_seq in candidates.fetchall():
            if claims and events + last_seq > max_events:
                break
            conn.execute(
                "UPDATE index_state SET state = 'claimed', claim_owner = ?, claim_expires = ? "
                "WHERE session_pk = ?",
                (owner, now + lease_ms, pk),
            )
            claims.append(Claim(pk, key, session_id, created_at, last_seq))
            events += last_seq
        return claims


def still_mine(conn: Any, claim: Claim, owner: str) -> bool:
    """Claimed by us and unchanged since the claim (a write sets the session dirty)."""
    row = conn.execute(
        "SELECT i.state, i.claim_owner, s.last_seq FROM index_state i "
        "JOIN sessions s ON s.pk = i.session_pk WHERE i.session_pk = ?",
        (claim.session_pk,),
    ).fetchone()
    return row is not None and row[0] == "claimed" and row[1] == owner and row[2] == claim.seen_seq


def write_rows(db: AgentDB, claim: Claim, owner: str, rows: list[IndexRow], first: bool,
               lease_ms: int) -> bool:
    """One batch of a large session's rebuild: (on the first batch, drop old rows) insert
    ``rows``; False if the claim was lost meanwhile (the caller abandons the rebuild)."""
    with db.transaction() as conn:
        if not still_mine(conn, claim, owner):
            return False
        if first:
            db.delete_rows(conn, claim.session_pk)
        db.insert_rows(conn, claim.session_pk, claim.session_id, rows)
        conn.execute(
            "UPDATE index_state SET claim_expires = ? WHERE session_pk = ?",
            (now_ms() + lease_ms, claim.session_pk),
        )
    return True


def publish(db: AgentDB, items: list[tuple[Claim, list[IndexRow] | None, str | None, str]],
            owner: str, conn: Any) -> list[Claim]:
    """Make rebuilt sessions clean inside the caller's transaction ``conn``; return the
    claims published.

    Each item is (claim, rows to write now or None if already written, leaf, problems).
    A session written to since its claim is skipped: the writer already marked it dirty.
    """
    published = []
    for claim, rows, leaf, problems in items:
        if not still_mine(conn, claim, owner):
            continue
        if rows is not None:
            db.delete_rows(conn, claim.session_pk)
            db.insert_rows(conn, claim.session_pk, claim.session_id, rows)
        conn.execute(
            "UPDATE index_state SET state = 'clean', indexed_seq = ?, indexed_leaf = ?, "
            "indexer_version = ?, claim_owner = NULL, claim_expires = NULL, problems = ? "
            "WHERE session_pk = ?",
            (claim.seen_seq, leaf, INDEXER_VERSION, problems or None, claim.session_pk),
        )
        conn.execute("UPDATE sessions SET leaf_id = ? WHERE pk = ?", (leaf, claim.session_pk))
        published.append(claim)
    return published


def release_all(db: AgentDB, owner: str) -> None:
    """Claims still held at the end of a pass (given up after repeated concurrent writes,
    or interrupted by an error) go back as dirty, for a later pass."""
    with db.transaction() as conn:
        conn.execute(
            "UPDATE index_state SET state = 'dirty', claim_owner = NULL, claim_expires = NULL "
            "WHERE state = 'claimed' AND claim_owner = ?",
            (owner,),
        )
