"""What the write path decides, once for every backend (no SQL here): ``append``'s decision
sequence (``plan_append``), an import's (``plan_import``, ``import_key``), the title rule
(``title_of``) and which stored event a ``skip_known`` append already holds (``held_id``).

A backend carries the plans out with a few primitives (``AppendTarget``, ``ImportTarget``:
insert an event, mark a session dirty, ...) inside its own transaction and lock; the
sequence that calls them is ``carry_out_append`` / ``carry_out_import`` here, so a third
backend, or a fake in a test (tests/test_writeplan.py), inherits every rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Protocol

from ..facts import NO_FACTS, Contribution, Facts, Usage, UsageKey, contribution, usage_key
from ..indexer import INDEXER_VERSION, IndexRow, indexes_session, next_rowid, row_for
from ..tool_index import ToolAnswer, ToolRow, answer_of, calls_of, tool_row
from ..transcript import advance, branch_message, indexable, keeps_branch
from .model import AppendResult, BranchRow, Imported, SessionMeta
from .stored import NewEvent, new_events

TITLE_CHARS = 400  # a title is the first user message's first TITLE_CHARS characters


def title_of(body: str) -> str:
    """A session's title from its first user message's index text: its first
    ``TITLE_CHARS`` characters, the CJK segmentation's U+200B taken out. SQLite's migration
    backfill computes the same in SQL (sqlite/schema.py ``SUMMARY_COLUMNS``; a test checks
    they agree)."""
    return body[:TITLE_CHARS].replace("\u200b", "")


def body_of(line: str | bytes | dict[str, Any], event: dict[str, Any]) -> str:
    """The text an appended event is stored as: a dict as JSON, a line as given (stripped
    of white space and a byte order mark)."""
    if isinstance(line, dict):
        return json.dumps(event, ensure_ascii=False)
    body = line.decode("utf-8") if isinstance(line, bytes) else line
    return body.strip().lstrip("\ufeff")


def held_id(event: dict[str, Any]) -> str | None:
    """The id by which a session already holds ``event`` (``skip_known``); None: an id-less
    one is held when an id-less stored event has the same text."""
    entry_id = event.get("id") if event["type"] not in ("session", "leaf") else None
    return entry_id if isinstance(entry_id, str) and entry_id else None


def import_key(key: str, session_id: str | None, key_taken: bool) -> str:
    """The key a new imported session is stored under: its own, unless that key now names
    another transcript (a reset), when both are kept and the new one is ``key:import-id``."""
    return f"{key}:import-{session_id}".lower() if key_taken else key


class Head(NamedTuple):
    """A session's write position, as an append reads it under its lock."""

    pk: int
    session_id: str
    created_at: int
    last_seq: int
    leaf: str | None
    state: str  # clean, dirty or claimed (a rebuild holds it)
    version: int  # the indexer version its rows were built with
    branch_seq: int  # the stored branch messages are current through this event


@dataclass(frozen=True)
class AppendPlan:
    """What storing one event does (``plan_append``)."""

    seq: int
    leaf: str | None  # the active leaf after it
    outcome: str  # indexed, stored or dirty (AppendResult)
    row: IndexRow | None  # its index row, written in the same transaction
    tools: list[ToolRow]  # the rows of the tool calls it makes (no result yet) ...
    answer: ToolAnswer | None  # ... or the tool result it brings to an indexed call
    title: str | None  # the title it gives a session that has none
    extends_branch: bool  # the stored branch messages stay current through ``seq``
    shown: BranchRow | None  # ... adding this one
    marks_dirty: bool  # the session needs a rebuild (a rebuild holding it loses its claim)
    advances_index: bool  # else the index is current through ``seq``


