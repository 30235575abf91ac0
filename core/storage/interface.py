"""The storage interface: what every backend implements and everything above it calls.

Two backends implement it: ``storage.sqlite`` (one SQLite file per agent, the embedded
default) and ``storage.postgres`` (one PostgreSQL database shared by every agent host). The
code above ``core/storage/`` sees only these protocols and the dataclasses of
``storage.model``; it never holds a connection, a cursor or SQL, and never asks which backend
it talks to.

A ``Storage`` says which agents exist and opens one agent's data. What one agent's data
serves is split by the roles of its callers (``SessionReads``, ``EventReads``, ``Matching``,
``Browsing``, ``SourceState``, ``Health``; ``Ingest``, ``SourceWrites``, ``Reconciliation``),
and two compositions of them are what callers hold:

- an ``AgentReader`` (every reading role) reads it (search, history, status, verify): it
  never writes, creates or migrates anything;
- an ``AgentWriter`` (every role) also writes it: the live write path, imports, syncs,
  deletes and reconciliation. Opening a writer creates the agent (and, where allowed, the
  schema).

What the write path decides is not here: ``storage.writeplan`` holds it, once for every
backend, and a backend carries its plans out with a few primitives.

A handle holds one connection: use one per thread, and close it (``with`` does). What only
one backend has is a capability flag of the ``Storage`` (``shared``, ``has_files``); SQLite's
``match_all_then_filter`` (the benchmark's baseline) is called by benchmarks only.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Iterable, Protocol

from ..errors import StoreError
from ..indexer import IndexRow
from ..query import ParsedQuery
from .model import (
    AppendResult,
    BranchRow,
    CardFilter,
    Claim,
    FileState,
    Imported,
    Matches,
    MatchFilters,
    MatchRow,
    Progress,
    SessionBrief,
    SessionFilter,
    SessionMeta,
    SessionRow,
    SessionScope,
    StoredTool,
    UsageRow,
)

# What a rebuild publishes for one claimed session: (claim, rows to write now, or None when
# ``write_rows`` already wrote them, the active leaf, the tree problems found, the messages
# of the active branch, the rows of its tool calls (always written at publishing), its facts
# and usage rows computed from the whole log: ``facts.session_facts``).
PublishItem = tuple[Claim, "list[IndexRow] | None", "str | None", str, "list[BranchRow]",
                    "list[ToolRow]", "SessionFacts"]


if TYPE_CHECKING:
    from ..facts import Facts, SessionFacts, Usage, UsageKey
    from ..tool_index import ToolRow


class SchemaBehind(StoreError):
    """A reader met data written by an older backscroll: the next writer upgrades it."""


class Storage(Protocol):
    """Where the agents' transcripts and index live.

    What only one backend has is a capability flag here, not a member callers probe for."""

    shared: bool  # a server others read (a team's PostgreSQL): what is stored is shared
    has_files: bool  # one file per agent (SQLite): ``db_path`` gives it (tests, tools)

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

    def unwritable(self, agent_id: str) -> str | None:
        """Why writes to this agent would fail, in one sentence, when that is known before
        trying (a read-only SQLite file); None otherwise."""
        ...


# --- the roles: what each kind of caller needs of one agent's data (docs/architecture.md,
# Storage). Every method answers one sentence (``StoreError``) when the data cannot be read or
# written, never a driver exception.


class AgentHandle(Protocol):
    """One open handle on one agent's data (every caller)."""

    agent_id: str
    host: str  # this machine's label (core/hosts.py): the host a writer stores sessions under

    @property
    def location(self) -> str:
        """Where this agent's data lives, for messages and cache keys (no password)."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: object) -> None: ...

    def snapshot(self) -> AbstractContextManager[Any]:
        """A read transaction: every read inside it sees one consistent state."""
        ...


class SessionReads(Protocol):
    """Sessions by key, pk or id, and their briefs (history, catalog, visibility, verify,
    reconciliation's planning)."""

    def sessions(self) -> list[SessionRow]:
        """Every session of the agent with its index state, by pk."""
        ...

    def session(self, key: str, host: str | None = None) -> SessionRow | None:
        """One session by key (compared lower-cased) of ``host``; with None, this machine's
        session of that key, else the one of the host named first (``key_hosts``)."""
        ...

    def key_hosts(self, key: str) -> list[str]:
        """The hosts holding a session of this key, sorted (a local store: its one host)."""
        ...

    def sessions_by_pk(self, pks: Iterable[int]) -> dict[int, SessionRow]:
        """The sessions of these pks (those that exist), by pk."""
        ...

    def session_briefs(self, odd_only: bool = False, below: str | None = None,
                       host: str | None = None) -> list[SessionBrief]:
        """Every session with only what deciding visibility needs (cheap to read them all);
        with ``odd_only``, only those whose key is shaped like an incognito one or filed under
        another agent (the only sessions the operator may not see); with ``below``, the
        session of that key and every session linked under it (``spawned_by`` or
        ``parent_key``, compared lower-cased), transitively, or more (a file without the
        link indexes gives every session): the caller puts the rows to the rule. With
        ``host``, only that host's sessions (links are followed within it)."""
        ...

    def session_pks(self) -> list[int]:
        """Every session's pk."""
        ...

    def session_count(self) -> int:
        """How many sessions the database holds."""
        ...

    def pending_pks(self) -> frozenset[int]:
        """Sessions reconciliation has work in (dirty, claimed, or indexed by another
        indexer version: the one ``PENDING`` rule)."""
        ...

    def sessions_naming(self, pk: int) -> list[int]:
        """Sessions whose index rows name ``pk`` in their tree (core/tree_tags.py), for a
        planner that selects a tree by one tag; a backend without tree tags answers []."""
        ...

    def visibility_rev(self) -> int:
        """A counter that moves, in the same transaction, whenever a session appears or goes,
        its links change or its index state does: equal values mean the same sessions."""
        ...

    def session_key_of(self, session_id: str) -> str | None:
        """The key a session is stored under, found by its session id."""
        ...


class EventReads(Protocol):
    """A session's stored events, branch and index rows (conversation, export, rebuilds,
    verify)."""

    def events(
        self, session_pk: int, problems: list[str] | None = None
    ) -> list[tuple[int, dict[str, Any]]]:
        """The stored log as ``(seq, event)``, oldest first, parsed within the entry bounds
        but their size; a row that does not parse is skipped and named in ``problems``."""
        ...

    def tree_events(self, session_pk: int) -> list[tuple[int, dict[str, Any]]]:
        """Every event reduced to what the tree rules and an outline read (type, id,
        parentId, targetId, appendMode, timestamp, a message's role and timestamp)."""
        ...

    def branch_messages(self, session_pk: int, last_seq: int) -> list[BranchRow] | None:
        """The messages of the active branch as stored, oldest first, if they describe the
        log as of ``last_seq`` (call it in the snapshot the session row was read in); None
        when the log has moved on in a way they do not follow yet (the caller then computes
        the branch from ``tree_events``)."""
        ...

    def events_at(self, session_pk: int, seqs: list[int]) -> dict[int, dict[str, Any]]:
        """The events ``seqs`` of a session, parsed; one that does not parse is left out."""
        ...

    def index_rows(self, session_pk: int) -> list[tuple[int, IndexRow]]:
        """The session's index rows as ``(rowid, row)`` by rowid."""
        ...

    def index_state_problems(self, session_pk: int) -> list[str]:
        """How a session's rows disagree with what is kept beside them (their count and
        characters; on SQLite also the scope every row carries). Empty if none."""
        ...

    def totals_problems(self) -> list[str]:
        """How totals kept of every session's rows and characters (SQLite's
        ``index_totals``) disagree with what they sum. Empty if none, or none are kept."""
        ...


class Matching(Protocol):
    """Full-text matching (search and ranking: core/search.py)."""

    def match(
        self,
        query: ParsedQuery,
        scope: SessionScope,
        window: int,
        limit: int,
        order: str = "best",
        filters: MatchFilters = MatchFilters(),
        within: SessionScope | None = None,
        texts: bool = True,
    ) -> Matches:
        """The visible matches to rank, newest first, and the statistics to rank them with
        (``core/rank.py`` ranks; no backend does). ``texts=False``: the rows without their
        text (``body`` empty), for who reads the text of a few of them later
        (``rows_with_text``): reading it is most of a common word's cost.

        Rows: ``best``, every match among ``scope.pks`` (or ``within.pks``, a session
        filter), or the newest ``window`` when there are more (``windowed``); ``recent``, the
        newest ``limit``. ``filters`` (role, time) narrow the rows, inside the query, before
        the limit. Statistics (``CorpusStats``): the rows and characters of every session of
        ``scope`` and, per query part, its matches there counted up to ``window``; past it,
        about how many visible rows are as new as the ``window``-th newest match (rank.py
        scales from there). ``searched_since``: set when only the newest messages were
        searched (a query too costly to evaluate over all of them)."""
        ...

    def rows_with_text(self, rowids: list[int]) -> list[MatchRow]:
        """The index rows of these rowids (from ``match``), with their stored text, newest
        first."""
        ...

    def session_hit_ids(
        self, query: ParsedQuery, session_pk: int, limit: int,
        filters: MatchFilters = MatchFilters(),
    ) -> list[str]:
        """Entry ids of the session's messages that match, oldest first (at most ``limit``)."""
        ...

    def match_tools(
        self,
        query: ParsedQuery,
        scope: SessionScope,
        window: int,
        limit: int,
        order: str = "best",
        filters: MatchFilters = MatchFilters(),
        within: SessionScope | None = None,
    ) -> Matches:
        """As ``match``, over the tool-call index (core/tool_index.py): its rows' role is
        ``tool``; ``filters.tool`` and ``filters.failed`` narrow them; the statistics are the
        visible sessions' tool rows'."""
        ...

    def tool_calls(self, scope: SessionScope, filters: MatchFilters, limit: int
                   ) -> list[StoredTool]:
        """The newest ``limit`` tool calls of ``scope``'s sessions passing ``filters`` (no
        full-text index), newest first."""
        ...

    def tools_by_rowid(self, rowids: list[int]) -> list[StoredTool]:
        """The tool rows of ``rowids``, newest first."""
        ...

    def session_tools(self, pk: int) -> list[StoredTool]:
        """A session's tool rows in call order (time, entry id, block)."""
        ...

    def sessions_hit_ids(
        self, query: ParsedQuery, session_pks: list[int], limit: int,
        filters: MatchFilters = MatchFilters(),
    ) -> dict[int, list[str]]:
        """``session_hit_ids`` of each session, in one walk of the index (a conversation
        search checks and counts a common word in many conversations at once)."""
        ...


class Browsing(Protocol):
    """Lists of conversations (the browser's home, sessions_list): cwd, title, last
    activity."""

    def session_cards(
        self, sessions: SessionFilter, cards: CardFilter = CardFilter(), limit: int | None = None
    ) -> list[SessionRow]:
        """The sessions of ``sessions`` that pass ``cards`` (source, project, activity
        range), newest activity first, with the columns a list shows."""
        ...

    def session_pks_passing(self, cards: CardFilter) -> set[int]:
        """Every session that passes ``cards`` (a search narrows the visible ones by it)."""
        ...

    def projects(self, sessions: SessionFilter) -> list[tuple[str, int]]:
        """(cwd, sessions) of the filter's sessions that name one, most sessions first."""
        ...

    def session_facts(self, pks: Iterable[int]) -> dict[int, Facts]:
        """The stored facts of these sessions (core/facts.py); a session without any (no
        message yet, or waiting for its first rebuild) is not in the answer."""
        ...

    def usage(self, sessions: SessionFilter, since_day: str | None,
              until_day: str | None) -> list[UsageRow]:
        """Tokens and cost of the filter's sessions per (UTC day, model, project), days
        ``since_day`` through ``until_day`` (``YYYY-MM-DD``; None: unbounded)."""
        ...


class SourceState(Protocol):
    """What the live sources' sync last saw of each file (SPEC 14: sources/)."""

    def file_states(self) -> dict[str, FileState]:
        """Every transcript file taken in, by path."""
        ...

    def file_state(self, path: str) -> FileState | None: ...

    def source_syncs(self) -> dict[str, int]:
        """When each source folder was last synced (epoch ms), by folder."""
        ...


class Health(Protocol):
    """Counts, health and reconciliation progress (status, verify, doctor, the browser's
    status bar)."""

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

    def integrity_problems(self, limit: int = 5) -> list[str]:
        """What is damaged in the stored data (SQLite: ``quick_check`` of the file; the
        server: rows without their text), at most ``limit`` sentences."""
        ...

    def orphan_index_rows(self) -> tuple[int, int]:
        """(index rows of no session, text rows with no index row): both must be 0."""
        ...

    def read_progress(self) -> Progress:
        """The agent's reconciliation progress, as any process sees it."""
        ...


class AgentReader(AgentHandle, SessionReads, EventReads, Matching, Browsing, SourceState,
                  Health, Protocol):
    """One agent's data, read-only: every reading role (a composition of role protocols,
    not an inheritance chain)."""


class Ingest(Protocol):
    """The live write path and imports: append, import, delete, purge (core/ingest.py,
    importers/, sources/sync.py, the CLI's delete)."""

    def transaction(self) -> AbstractContextManager[Any]:
        """A write transaction: everything inside commits together or not at all."""
        ...

    def atomic(self) -> AbstractContextManager[None]:
        """One transaction around several writes (a file's new events and its new state):
        after a crash, either all of them are stored or none."""
        ...

    def append(
        self, meta: SessionMeta, line: str | bytes | dict[str, Any], skip_known: bool = False
    ) -> AppendResult:
        """Store one event (creating the session if new) and, when it extends the active
        leaf of a clean session, its index row, in one transaction; otherwise mark the
        session dirty in that transaction. With ``skip_known`` an event the session already
        holds (same id; an id-less one with the same text) is not stored (``known``)."""
        ...

    def importing(self) -> AbstractContextManager[None]:
        """Around many ``import_session`` calls: a backend may group them into fewer
        transactions; each call stays all-or-nothing, and what was imported before an error
        ends the block is kept."""
        ...

    def import_session(
        self, meta: SessionMeta, lines: list[str], parsed: list[dict[str, Any]] | None = None
    ) -> Imported:
        """Store validated event lines without indexing (the session becomes dirty); events
        stored before are recognised by id (id-less ones by text) and skipped. ``parsed``,
        the lines' events, need hold no more than ``stored.as_imported`` keeps."""
        ...

    def delete_session(self, key: str, host: str | None = None) -> bool:
        """Remove a session's events, index rows and state in one transaction, then
        ``purge``; False if there is no such session (of ``host``; None: this machine's)."""
        ...

    def purge(self, only_if_pending: bool = False) -> bool:
        """Make deleted text unrecoverable from what the backend keeps itself (SQLite: merge
        the full-text index, zero freed pages, truncate the log; the server: a plain VACUUM of
        the tables a delete touches, where the role may). True when done."""
        ...

    def purge_limits(self) -> list[str]:
        """What deleted text the last purge left behind, and what finishes it, as sentences
        for the person who deleted (SQLite: a log a reader held; the server: its table files,
        WAL, backups and replicas). Empty when nothing is left that this process could know
        of."""
        ...


class SourceWrites(Protocol):
    """What a sync records of the live sources' files and folders (SPEC 14: sources/)."""

    def save_file_state(self, state: FileState, moved_from: str | None = None) -> None:
        """Insert or replace a file's row (``moved_from``: its row under its old name); call
        inside ``atomic()`` with the events read from it."""
        ...

    def relink_session(self, meta: SessionMeta) -> bool:
        """Take a session store's links, label and (from a placeholder) key for the session
        ``meta.session_id``; True when something changed."""
        ...

    def rekey_session(self, session_id: str, key: str, label: str | None) -> bool:
        """Move the session ``session_id`` to ``key`` (and ``label``) unless ``key`` names
        another session; True when moved."""
        ...

    def mark_archived(self, session_id: str, archived: bool = True) -> bool:
        """Say whether the session ``session_id``'s transcript is in a cold archive
        (``SessionRow.archived``); True when that changed something."""
        ...

    def mark_missing(self, paths: Iterable[str], since: int) -> None:
        """These files are gone from disk: their rows (and sessions) stay, marked."""
        ...

    def record_sync(self, roots: Iterable[tuple[str, str]], when: int) -> None:
        """Source folders ``(root, kind)`` were synced at ``when``."""
        ...


class Reconciliation(Protocol):
    """Leases, claims and the publishing of rebuilt sessions (core/reconcile.py; see
    docs/reconciliation.md)."""

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
        """Inside the caller's transaction: write the rows and branch messages of each item
        still ours, make it clean and refresh its summary (title, last activity); return the
        claims published."""
        ...

    def release_all(self, owner: str) -> None:
        """Claims ``owner`` still holds go back as dirty."""
        ...

    def lagging_branches(self) -> list[tuple[int, str, int]]:
        """(pk, key, last_seq) of clean sessions whose stored branch messages lag behind
        their log (a database from before they were stored); pending ones get theirs from
        their rebuild, and a branch not in log order (``stored.UNORDERED_BRANCH``) is none."""
        ...

    def replace_facts(self, batch: list[tuple[int, Facts | None, dict[UsageKey, Usage]]]
                      ) -> None:
        """A rebuild's facts and usage rows of sessions ``(pk, facts, rows)`` over what they
        held, inside the caller's transaction (``publish`` calls it)."""
        ...

    def replace_branches(self, batch: list[tuple[int, int, list[BranchRow]]]) -> None:
        """Inside the caller's transaction: the branch messages of sessions ``(pk, seq,
        shown)`` as of their event ``seq``; never older ones over newer, and none for a branch
        not in log order (``stored.UNORDERED_BRANCH``: readers compute it from the log)."""
        ...


class AgentWriter(AgentReader, Ingest, SourceWrites, Reconciliation, Protocol):
    """One agent's data for the write path, imports, syncs, deletes and reconciliation:
    every reading and writing role."""
