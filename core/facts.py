"""The facts of a session, where its transcript records them (issue 26): the models it used,
the tokens and cost its assistant messages report, when its first and last message were
written, its tool calls and the failed ones, and the files the agent edited or wrote.

Every importer stores assistant messages in OpenClaw's shape (``model``, ``provider``,
``usage: {input, output, cacheRead, cacheWrite, cost: {total}}``; tool calls as ``toolCall``
blocks, results as ``toolResult`` messages with ``isError``), so this module reads one shape.

The rules (docs/usage.md):
- every *stored* message counts, on every branch: tokens spent on an abandoned branch were
  spent. An entry stored twice under one id counts once (``stored_entry_id``), as the live
  write path sees it (it asks whether the session already holds the id).
- a number no message records stays None (unknown is not zero): a session whose messages
  record no cost has no cost, not a cost of 0.
- a message's day is the UTC day of its time (a message without one: the session's creation).
- OpenClaw's synthetic assistant messages (provider ``openclaw``: ``delivery-mirror``,
  ``gateway-injected``) name no model anyone ran; they are left out of the models and usage.

The write path folds one message at a time (``contribution`` then ``Facts.plus``, and a usage
row per (UTC day, model)); a rebuild folds the whole log (``session_facts``): the same fold,
so both give the same facts.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from typing import Any, Iterable, NamedTuple

from .bounds import no_nul

FILES_MAX = 50  # a session lists at most this many files (the first edited); ``files_capped``
MODELS_MAX = 20  # ... and models (the first used): a hostile log cannot grow every list
SYNTHETIC_PROVIDERS = frozenset({"openclaw"})  # delivery mirrors and gateway notices
# A longer "path" or model name is no path or model (Linux's PATH_MAX; model ids are short):
# left out, so a tool call's junk never bloats every list that shows the session.
MAX_PATH_CHARS = 4096
MAX_MODEL_CHARS = 200
# A token count summed past this stays at it (a message counts at most 10**15, ``_number``):
# a hostile log of many huge counts cannot overflow a 64-bit column on either backend (a
# stored sum is at most this, so two of them add within a bigint), and 2**53 is exact as a
# double and in JSON readers that hold numbers as doubles.
TOKENS_MAX = 2**53
COUNT_LIMIT = 10**15  # one message's count or cost at or above this is none: no model reads that much

# Which tool calls edit or write a file, and where their arguments name it: tool name
# (compared case-folded) -> argument keys, tried in order (the first that holds text wins).
# ``PATCH_HEADERS`` tools carry a patch whose headers name the files instead.
FILE_RULES: dict[str, tuple[str, ...]] = {
    "edit": ("file_path", "path", "filePath"),  # Claude Code Edit, OpenClaw edit, OpenCode edit
    "write": ("file_path", "path", "filePath"),  # Claude Code Write, OpenClaw / OpenCode write
    "multiedit": ("file_path",),  # Claude Code MultiEdit
    "notebookedit": ("notebook_path",),  # Claude Code NotebookEdit
    "write_file": ("file_path", "path"),  # Gemini CLI, Qwen Code
    "replace": ("file_path",),  # Gemini CLI, Qwen Code
    "str_replace_based_edit_tool": ("path",),  # Anthropic's text editor tool
    "create": ("path", "filePath"),
}
PATCH_HEADERS: dict[str, tuple[str, ...]] = {
    "apply_patch": ("input", "patch"),  # Codex: "*** Update File: <path>", "*** Add File: ..."
}
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$",
                         re.MULTILINE)


class Usage(NamedTuple):
    """Tokens and cost, each None where nothing recorded it."""

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    cost: float | None = None

    def plus(self, other: Usage) -> Usage:
        return Usage(*(_add(a, b) for a, b in zip(self, other)))

    @property
    def recorded(self) -> bool:
        return any(value is not None for value in self)

    def as_json(self) -> dict[str, Any]:
        return {"input": self.input, "output": self.output, "cacheRead": self.cache_read,
                "cacheWrite": self.cache_write, "cost": self.cost}


NO_USAGE = Usage()


def _add(a: Any, b: Any) -> Any:
    """A sum of what was recorded; None when neither was. Token counts stop at
    ``TOKENS_MAX`` (the stores' sums do too)."""
    if a is None:
        return b
    if b is None:
        return a
    return min(a + b, TOKENS_MAX) if isinstance(a, int) and isinstance(b, int) else a + b


class Contribution(NamedTuple):
    """What one stored message adds to its session's facts."""

    entry_id: str | None  # counted once per id (``stored_entry_id``)
    at: int | None  # its time (epoch ms), None when it has no plausible one
    day: str  # the UTC day its usage counts on (its time, else the session's creation)
    model: str | None  # the model it names (None: none, or a synthetic message)
    usage: Usage  # NO_USAGE when it records none
    tool_calls: int
    failed: int  # 1 for a tool result that says it failed
    files: tuple[str, ...]


class Facts(NamedTuple):
    """A session's facts (stored per session, read by lists and the browser)."""

    models: tuple[str, ...] = ()  # distinct, in order of first use
    usage: Usage = NO_USAGE
    first_at: int | None = None  # epoch ms of the first and last message
    last_at: int | None = None
    tool_calls: int = 0
    failed_calls: int = 0
    files: tuple[str, ...] = ()  # edited or written, in order of first edit, at most FILES_MAX
    files_capped: bool = False  # more files were edited than the list holds

    def plus(self, c: Contribution) -> Facts:
        models = self.models
        if c.model and c.model not in models and len(models) < MODELS_MAX:
            models = (*models, c.model)
        files, capped = self.files, self.files_capped
        for path in c.files:
            if path in files:
                continue
            if len(files) >= FILES_MAX:
                capped = True
            else:
                files = (*files, path)
        return Facts(
            models=models, usage=self.usage.plus(c.usage),
            first_at=c.at if self.first_at is None else _min(self.first_at, c.at),
            last_at=c.at if self.last_at is None else _max(self.last_at, c.at),
            tool_calls=self.tool_calls + c.tool_calls, failed_calls=self.failed_calls + c.failed,
            files=files, files_capped=capped,
        )

    @property
    def duration_ms(self) -> int | None:
        if self.first_at is None or self.last_at is None:
            return None
        return self.last_at - self.first_at

    def as_json(self) -> dict[str, Any]:
        """For programs (``sessions_list``, ``history --json``); file paths are redacted by
        the caller that shows them (``redacted``)."""
        return {"models": list(self.models), "tokens": self.usage.as_json(),
                "firstMessageAt": self.first_at, "lastMessageAt": self.last_at,
                "durationMs": self.duration_ms, "toolCalls": self.tool_calls,
                "failedToolCalls": self.failed_calls, "files": list(self.files),
                "filesCapped": self.files_capped}


NO_FACTS = Facts()


def _min(a: int, b: int | None) -> int:
    return a if b is None else min(a, b)


def _max(a: int, b: int | None) -> int:
    return a if b is None else max(a, b)


def utc_day(ms: int) -> str:
    """The UTC day of an epoch-ms time, as ``YYYY-MM-DD`` (how usage rows are keyed)."""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d")


def contribution(event: dict[str, Any], default_ts: int) -> Contribution | None:
    """What a stored event adds to its session's facts; None for an event that is not a
    message (it adds nothing)."""
    # here: storage's package imports this module, and a search never loads the tree rules
    from .storage.stored import stored_entry_id
    from .transcript import timestamp_ms

    message = event.get("message")
    if event.get("type") != "message" or not isinstance(message, dict):
        return None
    role = message.get("role")
    at = timestamp_ms(event, -1)
    model, usage, calls, files = None, NO_USAGE, 0, ()
    if role == "assistant":
        synthetic = message.get("provider") in SYNTHETIC_PROVIDERS
        if not synthetic:
            usage = usage_of(message.get("usage"))
            named = message.get("model")
            model = (no_nul(named.strip()) if isinstance(named, str)
                     and 0 < len(named.strip()) <= MAX_MODEL_CHARS else None)
        blocks = [b for b in _blocks(message.get("content")) if b.get("type") == "toolCall"]
        calls = len(blocks)
        files = tuple(path for block in blocks for path in files_of(block))
    failed = int(role == "toolResult" and message.get("isError") is True)
    return Contribution(stored_entry_id(event), None if at < 0 else at,
                        utc_day(at if at >= 0 else max(default_ts, 0)), model, usage, calls,
                        failed, files)


def usage_of(value: Any) -> Usage:
    """Tokens and cost as an assistant message's ``usage`` records them; a field missing or
    not a number is unknown (None)."""
    if not isinstance(value, dict):
        return NO_USAGE
    cost = value.get("cost")
    total = cost.get("total") if isinstance(cost, dict) else None
    return Usage(token_count(value.get("input")), token_count(value.get("output")),
                 token_count(value.get("cacheRead")), token_count(value.get("cacheWrite")),
                 float(total) if _number(total) else None)


def _number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and 0 <= value < COUNT_LIMIT)


