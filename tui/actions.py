"""What the browser does to one conversation or for the person, beside searching: export it
(asking where first), copy the command that resumes it, and view as another caller. A mixin
of ``BackscrollApp``, as ``live.py`` is: workers post messages (``messages.py``), the handlers
here act on the UI thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work

from backscroll.core.catalog import SessionSummary, resume_of, visible_session
from backscroll.core.config import load_config, make_caller
from backscroll.core.errors import Forbidden
from backscroll.core.export import write_export
from backscroll.core.keys import is_incognito
from backscroll.core.visibility import OPERATOR, Caller

from .guard import while_shown
from .messages import CallerChanged, ExportFinished, ExportRequested, ResumeRequested, SessionLookedUp
from .screens import ExportChoice, ExportScreen, ViewAsChoice
from .text import cut_middle, shown

if TYPE_CHECKING:
    from .app import BackscrollApp

    _Base = BackscrollApp
else:
    _Base = object

COPIED_NOTE_CHARS = 60  # of a copied command, in the note saying so


class SessionActions(_Base):
    # --- export -----------------------------------------------------------------------------

    def on_export_requested(self, message: ExportRequested) -> None:
        self.ask_export(message.session_key, message.host)

    def ask_export(self, session_key: str, host: str | None = None) -> None:
        def chosen(choice: ExportChoice | None) -> None:
            if choice is not None:
                self.run_export(session_key, choice, self.caller, host)

        self.push_screen(ExportScreen(session_key), chosen)

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def run_export(self, session_key: str, choice: ExportChoice, caller: Caller,
                   host: str | None = None) -> None:
        path, size = write_export(self.state, session_key, caller, choice.path, choice.fmt,
                                  overwrite=choice.overwrite, host=host)
        self.post_message(ExportFinished(session_key, str(path), size))

    def on_export_finished(self, message: ExportFinished) -> None:
        self.notify(
            f"exported {shown(message.session_key)} ({message.size:,} bytes, redacted) to "
            f"{shown(message.path)}",
            title="export",
            markup=False,
        )

    # --- resume -----------------------------------------------------------

    def on_resume_requested(self, message: ResumeRequested) -> None:
        self.look_up(message.session_key, self.caller, message.host)

    @work(thread=True, exclusive=True, group="lookup", exit_on_error=False)
    def look_up(self, session_key: str, caller: Caller, host: str | None = None) -> None:
        """What a list shows of one session (its source, cwd and id), for ``copy_resume``."""
        try:
            summary = visible_session(self.state, caller, session_key, host)
        except Forbidden as err:
            self.post_message(SessionLookedUp(session_key, None, str(err)))
            return
        self.post_message(SessionLookedUp(session_key, summary))

    @while_shown
    def on_session_looked_up(self, message: SessionLookedUp) -> None:
        if message.summary is None:
            self.notify(message.error or "", severity="warning", markup=False)
        else:
            self.copy_resume(message.summary)

    def copy_resume(self, summary: SessionSummary) -> None:
        """Copy the way back into a conversation (OSC 52) and say what it was where the
        person looks: the status bar, or the conversation's position line."""
        resume = resume_of(summary)
        if resume.kind == "none":  # nothing is copied; the sentence says why
            self.bell()
            self.flash(resume.text)
            return
        self.copy_to_clipboard(resume.text)
        what = "the resume command" if resume.kind == "command" else "the session key"
        self.flash(f"copied {what}: {cut_middle(shown(resume.text), COPIED_NOTE_CHARS)}")

    # --- view as ------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="caller", exit_on_error=False)
    def switch_caller(self, choice: ViewAsChoice) -> None:
        """The caller for a choice, built as the CLI's ``--as KEY [--sandboxed]`` builds it."""
        if choice.key is None:
            caller = OPERATOR
        else:
            caller = make_caller(load_config(self.state.path), choice.key, None, choice.sandboxed,
                                 choice.host)
        self.post_message(CallerChanged(caller))

    @while_shown
    def on_caller_changed(self, message: CallerChanged) -> None:
        if not self.ready:
            return
        self.caller = message.caller
        note = "; incognito: it never finds incognito sessions, its own included" if (
            self.caller.key and is_incognito(self.caller.key)) else ""
        self.notify(f"searching as {shown(self.caller.describe())}{note}", markup=False, timeout=4)
        self.search_screen.caller_changed()
