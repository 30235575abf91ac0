"""Cursor's editor chats through the SQLite source kind (``importers/sqlite_source.py``).

Cursor is closed source: the databases are built here from its files' shapes as described
publicly (``agent_formats.md``; e.g. michaeldhood/chatrxiv ``docs/cursor/storage-reference.md``,
pppp606/cursor-efficiency ``docs/vscdbRelation.md``): the global ``state.vscdb`` with
``cursorDiskKV(key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)``, ``composerData:<id>``
(``name``, ``createdAt``/``lastUpdatedAt`` in ms, ``status``, ``modelConfig.modelName``,
``fullConversationHeadersOnly[{bubbleId, type}]``, or the older inline ``conversation``) and
``bubbleId:<composer>:<bubble>`` (``type`` 1/2, ``text``, ``thinking.text``,
``toolFormerData``, ``createdAt``); a workspace's ``workspace.json`` (``folder``) and its
``state.vscdb`` ``ItemTable`` ``composer.composerData`` (``allComposers``). The global
database is in WAL mode and a writer connection (the editor) holds it open while
backscroll reads.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from backscroll.core import formats
from backscroll.core.importers.cursor_editor import reading as reading_module
from backscroll.core.resume import resume_command
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.sources.detect import all_sources
from backscroll.core.sources.watch import _transcript_change
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR

from .fakehome import hits
from .sqlite_formats import (
    history,
    only_session,
    sync,
    sync_reading_only,
    tools_not_indexed,
    unchanged_then_grown,
    wal_writer,
)

pytestmark = pytest.mark.backends

CID = "3f2a1b0c-9d8e-4f7a-8b6c-5d4e3f2a1b0c"
CID2 = "4a3b2c1d-0e9f-4a8b-9c7d-6e5f4a3b2c1d"
PROJECT = "/home/dev/orchard"
T0 = 1_760_000_000_000
KV = "CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)"


class Cursor:
    """The editor's side: the global ``state.vscdb`` held open by a writer (WAL mode)."""

    def __init__(self, user: Path) -> None:
        self.user = user
        self.path = user / "globalStorage" / "state.vscdb"
        self.conn = wal_writer(self.path, "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT "
                                          f"REPLACE, value BLOB); {KV}")
        # other keys the editor keeps in the same table
        self.put("checkpointId:x:y", {"files": []})
        self.put("codeBlockDiff:x:y", {"diff": "kvnoise"})
        self.bubbles: dict[str, list[dict[str, Any]]] = {}
        self.n = 0

    def put(self, key: str, value: Any) -> None:
        raw = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        self.conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (key, raw))

    def composer(self, cid: str = CID, name: str | None = "Fix the apple sorter",
                 status: str = "completed") -> None:
        self.n += 1
        heads = [{"bubbleId": b["bubbleId"], "type": b["type"]} for b in self.bubbles[cid]]
        self.put(f"composerData:{cid}", {
            "_v": 10, "composerId": cid, "name": name, "createdAt": T0,
            "lastUpdatedAt": T0 + self.n * 1000, "status": status,
            "modelConfig": {"modelName": "claude-4-sonnet"},
            "fullConversationHeadersOnly": heads})

    def bubble(self, kind: int, text: str, cid: str = CID, raw: str | None = None,
               **extra: Any) -> str:
        self.n += 1
        bid = f"b{self.n:04d}-0000-4000-8000-{cid[:12]}"
        record = {"_v": 3, "type": kind, "bubbleId": bid, "text": text,
                  "createdAt": f"2026-02-01T09:00:{self.n:02d}.000Z", **extra}
        self.bubbles.setdefault(cid, []).append(record)
        self.put(f"bubbleId:{cid}:{bid}", raw if raw is not None else record)
        return bid

    def say(self, bid: str, text: str, cid: str = CID) -> None:
        record = next(b for b in self.bubbles[cid] if b["bubbleId"] == bid)
        record["text"] = text
        self.put(f"bubbleId:{cid}:{bid}", record)

    def workspace(self, folder: str, cids: list[str]) -> None:
        where = self.user / "workspaceStorage" / "a1b2c3"
        where.mkdir(parents=True)
        (where / "workspace.json").write_text(json.dumps({"folder": "file://" + folder}))
        with sqlite3.connect(where / "state.vscdb") as conn:
            conn.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, "
                         "value BLOB)")
            conn.execute("INSERT INTO ItemTable VALUES ('composer.composerData', ?)", (
                json.dumps({"allComposers": [{"composerId": c} for c in cids]}),))
        conn.close()


@pytest.fixture
def user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return Path.home() / ".config" / "Cursor" / "User"