def token_count(value: Any) -> int | None:
    """A token count as a transcript records it (an int, or a float without a fraction: a
    count of 1.5 tokens is no count), else None; the one rule the importers write by and
    the facts read by."""
    if not _number(value) or (isinstance(value, float) and not value.is_integer()):
        return None
    return int(value)


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def files_of(block: dict[str, Any]) -> list[str]:
    """The files a ``toolCall`` block edits or writes (``FILE_RULES``, ``PATCH_HEADERS``)."""
    name = block.get("name")
    arguments = block.get("arguments")
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return []
    tool = name.casefold()
    for key in FILE_RULES.get(tool, ()):
        value = arguments.get(key)
        if isinstance(value, str) and 0 < len(value.strip()) <= MAX_PATH_CHARS:
            return [no_nul(value.strip())]
    for key in PATCH_HEADERS.get(tool, ()):
        value = arguments.get(key)
        if isinstance(value, str):
            return list(dict.fromkeys(no_nul(path) for a, b in _PATCH_FILE.findall(value)
                                      if len(path := a or b) <= MAX_PATH_CHARS))
    return []


UsageKey = tuple[str, str]  # (UTC day, model; "" when the message names none)
# A session's facts (None: no message counted, as the write path keeps no row for such a
# session) and usage rows
SessionFacts = tuple["Facts | None", dict[UsageKey, Usage]]


