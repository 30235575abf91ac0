"""Every message of the browser: what workers post (answers, progress, results of their I/O)
and what a screen asks of the app. Handlers on the UI thread act on them; a message carries
what it answers (a search generation, the result a history is for) so a handler can drop an
answer nobody waits for any more.
"""

from __future__ import annotations

from textual.message import Message

from backscroll.core.catalog import SessionSummary
from backscroll.core.history import HistoryResponse
from backscroll.core.search import SearchRequest, SearchResponse, SearchResult
from backscroll.core.sources import Source, SyncReport
from backscroll.core.sources.listing import SourceStatus
from backscroll.core.status import StateStatus
from backscroll.core.visibility import Caller


class SearchAnswered(Message):
    """The answer (or the validation error) for one search generation."""

    def __init__(
        self,
        generation: int,
        request: SearchRequest,
        response: SearchResponse | None = None,
        error: str | None = None,
    ) -> None:
        super().__init__()
        self.generation = generation
        self.request = request
        self.response = response
        self.error = error


class HistoryLoaded(Message):
    """The conversation around a result: a preview, or the whole of it (``full``)."""

    def __init__(
        self,
        result: SearchResult,
        response: HistoryResponse | None = None,
        error: str | None = None,
        full: bool = False,
    ) -> None:
        super().__init__()
        self.result = result
        self.response = response
        self.error = error
        self.full = full  # the whole conversation (the conversation screen), not a preview


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


class ExportRequested(Message):
    """A screen asks the app to export a conversation (the app asks where, then writes it)."""

    def __init__(self, session_key: str) -> None:
        super().__init__()
        self.session_key = session_key


class SourcesSynced(Message):
    """A sync of the live sources ended (most find nothing new)."""

    def __init__(self, report: SyncReport) -> None:
        super().__init__()
        self.report = report


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
    """A folder or database looser than 0700 / 0600 (``core/private.py``), from any thread."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