@pytest.fixture
def cursor(user_folder: Path):
    one = Cursor(user_folder)
    yield one
    one.conn.close()




def key(cid: str = CID) -> str:
    return f"agent:cursor:cursor-editor:{cid}"


def texts(state: StateDir, cid: str = CID) -> list[str]:
    return [c["text"] for m in history(state, key(cid)) for c in m["content"]
            if c["type"] == "text"]



def test_first_sync_append_and_a_no_change_sync_opens_nothing(
        state: StateDir, cursor: Cursor, monkeypatch: pytest.MonkeyPatch) -> None:
    first = cursor.bubble(1, "why are the apples sorted by colour")
    cursor.bubble(2, "the sorter compares hue first")
    cursor.composer()
    cursor.workspace(PROJECT, [CID])
    assert {(s.kind, str(s.path)) for s in all_sources(state.path)} == {
        ("cursor-editor", str(cursor.path.parent))}
    report = sync_reading_only(state, cursor.path)
    assert (report.problems, report.messages) == ([], 2)
    assert hits(state, "colour") == [(key(), first)]
    assert hits(state, "kvnoise") == []
    session, events = only_session(state, "cursor")
    assert session.label == "orchard: Fix the apple sorter"
    assert events[0]["cwd"] == PROJECT and events[0]["timestamp"] == "2025-10-09T08:53:20.000Z"
    assert events[2]["message"]["model"] == "claude-4-sonnet"
    assert events[1]["timestamp"] == "2026-02-01T09:00:01.000Z"

    def grow() -> None:
        cursor.bubble(1, "and pears")
        cursor.composer()

    grown = unchanged_then_grown(state, monkeypatch, grow, reading_module)  # (workspaces too)
    assert grown.messages == 1  # workspaces not reread: one database opened
    assert texts(state) == ["why are the apples sorted by colour",
                            "the sorter compares hue first", "and pears"]


def test_order_is_the_header_list_not_the_keys(state: StateDir, cursor: Cursor) -> None:
    a = cursor.bubble(1, "first question")
    b = cursor.bubble(2, "first answer")
    cursor.bubbles[CID].reverse()  # keys sort one way, the conversation goes the other
    cursor.composer()
    sync(state)
    assert [m["id"] for m in history(state, key())] == [b, a]


def test_a_reply_being_generated_is_taken_when_whole(state: StateDir, cursor: Cursor) -> None:
    cursor.bubble(1, "explain the crate")
    bid = cursor.bubble(2, "The cr")
    cursor.composer(status="generating")
    sync(state)
    assert texts(state) == ["explain the crate"]
    cursor.say(bid, "The crate holds twelve")
    cursor.composer()
    assert sync(state).messages == 1
    assert texts(state) == ["explain the crate", "The crate holds twelve"]


def test_a_composer_deleted_in_cursor_and_a_vanished_database_keep_what_was_stored(
        state: StateDir, cursor: Cursor) -> None:
    cursor.bubble(1, "remember the orchard ladder")
    cursor.composer()
    sync(state)
    cursor.conn.execute("DELETE FROM cursorDiskKV WHERE key LIKE '%" + CID + "%'")
    assert sync(state).problems == []
    cursor.conn.close()
    for path in cursor.path.parent.iterdir():
        path.unlink()
    assert sync(state).problems == []
    assert hits(state, "ladder") and len(history(state, key())) == 1


def test_malformed_records_are_one_sentence_and_the_rest_kept(state: StateDir,
                                                              cursor: Cursor) -> None:
    cursor.bubble(1, "good words here")
    cursor.bubble(2, "", raw="{not json")
    cursor.bubble(2, "still answered")
    cursor.composer()
    cursor.put(f"composerData:{CID2}", "[broken")
    report = sync(state)
    assert len(report.problems) == 2
    assert all("not a JSON object" in p for p in report.problems)
    assert texts(state) == ["good words here", "still answered"]
    cursor.bubble(1, "later")
    cursor.composer()
    assert sync(state).problems == []  # said once


def test_tools_and_thinking_are_stored_not_indexed(state: StateDir, cursor: Cursor) -> None:
    cursor.bubble(1, "list the crates")
    cursor.bubble(2, "", thinking={"text": "thinkingokapi about it", "signature": "s"})
    cursor.bubble(2, "", toolFormerData={
        "tool": 15, "toolCallId": "toolu_01", "name": "run_terminal_cmd", "status": "completed",
        "params": json.dumps({"command": "ls crates"}),
        "result": json.dumps({"output": "toolpangolin.txt"})})
    cursor.bubble(2, "there is one crate")
    cursor.composer()
    assert sync(state).problems == []
    assert "ls crates" in tools_not_indexed(state, key(), "crate")


