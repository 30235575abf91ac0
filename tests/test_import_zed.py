"""Zed's agent threads through the SQLite source kind (``importers/sqlite_source.py``).

The database is built here from Zed's own schema and serialization: zed-industries/zed
``crates/agent/src/db.rs`` (commit 0642ec7e49e2: ``ThreadsDatabase::new``'s ``threads`` table
and its added columns, ``save_thread_sync``: the JSON of ``DbThread`` with its ``version``,
zstd level 3, ``data_type`` ``zstd``; ``json`` rows from older versions) and
``crates/agent/src/thread.rs`` (``Message``: ``{"User": {id, content}}``, ``{"Agent": {content,
tool_results}}``, content items ``Text``, ``Mention``, ``Thinking``, ``ToolUse``). It is in
WAL mode and a writer connection (Zed) holds it open while backscroll reads.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import zstandard

from backscroll.core import formats
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

TID = "5b0c8a2e-1f3d-4e6a-9b7c-0d1e2f3a4b5c"
TID2 = "7c1d9b3f-2a4e-4f7b-8c8d-1e2f3a4b5c6d"
PROJECT = "/home/dev/garden"


class Zed:
    """Zed's side: ``threads.db`` with a writer connection held open (WAL mode)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = wal_writer(path, """
            CREATE TABLE IF NOT EXISTS threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL,
              updated_at TEXT NOT NULL, data_type TEXT NOT NULL, data BLOB NOT NULL);
            ALTER TABLE threads ADD COLUMN parent_id TEXT;
            ALTER TABLE threads ADD COLUMN folder_paths TEXT;
            ALTER TABLE threads ADD COLUMN folder_paths_order TEXT;
            ALTER TABLE threads ADD COLUMN created_at TEXT;""")
        self.minute = 0

    def save(self, tid: str, messages: list[Any], title: str = "Prune the roses",
             parent: str | None = None, data_type: str = "zstd", raw: bytes | None = None,
             folder: str = PROJECT) -> None:
        self.minute += 1
        updated = f"2026-03-01T10:{self.minute:02d}:00+00:00"
        thread = {"title": title, "messages": messages, "updated_at": updated,
                  "model": {"provider": "anthropic", "model": "claude-sonnet-4-5"},
                  "version": "0.3.0"}
        if parent:
            thread["subagent_context"] = {"parent_thread_id": parent}
        data = json.dumps(thread, ensure_ascii=False).encode()
        if raw is not None:
            data = raw
        elif data_type == "zstd":
            data = zstandard.ZstdCompressor(level=3).compress(data)
        self.conn.execute(
            "INSERT INTO threads (id, parent_id, folder_paths, folder_paths_order, summary, "
            "updated_at, data_type, data, created_at) VALUES (?, ?, ?, '0', ?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET summary = excluded.summary, updated_at = "
            "excluded.updated_at, data_type = excluded.data_type, data = excluded.data",
            (tid, parent, folder, title, updated, data_type, data, updated))


def user(uid: str, *texts: str) -> dict[str, Any]:
    return {"User": {"id": uid, "content": [{"Text": t} for t in texts]}}


def agent_says(*items: Any, results: dict[str, Any] | None = None) -> dict[str, Any]:
    content = [{"Text": i} if isinstance(i, str) else i for i in items]
    return {"Agent": {"content": content, "tool_results": results or {},
                      "reasoning_details": None}}


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    return Path.home() / ".local" / "share"


@pytest.fixture
def zed(data_home: Path):
    one = Zed(data_home / "zed" / "threads" / "threads.db")
    yield one
    one.conn.close()




def key(tid: str = TID) -> str:
    return f"agent:zed:zed:{tid}"


def texts(state: StateDir, tid: str = TID) -> list[str]:
    return [c["text"] for m in history(state, key(tid)) for c in m["content"]
            if c["type"] == "text"]


def stored_ids(state: StateDir) -> list[str]:
    with state.open("zed") as db:
        [session] = db.sessions()
        return [e["id"] for _, e in db.events(session.pk) if e.get("type") == "message"]



def test_first_sync_append_and_a_no_change_sync_opens_nothing(
        state: StateDir, zed: Zed, monkeypatch: pytest.MonkeyPatch) -> None:
    turn = [user("u1", "why are the roses wilting"), agent_says("too little water at noon")]
    zed.save(TID, turn)
    assert {(s.kind, str(s.path)) for s in all_sources(state.path)} == {
        ("zed", str(zed.path.parent))}
    report = sync_reading_only(state, zed.path)
    assert (report.problems, report.messages) == ([], 2)
    assert hits(state, "wilting") == [(key(), "u1:0")]
    session, events = only_session(state, "zed")
    assert session.label == "garden: Prune the roses"
    assert events[0]["cwd"] == PROJECT and events[0]["timestamp"] == "2026-03-01T10:01:00.000Z"
    assert events[2]["message"]["model"] == "claude-sonnet-4-5"

    grown = unchanged_then_grown(state, monkeypatch, lambda: zed.save(
        TID, [*turn, user("u2", "and the tulips"), agent_says("tulips are fine")]))
    assert grown.messages == 2
    assert texts(state) == ["why are the roses wilting", "too little water at noon",
                            "and the tulips", "tulips are fine"]
    [stamp] = {m["timestamp"] for m in history(state, key())[2:]}
    # the thread's updated_at when first read
    assert stamp == datetime(2026, 3, 1, 10, 2, tzinfo=timezone.utc).timestamp() * 1000


def test_a_zstd_thread_and_a_json_thread(state: StateDir, zed: Zed) -> None:
    zed.save(TID, [user("u1", "compressed marigold")])
    zed.save(TID2, [user("v1", "plain snapdragon")], data_type="json", title="Old one")
    assert sync(state).problems == []
    assert hits(state, "marigold") == [(key(), "u1:0")]
    assert hits(state, "snapdragon") == [(key(TID2), "v1:0")]


def test_a_corrupted_zstd_blob_is_one_sentence_and_the_rest_kept(state: StateDir,
                                                                 zed: Zed) -> None:
    zed.save(TID, [user("u1", "healthy hydrangea")])
    frame = zstandard.ZstdCompressor().compress(b'{"messages": []}' * 50)
    zed.save(TID2, [], raw=frame[:8] + b"\x00garbage" + frame[16:])
    report = sync(state)
    [problem] = report.problems
    assert TID2 in problem and "zstd" in problem
    assert hits(state, "hydrangea")
    zed.save(TID, [user("u1", "healthy hydrangea"), agent_says("water it")])
    assert sync(state).problems == []  # said once


def test_a_thread_rewritten_whole_and_trimmed_loses_nothing(state: StateDir, zed: Zed) -> None:
    zed.save(TID, [user("u1", "plant the bulbs"), agent_says("in autumn"),
                   user("u2", "how deep"), agent_says("three times their height")])
    sync(state)
    # The user edits the second message: Zed truncates from it and the turn is new
    zed.save(TID, [user("u1", "plant the bulbs"), agent_says("in autumn"),
                   user("u3", "how far apart"), agent_says("a hand's width")])
    report = sync(state)
    assert (report.problems, report.messages) == ([], 2)
    assert hits(state, "width") and hits(state, "autumn")
    assert len(stored_ids(state)) == len(set(stored_ids(state)))  # nothing stored twice
    assert "u2:0" in stored_ids(state)  # the older turn is kept, as a branch
    assert texts(state) == ["plant the bulbs", "in autumn", "how far apart", "a hand's width"]
    zed.save(TID, [user("u1", "plant the bulbs")])  # trimmed by Zed
    assert sync(state).events == 0
    assert hits(state, "width") and hits(state, "autumn")
    assert len(stored_ids(state)) == len(set(stored_ids(state)))  # nothing stored twice


def test_a_thread_deleted_in_zed_and_a_vanished_database_keep_what_was_stored(
        state: StateDir, zed: Zed) -> None:
    zed.save(TID, [user("u1", "remember the heron")])
    sync(state)
    zed.conn.execute("DELETE FROM threads")
    assert sync(state).problems == []
    zed.conn.close()
    for path in zed.path.parent.iterdir():
        path.unlink()
    assert sync(state).problems == []
    assert hits(state, "heron") and len(history(state, key())) == 1


def test_tools_reasoning_and_mentions_are_stored_not_indexed(state: StateDir, zed: Zed) -> None:
    zed.save(TID, [
        {"User": {"id": "u1", "content": [
            {"Text": "read the planting notes"},
            {"Mention": {"uri": {"File": {"abs_path": "/home/dev/garden/notes.md"}},
                         "content": "mentionquokka notes"}}]}},
        agent_says({"Thinking": {"text": "thinkingokapi first", "signature": None}},
                   {"ToolUse": {"id": "toolu_1", "name": "read_file", "raw_input": "{}",
                                "input": {"path": "notes.md"}, "is_input_complete": True}},
                   "the notes say spring",
                   results={"toolu_1": {"tool_use_id": "toolu_1", "tool_name": "read_file",
                                        "is_error": False, "content": {"Text": "toolpangolin"},
                                        "output": None}}),
    ])
    assert sync(state).problems == []
    tools_not_indexed(state, key(), "spring", hidden=("mentionquokka",))
    assert texts(state) == ["read the planting notes", "the notes say spring"]


def test_a_subagent_thread_names_its_parent(state: StateDir, zed: Zed) -> None:
    zed.save(TID, [user("u1", "plan the beds")])
    zed.save(TID2, [user("s1", "subagent measures the beds")], parent=TID, title="Measure")
    sync(state)
    with state.open("zed") as db:
        child = db.session(key(TID2), db.host)
    assert child is not None and child.spawned_by == key(TID)


def test_non_ascii_text(state: StateDir, zed: Zed) -> None:
    zed.save(TID, [user("u1", "почему 花 вянут 🌹")], title="Сад 庭")
    sync(state)
    assert hits(state, "вянут")
    assert texts(state) == ["почему 花 вянут 🌹"]


def test_the_registry_and_no_resume_command(state: StateDir, zed: Zed,
                                            monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    fmt = formats.get("zed")
    assert fmt is not None and fmt.resume is None and fmt.label == "Zed"
    assert resume_command("zed", True, TID, PROJECT).command is None
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert fmt.default_folder(os.environ, Path.home()) == tmp_path / "xdg" / "zed" / "threads"


def test_without_zstandard_one_sentence_then_read_once_installed(
        state: StateDir, zed: Zed, monkeypatch: pytest.MonkeyPatch) -> None:
    zed.save(TID, [user("u1", "compressed camellia")])
    zed.save(TID2, [user("v1", "plain clover")], data_type="json")
    monkeypatch.setitem(sys.modules, "zstandard", None)  # not installed
    report = sync(state)
    [problem] = report.problems
    assert TID in problem and "backscroll[zstd]" in problem
    assert hits(state, "clover") and hits(state, "camellia") == []
    zed.save(TID2, [user("v1", "plain clover"), agent_says("ok")], data_type="json")
    assert sync(state).problems == []  # said once
    monkeypatch.delitem(sys.modules, "zstandard")  # installed; read at the next change
    zed.save(TID2, [user("v1", "plain clover"), agent_says("ok"), user("v2", "more")],
             data_type="json")
    assert sync(state).problems == [] and hits(state, "camellia")


def test_watch_sees_the_wal_and_search_filters_by_source(state: StateDir, zed: Zed) -> None:
    zed.save(TID, [user("u1", "lavender border")])
    sync(state)
    assert _transcript_change(None, f"{zed.path}-wal") and _transcript_change(None, str(zed.path))
    by_source = {source: [r.session_key for r in sessions_search(
        state, SearchRequest(query="lavender", source=source), OPERATOR).results]
        for source in ("zed", "cursor-editor")}
    assert by_source == {"zed": [key()], "cursor-editor": []}
