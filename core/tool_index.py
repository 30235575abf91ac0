"""What the tool-call index holds (issue 26, SPEC 18): one row per tool call of a session's
active branch, with the result that answers it, built by the rules here and nowhere else.

A row's searchable text (``body``) is the tool's name, its arguments as JSON text and the
head and tail of its result, each part bounded (docs/tool-calls.md says why these sizes):

- arguments: the first ``ARGS_CHARS`` characters (a command, a path, an edit's old and new
  text: what a person searches a call by; a whole file written through an ``edit`` is not);
- result: the first ``RESULT_HEAD_CHARS`` and the last ``RESULT_TAIL_CHARS`` characters (an
  error message sits at the start of a tool's output or at its end; a 2 MB log's middle is
  noise that would dominate the index's size and every term count).

The text is cut first (never half a word, so never half a secret), then redacted and
segmented exactly like a message's (``indexer.row_for``'s order). The result's tail is the
exception: it is redacted with the text before it, then cut (``TAIL_CONTEXT_CHARS``), as a
cut before its start could part a secret from the words that mark it one.

Which result answers which call is the one pairing rule of ``tool_pairs.OpenCalls``: by the
call id where the result names one, else by order. A result is *failed* when the agent's
runtime marked it an error (``isError``), or when its ``details`` record a non-zero
``exitCode`` (OpenClaw's ``exec``): ``failed_result``. Its duration is the ``details``'
``durationMs`` when recorded, else the time between the call's and the result's messages.
"""

from __future__ import annotations

import json
import zlib
from typing import TYPE_CHECKING, Any, NamedTuple

from .bounds import cut_text, no_nul
from .indexer import MAX_TS, ROWID_SHIFT, SLOT_MASK, indexes_session
from .redact import redact
from .textseg import segment
from .tool_pairs import OpenCalls

if TYPE_CHECKING:
    from .transcript import Branch

ARGS_CHARS = 4_000
RESULT_HEAD_CHARS = 1_500
RESULT_TAIL_CHARS = 500
TOOL_NAME_CHARS = 200
_TAIL_BACKOFF = 40  # a tail starts after a space within this many characters, never mid-word
# The tail is redacted with this much of the text before it, then cut: a secret found by its
# context (``password = …``, ``Authorization: Basic …``) keeps its context, where a cut
# between the two would leave the bare value to the tail (docs/tool-calls.md).
TAIL_CONTEXT_CHARS = 1_000
OK, FAILED, NONE = "ok", "failed", "none"


class ToolCall(NamedTuple):
    """A ``toolCall`` block of an assistant message."""

    entry_id: str  # the message holding it
    block: int  # its place among the message's blocks
    call_id: str | None
    tool: str
    arguments: str  # as JSON text (a string argument as given)
    ts: int


class ToolAnswer(NamedTuple):
    """A ``toolResult`` message, as the index reads it."""

    entry_id: str
    call_id: str | None
    tool: str | None
    failed: bool
    text: str
    ts: int
    duration_ms: int | None  # as the result's details record it


class ToolRow(NamedTuple):
    """One indexed call (``status``: ok, failed, or none when no result answered it yet)."""

    entry_id: str
    block: int
    call_id: str | None
    tool: str
    status: str
    ts: int
    duration_ms: int | None
    result_entry_id: str | None
    body: str  # redacted, segmented: tool name, arguments, result head and tail (lines)


def calls_of(event: dict[str, Any], default_ts: int = 0) -> list[ToolCall]:
    """The tool calls an event makes (an assistant message's ``toolCall`` blocks)."""
    from .transcript import timestamp_ms

    message = event.get("message")
    entry_id = event.get("id")
    if (event.get("type") != "message" or not isinstance(message, dict)
            or message.get("role") != "assistant" or not isinstance(entry_id, str) or not entry_id):
        return []
    content = message.get("content")
    if not isinstance(content, list):
        return []
    ts = min(max(timestamp_ms(event, default_ts), 0), MAX_TS)
    calls = []
    for n, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") != "toolCall":
            continue
        calls.append(ToolCall(entry_id, n, _call_id(block.get("id")), _name(block.get("name")),
                              _arguments(block.get("arguments")), ts))
    return calls


def answer_of(event: dict[str, Any], default_ts: int = 0) -> ToolAnswer | None:
    """The tool result an event carries (a ``toolResult`` message), or None."""
    from .transcript import message_text, timestamp_ms

    message = event.get("message")
    entry_id = event.get("id")
    if (event.get("type") != "message" or not isinstance(message, dict)
            or message.get("role") != "toolResult" or not isinstance(entry_id, str) or not entry_id):
        return None
    call_id = message.get("toolCallId")
    tool = message.get("toolName")
    details = message.get("details")
    duration = details.get("durationMs") if isinstance(details, dict) else None
    return ToolAnswer(
        entry_id, _call_id(call_id), no_nul(tool) if isinstance(tool, str) else None,
        failed_result(message),
        message_text(message.get("content")), min(max(timestamp_ms(event, default_ts), 0), MAX_TS),
        int(duration) if _count(duration) else None,
    )


