"""The write path's decisions (core/storage/writeplan.py) without a database: an in-memory
fake that has only the primitives inherits every rule a real backend applies."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from backscroll.core.facts import NO_USAGE, Facts, Usage, UsageKey
from backscroll.core.indexer import INDEXER_VERSION, IndexRow
from backscroll.core.storage.model import BranchRow, SessionMeta
from backscroll.core.storage.sqlite.schema import SUMMARY_COLUMNS, TITLE_CHARS
from backscroll.core.storage.stored import stored_entry_id
from backscroll.core.storage.writeplan import (
    TITLE_CHARS as RULE_CHARS,
)
from backscroll.core.storage.writeplan import (
    Head,
    ImportPlan,
    body_of,
    carry_out_append,
    carry_out_import,
    held_id,
    import_key,
    plan_append,
    plan_import,
    title_of,
)
from backscroll.core.tool_index import ToolRow, tool_rows_for_branch
from backscroll.core.transcript import active_branch, parse_event

KEY = "agent:main:one"


def header() -> dict[str, Any]:
    return {"type": "session", "version": 1, "id": "s1", "timestamp": "2026-01-01T00:00:00Z",
            "cwd": "/work"}


def message(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent,
            "timestamp": "2026-01-01T00:00:01Z",
            "message": {"role": role, "content": [{"type": "text", "text": text}]}}


class Fake:
    """One session kept in dicts: the primitives ``carry_out_append``/``_import`` call."""

    def __init__(self) -> None:
        self.events: list[tuple[int, str | None, str, str]] = []  # seq, entry id, kind, body
        self.rows: list[IndexRow] = []
        self.branch: list[BranchRow] = []
        self.head = Head(1, "sid", 0, 0, None, "clean", INDEXER_VERSION, 0)
        self.title: str | None = None
        self.cwd: str | None = None
        self.dirty = False
        self.indexed: tuple[int, str | None] | None = None
        self.key: str | None = None
        self.facts: Facts | None = None
        self.usage: dict[UsageKey, Usage] = {}
        self.tools: list[ToolRow] = []

    def _has_entry(self, pk: int, entry_id: str) -> bool:
        return any(e[1] == entry_id for e in self.events)

    def _has_body(self, pk: int, body: str) -> bool:
        return any(e[1] is None and e[3] == body for e in self.events)

    def _adopted(self, pk: int, node: str) -> bool:
        return any(json.loads(e[3]).get("parentId") == node for e in self.events)

    def _add_row(self, head: Head, row: IndexRow) -> None:
        self.rows.append(row)

    def _store_event(self, pk: int, seq: int, event: dict[str, Any], body: str,
                     leaf: str | None) -> None:
        self.events.append((seq, stored_entry_id(event), event["type"], body))
        self.head = self.head._replace(last_seq=seq, leaf=leaf)

    def _note_row(self, pk: int, row: IndexRow, title: str | None) -> None:
        self.title = self.title or title

    def _read_cwd(self, pk: int, seq: int, event: dict[str, Any]) -> None:
        self.cwd = self.cwd or event.get("cwd")

    def _extend_branch(self, pk: int, seq: int, shown: BranchRow | None) -> None:
        self.branch += [shown] if shown is not None else []
        self.head = self.head._replace(branch_seq=seq)

    def _mark_dirty(self, pk: int) -> None:
        self.dirty = True
        self.head = self.head._replace(state="dirty")

    def _set_indexed(self, pk: int, seq: int, leaf: str | None) -> None:
        self.indexed = (seq, leaf)

    def _facts(self, pk: int) -> Facts | None:
        return self.facts

    def _save_facts(self, pk: int, facts: Facts) -> None:
        self.facts = facts

    def _add_usage(self, pk: int, key: UsageKey, usage: Usage) -> None:
        self.usage[key] = self.usage.get(key, NO_USAGE).plus(usage)
    # the tool-call index's
    def _add_tools(self, head: Head, rows: list[ToolRow]) -> None:
        self.tools += rows

    def _open_calls(self, pk: int, call_id: str | None):
        if not self.tools:
            return None, []
        newest = self.tools[-1].entry_id
        return newest, [(t.entry_id, t.block, t.call_id, t.tool) for t in self.tools
                        if t.result_entry_id is None
                        and (t.entry_id == newest or (call_id and t.call_id == call_id))]

    def _call_body(self, pk: int, entry_id: str) -> str | None:
        return next((e[3] for e in self.events if e[1] == entry_id), None)

    def _answer_tool(self, pk: int, row: ToolRow) -> None:
        self.tools = [row if (t.entry_id, t.block) == (row.entry_id, row.block) else t
                      for t in self.tools]

    # the import's
    def _find_for_import(self, column: str, value: str, host: str | None):
        return (1, self.key, self.head.last_seq) if self.key == value else None

    def _key_taken(self, key: str, host: str | None) -> bool:
        return False

    def _create_for_import(self, meta: SessionMeta, clean: bool) -> tuple[int, str, int]:
        self.key = meta.key
        return 1, meta.key, 0

    def _seen(self, pk: int) -> tuple[set[str], set[str]]:
        return ({e[1] for e in self.events if e[1]},
                {e[3] for e in self.events if e[1] is None})

    def _store_events(self, pk: int, plan: ImportPlan, updated_at: int) -> None:
        self.events += [(e.seq, e.entry_id, e.kind, e.line) for e in plan.added]
        self.head = self.head._replace(last_seq=plan.last_seq)


def append(fake: Fake, event: dict[str, Any], skip_known: bool = False) -> str:
    line = json.dumps(event)
    parsed = parse_event(line)
    return carry_out_append(fake, fake.head, KEY, parsed, body_of(line, parsed), skip_known).outcome


def test_a_fake_backend_indexes_extends_and_marks_dirty_as_a_real_one() -> None:
    fake = Fake()
    assert append(fake, header()) == "stored"
    assert fake.cwd == "/work"
    assert append(fake, message("a", None, "user", "plan the heron release")) == "indexed"
    assert append(fake, message("b", "a", "assistant", "done")) == "indexed"
    assert [r.entry_id for r in fake.rows] == ["a", "b"]
    assert fake.title == "plan the heron release"  # the first user message's
    assert [b[1] for b in fake.branch] == ["a", "b"] and fake.indexed == (3, "b")
    assert append(fake, message("b", "a", "assistant", "done"), skip_known=True) == "known"
    # a reply to an older entry moves the leaf off the branch: the session needs a rebuild
    assert append(fake, message("c", "a", "assistant", "again")) == "dirty"
    assert fake.dirty and len(fake.rows) == 2
    # once dirty, nothing more is indexed in place (the rebuild will)
    assert append(fake, message("d", "c", "user", "more")) == "stored"
    assert len(fake.rows) == 2


def test_plan_append_for_a_claimed_session_marks_it_dirty() -> None:
    head = Head(1, "sid", 0, 0, None, "claimed", INDEXER_VERSION, 0)
    event = parse_event(json.dumps(message("a", None, "user", "hi")))
    plan = plan_append(head, KEY, event, lambda _: False, lambda _: False)
    assert (plan.outcome, plan.row, plan.marks_dirty, plan.advances_index) == (
        "dirty", None, True, False)


def test_a_fake_import_adds_only_what_it_lacks_and_marks_dirty() -> None:
    fake = Fake()
    lines = [json.dumps(header()), json.dumps(message("a", None, "user", "hi"))]
    meta = SessionMeta(KEY)
    first = carry_out_import(fake, meta, KEY, lines, None)
    assert (first.key, first.events, first.messages) == (KEY, 2, 1)
    assert fake.dirty and fake.cwd == "/work"
    again = carry_out_import(fake, meta, KEY, lines, None)
    assert again.events == 0
    plan = plan_import(lines, None, 0, {"a"}, set())
    assert [e.kind for e in plan.added] == ["session"] and plan.last_seq == 1


def test_the_reset_key_and_the_held_id_rules() -> None:
    assert import_key("agent:main:x", "ABC", key_taken=True) == "agent:main:x:import-abc"
    assert import_key("agent:main:x", "ABC", key_taken=False) == "agent:main:x"
    assert held_id({"type": "session", "id": "s"}) is None
    assert held_id({"type": "message", "id": ""}) is None
    assert held_id({"type": "message", "id": "m1"}) == "m1"


def test_the_title_rule_and_the_sqlite_backfill_agree() -> None:
    """SQLite's migration backfill (schema.SUMMARY_COLUMNS) computes titles in SQL; the
    Python rule is the source and the two give the same titles."""
    assert TITLE_CHARS == RULE_CHARS
    bodies = ["plain", "", "a\u200bb\u200b", "é" * 500, "x" * 399 + "\u200b" + "y" * 10,
              "日本\u200b語" * 150, "🦩" * 401]
    conn = sqlite3.connect(":memory:")
    conn.executescript(
        "CREATE TABLE sessions (pk INTEGER PRIMARY KEY, title TEXT, last_message_at INTEGER);"
        "CREATE TABLE message_index (rowid INTEGER PRIMARY KEY, session_pk INTEGER, role TEXT,"
        " ts INTEGER); CREATE TABLE message_fts (rowid INTEGER PRIMARY KEY, body TEXT);")
    for pk, body in enumerate(bodies, 1):
        conn.execute("INSERT INTO sessions (pk) VALUES (?)", (pk,))
        conn.execute("INSERT INTO message_index VALUES (?, ?, 'user', 1)", (pk, pk))
        conn.execute("INSERT INTO message_fts VALUES (?, ?)", (pk, body))
    conn.execute(f"UPDATE sessions SET {SUMMARY_COLUMNS}")
    titles = [t for (t,) in conn.execute("SELECT title FROM sessions ORDER BY pk")]
    assert titles == [title_of(body) for body in bodies]


def test_a_fake_backend_indexes_tool_calls_and_their_later_results_as_a_rebuild_does() -> None:
    fake = Fake()
    events = [
        header(),
        message("u", None, "user", "check the disk"),
        {"type": "message", "id": "a", "parentId": "u", "timestamp": "2026-01-01T00:00:02Z",
         "message": {"role": "assistant", "content": [
             {"type": "toolCall", "id": "c1", "name": "exec", "arguments": {"command": "df -h"}},
             {"type": "toolCall", "id": "c2", "name": "read", "arguments": {"path": "/x"}}]}},
        {"type": "message", "id": "r2", "parentId": "a", "timestamp": "2026-01-01T00:00:04Z",
         "message": {"role": "toolResult", "toolCallId": "c2", "toolName": "read",
                     "content": [{"type": "text", "text": "no such file"}], "isError": True}},
        {"type": "message", "id": "r1", "parentId": "r2", "timestamp": "2026-01-01T00:00:05Z",
         "message": {"role": "toolResult", "toolName": "exec",  # no call id: by order
                     "content": [{"type": "text", "text": "/dev/sda1 91%"}],
                     "details": {"exitCode": 0, "durationMs": 40}}},
    ]
    for event in events:
        append(fake, event)
    assert [(t.tool, t.status, t.duration_ms, t.result_entry_id) for t in fake.tools] == [
        ("exec", "ok", 40, "r1"), ("read", "failed", 2000, "r2")]
    rebuilt = tool_rows_for_branch(active_branch(enumerate(events, 1)), KEY)
    assert fake.tools == rebuilt
