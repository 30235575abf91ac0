"""The first screen of a state dir with nothing in it: the transcript folders found on this
machine, one key to take them in, and the progress while that runs."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import ProgressBar, Static

from backscroll.core.sources.listing import SourceStatus

from .. import keys
from ..messages import TakeInRequested
from ..text import plural, printable


class EmptyState(Vertical, can_focus=True):
    """What an empty state dir shows (``show``), and its key (``take_in``)."""

    BINDINGS = keys.bindings(keys.EMPTY)
    DEFAULT_CSS = """
    EmptyState { height: 1fr; align: center middle; }
    EmptyState > #empty-text { width: auto; max-width: 100; height: auto; }
    EmptyState > ProgressBar { width: auto; height: 1; margin-top: 1; display: none; }
    EmptyState > ProgressBar.-running { display: block; }
    """

    done: reactive[int] = reactive(0)
    total: reactive[int] = reactive(1)

    def compose(self) -> ComposeResult:
        yield Static("", id="empty-text")
        yield ProgressBar(total=1, show_eta=False, id="empty-progress").data_bind(
            progress=EmptyState.done, total=EmptyState.total
        )

    def show(self, path: str, statuses: list[SourceStatus] | None, taking_in: bool) -> None:
        key = keys.first_key(self.app, "take_in")
        self.query_one("#empty-text", Static).update(
            empty_state_text(path, statuses, key, taking_in))

    def progress(self, done: int, total: int) -> None:
        self.query_one(ProgressBar).set_class(0 < total and done < total, "-running")
        self.total = max(total, 1)
        self.done = done

    def action_take_in(self) -> None:
        self.post_message(TakeInRequested())

SHOWN_PLACES = 3  # folders named on the empty screen; `backscroll sources` lists every one


def empty_state_text(path: str, statuses: list[SourceStatus] | None, key: str,
                     taking_in: bool = False) -> Text:
    text = Text()
    text.append("No conversations here yet\n\n", style="bold")
    text.append(f"{printable(home_relative(path), True)} holds no agent databases.\n\n",
                style="dim")
    found = [s for s in statuses or [] if s.present]
    if statuses is None:
        text.append("Looking for transcript folders…\n\n", style="dim")
    elif found:
        text.append("Transcripts found on this machine:\n")
        for status in found:
            text.append(f"  {status.source.kind:<12}", style="bold")
            text.append(f"{printable(home_relative(status.source.root), True)}  ")
            text.append(f"{plural(status.files, 'file')}\n", style="dim")
            for note in status.notes[:2]:
                text.append(f"      {printable(note, True)}\n", style="dim yellow")
        if taking_in:
            text.append("\nTaking them in; new lines are followed while this is open.\n",
                        style="bold")
        else:
            text.append("\nPress ", style="dim")
            text.append(key, style="bold cyan")
            text.append(" to take them in and follow them while this is open.\n\n", style="dim")
    else:
        places = [home_relative(s.source.root) for s in statuses
                  if s.source.origin != "opt-in"]  # (no folder of its own)
        # The first few name it; the rest would push what to do next off a small screen.
        looked = ", ".join(places[:SHOWN_PLACES])
        if len(places) > SHOWN_PLACES:
            looked += f" and {len(places) - SHOWN_PLACES} more: `backscroll sources` lists them"
        text.append(f"No transcript folders found (looked in {printable(looked, True)}).\n",
                    style="dim")
        text.append("Add one:            ", style="dim")
        text.append("backscroll sources add KIND PATH\n", style="bold cyan")
    if not taking_in:
        text.append("Import a folder:    ", style="dim")
        text.append("backscroll import openclaw PATH\n", style="bold cyan")
        text.append("or try the demo:    ", style="dim")
        text.append("backscroll demo\n\n", style="bold cyan")
        text.append("(ctrl+q quits)", style="dim")  # Textual's own key, not in the key table
    return text


def home_relative(path: str) -> str:
    """``~/…`` for a path under the home folder (shorter, and the same on every machine)."""
    home = str(Path.home())
    if path == home or path.startswith(home.rstrip("/") + "/"):
        return "~" + path[len(home.rstrip("/")):]
    return path
