"""Every message of the browser: what workers post (answers, progress, results of their I/O)
and what a screen asks of the app. Handlers on the UI thread act on them; a message carries
what it answers (a search generation, the result a history is for) so a handler can drop an
answer nobody waits for any more.
"""

from __future__ import annotations

from typing import Any

from textual.message import Message

from backscroll.core.catalog import SessionSummary
from backscroll.core.conversation import Outline
from backscroll.core.grouped import GroupedResponse
from backscroll.core.history import HistoryResponse
from backscroll.core.search import SearchRequest, SearchResponse
from backscroll.core.sources import Source, SyncReport
from backscroll.core.sources.listing import SourceStatus
from backscroll.core.status import StateStatus
from backscroll.core.visibility import Caller


class SearchAnswered(Message):
    """The answer (or the validation error) for one search generation: message-level, or
    grouped by conversation."""

    def __init__(
        self,
        generation: int,
        request: SearchRequest,
        response: SearchResponse | GroupedResponse | None = None,
        error: str | None = None,
        forbidden: bool = False,
    ) -> None:
        super().__init__()
        self.generation = generation
        self.request = request
        self.response = response
        self.error = error
        self.forbidden = forbidden  # the caller may not search (its session is gone)


class HomeLoaded(Message):
    """The recent conversations, for the list shown before anything is typed."""

    def __init__(self, generation: int, sessions: list[SessionSummary], error: str | None = None,
                 forbidden: bool = False) -> None:
        super().__init__()
        self.generation = generation
        self.sessions = sessions
        self.error = error  # why nothing new is listed (the server is gone, ...)
        self.forbidden = forbidden  # the caller may not search: nothing may stay listed


class HistoryLoaded(Message):
    """The conversation around a row, for the preview pane."""

    def __init__(
        self,
        row: Any,
        response: HistoryResponse | None = None,
        error: str | None = None,
    ) -> None:
        super().__init__()
        self.row = row
        self.response = response
        self.error = error


class ConversationOpened(Message):
    """A conversation's outline, the hits in it, and the first window to show."""

    def __init__(self, outline: Outline, hits: list[str], start: int,
                 messages: list[dict[str, Any]], focus: int) -> None:
        super().__init__()
        self.outline = outline
        self.hits = hits
        self.start = start
        self.messages = messages
        self.focus = focus


class WindowRead(Message):
    """Messages of a conversation from ``start``: for one end (``before``/``after``) of what is
    shown, or to show instead of it (``center``/``top``/``bottom``), around ``focus``."""

    def __init__(self, start: int, messages: list[dict[str, Any]], where: str,
                 focus: int | None) -> None:
        super().__init__()
        self.start = start
        self.messages = messages
        self.where = where
        self.focus = focus


class HitsFound(Message):
    """The hits of a search within one conversation (or why the query was refused);
    ``opening``: those of the query it was opened with."""

    def __init__(self, request: SearchRequest, hits: list[str] | None, error: str | None = None,
                 opening: bool = False) -> None:
        super().__init__()
        self.request = request
        self.hits = hits
        self.error = error
        self.opening = opening


class StatusPolled(Message):
    """Reconciliation progress; a newer one replaces an unprocessed older one."""

    def __init__(self, status: StateStatus) -> None:
        super().__init__()
        self.status = status

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StatusPolled)


class SessionsLoaded(Message):
    """Every session of the state dir, for the "view as" picker."""

    def __init__(self, sessions: list[SessionSummary]) -> None:
        super().__init__()
        self.sessions = sessions


class CallerChanged(Message):
    """The caller built for a "view as" choice (the config file was read for its policy)."""

    def __init__(self, caller: Caller) -> None:
        super().__init__()
        self.caller = caller


class ExportFinished(Message):
    def __init__(self, session_key: str, path: str, size: int) -> None:
        super().__init__()
        self.session_key = session_key
        self.path = path
        self.size = size


class ResumeRequested(Message):
    """A screen asks for the command that resumes a conversation, to copy it."""

    def __init__(self, session_key: str, host: str | None = None) -> None:
        super().__init__()
        self.session_key = session_key
        self.host = host  # the session's (a team server holds a key per host)


class SessionLookedUp(Message):
    """What a list shows of one session (for ``resume``), or why it cannot be shown."""

    def __init__(self, session_key: str, summary: SessionSummary | None, error: str | None = None
                 ) -> None:
        super().__init__()
        self.session_key = session_key
        self.summary = summary
        self.error = error


class FiltersChanged(Message):
    """The filters dialog changed a filter (each change applies at once)."""

    def __init__(self, filters: Any) -> None:
        super().__init__()
        self.filters = filters


class FilterChoices(Message):
    """The agents and projects the caller may see: the filters dialog's choices."""

    def __init__(self, agents: list[str], projects: list[tuple[str, int]]) -> None:
        super().__init__()
        self.agents = agents
        self.projects = projects


class ExportRequested(Message):
    """A screen asks the app to export a conversation (the app asks where, then writes it)."""

    def __init__(self, session_key: str, host: str | None = None) -> None:
        super().__init__()
        self.session_key = session_key
        self.host = host  # the session's (a team server holds a key per host)


class SourcesSynced(Message):
    """A sync of the live sources ended (most find nothing new)."""

    def __init__(self, report: SyncReport) -> None:
        super().__init__()
        self.report = report


class SyncOnOpen(Message):
    """Whether the sources are synced and followed on open (``[sync] on_open``: by default
    on the local files, not into a shared server)."""

    def __init__(self, allowed: bool) -> None:
        super().__init__()
        self.allowed = allowed


class SourcesWatching(Message):
    """The live follow now watches these sources (it starts over when they change)."""

    def __init__(self, sources: list[Source]) -> None:
        super().__init__()
        self.sources = sources


class SyncProgress(Message):
    """Files read so far by a sync; a newer one replaces an unprocessed older one."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__()
        self.done = done
        self.total = total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SyncProgress)


class SourcesListed(Message):
    """The sources found on this machine, for the first screen of an empty state dir."""

    def __init__(self, statuses: list[SourceStatus]) -> None:
        super().__init__()
        self.statuses = statuses


class TakeInRequested(Message):
    """The person asked to take in the sources found (the empty state's key)."""


class PrivacyWarning(Message):
    """A folder or database looser than 0700 / 0600 (``core/file_modes.py``), from any thread."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
