"""Crush through the SQLite source kind (``importers/crush``).

The databases are built here from Crush's own migrations: charmbracelet/crush
``internal/db/migrations/`` at commit 37f36e93824e (``20250424200609_initial.sql``: the
tables and the triggers that rewrite ``updated_at`` in seconds;
``20250627000000_add_provider_to_messages.sql``; ``20250810000000_add_is_summary_message.sql``;
``20250812000000_add_todos_to_sessions.sql``), ``parts`` as ``internal/message/content.go``
marshals them (``[{type, data}]``), the projects list as ``internal/projects/projects.go``
writes it. Each database is in WAL mode, and a writer connection (the agent) holds it open
while backscroll reads.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
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
    sync_reading_only,
    tools_not_indexed,
    unchanged_then_grown,
    wal_writer,
)

pytestmark = pytest.mark.backends

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, parent_session_id TEXT,
  title TEXT NOT NULL, message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
  prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
  cost REAL NOT NULL DEFAULT 0.0, updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL);
CREATE TRIGGER IF NOT EXISTS update_sessions_updated_at AFTER UPDATE ON sessions
BEGIN UPDATE sessions SET updated_at = strftime('%s', 'now') WHERE id = new.id; END;
CREATE TABLE IF NOT EXISTS messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL,
  role TEXT NOT NULL, parts TEXT NOT NULL default '[]', model TEXT,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, finished_at INTEGER,
  FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE);
CREATE INDEX IF NOT EXISTS idx_messages_session_id ON messages (session_id);
CREATE TRIGGER IF NOT EXISTS update_messages_updated_at AFTER UPDATE ON messages
BEGIN UPDATE messages SET updated_at = strftime('%s', 'now') WHERE id = new.id; END;
CREATE TRIGGER IF NOT EXISTS update_session_message_count_on_insert AFTER INSERT ON messages
BEGIN UPDATE sessions SET message_count = message_count + 1 WHERE id = new.session_id; END;
ALTER TABLE messages ADD COLUMN provider TEXT;
ALTER TABLE messages ADD COLUMN is_summary_message INTEGER DEFAULT 0 NOT NULL;
ALTER TABLE sessions ADD COLUMN todos TEXT;
"""

T0 = 1_760_000_000_000
SID = "0e6f0f2c-7c54-4a4e-9a41-5c3d3d1f6a10"


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "data": {"text": words}}


