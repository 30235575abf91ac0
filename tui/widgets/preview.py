"""The preview pane of the search screen: the conversation around the highlighted row (the end
of it, or around its hit). A compound widget that owns its work: the debounce timer, the
``history`` thread worker and the handler of its answer, so the screen only says that the
highlight moved (``highlighted``) or that the conversation grew (``load``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import on, work
from textual.timer import Timer
from textual.worker import Worker

from backscroll.core.conversation import window_around
from backscroll.core.errors import Forbidden, ValidationError
from backscroll.core.state import StateDir
from backscroll.core.visibility import Caller

from ..guard import while_shown
from ..messages import HistoryLoaded
from ..scheduler import TYPING_PAUSE_S, SearchScheduler
from ..text import Clock
from .history_pane import HistoryPane
from .results import Row, row_anchor, row_host, row_identity, row_key

PREVIEW_MESSAGES = 25
# The preview waits until typing pauses: the next key, typed ~150 ms after the last, must not
# wait behind a conversation being laid out (docs/browser.md, Speed).
PREVIEW_AFTER_TYPING_S = TYPING_PAUSE_S

CUT_NOTE = "… [cut: {more:,} more characters; the conversation (enter) shows them]"


class Preview(HistoryPane):
    def __init__(
        self,
        state: StateDir,
        now: Clock,
        caller: Callable[[], Caller],
        current: Callable[[], Row | None],
        typing: SearchScheduler,
        debounce: float,
        **kwargs: Any,
    ) -> None:
        """``caller``: who looks, asked when a preview is read; ``current``: the highlighted
        row, asked again when an answer comes (the highlight may have moved on); ``typing``:
        the search's scheduler (no preview is drawn while a person types)."""
        super().__init__(**kwargs)
        self._state = state
        self._now = now
        self._caller = caller
        self._current = current
        self._typing = typing
        self._debounce = debounce
        self._timer: Timer | None = None

    def highlighted(self) -> None:
        """Holding j must not read a history per row: wait until the highlight settles."""
        if self._timer is not None:
            self._timer.stop()
        if self._current() is None:
            return
        self._timer = self.set_timer(self._debounce, self._settled)

    @while_shown
    def _settled(self) -> None:
        self._timer = None
        if self._typing.busy:
            return  # still typing: the next answer moves the highlight and asks again
        typing = PREVIEW_AFTER_TYPING_S - self._typing.idle_for()
        if typing > 0:  # drawing a conversation now would delay the next keystroke's results
            self._timer = self.set_timer(typing, self._settled)
            return
        row = self._current()
        if row is not None:
            self.load(row, self._caller())

    @work(thread=True, exclusive=True, group="history", exit_on_error=False)
    def load(self, row: Row, caller: Caller) -> None:
        """The conversation around the row's hit, or (a conversation) its newest messages:
        a window of it, so a long conversation previews as fast as a short one."""
        try:
            response = window_around(self._state, caller, row_key(row), row_anchor(row),
                                     PREVIEW_MESSAGES, row_host(row), CUT_NOTE)
        except (ValidationError, Forbidden) as err:  # e.g. rewound meanwhile: say so, inline
            self.post_message(HistoryLoaded(row, error=str(err)))
            return
        self.post_message(HistoryLoaded(row, response))

    @on(HistoryLoaded)
    @while_shown
    def _loaded(self, message: HistoryLoaded) -> None:
        message.stop()
        current = self._current()
        if current is None or row_identity(message.row) != row_identity(current):
            return  # the highlight moved on
        if message.error is not None:
            self.show_note(message.error, style="yellow")
        elif message.response is not None:
            self.show_history(message.response, row_anchor(message.row), self._now)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A failed read becomes the app's one notification, as a screen's worker does."""
        report = getattr(self.app, "report_failure", None)
        if callable(report):
            report(event)
