"""A long conversation shown in windows: one widget per message for a stretch of the outline
(``core.conversation.Outline``), never all of them. Scrolling near either end of the stretch
asks for the next messages (``ConversationView.NeedMessages``; the screen reads them in a
worker) and the far end is let go, so a conversation of 50,000 messages scrolls like one of
fifty. Jumping far (a hit, the top, the bottom) replaces the stretch.

Transcript text is data: each message is drawn by ``tool_lines.conversation_renderable``:
tool calls and results folded to one line with their status (paired over the stretch shown,
``core.tool_pairs``), a selected message (``selected``) unfolded on demand with its texts read
whole (``expand``; the screen reads them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from backscroll.core.conversation import Outline
from backscroll.core.tool_pairs import NO_RESULT, pair_tool_calls, status_of

from ..text import DEFAULT_PALETTE, ROLE_STYLES, Clock, Palette, plain_of
from .tool_lines import conversation_renderable

WINDOW = 40  # messages read at a time (about three screens)
MOUNTED_MAX = 200  # messages kept as widgets; beyond, the far end is let go
EDGE_ROWS = 12  # this close to an end of the stretch, the next messages are read


class MessageView(Static):
    """One message of the conversation (its outline position is ``index``): folded, or
    ``expanded`` (then ``message`` is the one read whole)."""

    def __init__(self, index: int, message: dict[str, Any], now: Clock, palette: Palette,
                 hit: bool, expanded: bool = False) -> None:
        self.statuses: tuple[str, ...] = ()
        self.expanded = expanded
        super().__init__(conversation_renderable(message, now, hit, palette, (), expanded),
                         classes="message hit" if hit else "message")
        self.index = index
        self.message = message
        self.set_class(message.get("role") not in ROLE_STYLES, "tool")

    def redraw(self, now: Clock, palette: Palette, hit: bool) -> None:
        self.set_class(hit, "hit")
        self.update(conversation_renderable(self.message, now, hit, palette, self.statuses,
                                            self.expanded))

    @property
    def calls(self) -> int:
        return sum(1 for b in self.message.get("content", []) if b.get("type") == "toolCall")


class ConversationView(VerticalScroll):
    DEFAULT_CSS = """
    ConversationView > MessageView { height: auto; margin: 1 0 0 0; }
    ConversationView > MessageView.tool { margin: 0; }
    ConversationView > MessageView.hit { background: $boost; border-left: outer $accent;
                                         padding: 0 0 0 1; }
    ConversationView > MessageView.selected { border-left: thick $secondary; padding: 0 0 0 1; }
    ConversationView > .edge { height: 1; color: $text-muted; }
    """

    class NeedMessages(Message):
        """Messages ``start`` to ``stop`` are wanted at one end (``before`` or ``after``).
        Not a dataclass as ``messages.py``'s are: a field named ``stop`` would take
        ``Message.stop`` as its default."""

        def __init__(self, start: int, stop: int, where: str) -> None:
            super().__init__()
            self.start, self.stop, self.where = start, stop, where

    class Settled(Message):
        """A new stretch is laid out and in place (after ``show_window``)."""

    def __init__(self, outline: Outline, now: Clock, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.outline = outline
        self.now = now
        self.palette = DEFAULT_PALETTE
        self.lo = self.hi = 0  # the outline positions shown: [lo, hi)
        self.hit: int | None = None  # the outline position of the current hit
        self.asked: str | None = None  # an end whose messages are being read
        self.selected: int | None = None  # the outline position enter unfolds
        self.whole: dict[int, dict[str, Any]] = {}  # unfolded messages, read whole

    # --- what is shown ---------------------------------------------------------------

    @property
    def views(self) -> list[MessageView]:
        return list(self.query_children(MessageView).results(MessageView))

    def view_of(self, index: int) -> MessageView | None:
        return next((v for v in self.views if v.index == index), None)

    def _views_for(self, start: int, messages: Sequence[dict[str, Any]]) -> list[MessageView]:
        views = []
        for n, message in enumerate(messages):
            index = start + n
            whole = self.whole.get(index)
            view = MessageView(index, whole or message, self.now, self.palette,
                               index == self.hit, whole is not None)
            view.set_class(index == self.selected, "selected")
            views.append(view)
        return views

    def _restatus(self) -> None:
        """Each tool call's status, from the results in the stretch shown; a call at the end
        of the stretch whose result may lie past it has none yet."""
        views = sorted(self.views, key=lambda v: v.index)
        messages = [v.message for v in views]
        pairs = pair_tool_calls(messages)
        more = self.hi < len(self.outline)
        for n, view in enumerate(views):
            if not view.calls:
                continue
            statuses = []
            for b, block in enumerate(view.message.get("content", [])):
                if block.get("type") != "toolCall":
                    continue
                status = status_of(pairs.result_of(messages, n, b))
                if status == NO_RESULT and more and n >= len(views) - 3:
                    status = ""  # not read yet
                statuses.append(status)
            if tuple(statuses) != view.statuses:
                view.statuses = tuple(statuses)
                view.redraw(self.now, self.palette, view.index == self.hit)

    def select(self, index: int | None) -> None:
        """Mark the message at ``index`` as the one ``enter`` unfolds (and no other)."""
        old, self.selected = self.selected, index
        for position in {old, index} - {None}:
            view = self.view_of(position)  # type: ignore[arg-type]
            if view is not None:
                view.set_class(position == index, "selected")

    def expand(self, index: int, message: dict[str, Any]) -> None:
        """Unfold the message at ``index``, drawn from ``message`` (read whole)."""
        self.whole[index] = message
        view = self.view_of(index)
        if view is not None:
            view.message, view.expanded = message, True
            view.redraw(self.now, self.palette, index == self.hit)
            self._restatus()

    def collapse(self, index: int, message: dict[str, Any] | None) -> None:
        """Fold the message at ``index`` again (``message``: as a window shows it, if known)."""
        whole = self.whole.pop(index, None)
        view = self.view_of(index)
        if view is not None:
            view.message, view.expanded = message or whole or view.message, False
            view.redraw(self.now, self.palette, index == self.hit)

    async def show_window(self, start: int, messages: Sequence[dict[str, Any]],
                          focus: int | None, where: str = "center") -> None:
        """Show ``messages`` (from outline position ``start``) in place of what is shown,
        then bring ``focus`` into view (``center``), or go to the ``top`` or ``bottom``."""
        self.asked = "settling"  # no reading on until the new stretch is laid out
        await self.remove_children()
        self.lo, self.hi = start, start + len(messages)  # before the views appear
        await self.mount_all(self._views_for(start, messages))
        self._restatus()
        self.call_after_refresh(self._settle, focus, where, True)

    def _settle(self, focus: int | None, where: str, again: bool) -> None:
        """Scroll to ``focus`` (or an end); once more after the next layout, when every new
        message has its height."""
        view = self.view_of(focus) if focus is not None else None
        if where == "top":
            self.scroll_home(animate=False, immediate=True)
        elif where == "bottom" or view is None:
            self.scroll_end(animate=False, immediate=True)
        else:
            self.scroll_to_center(view, animate=False, immediate=True, origin_visible=True)
        if again:
            self.call_after_refresh(self._settle, focus, where, False)
        else:
            self.asked = None
            self.post_message(self.Settled())
            self.check_edges()

    async def add_messages(self, start: int, messages: Sequence[dict[str, Any]],
                           where: str) -> None:
        """More messages at one end of the stretch; the view stays where it is."""
        self.asked = None
        if not messages:
            return
        if where == "before" and start + len(messages) == self.lo:
            first = self.views[0] if self.views else None
            offset = first.virtual_region.y if first is not None else 0
            self.asked = "settling"  # no reading on until the view is back in place
            self.lo = start
            await self.mount_all(self._views_for(start, messages), before=0)
            self._let_go("after")
            self._restatus()
            self.call_after_refresh(self._keep_in_place, first, offset, self.scroll_y, True)
            return
        if where == "after" and start == self.hi:
            self.hi = start + len(messages)
            await self.mount_all(self._views_for(start, messages))
            self._let_go("before")
            self._restatus()
        self.call_after_refresh(self.check_edges)  # still short of the edge: read on

    def _keep_in_place(self, first: MessageView | None, offset: int, was: float,
                       again: bool) -> None:
        """Messages were put above: scroll down by their height, so nothing moves; once
        more after the next layout, when every new message has its height."""
        if first is not None and first.is_attached:
            grown = first.virtual_region.y - offset
            self.scroll_to(y=was + grown, animate=False, immediate=True)
        if again:
            self.call_after_refresh(self._keep_in_place, first, offset, was, False)
        else:
            self.asked = None
            self.check_edges()

    def _let_go(self, end: str) -> None:
        """Keep at most MOUNTED_MAX messages, dropping them at ``end`` (the far one)."""
        views = self.views
        extra = len(views) - MOUNTED_MAX
        if extra <= 0:
            return
        if end == "after":
            gone = views[-extra:]
            self.hi -= extra
            self.remove_children(gone)
        else:
            gone = views[:extra]
            height = views[extra].virtual_region.y - views[0].virtual_region.y
            self.lo += extra
            self.remove_children(gone)
            self.call_after_refresh(
                lambda: self.scroll_to(y=max(0, self.scroll_y - height), animate=False,
                                       immediate=True))

    def mark_hit(self, index: int | None) -> None:
        """Mark the message at ``index`` as the current hit (and no other)."""
        old, self.hit = self.hit, index
        for position in {old, index} - {None}:
            view = self.view_of(position)  # type: ignore[arg-type]
            if view is not None:
                view.redraw(self.now, self.palette, position == index)

    def restyle(self, palette: Palette) -> None:
        self.palette = palette
        for view in self.views:
            view.redraw(self.now, palette, view.index == self.hit)

    def bring_into_view(self, index: int, where: str = "center") -> bool:
        """Scroll to the message at ``index`` if it is shown; False if it is not."""
        view = self.view_of(index)
        if view is None:
            return False
        if where == "top":
            self.scroll_to_widget(view, animate=False, immediate=True, top=True)
        else:
            self.scroll_to_center(view, animate=False, immediate=True, origin_visible=True)
        return True

    def in_view(self, index: int) -> bool:
        """Whether the message at outline position ``index`` shows (some of it)."""
        view = self.view_of(index)
        if view is None:
            return False
        region = view.virtual_region
        top = self.scroll_y
        return region.y < top + self.scrollable_content_region.height and (
            region.y + region.height > top)

    def top_index(self) -> int | None:
        """The outline position of the first message in view (of the last one, once the
        conversation's end is in view)."""
        views = self.views
        if views and self.hi == len(self.outline) and self.scroll_y >= self.max_scroll_y:
            return views[-1].index
        top = self.scroll_y
        for view in views:
            region = view.virtual_region
            if region.y + region.height > top:
                return view.index
        return None

    def plain_text(self) -> str:
        return "\n".join(plain_of(v.content) for v in self.views)

    # --- reading on at the ends --------------------------------------------------------

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.check_edges()

    def check_edges(self) -> None:
        if self.asked is not None or not self.views:
            return
        if self.scroll_y <= EDGE_ROWS and self.lo > 0:
            self.asked = "before"
            self.post_message(self.NeedMessages(max(0, self.lo - WINDOW), self.lo, "before"))
        elif self.max_scroll_y - self.scroll_y <= EDGE_ROWS and self.hi < len(self.outline):
            self.asked = "after"
            self.post_message(self.NeedMessages(self.hi, min(len(self.outline), self.hi + WINDOW),
                                                "after"))
