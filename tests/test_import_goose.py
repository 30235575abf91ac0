"""Goose through the SQLite source kind (``importers/goose``).

The databases are built here from Goose's own schema: block/goose
``crates/goose/src/session/session_manager.rs`` at commit dbec1655c177 (``create_schema``:
``sessions``, ``messages``; ``add_message`` writes ``content_json`` as the list of
``MessageContent`` and ``metadata_json``; ``created_timestamp`` in seconds), and an older
database as ``migrations.rs`` (commit 865e4a030a67) had it at version 2: no
``messages.metadata_json`` (3), no ``sessions.name`` (4), no ``model_config_json`` (6), no
``messages.message_id`` (7). The legacy files follow ``legacy.rs``: a metadata line, then
one ``Message`` per line. The databases are in WAL mode, and a writer connection (the agent)
holds each open while backscroll reads.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from backscroll.core import formats
from backscroll.core.reconcile import reconcile_all
from backscroll.core.resume import resume_command
from backscroll.core.sources.detect import all_sources
from backscroll.core.state import StateDir

from .fakehome import hits
from .sqlite_formats import (
    history,
    only_session,
    sync,
    sync_locked,
    sync_reading_only,
    tools_not_indexed,
    unchanged_then_grown,
    wal_writer,
)

pytestmark = pytest.mark.backends

CURRENT = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY,
  applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
INSERT INTO schema_version (version) VALUES (9);
CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '', user_set_name BOOLEAN DEFAULT FALSE,
  session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER,
  output_tokens INTEGER, accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER,
  accumulated_output_tokens INTEGER, schedule_id TEXT, recipe_json TEXT,
  user_recipe_values_json TEXT, provider_name TEXT, model_config_json TEXT, tenant_id TEXT,
  user_id TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT,
  session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
  content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
  timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT);
CREATE INDEX idx_messages_session ON messages(session_id);
"""

VERSION_2 = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY,
  applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
INSERT INTO schema_version (version) VALUES (1); INSERT INTO schema_version (version) VALUES (2);
CREATE TABLE sessions (id TEXT PRIMARY KEY, description TEXT NOT NULL DEFAULT '',
  working_dir TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, extension_data TEXT DEFAULT '{}',
  total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
  accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER,
  accumulated_output_tokens INTEGER, schedule_id TEXT, recipe_json TEXT,
  user_recipe_values_json TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
  content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
  timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER);
"""

T0 = 1_760_000_000
SID = "20251009_1"
PROJECT = "/home/dev/shop"


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


class Agent:
    """Goose's side: a writer connection that stays open (WAL mode), as sqlx keeps its pool."""

    def __init__(self, path: Path, schema: str = CURRENT) -> None:
        self.path = path
        self.conn = wal_writer(path, schema)
        self.current = schema is CURRENT
        self.n = 0

    def session(self, sid: str = SID, name: str = "Fix the cart",
                directory: str = PROJECT) -> None:
        if self.current:
            self.conn.execute(
                "INSERT INTO sessions (id, name, working_dir, created_at, updated_at, "
                "model_config_json) VALUES (?, ?, ?, '2025-10-09T08:53:20Z', "
                "'2025-10-09 08:53:20', ?)",
                (sid, name, directory, json.dumps({"model_name": "gpt-5", "context_limit": 1})))
        else:
            self.conn.execute(
                "INSERT INTO sessions (id, description, working_dir, created_at, updated_at) "
                "VALUES (?, ?, ?, '2025-10-09 08:53:20', '2025-10-09 08:53:20')",
                (sid, name, directory))

    def message(self, role: str, content: list[dict[str, Any]] | str, sid: str = SID,
                visible: bool = True) -> None:
        self.n += 1
        body = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        if self.current:
            metadata = json.dumps({"userVisible": visible, "agentVisible": True})
            self.conn.execute(
                "INSERT INTO messages (message_id, session_id, role, content_json, "
                "created_timestamp, metadata_json) VALUES (?, ?, ?, ?, ?, ?)",
                (f"msg_{sid}_{self.n}", sid, role, body, T0 + self.n, metadata))
        else:
            self.conn.execute(
                "INSERT INTO messages (session_id, role, content_json, created_timestamp) "
                "VALUES (?, ?, ?, ?)", (sid, role, body, T0 + self.n))
        self.conn.execute("UPDATE sessions SET updated_at = datetime(?, 'unixepoch') WHERE id = ?",
                          (T0 + self.n, sid))