def finish() -> dict[str, Any]:
    return {"type": "finish", "data": {"reason": "end_turn", "time": T0 // 1000}}


class Agent:
    """Crush's side in one project: ``<project>/.crush/crush.db``, a writer held open."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.path = project / ".crush" / "crush.db"
        self.conn = wal_writer(self.path, SCHEMA)
        self.n = 0

    def session(self, sid: str = SID, title: str = "Fix the cart") -> None:
        self.conn.execute("INSERT INTO sessions (id, title, updated_at, created_at) "
                          "VALUES (?, ?, ?, ?)", (sid, title, T0, T0))

    def message(self, role: str, parts: list[dict[str, Any]] | str, sid: str = SID,
                summary: bool = False) -> str:
        self.n += 1
        mid = str(uuid.UUID(int=self.n))
        when = T0 + self.n * 1000
        body = parts if isinstance(parts, str) else json.dumps(parts, ensure_ascii=False)
        self.conn.execute(
            "INSERT INTO messages (id, session_id, role, parts, model, provider, created_at, "
            "updated_at, is_summary_message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (mid, sid, role, body, "claude-sonnet-4" if role == "assistant" else None,
             "anthropic" if role == "assistant" else None, when, when, int(summary)))
        return mid


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("CRUSH_GLOBAL_DATA", raising=False)
    folder = Path.home() / ".local" / "share" / "crush"
    folder.mkdir(parents=True)
    return folder


def register(data_dir: Path, *projects: Path) -> None:
    data_dir.joinpath("projects.json").write_text(json.dumps({"projects": [
        {"path": str(p), "data_dir": str(p / ".crush"),
         "last_accessed": "2025-10-09T08:53:20Z"} for p in projects]}, indent=2))


@pytest.fixture
def agent(data_dir: Path, tmp_path: Path):
    agent = Agent(tmp_path / "work" / "shop")
    register(data_dir, agent.project)
    yield agent
    agent.conn.close()




def key(sid: str = SID) -> str:
    return f"agent:crush:crush:{sid}"



def test_first_sync_then_only_what_is_new(state: StateDir, agent: Agent,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    agent.session()
    agent.message("user", [text("why does the checkout total drift")])
    mid = agent.message("assistant", [text("rounding happens per line item"), finish()])
    report = sync_reading_only(state, agent.path)
    assert report.problems == [] and report.messages == 2
    assert hits(state, "checkout") == [(key(), f"{uuid.UUID(int=1)}:0")]
    session, events = only_session(state, "crush")
    assert session.label == "shop: Fix the cart" and session.created_at == T0
    assert events[0]["cwd"] == str(agent.project)
    assert events[2]["message"]["model"] == "claude-sonnet-4" and events[2]["id"] == f"{mid}:0"

    grown = unchanged_then_grown(state, monkeypatch, lambda: agent.message(
        "user", [text("and the tax line too")]))
    assert grown.messages == 1 and hits(state, "tax")


def test_a_reply_rewritten_in_place_is_taken_when_finished(state: StateDir,
                                                           agent: Agent) -> None:
    """Crush streams into one row; the trigger then writes ``updated_at`` in seconds, which
    is less than the milliseconds it held: a change all the same."""
    agent.session()
    agent.message("user", [text("explain the cache")])
    mid = agent.message("assistant", [text("The ca")])
    sync(state)
    assert len(history(state, key())) == 1  # not finished: not taken yet
    agent.conn.execute("UPDATE messages SET parts = ?, finished_at = ? WHERE id = ?",
                       (json.dumps([text("The cache keeps prices warm"), finish()]), T0, mid))
    assert agent.conn.execute("SELECT updated_at FROM messages WHERE id = ?",
                              (mid,)).fetchone()[0] < T0  # seconds now
    assert sync(state).messages == 1
    assert history(state, key())[-1]["content"][0]["text"] == "The cache keeps prices warm"
    agent.conn.execute("UPDATE sessions SET title = 'renamed'")  # rewritten, nothing new
    assert sync(state).events == 0
    assert len(history(state, key())) == 2


def test_a_session_deleted_in_crush_stays(state: StateDir, agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("remember the walrus")])
    sync(state)
    agent.conn.execute("DELETE FROM messages")
    agent.conn.execute("DELETE FROM sessions")
    assert sync(state).problems == []
    assert hits(state, "walrus") and len(history(state, key())) == 1


def test_a_vanished_project_keeps_its_conversations(state: StateDir, agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("the project folder was removed")])
    sync(state)
    agent.conn.close()
    for p in agent.path.parent.iterdir():
        p.unlink()
    assert sync(state).problems == []
    assert hits(state, "removed")


def test_malformed_parts_are_one_sentence_and_the_rest_kept(state: StateDir,
                                                            agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("good words here")])
    agent.message("user", "{broken")
    agent.message("assistant", [text("still answered"), finish()])
    [problem] = sync(state).problems
    assert "its parts are not a JSON list" in problem and str(agent.path) in problem
    assert [m["content"][0]["text"] for m in history(state, key())] == [
        "good words here", "still answered"]
    agent.message("user", [text("later")])
    assert sync(state).problems == []  # said once


def test_tools_reasoning_and_summaries_are_not_indexed(state: StateDir, agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("list the files")])
    agent.message("assistant", [
        {"type": "reasoning", "data": {"thinking": "thinkingokapi about it", "signature": ""}},
        text("let me look"),
        {"type": "tool_call", "data": {"id": "call_1", "name": "bash",
                                       "input": json.dumps({"command": "ls"}),
                                       "provider_executed": False, "finished": True}},
        finish()])
    agent.message("tool", [{"type": "tool_result", "data": {
        "tool_call_id": "call_1", "name": "bash", "content": "toolpangolin.txt",
        "metadata": "", "is_error": False}}])
    agent.message("assistant", [text("contextzebra summary so far"), finish()], summary=True)
    agent.message("assistant", [text("there is one file"), finish()])
    assert sync(state).problems == []
    tools_not_indexed(state, key(), "file", hidden=("contextzebra",))


def test_non_ascii_text(state: StateDir, agent: Agent) -> None:
    agent.session(title="Прайс-лист 価格")
    agent.message("user", [text("почему цена 価格 неверна 🙂")])
    sync(state)
    assert hits(state, "цена")
    assert history(state, key())[0]["content"][0]["text"] == "почему цена 価格 неверна 🙂"


def test_only_listed_projects_are_read(state: StateDir, data_dir: Path, tmp_path: Path) -> None:
    listed, unlisted = Agent(tmp_path / "a" / "listed"), Agent(tmp_path / "a" / "unlisted")
    try:
        register(data_dir, listed.project)
        for one, words in ((listed, "listed heron"), (unlisted, "unlisted walrus")):
            one.session(str(uuid.uuid4()))
            one.message("user", [text(words)],
                        sid=one.conn.execute("SELECT id FROM sessions").fetchone()[0])
        assert ("crush", data_dir) in {(s.kind, s.path) for s in all_sources(state.path)}
        assert sync(state).problems == []
        assert hits(state, "heron") and hits(state, "walrus") == []
        register(data_dir, listed.project, unlisted.project)  # Crush opened it since
        assert sync(state).messages == 1 and hits(state, "walrus")
    finally:
        listed.conn.close()
        unlisted.conn.close()


def test_crush_global_data_moves_the_list(state: StateDir, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    crush = formats.get("crush")
    home = Path("/home/u")
    assert crush.default_folder({}, home) == home / ".local/share/crush"
    assert crush.default_folder({"XDG_DATA_HOME": "/x"}, home) == Path("/x/crush")
    assert crush.default_folder({"XDG_DATA_HOME": "/x", "CRUSH_GLOBAL_DATA": "/g"}, home) == (
        Path("/g"))


def test_an_unknown_schema_is_one_sentence(state: StateDir, data_dir: Path,
                                           tmp_path: Path) -> None:
    project = tmp_path / "odd"
    (project / ".crush").mkdir(parents=True)
    with sqlite3.connect(project / ".crush" / "crush.db") as conn:
        conn.execute("CREATE TABLE sessions (id TEXT, title TEXT, created_at, updated_at)")
    conn.close()
    register(data_dir, project)
    [problem] = sync(state).problems
    assert "no table 'messages'" in problem


def test_import_command_reads_a_project(state: StateDir, agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("imported by hand")])
    report = formats.get("crush").doors.import_into(state, agent.project, None)
    assert report.skipped == [] and report.sessions == 1
    reconcile_all(state)
    assert hits(state, "hand")


def test_resume_command_takes_uuids_only() -> None:
    assert resume_command("crush", True, SID, "/p").command == f"cd /p && crush --session {SID}"
    assert resume_command("crush", True, "-s x", "/p").command is None


def test_watch_watches_the_listed_project_folders(state: StateDir, agent: Agent,
                                                  data_dir: Path, tmp_path: Path) -> None:
    """The project databases are outside Crush's data folder: ``watch`` watches their
    folders too, a change there syncs the Crush source, and a project listed anew changes
    what is watched."""
    from backscroll.core.sources.watch import _identity, _transcript_change, changed_sources, outside_folders

    sources = all_sources(state.path)
    [crush_source] = [s for s in sources if s.kind == "crush"]
    assert outside_folders(sources) == {agent.path.parent: crush_source}
    wal = Path(f"{agent.path}-wal")
    assert _transcript_change(None, str(wal)) and _transcript_change(None, str(agent.path))
    assert changed_sources(sources, [wal]) == [crush_source]
    assert changed_sources(sources, [tmp_path / "elsewhere" / "crush.db"]) == []
    before = _identity(sources)
    other = Agent(tmp_path / "work" / "other")
    try:
        register(data_dir, agent.project, other.project)
        assert _identity(sources) != before
        assert set(outside_folders(sources)) == {agent.path.parent, other.path.parent}
    finally:
        other.conn.close()
