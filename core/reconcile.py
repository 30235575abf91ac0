"""Background reconciliation: rebuild the index of sessions that are dirty, never indexed
(imported), or indexed under an older indexer version (SPEC 8).

Per pass: take the agent's reconciler lease (one reconciler per agent database, across
threads and processes), then repeatedly claim a batch of pending sessions (compare-and-set
with a lease, so a killed process's claims expire) and rebuild them:

- small sessions are read, rebuilt and published inside one short transaction per batch
  (many sessions per transaction: the fast path for big backfills); nothing can change them
  meanwhile, so they always publish;
- a session larger than a batch is rebuilt in several batch transactions while claimed, and
  published only if its transcript did not change meanwhile; a write that lands mid-rebuild
  marks it dirty, the claim is abandoned, and a later batch picks it up again (at most
  ``MAX_ATTEMPTS`` times per pass, so a busy writer can never make the reconciler loop).

Writers wait for at most one batch. Progress lives in the database for any process to read.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import uuid
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .errors import BackscrollError
from .fanout import STOPS_WRITES, for_each_agent
from .helper_process import start_helper
from .indexer import IndexRow, session_rows
from .state import StateDir
from .storage import AgentReader, AgentWriter, BranchRow, Claim, Progress, PublishItem, SchemaBehind
from .transcript import active_branch, shown_messages

LEASE_MS = 30_000
BATCH_EVENTS = 8_000  # events read + rows written per transaction
MAX_ATTEMPTS = 3
# A backfill this big builds rows in a helper process while this one writes: parsing,
# redaction and segmentation use the second core (see _RowBuilder).
PARALLEL_MIN_EVENTS = 40_000


@dataclass
class ReconcileStats:
    agent: str
    started: bool = True  # False: another reconciler holds this agent's lease
    sessions: int = 0
    messages: int = 0
    abandoned: int = 0
    problems: list[str] = field(default_factory=list)
    error: str | None = None  # the database could not be reconciled (one sentence)


def new_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{uuid.uuid4().hex[:8]}"


def reconcile_agent(
    state: StateDir,
    agent_id: str,
    on_progress: Callable[[Progress], None] | None = None,
    stop: threading.Event | None = None,
    owner: str | None = None,
    lease_ms: int = LEASE_MS,
    batch_events: int = BATCH_EVENTS,
) -> ReconcileStats:
    """Reconcile one agent's database until nothing is pending (or ``stop`` is set)."""
    owner = owner or new_owner()
    stats = ReconcileStats(agent_id)
    with state.open(agent_id, write=True) as db:
        if not db.start_run(owner, uuid.uuid4().hex, lease_ms):
            stats.started = False
            return stats
        db.purge(only_if_pending=True)  # a delete interrupted before its purge
        attempts: dict[int, int] = {}
        builder = _RowBuilder.for_backfill(state, db)
        try:
            while not (stop and stop.is_set()):
                claimed = db.claim_sessions(owner, lease_ms, 500, batch_events)
                if not claimed:
                    break
                # Sessions abandoned MAX_ATTEMPTS times stay claimed (so not offered again)
                # and go back as dirty at the end of the pass.
                claims = [c for c in claimed if attempts.get(c.session_pk, 0) < MAX_ATTEMPTS]
                if not claims:
                    continue
                for claim in claims:
                    attempts[claim.session_pk] = attempts.get(claim.session_pk, 0) + 1
                small = [c for c in claims if c.seen_seq <= batch_events]
                large = [c for c in claims if c.seen_seq > batch_events]
                if small and builder is not None:
                    builder.submit(small)  # built elsewhere; published at the next turn
                elif small:
                    _rebuild_small(db, small, owner, stats)
                for claim in large:
                    _rebuild_large(db, claim, owner, lease_ms, batch_events, stats)
                if builder is not None:
                    builder.publish_ready(db, owner, stats, keep=1)
                current = claims[-1].key
                if not db.renew_run(owner, lease_ms, stats.sessions, stats.messages, current):
                    break  # our lease expired and another reconciler took over
                if on_progress is not None:
                    on_progress(db.read_progress())
            if builder is not None:
                builder.publish_ready(db, owner, stats, keep=0)
            _catch_up_branches(db, owner, lease_ms, stats, stop)
        finally:
            if builder is not None:
                builder.close()
            db.release_all(owner)  # also claims of batches not published (errors)
            db.finish_run(owner)
            if on_progress is not None:
                on_progress(db.read_progress())
    return stats