@pytest.fixture
def sessions_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("GOOSE_PATH_ROOT", raising=False)
    return Path.home() / ".local" / "share" / "goose" / "sessions"


@pytest.fixture
def agent(sessions_dir: Path):
    agent = Agent(sessions_dir / "sessions.db")
    yield agent
    agent.conn.close()




def key(sid: str = SID) -> str:
    return f"agent:goose:goose:{sid}"



def test_first_sync_then_only_what_is_new(state: StateDir, agent: Agent,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    agent.session()
    agent.message("user", [text("why does the checkout total drift")])
    agent.message("assistant", [text("rounding happens per line item")])
    report = sync_reading_only(state, agent.path)
    assert report.problems == [] and report.messages == 2
    assert [k for k, _ in hits(state, "checkout")] == [key()]
    msgs = history(state, key())
    assert [m["role"] for m in msgs] == ["user", "assistant"]
    session, events = only_session(state, "goose")
    assert session.label == "shop: Fix the cart"
    assert session.created_at == 1_760_000_000_000  # 2025-10-09T08:53:20Z
    assert events[0]["cwd"] == PROJECT and events[0]["timestamp"] == "2025-10-09T08:53:20Z"
    assert events[2]["message"]["model"] == "gpt-5"

    grown = unchanged_then_grown(state, monkeypatch, lambda: agent.message(
        "user", [text("and the tax line too")]))
    assert grown.messages == 1
    assert [k for k, _ in hits(state, "tax")] == [key()]
    assert len(history(state, key())) == 3


def test_a_conversation_replaced_whole_is_matched_not_doubled(state: StateDir,
                                                              agent: Agent) -> None:
    """``replace_conversation`` deletes a session's rows and inserts them again (new rowids,
    and new ``message_id``s where the message had none)."""
    agent.session()
    agent.message("user", [text("first question")])
    agent.message("assistant", [text("first answer")])
    sync(state)
    rows = agent.conn.execute("SELECT role, content_json, created_timestamp, metadata_json "
                              "FROM messages ORDER BY id").fetchall()
    agent.conn.execute("DELETE FROM messages")
    for n, row in enumerate(rows[1:]):  # trimmed: the first message dropped
        agent.conn.execute("INSERT INTO messages (message_id, session_id, role, content_json, "
                           "created_timestamp, metadata_json) VALUES (?, ?, ?, ?, ?, ?)",
                           (f"msg_new_{n}", SID, *row))
    report = sync(state)
    assert report.problems == [] and report.events == 0
    assert [m["content"][0]["text"] for m in history(state, key())] == [
        "first question", "first answer"]  # nothing lost, nothing twice


def test_a_session_deleted_in_goose_stays(state: StateDir, agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("remember the walrus")])
    sync(state)
    agent.conn.execute("DELETE FROM messages")
    agent.conn.execute("DELETE FROM sessions")
    assert sync(state).problems == []
    assert hits(state, "walrus") and len(history(state, key())) == 1


def test_the_database_file_vanished_keeps_its_conversations(state: StateDir,
                                                            sessions_dir: Path) -> None:
    agent = Agent(sessions_dir / "sessions.db")
    agent.session()
    agent.message("user", [text("before the disk was wiped")])
    sync(state)
    agent.conn.close()
    for p in sessions_dir.iterdir():
        p.unlink()
    assert sync(state).problems == []
    assert hits(state, "wiped") and len(history(state, key())) == 1


