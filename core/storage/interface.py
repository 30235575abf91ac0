"""The storage interface: what every backend implements and everything above it calls.

Two backends implement it: ``storage.sqlite`` (one SQLite file per agent, the embedded
default) and ``storage.postgres`` (one PostgreSQL database shared by every agent host). The
code above ``core/storage/`` sees only these protocols and the dataclasses of
``storage.model``; it never holds a connection, a cursor or SQL, and never asks which backend
it talks to.

Three roles:

- a ``Storage`` says which agents exist and opens one agent's data;
- an ``AgentReader`` reads it (search, history, status, verify): it never writes, creates or
  migrates anything;
- an ``AgentWriter`` also writes it: the live write path, imports, deletes and
  reconciliation. Opening a writer creates the agent (and, where allowed, the schema).

A handle holds one connection: use one per thread, and close it (``with`` does).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Iterable, Protocol

from ..errors import StoreError
from ..indexer import IndexRow
from ..query import ParsedQuery
from .model import AppendResult, Claim, MatchRow, Progress, SessionFilter, SessionMeta, SessionRow

# What a rebuild publishes for one claimed session: (claim, rows to write now, or None when
# ``write_rows`` already wrote them, the active leaf, the tree problems found).
PublishItem = tuple[Claim, "list[IndexRow] | None", "str | None", str]


class SchemaBehind(StoreError):
    """A reader met data written by an older backscroll: the next writer upgrades it."""


class Storage(Protocol):
    """Where the agents' transcripts and index live."""

    def describe(self) -> str:
        """The backend and where it keeps its data, for people (a password never shows)."""
        ...

    def available(self) -> bool:
        """True when there is anything to read (the state dir or the schema exists)."""
        ...

    def require(self) -> None:
        """Raise ``StoreError`` with one sentence saying how to create the storage when
        there is nothing to read."""
        ...

    def agents(self) -> list[str]:
        """The agent ids holding data, sorted."""
        ...

    def open(self, agent_id: str, write: bool = False) -> AgentReader | AgentWriter:
        """One agent's data: a reader, or with ``write`` a writer (the agent is created if
        missing). The agent id is checked here (``keys.check_agent_id``): the one door."""
        ...

    def child_env(self) -> dict[str, str]:
        """Environment variables that make a child process (a detached reconciler) open
        this same storage."""
        ...


class AgentReader(Protocol):
    """One agent's data, read-only. Every method answers one sentence (``StoreError``)
    when the data cannot be read, never a driver exception."""

    agent_id: str

    @property
    def location(self) -> str:
        """Where this agent's data lives, for messages and cache keys (no password)."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: object) -> None: ...

    def snapshot(self) -> AbstractContextManager[None]:
        """A read transaction: every read inside it sees one consistent state."""
        ...

    # --- sessions and events
    def sessions(self) -> list[SessionRow]:
        """Every session of the agent with its index state, by pk."""
        ...

    def session(self, key: str) -> SessionRow | None:
        """One session by key (compared lower-cased)."""
        ...

    def visibility_rev(self) -> int:
        """A counter that moves, in the same transaction, whenever a session appears or goes,
        its links change or its index state does: equal values mean the same sessions."""
        ...

    def events(self, session_pk: int) -> list[tuple[int, dict[str, Any]]]:
        """The stored log as ``(seq, event)``, oldest first; rows that no longer parse are
        skipped."""
        ...

    def index_rows(self, session_pk: int) -> list[tuple[int, IndexRow]]:
        """The session's index rows as ``(rowid, row)`` by rowid."""
        ...

    # --- matching
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
        """The top ``limit`` rows matching ``query`` among ``sessions`` (the filter runs
        inside the query, before the limit), best first (bm25 as FTS5 computes it, then
        newest rowid) or newest first (``order="recent"``); and whether ranking was
        windowed: with ``rank_window``, a query matching more rows than that is ranked over
        its newest ``rank_window`` matches only."""
        ...

    # --- counts and progress
    def has_pending_sessions(self) -> bool:
        """Any session (visible or not) that is not clean under the current indexer version."""
        ...

    def pending_count(self) -> tuple[int, int]:
        """(sessions needing a rebuild, their stored events)."""
        ...

    def counts(self) -> dict[str, int]:
        """``sessions``, ``messages`` (stored), ``indexed`` (rows), ``dirty`` (pending) and
        ``neverIndexed`` sessions."""
        ...

    def orphan_index_rows(self) -> tuple[int, int]:
        """(index rows of no session, text rows with no index row): both must be 0."""
        ...

    def read_progress(self) -> Progress:
        """The agent's reconciliation progress, as any process sees it."""
        ...


class AgentWriter(AgentReader, Protocol):
    """One agent's data for the write path, imports, deletes and reconciliation."""

    def transaction(self) -> AbstractContextManager[Any]:
        """A write transaction: everything inside commits together or not at all."""
        ...

    def append(self, meta: SessionMeta, line: str | dict[str, Any]) -> AppendResult:
        """Store one event (creating the session if new) and, when it extends the active
        leaf of a clean session, its index row, in one transaction; otherwise mark the
        session dirty in that transaction."""
        ...

    def import_session(
        self, meta: SessionMeta, lines: list[str], parsed: list[dict[str, Any]] | None = None
    ) -> tuple[str, int]:
        """Store validated event lines without indexing (the session becomes dirty); events
        stored before are recognised by id (id-less ones by text) and skipped. Returns the
        key used and the events added."""
        ...

    def delete_session(self, key: str) -> bool:
        """Remove a session's events, index rows and state in one transaction; False if
        there is no such session."""
        ...

    # --- reconciliation (see docs/reconciliation.md)
    def start_run(self, owner: str, run_id: str, lease_ms: int) -> bool:
        """Take the agent's reconciler lease (compare-and-set); False if another holds it."""
        ...

    def renew_run(self, owner: str, lease_ms: int, done: int, messages: int,
                  current: str | None) -> bool:
        """Extend the lease and publish progress; False if the lease was lost."""
        ...

    def finish_run(self, owner: str) -> None:
        """Give the lease back; progress reads idle."""
        ...

    def claim_sessions(self, owner: str, lease_ms: int, max_sessions: int,
                       max_events: int) -> list[Claim]:
        """Claim pending sessions not claimed by a live lease, oldest first, up to
        ``max_events`` events (at least one session)."""
        ...

    def still_mine(self, claim: Claim, owner: str) -> bool:
        """Inside a transaction: the session is claimed by ``owner`` and unchanged since the
        claim, and stays so until the transaction ends."""
        ...

    def write_rows(self, claim: Claim, owner: str, rows: list[IndexRow], first: bool,
                   lease_ms: int) -> bool:
        """One batch of a large session's rebuild in its own transaction (the first batch
        drops the old rows); False if the claim was lost."""
        ...

    def publish(self, items: Iterable[PublishItem], owner: str) -> list[Claim]:
        """Inside the caller's transaction: write the rows of each item still ours and make
        it clean; return the claims published."""
        ...

    def release_all(self, owner: str) -> None:
        """Claims ``owner`` still holds go back as dirty."""
        ...