def plan_append(head: Head, key: str, event: dict[str, Any], has_entry: Callable[[str], bool],
                adopted: Callable[[str], bool]) -> AppendPlan:
    """The decision sequence of an append to the session at ``head``: advance the leaf ->
    moved off it -> adopted -> outcome -> the index row if the index is clean -> keeps the
    branch -> extends it -> marks dirty. ``has_entry`` and ``adopted`` look into the stored
    session (``AppendTarget``)."""
    seq = head.last_seq + 1
    step = advance(head.leaf, seq, event, has_entry)
    moved_off = step.node is not None and step.leaf == step.node and not step.extends
    joins = step.node is not None and step.leaf == head.leaf and adopted(step.node)
    outcome = "dirty" if event["type"] == "leaf" or moved_off or joins else "stored"
    current = head.state == "clean" and head.version == INDEXER_VERSION
    row = None
    tools: list[ToolRow] = []
    answer = None
    if step.extends and current and indexes_session(key):
        message = indexable(event, head.created_at)
        if message:
            row = row_for(message.entry_id, message.role, message.timestamp_ms, message.text)
            outcome = "indexed"
        tools = [tool_row(call, None) for call in calls_of(event, head.created_at)]
        answer = answer_of(event, head.created_at)
    extends = head.branch_seq == head.last_seq and keeps_branch(head.leaf, step, joins)
    marks_dirty = head.state == "claimed" or outcome == "dirty"
    if marks_dirty and outcome != "indexed":
        outcome = "dirty"
    return AppendPlan(
        seq=seq, leaf=step.leaf, outcome=outcome, row=row, tools=tools, answer=answer,
        title=title_of(row.body) if row is not None and row.role == "user" else None,
        extends_branch=extends,
        shown=branch_message(seq, event) if extends and step.extends else None,
        marks_dirty=marks_dirty, advances_index=not marks_dirty and current,
    )


class AppendTarget(Protocol):
    """The primitives an append is carried out with, inside the backend's transaction."""

    def _has_entry(self, pk: int, entry_id: str) -> bool: ...
    def _has_body(self, pk: int, body: str) -> bool: ...  # an id-less event with this text
    def _adopted(self, pk: int, node: str) -> bool: ...  # a stored entry names it as parent
    def _add_row(self, head: Head, row: IndexRow) -> None: ...
    def _add_tools(self, head: Head, rows: list[ToolRow]) -> None: ...
    # the open tool calls a result may answer: the entry id of the session's newest call
    # message, and (entry id, block, call id, tool) of its unanswered calls with ``call_id``
    # or in that message, in block order
    def _open_calls(self, pk: int, call_id: str | None
                    ) -> tuple[str | None, list[tuple[str, int, str | None, str]]]: ...
    def _call_body(self, pk: int, entry_id: str) -> str | None: ...  # its first stored text
    def _answer_tool(self, pk: int, row: ToolRow) -> None: ...  # the row, answered
    def _store_event(self, pk: int, seq: int, event: dict[str, Any], body: str,
                     leaf: str | None) -> None: ...  # the event, and the session's last_seq
    def _note_row(self, pk: int, row: IndexRow, title: str | None) -> None: ...  # summary
    def _read_cwd(self, pk: int, seq: int, event: dict[str, Any]) -> None: ...
    def _extend_branch(self, pk: int, seq: int, shown: BranchRow | None) -> None: ...
    def _mark_dirty(self, pk: int) -> None: ...
    def _set_indexed(self, pk: int, seq: int, leaf: str | None) -> None: ...
    def _facts(self, pk: int) -> Facts | None: ...  # the session's stored facts
    def _save_facts(self, pk: int, facts: Facts) -> None: ...
    def _add_usage(self, pk: int, key: UsageKey, usage: Usage) -> None: ...  # summed in