def test_a_malformed_message_is_one_sentence_and_the_rest_kept(state: StateDir,
                                                               agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("good words here")])
    agent.message("user", "{broken")
    agent.message("assistant", [text("still answered")])
    report = sync(state)
    [problem] = report.problems
    assert "content_json is not a JSON list" in problem and str(agent.path) in problem
    assert [m["content"][0]["text"] for m in history(state, key())] == [
        "good words here", "still answered"]
    agent.message("user", [text("later")])
    assert sync(state).problems == []  # said once


def test_tools_reasoning_and_hidden_messages_are_not_indexed(state: StateDir,
                                                             agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("list the files")])
    agent.message("assistant", [
        {"type": "thinking", "thinking": "thinkingokapi about it", "signature": "s"},
        text("let me look"),
        {"type": "toolRequest", "id": "call_1", "toolCall": {"status": "success", "value": {
            "name": "developer__shell", "arguments": {"command": "ls"}}}}])
    agent.message("user", [{"type": "toolResponse", "id": "call_1", "toolResult": {
        "status": "success", "value": [{"type": "text", "text": "toolpangolin.txt"}]}}])
    agent.message("user", [text("contextzebra summary for the model")], visible=False)
    agent.message("assistant", [text("there is one file")])
    assert sync(state).problems == []
    tools_not_indexed(state, key(), "file", hidden=("contextzebra",))
    plain = history(state, key())
    assert [m["content"][0].get("text") for m in plain] == [
        "list the files", None, "let me look", "there is one file"]  # None: the thinking
    assert "contextzebra" not in json.dumps(plain)


def test_non_ascii_text(state: StateDir, agent: Agent) -> None:
    agent.session(name="Прайс-лист 価格")
    agent.message("user", [text("почему цена 価格 неверна 🙂")])
    sync(state)
    assert hits(state, "цена")
    assert history(state, key())[0]["content"][0]["text"] == "почему цена 価格 неверна 🙂"


def test_an_older_schema_version_is_read(state: StateDir, sessions_dir: Path) -> None:
    """Version 2: the title in ``description``, no metadata, no message ids, no model."""
    agent = Agent(sessions_dir / "sessions.db", VERSION_2)
    try:
        agent.session(name="Old cart bug")
        agent.message("user", [text("the older heron schema")])
        agent.message("assistant", [text("still read")])
        report = sync(state)
        assert report.problems == [] and report.messages == 2
        assert [k for k, _ in hits(state, "heron")] == [key()]
        with state.open("goose") as db:
            [session] = db.sessions()
        assert session.label == "shop: Old cart bug"
        agent.message("user", [text("appended later")])
        assert sync(state).messages == 1
    finally:
        agent.conn.close()


def test_an_unknown_schema_is_one_sentence(state: StateDir, sessions_dir: Path) -> None:
    sessions_dir.mkdir(parents=True)
    with sqlite3.connect(sessions_dir / "sessions.db") as conn:
        conn.execute("CREATE TABLE sessions (id TEXT, working_dir TEXT, created_at, updated_at)")
        conn.execute("CREATE TABLE messages (session_id TEXT, role TEXT)")
    conn.close()
    [problem] = sync(state).problems
    assert "table 'messages' has no column 'content_json'" in problem