def _catch_up_branches(db: AgentWriter, owner: str, lease_ms: int, stats: ReconcileStats,
                       stop: threading.Event | None) -> None:
    """Store the branch messages of clean sessions that lack them (a database from before
    they were stored), so opening a long conversation reads columns, not its log. The
    sessions stay searchable meanwhile; the log up to the seq read is append-only, so what
    is computed from it stays true while the session does, and ``replace_branches`` never
    puts it over newer. A session deleted meanwhile is skipped: its pk may already be a new
    session's (SQLite reuses the highest)."""
    for pk, key, seq in db.lagging_branches():
        if stop is not None and stop.is_set():
            return
        events = [(n, event) for n, event in db.events(pk) if n <= seq]
        shown = shown_messages(active_branch(events).path)
        with db.transaction():
            now = db.sessions_by_pk([pk]).get(pk)  # (a key may be another host's too)
            if now is not None and now.key == key and now.last_seq >= seq:
                db.replace_branches([(pk, seq, shown)])
        if not db.renew_run(owner, lease_ms, stats.sessions, stats.messages, key):
            return


def _build(state: StateDir, agent_id: str, claims: list[Claim]) -> list[PublishItem]:
    """Rows of claimed sessions, read through a connection of its own (a helper process)."""
    with state.open(agent_id) as db:
        return [(claim, *_rows(db, claim)) for claim in claims]


def _rows(db: AgentReader, claim: Claim) -> tuple[list[IndexRow], str | None, str, list[BranchRow]]:
    """A claimed session's rows, its leaf, the problems found (stored rows that no longer
    parse and broken tree links, each skipped and reported, never raised) and the messages
    of its active branch."""
    problems: list[str] = []
    rows, branch = session_rows(claim.key, db.events(claim.session_pk, problems), claim.created_at)
    return rows, branch.leaf, "; ".join(problems + branch.problems), shown_messages(branch.path)


class _RowBuilder:
    """Builds the next batch's rows in a helper process while this one writes the last.

    Sessions are claimed while their rows are built, so publishing can check, in its own
    transaction, that nothing was written meanwhile (``still_mine``); a session
    written to is skipped and, being dirty again, claimed by a later batch.
    """

    def __init__(self, state: StateDir, agent_id: str, pool: ProcessPoolExecutor) -> None:
        self.pool = pool
        self.state, self.agent_id = state, agent_id
        self.inflight: list[Future] = []

    @classmethod
    def for_backfill(cls, state: StateDir, db: AgentWriter) -> "_RowBuilder | None":
        """A builder for a big backfill, where a helper process can run (``helper_process``)."""
        if db.pending_count()[1] < PARALLEL_MIN_EVENTS:
            return None
        pool = start_helper()
        return None if pool is None else cls(state, db.agent_id, pool)

    def submit(self, claims: list[Claim]) -> None:
        self.inflight.append(self.pool.submit(_build, self.state, self.agent_id, claims))

    def publish_ready(self, db: AgentWriter, owner: str, stats: ReconcileStats, keep: int
                      ) -> None:
        """Publish finished batches, leaving at most ``keep`` in flight."""
        while len(self.inflight) > keep:
            items = self.inflight.pop(0).result()
            with db.transaction():
                published = db.publish(items, owner)
            _count(stats, items, published)

    def close(self) -> None:
        for future in self.inflight:
            future.cancel()
        self.pool.shutdown(wait=True, cancel_futures=True)


def _rebuild_small(db: AgentWriter, claims: list[Claim], owner: str, stats: ReconcileStats
                   ) -> None:
    """Read, rebuild and publish a batch of sessions in one transaction."""
    with db.transaction():
        items: list[PublishItem] = []
        for claim in claims:
            if not db.still_mine(claim, owner):
                continue
            items.append((claim, *_rows(db, claim)))
        published = db.publish(items, owner)
    _count(stats, items, published)