def carry_out_append(target: AppendTarget, head: Head, key: str, event: dict[str, Any],
                     body: str, skip_known: bool) -> AppendResult:
    """Store one event at ``head`` as ``plan_append`` decides; with ``skip_known`` an event
    the session already holds (``held_id``) is not stored again (``known``)."""
    pk = head.pk
    if skip_known:
        entry_id = held_id(event)
        if target._has_entry(pk, entry_id) if entry_id else target._has_body(pk, body):
            return AppendResult(head.last_seq, "known")
    plan = plan_append(head, key, event, lambda eid: target._has_entry(pk, eid),
                       lambda node: target._adopted(pk, node))
    adds = counted(target, head, key, event)
    if plan.row is not None:
        target._add_row(head, plan.row)
    if plan.tools:
        target._add_tools(head, plan.tools)
    if plan.answer is not None:
        carry_out_answer(target, head, plan.answer)
    target._store_event(pk, plan.seq, event, body, plan.leaf)
    if adds is not None:
        fold_facts(target, pk, adds)
    if plan.row is not None:  # the summary follows the index
        target._note_row(pk, plan.row, plan.title)
    if event["type"] == "session":
        target._read_cwd(pk, plan.seq, event)
    if plan.extends_branch:
        target._extend_branch(pk, plan.seq, plan.shown)
    if plan.marks_dirty:
        target._mark_dirty(pk)
    elif plan.advances_index:
        target._set_indexed(pk, plan.seq, plan.leaf)
    return AppendResult(plan.seq, plan.outcome)


def counted(target: AppendTarget, head: Head, key: str, event: dict[str, Any]
            ) -> Contribution | None:
    """What an appended event adds to its session's facts (``facts.contribution``): nothing
    when the session already holds an entry with its id (each entry counts once, as a
    rebuild's ``facts.session_facts`` counts it); no file names in an incognito session."""
    adds = contribution(event, head.created_at)
    if adds is None or (adds.entry_id is not None and target._has_entry(head.pk, adds.entry_id)):
        return None
    return adds if indexes_session(key) else adds._replace(files=())


def fold_facts(target: AppendTarget, pk: int, adds: Contribution) -> None:
    """The session's facts and usage row with one message added, in the append's
    transaction (the fold a rebuild applies to the whole log)."""
    target._save_facts(pk, (target._facts(pk) or NO_FACTS).plus(adds))
    key = usage_key(adds)
    if key is not None:
        target._add_usage(pk, key, adds.usage)
def carry_out_answer(target: AppendTarget, head: Head, answer: ToolAnswer) -> None:
    """A tool result appended to an indexed session: the call it answers (``OpenCalls``'
    rule, on the calls still open) gets its status, duration and result, rebuilt from the
    stored call (``tool_index.tool_row``, the rebuild's rule). Live, the order fallback sees
    the newest call message's open calls (docs/tool-calls.md)."""
    from ..tool_pairs import OpenCalls

    newest, open_calls = target._open_calls(head.pk, answer.call_id)
    if not open_calls:
        return
    pending = OpenCalls()
    for entry_id, block, call_id, _tool in open_calls:  # oldest first, as a rebuild opened them
        pending.opened((entry_id, block), call_id)
    pending.latest = [((e, b), c, t) for e, b, c, t in open_calls if e == newest]
    found = pending.answer(answer.call_id, answer.tool)
    if found is None:
        return
    entry_id, block = found  # type: ignore[misc]
    event = stored_event(target._call_body(head.pk, entry_id))
    call = next((c for c in calls_of(event, head.created_at) if c.block == block), None)
    if call is not None:
        target._answer_tool(head.pk, tool_row(call, answer))


def stored_event(body: str | None) -> dict[str, Any]:
    """A stored event's text as an event (an empty one when it is none, or not an object)."""
    try:
        event = json.loads(body) if body is not None else None
    except ValueError:
        return {}
    return event if isinstance(event, dict) else {}