def failed_result(message: dict[str, Any]) -> bool:
    """The one failed rule: the runtime marked the result an error, or its details record a
    non-zero exit code."""
    if message.get("isError") is True:
        return True
    details = message.get("details")
    code = details.get("exitCode") if isinstance(details, dict) else None
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


def tool_row(call: ToolCall, answer: ToolAnswer | None) -> ToolRow:
    """The index row of a call and the result answering it (None: none yet)."""
    if answer is None:
        status, duration, result_id, result = NONE, None, None, ""
    else:
        status = FAILED if answer.failed else OK
        duration = answer.duration_ms
        if duration is None and answer.ts >= call.ts > 0:
            duration = answer.ts - call.ts
        result_id, result = answer.entry_id, _head_and_tail(answer.text)
    text = f"{call.tool}\n{cut_text(call.arguments, ARGS_CHARS)}\n{result}".replace("\0", " ")
    # the name column too is redacted: ``--tool`` compares it, and must not confirm a secret
    return ToolRow(call.entry_id, call.block, call.call_id, redact(call.tool), status, call.ts,
                   duration, result_id, segment(redact(text)))


def tool_rows_for_branch(branch: Branch, key: str, default_ts: int = 0) -> list[ToolRow]:
    """The rows of an active branch's tool calls, each with the result that answers it
    (``OpenCalls``); none for an incognito session, as for messages."""
    if not indexes_session(key):
        return []
    calls: dict[tuple[str, int], ToolCall] = {}
    answers: dict[tuple[str, int], ToolAnswer] = {}
    pending = OpenCalls()
    for seq, event in branch.path:
        try:
            answer = answer_of(event, default_ts)
            if answer is not None:
                found = pending.answer(answer.call_id, answer.tool)
                if found is not None:
                    answers[found] = answer
                continue
            made = calls_of(event, default_ts)
            for call in made:
                calls[(call.entry_id, call.block)] = call
            message = event.get("message")
            role = message.get("role") if isinstance(message, dict) else None
            pending.turn(role, [((c.entry_id, c.block), c.call_id, c.tool) for c in made])
        except Exception as err:  # one bad event never stops a rebuild (indexer.rows_for_branch)
            branch.problems.append(f"event {seq}: tool calls cannot be indexed "
                                   f"({type(err).__name__}); skipped")
    return [tool_row(call, answers.get(ref)) for ref, call in calls.items()]


def first_rowid(session_id: str, row: ToolRow) -> int:
    """Where a tool row's rowid search starts (``indexer.first_rowid``'s rule; the calls of
    one message are told apart by their block)."""
    slot = zlib.crc32(f"{session_id}\0{row.entry_id}\0{row.block}".encode()) & SLOT_MASK
    return (row.ts << ROWID_SHIFT) | slot


class Shown(NamedTuple):
    """A row's text laid out for a hit: its tool, arguments and result (redacted)."""

    tool: str
    arguments: str
    result: str


def shown(body: str) -> Shown:
    """The parts of a stored (desegmented) body: its first line, its second, the rest."""
    tool, _, rest = body.partition("\n")
    arguments, _, result = rest.partition("\n")
    return Shown(tool, arguments, result)


def _name(value: Any) -> str:
    name = value if isinstance(value, str) and value.strip() else "?"
    return no_nul(" ".join(name.split())[:TOOL_NAME_CHARS])


def _call_id(value: Any) -> str | None:
    """A call's id as a call and its result name it (the same rule on both sides)."""
    return no_nul(value) if isinstance(value, str) and value else None


def _arguments(value: Any) -> str:
    """Arguments as one line of JSON text (``json.dumps`` escapes line breaks), so a body's
    second line is its arguments (``shown``)."""
    if isinstance(value, str):
        return " ".join(value.splitlines())
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=False)
    except (TypeError, ValueError):
        return ""


def _head_and_tail(text: str) -> str:
    if len(text) <= RESULT_HEAD_CHARS + RESULT_TAIL_CHARS:
        return text
    head = cut_text(text, RESULT_HEAD_CHARS)
    tail = redact(text[-(RESULT_TAIL_CHARS + TAIL_CONTEXT_CHARS):])[-RESULT_TAIL_CHARS:]
    window = tail[:_TAIL_BACKOFF]
    space = max(window.find(" "), window.find("\n"))
    tail = tail[space + 1:] if space >= 0 else tail[_TAIL_BACKOFF:]
    return f"{head}\n…\n{tail}"


def _count(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 2**53