def _rebuild_large(db: AgentWriter, claim: Claim, owner: str, lease_ms: int, batch: int,
                   stats: ReconcileStats) -> None:
    """Rebuild a big session in batch transactions; publish if nothing changed meanwhile."""
    rows, leaf, problems, shown = _rows(db, claim)
    for start in range(0, max(len(rows), 1), batch):
        if not db.write_rows(claim, owner, rows[start : start + batch], start == 0, lease_ms):
            stats.abandoned += 1
            return
    with db.transaction():
        published = db.publish([(claim, None, leaf, problems, shown)], owner)
    _count(stats, [(claim, rows, leaf, problems, shown)], published)


def _count(stats: ReconcileStats, items: list, published: list[Claim]) -> None:
    done = {c.session_pk for c in published}
    for claim, rows, _leaf, problems, _shown in items:
        if claim.session_pk in done:
            stats.sessions += 1
            stats.messages += len(rows or [])
            if problems:
                stats.problems.append(f"{claim.key}: {problems}")
        else:
            stats.abandoned += 1



def reconcile_all(state: StateDir, on_progress: Callable[[str, Progress], None] | None = None,
                  stop: threading.Event | None = None, agents: list[str] | None = None
                  ) -> list[ReconcileStats]:
    """Reconcile every agent of ``state`` (or only ``agents``); a database that cannot be
    (corrupt, newer schema, read-only) is reported in its stats' ``error`` and the other
    agents are reconciled all the same."""
    def reconcile(agent_id: str) -> ReconcileStats:
        callback = (lambda p: on_progress(agent_id, p)) if on_progress else None
        return reconcile_agent(state, agent_id, on_progress=callback, stop=stop)

    results = []
    # the role may not write at all, or the server is gone: every agent alike (STOPS_WRITES)
    for agent_id, stats, err in for_each_agent(state, reconcile, agents=agents,
                                               stops=STOPS_WRITES):
        results.append(stats if stats is not None
                       else ReconcileStats(agent_id, started=False, error=str(err)))
    return results


# ----------------------------------------------------------------- starting in the background

_threads: dict[tuple[str, str], threading.Thread] = {}
_threads_lock = threading.Lock()


def start_background(state: StateDir, agent_id: str, mode: str = "thread") -> bool:
    """Start reconciling ``agent_id`` without waiting; False if one is already running.

    ``thread`` suits long-lived processes (the browser, an embedding runtime); ``process``
    suits short ones (a CLI search) and detaches a ``python -m backscroll.core.reconcile``.
    Either way the database lease makes a second reconciler give up at once.
    """
    try:
        with state.open(agent_id) as db:
            if db.read_progress().running:
                return False
    except SchemaBehind:
        pass  # the reconciler opens it as a writer, which upgrades it
    if mode == "process":
        subprocess.Popen(
            [sys.executable, "-m", "backscroll.core.reconcile", str(state.path), agent_id],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, **state.storage.child_env()},  # the same storage, never in argv
        )
        return True
    slot = (state.describe(), agent_id)
    with _threads_lock:
        running = _threads.get(slot)
        if running is not None and running.is_alive():
            return False
        thread = threading.Thread(
            target=_quiet_reconcile, args=(state, agent_id), name=f"reconcile-{agent_id}",
            daemon=True,
        )
        _threads[slot] = thread
        thread.start()
    return True


def _quiet_reconcile(state: StateDir, agent_id: str) -> None:
    try:
        reconcile_agent(state, agent_id)
    except BackscrollError:
        pass  # the next search reports indexing again and retries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m backscroll.core.reconcile")
    parser.add_argument("state_dir", type=Path)
    parser.add_argument("agent")
    args = parser.parse_args(argv)
    try:
        reconcile_agent(StateDir(args.state_dir), args.agent)
    except BackscrollError as err:
        print(f"backscroll reconcile: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
