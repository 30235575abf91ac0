"""The status bar: reconciliation progress (a ProgressBar bound to reactives), what the live
follow of the sources did, whether the results may be incomplete, then the caller and the
search modes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import ProgressBar, Static

from backscroll.core.status import StateStatus

from ..text import plain_of, plural

W = TypeVar("W", bound=Widget)


@dataclass(frozen=True)
class IndexingView:
    """What the status bar says about reconciliation, derived from a ``StateStatus``."""

    running: bool
    done: int
    total: int
    pending: int
    messages: int
    rate: float

    @classmethod
    def of(cls, status: StateStatus | None) -> IndexingView:
        if status is None:
            return cls(False, 0, 0, 0, 0, 0.0)
        live = [a.progress for a in status.agents if a.progress.running]
        return cls(
            running=bool(live),
            done=sum(p.sessions_done for p in live),
            total=sum(p.sessions_total for p in live),
            pending=status.pending_sessions,
            messages=sum(p.messages_done for p in live),
            rate=sum(p.rate for p in live),
        )


class StatusBar(Horizontal):
    """Reconciliation progress (a ProgressBar bound to reactives), then caller and modes."""

    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text; }
    StatusBar > Static { width: auto; height: 1; padding: 0 1; }
    StatusBar > #status-index { width: auto; }
    StatusBar > ProgressBar { width: 24; height: 1; display: none; }
    StatusBar > ProgressBar.-running { display: block; }
    StatusBar > #status-note { color: $warning; }
    StatusBar > #status-live { color: $text-muted; display: none; }
    StatusBar > #status-live.-shown { display: block; }
    StatusBar > #status-filters { color: $text-accent; display: none; }
    StatusBar > #status-filters.-shown { display: block; }
    StatusBar > #status-flash { color: $text-success; display: none; }
    StatusBar > #status-flash.-shown { display: block; }
    StatusBar > #status-spacer { width: 1fr; }
    """
    FLASH_S = 6.0  # how long "copied …" shows

    done: reactive[int] = reactive(0)
    total: reactive[int] = reactive(1)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._flash_timer: Timer | None = None
        self._said: dict[str, Text] = {}  # what each part shows now

    def compose(self) -> ComposeResult:
        yield Static("", id="status-index")
        yield ProgressBar(total=1, show_eta=False, id="status-progress").data_bind(
            progress=StatusBar.done, total=StatusBar.total
        )
        yield Static("", id="status-live")
        yield Static("", id="status-note")
        yield Static("", id="status-filters")
        yield Static("", id="status-flash")
        yield Static("", id="status-spacer")
        yield Static("", id="status-caller")

    def show(self, indexing: IndexingView, incomplete: bool, sessions: int, context: str,
             incognito: int = 0) -> None:
        """``sessions``: every session stored, ``incognito`` of them never listed (so the list
        shows fewer, and says so here)."""
        bar = self._part("#status-progress", ProgressBar)
        if bar is None:
            return
        bar.set_class(indexing.running, "-running")
        if indexing.running:
            self.total = max(indexing.total, indexing.done, 1)
            self.done = indexing.done
            text = f"indexing {indexing.done:,}/{indexing.total:,} sessions"
            if indexing.messages:
                text += f" · {indexing.messages:,} msgs"
        elif indexing.pending:
            text = f"{plural(indexing.pending, 'session')} awaiting indexing"
        elif sessions:  # (not "N indexed": incognito sessions are stored, never indexed)
            unlisted = f" ({incognito:,} incognito not listed)" if incognito else ""
            text = f"{plural(sessions, 'session')}{unlisted}, up to date"
        else:
            text = "no sessions yet"
        self._put("#status-index", Text(text))
        self._put("#status-note", Text("results may be incomplete" if incomplete else ""))
        self._put("#status-caller", Text(context, no_wrap=True, overflow="ellipsis"))

    def _put(self, part: str, text: Text) -> None:
        """Update one part only when what it says changed: a changed part lays out the whole
        screen again, which costs milliseconds on every keystroke."""
        if self._said.get(part) != text and (widget := self._part(part)) is not None:
            self._said[part] = text
            widget.update(text)

    def show_filters(self, labels: list[str], clear_key: str) -> None:
        """The active filters as labels (``agent ops · last 7 days``), and the key that clears
        them; nothing when none is active."""
        text = Text(no_wrap=True, overflow="ellipsis")
        for label in labels:
            text.append(f"[{label}]", style="bold")
            text.append(" ")
        if labels:
            text.append(f"{clear_key} clears", style="dim")
        self._put("#status-filters", text)
        if (filters := self._part("#status-filters")) is not None:
            filters.set_class(bool(labels), "-shown")

    def flash(self, text: str) -> None:
        """A short note of what just happened ("copied the resume command: …")."""
        note = self._part("#status-flash")
        if note is None:
            return
        note.update(Text(text, no_wrap=True, overflow="ellipsis"))
        note.set_class(True, "-shown")
        if self._flash_timer is not None:
            self._flash_timer.stop()
        self._flash_timer = self.set_timer(self.FLASH_S, lambda: note.set_class(False, "-shown"))

    def show_live(self, text: str) -> None:
        """What the live follow of the sources says ("watching 3 sources")."""
        live = self._part("#status-live")
        if live is not None:
            live.update(Text(text))
            live.set_class(bool(text), "-shown")

    def _part(self, part: str, kind: type[W] = Static) -> W | None:  # type: ignore[assignment]
        """One part of the bar, or None while the bar is being taken down: a worker's message
        can still arrive after the browser began to quit."""
        try:
            return self.query_one(part, kind)
        except NoMatches:
            return None

    def plain_text(self) -> str:
        parts = [plain_of(s.content) for s in self.query(Static).results(Static)]
        return " ".join(p for p in parts if p)