def legacy_file(folder: Path, name: str, messages: list[dict[str, Any]],
                description: str = "Legacy cart") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    lines = [json.dumps({"working_dir": PROJECT, "description": description,
                         "schedule_id": None, "message_count": len(messages)})]
    lines += [json.dumps(m, ensure_ascii=False) for m in messages]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_legacy_jsonl_is_read_and_a_rewrite_matched(state: StateDir, sessions_dir: Path) -> None:
    msgs = [{"role": "user", "created": T0 + 1, "content": [text("legacy invoice question")]},
            {"role": "assistant", "created": T0 + 2, "content": [text("in the archive")]}]
    path = legacy_file(sessions_dir, "20250101_120000", msgs)
    first = sync(state)
    assert first.problems == [] and first.messages == 2
    assert [k for k, _ in hits(state, "invoice")] == [key("20250101_120000")]
    assert sync(state).read == 0
    msgs.append({"role": "user", "created": T0 + 3, "content": [text("and the receipts")]})
    legacy_file(sessions_dir, "20250101_120000", msgs)  # rewritten whole
    assert sync(state).messages == 1
    legacy_file(sessions_dir, "20250101_120000", msgs[1:])  # trimmed
    assert sync(state).events == 0
    assert len(history(state, key("20250101_120000"))) == 3
    path.write_text(path.read_text() + "{not json\n")
    report = sync(state)
    [problem] = report.problems
    assert "not a Goose message" in problem


def test_legacy_jsonl_and_database_holding_one_session_count_once(
        state: StateDir, agent: Agent, sessions_dir: Path) -> None:
    """Goose imports each legacy file into the database and keeps the file (``import_legacy``,
    with new ``message_id``s)."""
    msgs = [{"role": "user", "created": T0 + 1, "content": [
                {**text("migrated walrus words"), "annotations": None}],
             "metadata": {"userVisible": True, "agentVisible": True}},
            {"role": "assistant", "created": T0 + 2, "content": [text("walrus answer")],
             "metadata": {"userVisible": True, "agentVisible": True}}]
    legacy_file(sessions_dir, SID, msgs)
    agent.session()
    agent.message("user", [text("migrated walrus words")])
    agent.message("assistant", [text("walrus answer")])
    report = sync(state)
    assert report.problems == []
    assert [k for k, _ in hits(state, "migrated")] == [key()]
    assert len(history(state, key())) == 2


def test_goose_path_root_and_xdg_move_the_default(state: StateDir, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    goose = formats.get("goose")
    home = Path("/home/u")
    assert goose.default_folder({}, home) == home / ".local/share/goose/sessions"
    assert goose.default_folder({"XDG_DATA_HOME": "/x"}, home) == Path("/x/goose/sessions")
    assert goose.default_folder({"XDG_DATA_HOME": "/x", "GOOSE_PATH_ROOT": "/r"}, home) == (
        Path("/r/data/sessions"))
    monkeypatch.setenv("GOOSE_PATH_ROOT", str(tmp_path / "root"))
    agent = Agent(tmp_path / "root" / "data" / "sessions" / "sessions.db")
    try:
        agent.session()
        agent.message("user", [text("rooted elsewhere")])
        assert ("goose", tmp_path / "root" / "data" / "sessions") in {
            (s.kind, s.path) for s in all_sources(state.path)}
        assert sync(state).problems == []
        assert hits(state, "elsewhere")
    finally:
        agent.conn.close()


def test_import_command_reads_the_folder(state: StateDir, agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("imported by hand")])
    report = formats.get("goose").doors.import_into(state, agent.path.parent, None)
    assert report.skipped == [] and report.sessions == 1
    reconcile_all(state)
    assert hits(state, "hand")


def test_resume_command_takes_goose_ids_only() -> None:
    assert resume_command("goose", True, SID, PROJECT).command == (
        f"cd {PROJECT} && goose session --resume --session-id {SID}")
    assert resume_command("goose", True, "-x 1", PROJECT).command is None
    assert resume_command("goose", True, "my-named-session", PROJECT).command is None


def test_a_locked_database_is_one_sentence_and_retried(state: StateDir, agent: Agent,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    agent.session()
    agent.message("user", [text("behind a lock")])
    [problem], after = sync_locked(state, agent.conn, "UPDATE sessions SET name = 'locked'",
                                   monkeypatch)
    assert "read again at the next sync" in problem
    assert after == []
    assert hits(state, "lock")
    assert os.path.exists(f"{agent.path}-wal")