def usage_key(c: Contribution) -> UsageKey | None:
    """The usage row a message's usage is added to; None when it records none."""
    return (c.day, c.model or "") if c.usage.recorded else None


def session_facts(events: Iterable[tuple[int, dict[str, Any]]], default_ts: int,
                  keep_files: bool = True) -> SessionFacts:
    """A session's facts and usage rows from its whole stored log (a rebuild), by the fold
    the write path applies one message at a time. ``keep_files`` False: no file names (an
    incognito session's words are kept out of everything a list shows)."""
    from .storage.stored import stored_entry_id

    facts: Facts | None = None
    rows: dict[UsageKey, Usage] = {}
    seen: set[str] = set()
    for _seq, event in events:
        entry_id = stored_entry_id(event)
        counted = entry_id is None or entry_id not in seen
        if entry_id is not None:
            seen.add(entry_id)
        c = contribution(event, default_ts) if counted else None
        if c is None:
            continue
        if not keep_files:
            c = c._replace(files=())
        facts = (facts or NO_FACTS).plus(c)
        key = usage_key(c)
        if key is not None:
            rows[key] = rows.get(key, NO_USAGE).plus(c.usage)
    return facts, rows


__all__ = ["FILES_MAX", "MODELS_MAX", "TOKENS_MAX", "FILE_RULES", "NO_FACTS", "NO_USAGE",
           "PATCH_HEADERS", "Contribution", "Facts", "SessionFacts", "Usage", "UsageKey",
           "contribution", "files_of", "session_facts", "token_count", "usage_key", "usage_of",
           "utc_day"]
