"""Reconciliation's SQL: the agent's reconciler lease, session claims with leases, batched
rebuild writes, publishing, progress. ``reconcile.py`` holds the logic and calls these.

Every write is a short ``BEGIN IMMEDIATE`` transaction, so a live writer waits for at most
one batch.
"""

from __future__ import annotations

from typing import Iterable

from ...indexer import INDEXER_VERSION, IndexRow
from ..interface import PublishItem
from ..model import Claim, now_ms
from ..stored import UNORDERED_BRANCH
from .reads import PENDING, SESSIONS_JOIN
from .writes import Writes

# Pending and not held by a live claim: what a reconciler may take.
_CLAIMABLE = f"{PENDING} AND NOT (i.state = 'claimed' AND i.claim_expires >= :now)"


class Claims(Writes):
    """Reconciliation methods of the writer database class."""

    def start_run(self, owner: str, run_id: str, lease_ms: int) -> bool:
        """Take the agent's reconciler lease (compare-and-set); False if another holds it."""
        now = now_ms()
        total, _events = self.pending_count()
        with self.transaction() as conn:
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

    def renew_run(self, owner: str, lease_ms: int, done: int, messages: int,
                  current: str | None) -> bool:
        """Extend the lease and publish progress; False if the lease was lost."""
        now = now_ms()
        with self.transaction() as conn:
            cursor = conn.execute(
                "UPDATE reconcile_progress SET lease_expires = ?, updated_at = ?, "
                "sessions_done = ?, messages_done = ?, current_session = ?, "
                "sessions_total = max(sessions_total, ?) "
                "WHERE id = 1 AND owner = ? AND state = 'running'",
                (now + lease_ms, now, done, messages, current, done, owner),
            )
            return cursor.rowcount == 1

    def finish_run(self, owner: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE reconcile_progress SET state = 'idle', updated_at = ?, "
                "lease_expires = NULL, current_session = NULL WHERE id = 1 AND owner = ?",
                (now_ms(), owner),
            )

    def claim_sessions(self, owner: str, lease_ms: int, max_sessions: int,
                       max_events: int) -> list[Claim]:
        """Claim pending sessions, oldest first, up to a batch's worth of events (at least one)."""
        now = now_ms()
        with self.transaction() as conn:
            candidates = conn.execute(
                f"SELECT s.pk, s.key, s.session_id, s.created_at, s.last_seq {SESSIONS_JOIN} "
                f"WHERE {_CLAIMABLE} ORDER BY s.pk LIMIT :limit",
                {"version": INDEXER_VERSION, "now": now, "limit": max_sessions},
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

    def still_mine(self, claim: Claim, owner: str) -> bool:
        """Claimed by us and unchanged since the claim (a write sets the session dirty).
        Call inside a transaction, so the answer holds for what follows in it."""
        row = self.conn.execute(
            "SELECT i.state, i.claim_owner, s.last_seq FROM index_state i "
            "JOIN sessions s ON s.pk = i.session_pk WHERE i.session_pk = ?",
            (claim.session_pk,),
        ).fetchone()
        return (
            row is not None and row[0] == "claimed" and row[1] == owner
            and row[2] == claim.seen_seq
        )

    def write_rows(self, claim: Claim, owner: str, rows: list[IndexRow], first: bool,
                   lease_ms: int) -> bool:
        """One batch of a large session's rebuild: (on the first batch, drop old rows) insert
        ``rows``; False if the claim was lost meanwhile (the caller abandons the rebuild)."""
        with self.transaction() as conn:
            if not self.still_mine(claim, owner):
                return False
            conn.execute(
                "UPDATE index_state SET claim_expires = ? WHERE session_pk = ?",
                (now_ms() + lease_ms, claim.session_pk),
            )
            if first:
                self.replace_rows([(claim.session_pk, claim.session_id, rows)])
            else:
                self.add_rows(claim.session_pk, claim.session_id, rows)
        return True

    def publish(self, items: Iterable[PublishItem], owner: str) -> list[Claim]:
        """Make rebuilt sessions clean inside the caller's transaction; return the claims
        published. A session written to since its claim is skipped: the writer already
        marked it dirty."""
        published = []
        rebuilt = []
        tools = []
        branches = []
        facts = []
        for claim, rows, leaf, problems, shown, tool_rows, (found, usage) in items:
            if not self.still_mine(claim, owner):
                continue
            branches.append((claim.session_pk, claim.seen_seq, shown))
            facts.append((claim.session_pk, found, usage))
            if rows is not None:
                rebuilt.append((claim.session_pk, claim.session_id, rows))
            tools.append((claim.session_pk, claim.session_id, tool_rows))
            self.conn.execute(
                "UPDATE index_state SET state = 'clean', indexed_seq = ?, indexed_leaf = ?, "
                "indexer_version = ?, claim_owner = NULL, claim_expires = NULL, problems = ? "
                "WHERE session_pk = ?",
                (claim.seen_seq, leaf, INDEXER_VERSION, problems or None, claim.session_pk),
            )
            self.conn.execute(
                "UPDATE sessions SET leaf_id = ? WHERE pk = ?", (leaf, claim.session_pk)
            )
            published.append(claim)
        self.replace_branches(branches)
        self.replace_tools(tools)
        self.replace_facts(facts)
        self.replace_rows(rebuilt)  # last: see Writes.replace_rows
        for claim in published:  # from the rows now in place
            self.refresh_summary(claim.session_pk)
        return published

    def lagging_branches(self) -> list[tuple[int, str, int]]:
        return self._all(
            f"SELECT s.pk, s.key, s.last_seq {SESSIONS_JOIN} "
            "WHERE i.state = 'clean' AND i.branch_seq < s.last_seq "
            f"AND i.branch_seq <> {UNORDERED_BRANCH} ORDER BY s.pk"
        )

    def release_all(self, owner: str) -> None:
        """Claims still held at the end of a pass (given up after repeated concurrent writes,
        or interrupted by an error) go back as dirty, for a later pass."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE index_state SET state = 'dirty', claim_owner = NULL, claim_expires = NULL "
                "WHERE state = 'claimed' AND claim_owner = ?",
                (owner,),
            )
