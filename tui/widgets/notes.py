"""What the panes say when there is nothing to show yet: the welcome note before the first
search (its key hints come from the key table, so a remapped key shows), and the empty state
of a state dir without databases."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from backscroll.core.status import StateStatus

from ..text import plural, printable


def welcome_text(status: StateStatus | None, hints: Sequence[tuple[str, str]]) -> Text:
    """What the preview pane says before the first search; ``hints``: (keys, what they do),
    from ``keys.welcome_hints``."""
    text = Text()
    if status is not None and status.agents:
        messages = sum(a.messages for a in status.agents)
        agents = len(status.agents)
        text.append(f"Search {plural(status.total_sessions, 'session')} "
                    f"({plural(messages, 'message')}) of {plural(agents, 'agent')}.\n\n",
                    style="bold")
    text.append("Type words to find where they were said; the conversation around the "
                "highlighted result shows here.\n\n", style="dim")
    width = max((len(keys) for keys, _ in hints), default=0) + 2
    for keys, what in hints:
        text.append(f"  {keys:<{width}}", style="bold cyan")
        text.append(f"{what}\n", style="dim")
    return text


def empty_state_text(path: str) -> Text:
    text = Text(justify="center")
    text.append("No conversations here yet\n\n", style="bold")
    text.append(f"{printable(path, True)} holds no agent databases.\n\n", style="dim")
    text.append("Import some:        ", style="dim")
    text.append("backscroll import openclaw PATH\n", style="bold cyan")
    text.append("or try the demo:    ", style="dim")
    text.append("backscroll demo\n\n", style="bold cyan")
    text.append("(ctrl+q quits)", style="dim")  # Textual's own key, not in the key table
    return text
