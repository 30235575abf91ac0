"""The search bar: an ``Input`` whose focus key does not type itself into an empty bar.

"/ to focus", says the placeholder; a person who presses it while the bar already has the
focus (it has it when the browser opens) meant to focus it, not to search for a slash. Only
into an empty bar: inside a query the key is text like any other (``src/app``). Leading
punctuation is not searched anyway (it is no word), so nothing is lost.

Editing keys (backspace, delete, left, home, ctrl+u, ...) are the ``Input``'s bindings, which
Textual runs only after the key has bubbled up to the app and found no handler on its way; a
printable key typed right after one is inserted at once, so in a burst (a terminal that reads
many keys in one go, a held backspace then a word) letters overtook the deletes before them
and the query came out garbled. The bar runs its own bindings as it receives the keys, in
order.
"""

from __future__ import annotations

from textual import events
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Input

from .. import keys


class SearchBar(Input):
    # The width of the text typed (Input's virtual size) moves with every key; Textual's
    # own reactive lays the whole screen out again on each change (~10-20 ms of the UI
    # thread per keystroke). The bar's size is fixed (width 100%, height 3): the virtual size
    # is still kept (the horizontal scroll follows the cursor with it), without the layout.
    virtual_size = Reactive(Size(0, 0), layout=False)

    async def _on_key(self, event: events.Key) -> None:
        if not self.value and event.key in keys.current_keys(self.app, "focus_search"):
            event.stop()
            event.prevent_default()
            return
        # the bar's own bindings as the screen has them (a keymap applied); a Textual without
        # this private chain gets its usual order, not an error on every key
        chain = getattr(self.screen, "_modal_binding_chain", ())
        own = next((b for node, b in chain if node is self), None)
        for binding in own.key_to_bindings.get(event.key, ()) if own else ():
            # an action that does not apply (scrolling a bar that cannot scroll) lets the key
            # go on to the screen's bindings (down: the next result)
            if not binding.priority and await self.app.run_action(binding.action, self):
                event.stop()
                event.prevent_default()
                return
        await super()._on_key(event)
