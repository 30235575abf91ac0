"""Every message of the browser: what workers post (answers, progress, results of their I/O)
and what a screen asks of the app. Handlers on the UI thread act on them; a message carries
what it answers (a search generation, the result a history is for) so a handler can drop an
answer nobody waits for any more.

Each is a dataclass (Textual's ``Message.__post_init__`` is what a dataclass's ``__init__``
calls): its fields are what it carries, and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.message import Message

from backscroll.core.catalog import SessionSummary
from backscroll.core.conversation import Outline
from backscroll.core.facts import Facts
from backscroll.core.grouped import GroupedResponse
from backscroll.core.history import HistoryResponse
from backscroll.core.search import SearchRequest, SearchResponse
from backscroll.core.sources import Source, SyncReport
from backscroll.core.sources.listing import SourceStatus
from backscroll.core.status import StateStatus
from backscroll.core.usage import UsageReport
from backscroll.core.visibility import Caller


@dataclass
class SearchAnswered(Message):
    """The answer (or the validation error) for one search generation: message-level, or
    grouped by conversation."""

    generation: int
    request: SearchRequest
    response: SearchResponse | GroupedResponse | None = None
    error: str | None = None
    forbidden: bool = False  # the caller may not search (its session is gone)


@dataclass
class HomeLoaded(Message):
    """The recent conversations, for the list shown before anything is typed."""

    generation: int
    sessions: list[SessionSummary]
    error: str | None = None  # why nothing new is listed (the server is gone, ...)
    forbidden: bool = False  # the caller may not search: nothing may stay listed


@dataclass
class CallsListed(Message):
    """The calls screen's list of tool calls (``core.tool_search.tool_calls``), or why not."""

    generation: int
    response: SearchResponse | None = None
    error: str | None = None


@dataclass
class HistoryLoaded(Message):
    """The conversation around a row, for the preview pane."""

    row: Any
    response: HistoryResponse | None = None
    error: str | None = None


@dataclass
class ConversationOpened(Message):
    """A conversation's outline, the hits in it, and the first window to show."""

    outline: Outline
    hits: list[str]
    start: int
    messages: list[dict[str, Any]]
    focus: int


@dataclass
class WindowRead(Message):
    """Messages of a conversation from ``start``: for one end (``before``/``after``) of what is
    shown, or to show instead of it (``center``/``top``/``bottom``), around ``focus``."""

    start: int
    messages: list[dict[str, Any]]
    where: str
    focus: int | None


@dataclass
class WholeRead(Message):
    """The message at outline position ``index`` read whole, to unfold it."""

    index: int
    message: dict[str, Any]


@dataclass
class FactsRead(Message):
    """A conversation's facts (core/facts.py) for its facts line; None: not computed yet."""

    facts: Facts | None


@dataclass
class UsageRead(Message):
    """The usage view's reports: by day (the chart), by agent and by model; or why not."""

    reports: dict[str, UsageReport] | None
    error: str | None = None


@dataclass
class FailedFound(Message):
    """The outline positions of a conversation's failed tool results, for ``f`` / ``F``
    (``forward``: which way the key that asked goes)."""

    outline: Outline
    positions: list[int]
    forward: bool


@dataclass
class HitsFound(Message):
    """The hits of a search within one conversation (or why the query was refused);
    ``opening``: those of the query it was opened with."""

    request: SearchRequest
    hits: list[str] | None
    error: str | None = None
    opening: bool = False


@dataclass
class StatusPolled(Message):
    """Reconciliation progress; a newer one replaces an unprocessed older one."""

    status: StateStatus

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StatusPolled)


class BrowseMessage(Message):
    """A message for the search screen's row actions (``screens/browse.py``): the screen
    hands it on."""


class ActionMessage(Message):
    """A message for the session actions (``actions.py``): the app hands it on."""


@dataclass
class SessionsLoaded(BrowseMessage):
    """Every session of the state dir, for the "view as" picker."""

    sessions: list[SessionSummary]


@dataclass
class CallerChanged(ActionMessage):
    """The caller built for a "view as" choice (the config file was read for its policy)."""

    caller: Caller


@dataclass
class ExportFinished(ActionMessage):
    """A conversation was written where the person chose (redacted): how big, and where."""

    session_key: str
    path: str
    size: int


@dataclass
class ResumeRequested(ActionMessage):
    """A screen asks for the command that resumes a conversation, to copy it."""

    session_key: str
    host: str | None = None  # the session's (a team server holds a key per host)


@dataclass
class CallsRequested(ActionMessage):
    """A screen asks for the calls screen of one session (its tool calls, newest first)."""

    session_key: str


@dataclass
class SessionLookedUp(ActionMessage):
    """What a list shows of one session (for ``resume``), or why it cannot be shown."""

    session_key: str
    summary: SessionSummary | None
    error: str | None = None


@dataclass
class FiltersChanged(Message):
    """The filters dialog changed a filter (each change applies at once)."""

    filters: Any


@dataclass
class FilterChoices(BrowseMessage):
    """The agents and projects the caller may see: the filters dialog's choices."""

    agents: list[str]
    projects: list[tuple[str, int]]


@dataclass
class ExportRequested(ActionMessage):
    """A screen asks the app to export a conversation (the app asks where, then writes it)."""

    session_key: str
    host: str | None = None  # the session's (a team server holds a key per host)


class LiveMessage(Message):
    """A message for the live sources' follower (``live.py``): the app hands it on."""


@dataclass
class SourcesSynced(LiveMessage):
    """A sync of the live sources ended (most find nothing new)."""

    report: SyncReport


@dataclass
class SyncOnOpen(LiveMessage):
    """Whether the sources are synced and followed on open (``[sync] on_open``: by default
    on the local files, not into a shared server)."""

    allowed: bool


@dataclass
class SourcesWatching(LiveMessage):
    """The live follow now watches these sources (it starts over when they change)."""

    sources: list[Source]


@dataclass
class SyncProgress(LiveMessage):
    """Files read so far by a sync; a newer one replaces an unprocessed older one."""

    done: int
    total: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SyncProgress)


@dataclass
class SourcesListed(LiveMessage):
    """The sources found on this machine, for the first screen of an empty state dir."""

    statuses: list[SourceStatus]


class TakeInRequested(LiveMessage):
    """The person asked to take in the sources found (the empty state's key)."""


@dataclass
class PrivacyWarning(Message):
    """A folder or database looser than 0700 / 0600 (``core/file_modes.py``), from any thread."""

    text: str
