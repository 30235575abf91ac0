"""What the storage layer hands out and takes in: plain records, the same for every backend.
They are named tuples: a frozen dataclass costs about a millisecond to create when its module
loads (and ``dataclasses`` itself ~10 ms to import), and a search's start loaded twenty-two of
them (docs/performance.md). A copy with other values is ``record._replace(field=value)``.

A backend (``storage/sqlite/`` today) turns these into SQL and back; nothing above the storage
layer sees a connection, a cursor or a row tuple.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from ..indexer import INDEXER_VERSION
from ..redact import redact

if TYPE_CHECKING:
    from ..facts import Usage


def now_ms() -> int:
    return int(time.time() * 1000)


def default_host() -> str:
    """The host label of a storage made without one (a tool, a test): ``hosts.FALLBACK``."""
    return "localhost"


ARCHIVED_LABEL = " (archived)"  # shown after a cold session's label (for people; never read back)


class SessionRow(NamedTuple):
    pk: int
    key: str
    session_id: str
    spawned_by: str | None
    parent_key: str | None
    label: str | None
    source: str
    created_at: int
    updated_at: int
    last_seq: int
    leaf_id: str | None
    state: str  # clean | dirty | claimed
    indexed_seq: int
    indexer_version: int
    problems: str | None
    # Its transcript was moved to a cold archive by its agent (OpenClaw's store): a stored flag
    # (``sessions.archived``), set by the importer that reads the archive, never by a label.
    archived: bool = False
    # Read only by ``Reads.session_cards`` (a list of conversations); see schema.SUMMARY_COLUMNS.
    cwd: str | None = None
    title: str | None = None  # the first indexed user message, redacted, cut
    messages: int = 0  # indexed (user and assistant) messages: index_state.rows
    last_message_at: int | None = None
    # The machine label of the host it came from (core/hosts.py); "" for a session a team
    # server stored before it kept hosts (PostgreSQL schema 5), until its host claims it.
    host: str = ""

    @property
    def last_activity(self) -> int:
        """The newest message's time, else when the session last changed."""
        return self.last_message_at if self.last_message_at is not None else self.updated_at

    @property
    def searchable(self) -> bool:
        """Clean under the current indexer version: its index rows are its active branch.
        The storage layer's ``PENDING`` predicate is exactly ``not searchable``."""
        return self.state == "clean" and self.indexer_version == INDEXER_VERSION

    @property
    def pending(self) -> bool:
        """Reconciliation has work here (dirty, claimed, or indexed by older rules)."""
        return not self.searchable


class SessionBrief(NamedTuple):
    """What deciding visibility needs of a session (read for every session of a database)."""

    pk: int
    key: str
    spawned_by: str | None
    parent_key: str | None
    searchable: bool


class SessionMeta(NamedTuple):
    """What a caller knows of a session before its events: used by append and import."""

    key: str
    session_id: str | None = None
    spawned_by: str | None = None
    parent_key: str | None = None
    label: str | None = None
    created_at: int | None = None
    updated_at: int | None = None
    source: str = "live"
    host: str | None = None  # the host it came from; None: the writer's own (this machine)


class MatchRow(NamedTuple):  # a tuple: thousands are made per search
    rowid: int
    session_pk: int
    entry_id: str
    role: str
    ts: int
    body: str  # the stored (redacted, segmented) text


class EverySessionBut:
    """Every session of one database but ``excluded``, ``total`` sessions in all: a scope's
    ``pks`` named without reading every session's number (the operator's view read 100,000
    of them at each search's start; docs/performance.md, "Ten million messages").

    It answers what a planner asks of ``pks`` (its size, membership, the sessions of a given
    set it holds) but cannot list them: it is only used where the scope's ``hidden`` sessions
    are few and its own many (``naming_is_cheap``), so every planner names the hidden side.
    (``excluded`` may be larger than ``hidden``: incognito sessions hold no rows.) A caller
    that must list them reads the database (``visible_sessions.listed``).
    """

    __slots__ = ("excluded", "total")
    FEW = 48  # at most this many hidden, and more than this many in the set (sqlite MAX_TAGS)

    def __init__(self, excluded: frozenset[int], total: int) -> None:
        self.excluded = excluded
        self.total = total  # every session of the database, ``excluded`` included

    @classmethod
    def naming_is_cheap(cls, hidden: frozenset[int], size: int) -> bool:
        """Whether a scope of ``size`` sessions hiding ``hidden`` may take this form."""
        return len(hidden) <= cls.FEW < size

    def __len__(self) -> int:
        return self.total - len(self.excluded)

    def __contains__(self, pk: object) -> bool:
        return pk not in self.excluded

    def __and__(self, sessions: Iterable[int]) -> frozenset[int]:
        """The sessions of ``sessions`` (existing ones) that are in this set."""
        return frozenset(pk for pk in sessions if pk not in self.excluded)

    __rand__ = __and__

    def __iter__(self) -> Iterator[int]:
        raise TypeError("EverySessionBut cannot list its sessions: read them "
                        "(visible_sessions.listed)")

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, EverySessionBut)
                and (self.excluded, self.total) == (other.excluded, other.total))

    def __hash__(self) -> int:
        return hash((self.excluded, self.total))

    def __repr__(self) -> str:
        return f"EverySessionBut({sorted(self.excluded)!r}, total={self.total})"

    def resolve(self, every: Iterable[int]) -> frozenset[int]:
        """The set as numbers, given every session's."""
        return frozenset(every) - self.excluded


