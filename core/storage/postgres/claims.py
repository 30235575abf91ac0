"""Reconciliation's SQL on PostgreSQL: the agent's reconciler lease, session claims
(``FOR UPDATE SKIP LOCKED`` with leases), batched rebuild writes, publishing, progress.
``reconcile.py`` holds the logic and calls these, as with SQLite.

Lock order, so hosts never deadlock one another: a transaction locks the session rows it
will change (in pk order) before it changes any; the agent's row (``visibility_rev``, moved
by a trigger) is only ever taken after them.
"""

from __future__ import annotations

from typing import Iterable

from ...indexer import INDEXER_VERSION, IndexRow
from ..interface import PublishItem
from ..model import Claim, now_ms
from ..stored import UNORDERED_BRANCH
from .driver import retried
from .reads import PENDING
from .writes import Writes

# Pending and not held by a live claim: what a reconciler may take.
_CLAIMABLE = f"{PENDING} AND NOT (state = 'claimed' AND claim_expires >= %(now)s)"


class Claims(Writes):
    """Reconciliation methods of the writer handle."""

    @retried
    def start_run(self, owner: str, run_id: str, lease_ms: int) -> bool:
        now = now_ms()
        total, _events = self.pending_count()
        with self._tx() as conn:
            cursor = conn.execute(
                "UPDATE reconcile_progress SET state = 'running', owner = %(owner)s, "
                "run_id = %(run)s, lease_expires = %(expires)s, started_at = %(now)s, "
                "updated_at = %(now)s, sessions_done = 0, sessions_total = %(total)s, "
                "messages_done = 0, current_session = NULL WHERE agent_id = %(agent)s "
                "AND (state <> 'running' OR lease_expires < %(now)s OR owner = %(owner)s)",
                {"owner": owner, "run": run_id, "expires": now + lease_ms, "now": now,
                 "total": total, "agent": self.agent_id},
            )
            return cursor.rowcount == 1

    @retried
    def renew_run(self, owner: str, lease_ms: int, done: int, messages: int,
                  current: str | None) -> bool:
        now = now_ms()
        with self._tx() as conn:
            cursor = conn.execute(
                "UPDATE reconcile_progress SET lease_expires = %s, updated_at = %s, "
                "sessions_done = %s, messages_done = %s, current_session = %s, "
                "sessions_total = greatest(sessions_total, %s) "
                "WHERE agent_id = %s AND owner = %s AND state = 'running'",
                (now + lease_ms, now, done, messages, current, done, self.agent_id, owner),
            )
            return cursor.rowcount == 1

    @retried
    def finish_run(self, owner: str) -> None:
        with self._tx() as conn:
            conn.execute(
                "UPDATE reconcile_progress SET state = 'idle', updated_at = %s, "
                "lease_expires = NULL, current_session = NULL WHERE agent_id = %s AND owner = %s",
                (now_ms(), self.agent_id, owner),
            )

    @retried
    def claim_sessions(self, owner: str, lease_ms: int, max_sessions: int,
                       max_events: int) -> list[Claim]:
        """Claim pending sessions, oldest first, up to a batch's worth of events (at least
        one). Sessions another transaction holds (a host appending, another reconciler
        claiming) are skipped, not waited for."""
        now = now_ms()
        with self._tx() as conn:
            candidates = conn.execute(
                "SELECT pk, key, session_id, created_at, last_seq FROM sessions "
                f"WHERE agent_id = %(agent)s AND {_CLAIMABLE} "
                "ORDER BY pk LIMIT %(limit)s FOR UPDATE SKIP LOCKED",
                {"agent": self.agent_id, "version": INDEXER_VERSION, "now": now,
                 "limit": max_sessions},
            ).fetchall()
            claims: list[Claim] = []
            events = 0
            for pk, key, session_id, created_at, last_seq in candidates:
                if claims and events + last_seq > max_events:
                    break
                claims.append(Claim(pk, key, session_id, created_at, last_seq))
                events += last_seq
            if claims:
                conn.execute(
                    "UPDATE sessions SET state = 'claimed', claim_owner = %s, claim_expires = %s "
                    "WHERE pk = ANY(%s::bigint[])",
                    (owner, now + lease_ms, [c.session_pk for c in claims]),
                )
            return claims

    def still_mine(self, claim: Claim, owner: str) -> bool:
        """Claimed by us and unchanged since the claim; the row stays locked until the
        caller's transaction ends, so the answer holds for what follows in it."""
        row = self.conn.execute(
            "SELECT state, claim_owner, last_seq FROM sessions WHERE pk = %s FOR UPDATE",
            (claim.session_pk,),
        ).fetchone()
        return (
            row is not None and row[0] == "claimed" and row[1] == owner
            and row[2] == claim.seen_seq
        )

    @retried
    def write_rows(self, claim: Claim, owner: str, rows: list[IndexRow], first: bool,
                   lease_ms: int) -> bool:
        with self._tx() as conn:
            if not self.still_mine(claim, owner):
                return False
            if first:
                self.delete_rows(claim.session_pk)
            self.insert_rows(claim.session_pk, claim.session_id, rows)
            conn.execute(
                "UPDATE sessions SET claim_expires = %s WHERE pk = %s",
                (now_ms() + lease_ms, claim.session_pk),
            )
        return True

    def publish(self, items: Iterable[PublishItem], owner: str) -> list[Claim]:
        items = list(items)
        with self._tx() as conn:
            conn.execute(  # every row first, in pk order: the lock order of this backend
                "SELECT pk FROM sessions WHERE pk = ANY(%s::bigint[]) ORDER BY pk FOR UPDATE",
                (sorted(claim.session_pk for claim, *_rest in items),),
            )
            published = []
            fresh: list[tuple[int, str, list[IndexRow]]] = []
            branches = []
            facts = []
            tools = []
            for claim, rows, leaf, problems, shown, tool_rows, (found, usage) in items:
                if not self.still_mine(claim, owner):
                    continue
                branches.append((claim.session_pk, claim.seen_seq, shown))
                facts.append((claim.session_pk, found, usage))
                if rows is not None:
                    self.delete_rows(claim.session_pk)
                    fresh.append((claim.session_pk, claim.session_id, rows))
                tools.append((claim.session_pk, claim.session_id, tool_rows))
                conn.execute(
                    "UPDATE sessions SET state = 'clean', indexed_seq = %s, indexed_leaf = %s, "
                    "indexer_version = %s, claim_owner = NULL, claim_expires = NULL, "
                    "problems = %s, leaf_id = %s WHERE pk = %s",
                    (claim.seen_seq, leaf, INDEXER_VERSION, problems or None, leaf,
                     claim.session_pk),
                )
                published.append(claim)
            self.replace_branches(branches)
            self.replace_tools(tools)
            self.replace_facts(facts)
            self.insert_many(fresh)  # every session's rows in one bulk write
            self.refresh_summaries([claim.session_pk for claim in published])
        return published

    def lagging_branches(self) -> list[tuple[int, str, int]]:
        return [
            (int(pk), key, last_seq)
            for pk, key, last_seq in self._all(
                "SELECT pk, key, last_seq FROM sessions WHERE agent_id = %s AND state = 'clean' "
                f"AND branch_seq < last_seq AND branch_seq <> {UNORDERED_BRANCH} ORDER BY pk",
                (self.agent_id,),
            )
        ]

    @retried
    def release_all(self, owner: str) -> None:
        with self._tx() as conn:
            conn.execute(
                "SELECT pk FROM sessions WHERE agent_id = %s AND state = 'claimed' "
                "AND claim_owner = %s ORDER BY pk FOR UPDATE",
                (self.agent_id, owner),
            )
            conn.execute(
                "UPDATE sessions SET state = 'dirty', claim_owner = NULL, claim_expires = NULL "
                "WHERE agent_id = %s AND state = 'claimed' AND claim_owner = %s",
                (self.agent_id, owner),
            )