def test_an_answer_token_count_is_an_entry_of_its_own(state: StateDir, cursor: Cursor) -> None:
    """Cursor fills a bubble's tokenCount in after writing it: the count becomes an empty
    assistant message ``<bubble>:usage`` when it comes; all zeros is no count."""
    cursor.bubble(1, "list the crates")
    answer = cursor.bubble(2, "there is one crate", tokenCount={"inputTokens": 0,
                                                                 "outputTokens": 0})
    cursor.composer()
    sync(state)
    record = next(b for b in cursor.bubbles[CID] if b["bubbleId"] == answer)
    record["tokenCount"] = {"inputTokens": 1200, "outputTokens": 35}
    cursor.put(f"bubbleId:{CID}:{answer}", record)
    cursor.composer()
    sync(state)
    with state.open("cursor") as db:
        session = db.session(key())
        assert session is not None
        usages = [(e["id"], e["message"]) for _, e in db.events(session.pk)
                  if "usage" in e.get("message", {})]
    assert [(i, m["content"], m["model"], m["usage"]) for i, m in usages] == [
        (f"{answer}:usage", [], "claude-4-sonnet",
         {"input": 1200, "output": 35, "totalTokens": 1235})]


def test_the_older_inline_conversation(state: StateDir, cursor: Cursor) -> None:
    cursor.put(f"composerData:{CID2}", {
        "composerId": CID2, "createdAt": T0, "lastUpdatedAt": T0 + 5,
        "conversation": [{"bubbleId": "old-1", "type": 1, "text": "inline plum question"},
                         {"bubbleId": "old-2", "type": 2, "text": "inline plum answer"}]})
    assert sync(state).problems == []
    assert hits(state, "plum") and texts(state, CID2) == [
        "inline plum question", "inline plum answer"]
    with state.open("cursor") as db:
        [session] = db.sessions()
    assert session.label == "inline plum question"  # no name, no folder known: the prompt


def test_non_ascii_text(state: StateDir, cursor: Cursor) -> None:
    cursor.bubble(1, "почему яблоки 林檎 гниют 🍎")
    cursor.composer(name="Сад 庭")
    sync(state)
    assert hits(state, "яблоки")
    assert texts(state) == ["почему яблоки 林檎 гниют 🍎"]


def test_the_registry_folders_and_no_resume_command(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    fmt = formats.get("cursor-editor")
    assert fmt is not None and fmt.resume is None and fmt.default_agent == "cursor"
    assert resume_command("cursor-editor", True, CID, PROJECT).command is None
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert fmt.default_folder(os.environ, Path.home()) == (
        tmp_path / "cfg" / "Cursor" / "User" / "globalStorage")
    assert "Library/Application Support/Cursor/User/globalStorage" in fmt.more_folders


def test_a_composer_rewritten_shorter_keeps_what_was_stored(state: StateDir,
                                                           cursor: Cursor) -> None:
    cursor.bubble(1, "sort by weight")
    cursor.bubble(2, "weights are in grams")
    cursor.composer()
    sync(state)
    # a checkpoint restored: the header list loses its last bubble, a new one follows
    dropped = cursor.bubbles[CID].pop()
    cursor.conn.execute("DELETE FROM cursorDiskKV WHERE key = ?",
                        (f"bubbleId:{CID}:{dropped['bubbleId']}",))
    cursor.bubble(2, "weights are in ounces")
    cursor.composer()
    report = sync(state)
    assert (report.problems, report.messages) == ([], 1)
    assert texts(state) == ["sort by weight", "weights are in ounces"]
    with state.open("cursor") as db:
        [session] = db.sessions()
        ids = [e["id"] for _, e in db.events(session.pk) if e.get("type") == "message"]
    assert dropped["bubbleId"] in ids and len(ids) == len(set(ids)) == 3


def test_watch_sees_the_wal_and_search_filters_by_source(state: StateDir,
                                                         cursor: Cursor) -> None:
    cursor.bubble(1, "quince jelly")
    cursor.composer()
    sync(state)
    wal = f"{cursor.path}-wal"
    assert _transcript_change(None, wal) and _transcript_change(None, str(cursor.path))
    assert not _transcript_change(None, str(cursor.path.parent / "state.vscdb.backup"))
    by_source = {source: [r.session_key for r in sessions_search(
        state, SearchRequest(query="quince", source=source), OPERATOR).results]
        for source in ("cursor-editor", "opencode")}
    assert by_source == {"cursor-editor": [key()], "opencode": []}
    assert formats.get("cursor-editor").label == "Cursor editor"
