"""What the preview pane says when there is nothing to show yet: the welcome note before the
first search (its key hints come from the key table, so a remapped key shows)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from backscroll.core.status import StateStatus

from ..text import plural


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
