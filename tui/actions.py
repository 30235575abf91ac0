"""What the browser does to one conversation or for the person, beside searching: export it
(asking where first), copy the command that resumes it, list its tool calls (the calls
screen), and view as another caller.

``SessionActions`` is an object the app owns (``app.actions``), not a mixin: its workers run on
the app (groups ``export``, ``lookup``, ``caller``) and post ``ActionMessage``s, which the app
hands back to ``SessionActions.handle`` on the UI thread; screens ask through
``ExportRequested`` / ``ResumeRequested`` (the same route) or call it directly.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol

from backscroll.core.catalog import SessionSummary, resume_of, visible_session
from backscroll.core.config import load_config, make_caller
from backscroll.core.errors import Forbidden
from backscroll.core.export import write_export
from backscroll.core.keys import is_incognito
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR, Caller

from .guard import while_shown
from .messages import (
    ActionMessage,
    CallerChanged,
    CallsRequested,
    ExportFinished,
    ExportRequested,
    ResumeRequested,
    SessionLookedUp,
)
from .screens import CallsScreen, CallsWhat, CoreCalls, ExportChoice, ExportScreen, ViewAsChoice
from .text import cut_middle, shown

COPIED_NOTE_CHARS = 60  # of a copied command, in the note saying so


class ActionsHost(Protocol):
    """What the session actions need of the app (``BackscrollApp``)."""

    state: StateDir
    caller: Caller
    now: Callable[[], float]

    @property
    def ready(self) -> bool: ...
    @property
    def search_screen(self) -> Any: ...
    def flash(self, text: str) -> None: ...
    def bell(self) -> None: ...
    def copy_to_clipboard(self, text: str) -> None: ...
    def push_screen(self, screen: Any, callback: Callable[[Any], Any] | None = None) -> Any: ...
    def post_message(self, message: Any) -> bool: ...
    def notify(self, message: str, **kwargs: Any) -> None: ...
    def run_worker(self, work: Any, **kwargs: Any) -> Any: ...


class SessionActions:
    def __init__(self, app: ActionsHost) -> None:
        self.app = app

    def handle(self, message: ActionMessage) -> None:
        """A worker's (or a screen's) message, on the UI thread."""
        getattr(self, message.handler_name)(message)

    def _run(self, work: Callable[[], None], group: str) -> None:
        self.app.run_worker(work, group=group, exclusive=True, thread=True, exit_on_error=False)

    # --- tool calls ---------------------------------------------------------------------------

    def on_calls_requested(self, message: CallsRequested) -> None:
        calls = CoreCalls(self.app.state, self.app.caller)
        self.app.push_screen(CallsScreen(calls, CallsWhat(session_key=message.session_key),
                                         self.app.now))

    # --- export -----------------------------------------------------------------------------

    def on_export_requested(self, message: ExportRequested) -> None:
        self.ask_export(message.session_key, message.host)

    def ask_export(self, session_key: str, host: str | None = None) -> None:
        def chosen(choice: ExportChoice | None) -> None:
            if choice is not None:
                caller = self.app.caller
                self._run(lambda: self._export(session_key, choice, caller, host), "export")

        self.app.push_screen(ExportScreen(session_key), chosen)

    def _export(self, session_key: str, choice: ExportChoice, caller: Caller,
                host: str | None) -> None:  # a thread worker
        path, size = write_export(self.app.state, session_key, caller, choice.path, choice.fmt,
                                  overwrite=choice.overwrite, host=host)
        self.app.post_message(ExportFinished(session_key, str(path), size))

    def on_export_finished(self, message: ExportFinished) -> None:
        self.app.notify(
            f"exported {shown(message.session_key)} ({message.size:,} bytes, redacted) to "
            f"{shown(message.path)}",
            title="export",
            markup=False,
        )

    # --- resume -----------------------------------------------------------

    def on_resume_requested(self, message: ResumeRequested) -> None:
        self.look_up(message.session_key, self.app.caller, message.host)

    def look_up(self, session_key: str, caller: Caller, host: str | None = None) -> None:
        """What a list shows of one session (its source, cwd and id), for ``copy_resume``."""

        def work() -> None:
            try:
                summary = visible_session(self.app.state, caller, session_key, host)
            except Forbidden as err:
                self.app.post_message(SessionLookedUp(session_key, None, str(err)))
                return
            self.app.post_message(SessionLookedUp(session_key, summary))

        self._run(work, "lookup")

    @while_shown
    def on_session_looked_up(self, message: SessionLookedUp) -> None:
        if message.summary is None:
            self.app.notify(message.error or "", severity="warning", markup=False)
        else:
            self.copy_resume(message.summary)

    def copy_resume(self, summary: SessionSummary) -> None:
        """Copy the way back into a conversation (OSC 52) and say what it was where the
        person looks: the status bar, or the conversation's position line."""
        resume = resume_of(summary)
        if resume.kind == "none":  # nothing is copied; the sentence says why
            self.app.bell()
            self.app.flash(resume.text)
            return
        self.app.copy_to_clipboard(resume.text)
        what = "the resume command" if resume.kind == "command" else "the session key"
        self.app.flash(f"copied {what}: {cut_middle(shown(resume.text), COPIED_NOTE_CHARS)}")

    # --- view as ------------------------------------------------------------------------------

    def switch_caller(self, choice: ViewAsChoice) -> None:
        """The caller for a choice, built as the CLI's ``--as KEY [--sandboxed]`` builds it."""

        def work() -> None:
            if choice.key is None:
                caller = OPERATOR
            else:
                caller = make_caller(load_config(self.app.state.path), choice.key, None,
                                     choice.sandboxed, choice.host)
            self.app.post_message(CallerChanged(caller))

        self._run(work, "caller")

    @while_shown
    def on_caller_changed(self, message: CallerChanged) -> None:
        app = self.app
        if not app.ready:
            return
        app.caller = message.caller
        note = "; incognito: it never finds incognito sessions, its own included" if (
            app.caller.key and is_incognito(app.caller.key)) else ""
        app.notify(f"searching as {shown(app.caller.describe())}{note}", markup=False, timeout=4)
        app.search_screen.caller_changed()