class SessionScope(NamedTuple):
    """The sessions a search may return rows of, and what a planner may use to find them.

    Every row of a session in ``pks`` may match; no row of any other session may. ``hidden``
    names the other sessions that may hold rows (incognito ones never do). ``anchor`` is a
    session that the rows of exactly the sessions in ``covered`` name in their tree
    (core/tree_tags.py), when that helps: a ``tree`` caller's own session.
    """

    pks: frozenset[int] | EverySessionBut
    hidden: frozenset[int]
    anchor: int | None = None
    covered: frozenset[int] = frozenset()


class MatchFilters(NamedTuple):
    """What narrows the rows a search returns (never its ranking statistics)."""

    role: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    tool: str | None = None  # tool rows: this tool's calls (its name, ignoring ASCII case)
    failed: bool = False  # tool rows: failed calls only

    def __bool__(self) -> bool:
        return (self.role, self.since_ms, self.until_ms, self.tool, self.failed) != (
            None, None, None, None, False)


class StoredTool(NamedTuple):
    """A row of the tool-call index as stored (core/tool_index.py), with its text."""

    rowid: int
    session_pk: int
    entry_id: str
    block: int
    call_id: str | None
    tool: str
    status: str  # ok | failed | none
    ts: int
    duration_ms: int | None
    result_entry_id: str | None
    body: str  # redacted, segmented


class PartCount(NamedTuple):
    """One part of a query, counted over the visible messages."""

    found: int  # messages holding it, counted up to a cap
    newer: int | None = None  # when ``found`` is the cap (or only recent messages were
    # searched): about how many visible messages are as new as the stretch searched


class CorpusStats(NamedTuple):
    """The visible, searchable messages of one agent database, as ranking needs them."""

    rows: int
    chars: int
    parts: tuple[PartCount, ...]  # one per query part, in order


class Matches(NamedTuple):
    """What one agent database found: rows newest first, whether only the newest matches
    were kept (the rank window), the statistics to rank them with, and, for a query too
    costly to evaluate over every message, the time before which nothing was searched."""

    rows: list[MatchRow]
    windowed: bool
    stats: CorpusStats
    searched_since: int | None = None  # epoch ms: older messages were not searched


class SessionFilter(NamedTuple):
    """Some sessions of a database: ``pks`` themselves, or (``exclude``) all but them."""

    pks: list[int]
    exclude: bool = False


class CardFilter(NamedTuple):
    """Which sessions a list of conversations shows, besides the caller's: their ``source``
    values (as stored), a project (a cwd; its subfolders count), a time range of last
    activity."""

    sources: tuple[str, ...] | None = None
    project: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    host: str | None = None  # only sessions from this host (core/hosts.py)


class UsageRow(NamedTuple):
    """Tokens and cost of some sessions on one UTC day with one model (``usage``), summed
    per project (the sessions' cwd, None where they name none)."""

    day: str  # YYYY-MM-DD
    model: str  # "" when the messages name none
    project: str | None
    usage: Usage


class AppendResult(NamedTuple):
    seq: int
    outcome: str  # indexed | stored | dirty


class Imported(NamedTuple):
    """What ``import_session`` stored: the session's key, new events, new message events."""

    key: str
    events: int
    messages: int


class Claim(NamedTuple):
    session_pk: int
    key: str
    session_id: str
    created_at: int
    seen_seq: int  # transcript length when claimed: publish only if it is unchanged


class Progress(NamedTuple):
    """A reconciliation run as any process reads it from the database (SPEC 8)."""

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
            "currentSession": redact(self.current_session) if self.current_session else None,
        }


IDLE = Progress("idle", None, None, None, 0, 0, 0, None, None, None)


class FileState(NamedTuple):
    """What a sync took in from one transcript file (SPEC 14), as the storage keeps it."""

    path: str
    kind: str  # openclaw | openclaw-store | claude-code | codex
    root: str  # the source folder it was found in
    device: int
    inode: int
    size: int
    mtime_ns: int
    done_bytes: int = 0  # just after the last complete line taken in
    done_lines: int = 0  # complete lines before done_bytes
    head_hash: str = ""  # of the first few KB, at most done_bytes of them
    tail_hash: str = ""  # of the bytes just before done_bytes
    context: str | None = None  # what the format needs to read on from done_bytes (JSON)
    sessions: tuple[str, ...] = ()  # keys of the sessions it feeds
    synced_at: int = 0
    missing_since: int | None = None  # gone from disk; its sessions stay
    problem: str | None = None  # why it was not (fully) taken in


# A message the active branch shows, as stored for a conversation's outline:
# (seq, entry id as written or None, role, time in epoch ms or None); see
# ``transcript.branch_message``.
BranchRow = tuple[int, "str | None", str, "int | None"]
