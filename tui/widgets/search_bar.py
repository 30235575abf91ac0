"""The search bar: an ``Input`` whose focus key does not type itself into an empty bar.

"/ to focus", says the placeholder; a person who presses it while the bar already has the
focus (it has it when the browser opens) meant to focus it, not to search for a slash. Only
into an empty bar: inside a query the key is text like any other (``src/app``). Leading
punctuation is not searched anyway (it is no word), so nothing is lost.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Input

from .. import keys


class SearchBar(Input):
    async def _on_key(self, event: events.Key) -> None:
        if not self.value and event.key in keys.current_keys(self.app, "focus_search"):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)