def place_rowids(wanted: list[tuple[int, int, Any]], taken_of: Callable[[list[int]], set[int]]
                 ) -> list[tuple[int, int, Any]]:
    """Index rows ``(first rowid, session pk, row)`` with the rowids they take: each its
    first free one from where its search starts (``indexer.next_rowid``), against the rows
    stored (``taken_of``: which of these rowids are) and each other; in rowid order (FTS5
    writes a batch out as one segment when its rowids rise: docs/performance.md)."""
    taken = taken_of([rowid for rowid, _, _ in wanted])
    placed = []
    for rowid, pk, row in wanted:
        while rowid in taken:
            rowid = next_rowid(rowid)
            if rowid not in taken and taken_of([rowid]):
                taken.add(rowid)
        taken.add(rowid)
        placed.append((rowid, pk, row))
    placed.sort(key=lambda item: item[0])
    return placed


def tool_counts(rows: list[tuple[int, ToolRow]]) -> dict[int, tuple[int, int]]:
    """Per session, the tool rows ``(session pk, row)`` add and their characters: what the
    index state counts."""
    counts: dict[int, tuple[int, int]] = {}
    for pk, row in rows:
        n, chars = counts.get(pk, (0, 0))
        counts[pk] = (n + 1, chars + len(row.body))
    return counts


@dataclass(frozen=True)
class ImportPlan:
    """What importing a transcript into a stored session adds (``plan_import``)."""

    added: list[NewEvent]
    last_seq: int  # the session's last event after it
    messages: int  # how many of the added events are messages
    header: NewEvent | None  # the first added header (the session's cwd is read from it)


def plan_import(lines: list[str], parsed: list[dict[str, Any]] | None, last_seq: int,
                seen_ids: set[str], seen_bodies: set[str]) -> ImportPlan:
    """The lines a session at ``last_seq`` does not hold yet (``stored.new_events``)."""
    added = new_events(lines, parsed, last_seq, seen_ids, seen_bodies)
    return ImportPlan(added, last_seq + len(added), sum(1 for e in added if e.kind == "message"),
                      next((e for e in added if e.kind == "session"), None))


class ImportTarget(Protocol):
    """The primitives an import is carried out with, inside the backend's transaction."""

    def _find_for_import(self, column: str, value: str,
                         host: str | None) -> tuple[int, str, int] | None: ...  # pk, key, seq
    def _key_taken(self, key: str, host: str | None) -> bool: ...
    def _create_for_import(self, meta: SessionMeta, clean: bool) -> tuple[int, str, int]: ...
    def _seen(self, pk: int) -> tuple[set[str], set[str]]: ...  # stored ids, id-less texts
    def _store_events(self, pk: int, plan: ImportPlan, updated_at: int) -> None: ...
    def _read_cwd(self, pk: int, seq: int, event: dict[str, Any]) -> None: ...
    def _mark_dirty(self, pk: int) -> None: ...


def carry_out_import(target: ImportTarget, meta: SessionMeta, key: str, lines: list[str],
                     parsed: list[dict[str, Any]] | None) -> Imported:
    """Store already-validated event lines without indexing: the session is found by its
    session id (else its key), created under ``import_key`` if new; the events it does not
    hold yet are added and make it dirty, so reconciliation picks it up."""
    by = ("session_id", meta.session_id) if meta.session_id else ("key", key)
    found = target._find_for_import(*by, meta.host)
    if found is None:
        key = import_key(key, meta.session_id, target._key_taken(key, meta.host))
        pk, key, last_seq = target._create_for_import(meta._replace(key=key), not lines)
        seen_ids: set[str] = set()
        seen_bodies: set[str] = set()
    else:
        pk, key, last_seq = found
        seen_ids, seen_bodies = target._seen(pk)
    plan = plan_import(lines, parsed, last_seq, seen_ids, seen_bodies)
    if plan.added:
        target._store_events(pk, plan, meta.updated_at or 0)
        if plan.header is not None:
            target._read_cwd(pk, plan.header.seq, plan.header.event)
        target._mark_dirty(pk)
    return Imported(key, len(plan.added), plan.messages)


__all__ = ["AppendPlan", "Head", "ImportPlan", "carry_out_answer", "carry_out_append",
           "carry_out_import", "held_id", "import_key", "place_rowids", "plan_append",
           "plan_import", "stored_event", "title_of", "tool_counts"]
