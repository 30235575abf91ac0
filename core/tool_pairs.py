"""Which tool result answers which tool call: the one pairing rule (``OpenCalls``), used
for messages rendered as ``sessions_history`` renders them (``toolCall`` blocks in assistant
messages, one ``toolResult`` block per tool message), so a reader can show a call folded to
one line with its status, and by the tool-call index over stored events (``tool_index``).

A result naming a call id answers the open call of that id, wherever it was made (of two
open calls given one id, the older). Else (the
rendered messages carry no call ids: the agents' ``sessions_history`` answer keeps its
shape) the pairing is by order, as every runtime writes them: the results that follow an
assistant message answer its calls, each the first call still open of the same tool name,
else the first one still open. A result nothing asked for stays on its own; a call nobody
answered has no result (``status`` "no result").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Hashable

OK, FAILED, NO_RESULT = "ok", "failed", "no result"
PREVIEW_CHARS = 120  # of a call's arguments, on its folded line


@dataclass
class ToolPairs:
    """``results[(message, block)]``: the index of the tool message answering the call at
    ``block`` of ``message``; ``answered``: the tool messages that answer a call shown."""

    results: dict[tuple[int, int], int] = field(default_factory=dict)
    answered: set[int] = field(default_factory=set)

    def result_of(self, messages: Sequence[dict[str, Any]], message: int, block: int
                  ) -> dict[str, Any] | None:
        """The ``toolResult`` block answering that call, or None."""
        found = self.results.get((message, block))
        return None if found is None else result_block(messages[found])


class OpenCalls:
    """The calls still waiting for a result: by id (any turn's) and the latest turn's, in
    order. ``turn`` is told every message that is not a result; ``answer`` every result."""

    def __init__(self) -> None:
        # the open calls of each id, oldest first: a transcript may give two calls one id
        self.by_id: dict[str, list[Hashable]] = {}
        self.latest: list[tuple[Hashable, str | None, str]] = []  # (ref, call id, tool name)

    def turn(self, role: Any, calls: list[tuple[Hashable, str | None, str]]) -> None:
        """A message (of ``role``) that is not a tool result: an assistant message opens a new
        turn (its calls; calls left unanswered stay so), a user message closes the last one."""
        if calls or role == "assistant":
            self.latest = list(calls)
        elif role == "user":
            self.latest = []
        for ref, call_id, _name in calls:
            self.opened(ref, call_id)

    def opened(self, ref: Hashable, call_id: str | None) -> None:
        """A call still open that a result may name by its id (``turn`` tells its own)."""
        if call_id is not None:
            self.by_id.setdefault(call_id, []).append(ref)

    def answer(self, call_id: str | None, name: str | None) -> Hashable | None:
        """The call a result answers (taken off the open calls), or None. A result naming an
        id answers the oldest open call of that id."""
        refs = self.by_id.get(call_id) if call_id is not None else None
        if refs:
            ref = self._close(call_id, refs[0])
            self.latest = [c for c in self.latest if c[0] != ref]
            return ref
        match = next((c for c in self.latest if c[2] == name), None)
        if match is None and self.latest:
            match = self.latest[0]
        if match is None:
            return None
        self.latest.remove(match)
        return self._close(match[1], match[0])

    def _close(self, call_id: str | None, ref: Hashable) -> Hashable:
        refs = self.by_id.get(call_id) if call_id is not None else None
        if refs and ref in refs:
            refs.remove(ref)
            if not refs:
                del self.by_id[call_id]  # type: ignore[arg-type]
        return ref


def result_block(message: dict[str, Any]) -> dict[str, Any] | None:
    """The ``toolResult`` block of a tool message (None for any other message)."""
    content = message.get("content") or []
    if content and isinstance(content[0], dict) and content[0].get("type") == "toolResult":
        return content[0]
    return None


def status_of(result: dict[str, Any] | None) -> str:
    """"ok", "failed" (the runtime marked the result an error) or "no result"."""
    if result is None:
        return NO_RESULT
    return FAILED if result.get("isError") else OK


def pair_tool_calls(messages: Sequence[dict[str, Any]]) -> ToolPairs:
    pairs = ToolPairs()
    pending = OpenCalls()
    for n, message in enumerate(messages):
        result = result_block(message)
        if result is not None:
            found = pending.answer(None, result.get("name"))
            if found is not None:
                pairs.results[found] = n  # type: ignore[index]
                pairs.answered.add(n)
            continue
        pending.turn(message.get("role"), [((n, b), None, str(block.get("name")))
                               for b, block in enumerate(message.get("content") or [])
                               if isinstance(block, dict) and block.get("type") == "toolCall"])
    return pairs


def one_line(text: str, limit: int = PREVIEW_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def head_and_tail(text: str, limit: int) -> str:
    """``text`` on one line in at most ``limit`` characters: whole when it fits, else its
    start and its end (two thirds and one third, each cut back to a space) joined by ``…``.
    A command's output says what went wrong at its start (an error line) or at its end (the
    last frame, ``exit code 1``): a listing shows both, as the index keeps both."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    room = limit - 3  # " … "
    head = flat[: room * 2 // 3]
    tail = flat[len(flat) - (room - len(head)):]
    head = head[: head.rfind(" ")] if " " in head else head
    tail = tail[tail.find(" ") + 1:] if " " in tail else tail
    return f"{head} … {tail}"


def arguments_preview(arguments: str, limit: int = PREVIEW_CHARS) -> str:
    """The start of a call's arguments (a JSON text) on one line: a lone string argument (a
    command, a path) bare, as a person would type it."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return one_line(arguments, limit)
    if isinstance(parsed, dict) and len(parsed) == 1:
        [value] = parsed.values()
        if isinstance(value, str):
            return one_line(value, limit)
    return one_line(arguments, limit)


def arguments_whole(arguments: str) -> str:
    """A call's arguments laid out to read: a lone string bare, else indented JSON."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return arguments
    if isinstance(parsed, dict) and len(parsed) == 1:
        [value] = parsed.values()
        if isinstance(value, str):
            return value
    return json.dumps(parsed, ensure_ascii=False, indent=2)
