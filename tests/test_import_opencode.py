"""OpenCode (and Kilo) through the SQLite source kind (``importers/sqlite_source.py``).

The databases are built here from OpenCode's own schema: anomalyco/opencode
``packages/opencode/src/session/session.sql.ts`` (commit 063e8306d989: ``session``,
``message``, ``part``; ``data`` holds the JSON of ``session/message-v2.ts``'s ``Info`` and
``Part`` without their ids) and ``project/project.sql.ts``. They are in WAL mode, and a
writer connection (the agent) holds each open while backscroll reads, as OpenCode does.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from backscroll.core import formats
from backscroll.core.importers.opencode import reading as reading_module
from backscroll.core.importers.sqlite_source import combined_stat
from backscroll.core.reconcile import reconcile_all
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
    sync_locked,
    sync_reading_only,
    tools_not_indexed,
    unchanged_then_grown,
    wal_writer,
)

pytestmark = pytest.mark.backends

SCHEMA = """
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT,
  icon_url TEXT, icon_color TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
  time_initialized INTEGER, sandboxes TEXT NOT NULL, commands TEXT);
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES project(id)
  ON DELETE CASCADE, workspace_id TEXT, parent_id TEXT, slug TEXT NOT NULL,
  directory TEXT NOT NULL, path TEXT, title TEXT NOT NULL, version TEXT NOT NULL,
  share_url TEXT, summary_additions INTEGER, summary_deletions INTEGER, summary_files INTEGER,
  summary_diffs TEXT, cost REAL NOT NULL DEFAULT 0, revert TEXT, permission TEXT, agent TEXT,
  model TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
  time_compacting INTEGER, time_archived INTEGER);
CREATE INDEX session_parent_idx ON session (parent_id);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES session(id)
  ON DELETE CASCADE, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
  data TEXT NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL REFERENCES message(id)
  ON DELETE CASCADE, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
CREATE INDEX part_session_idx ON part (session_id);
"""

T0 = 1_760_000_000_000
SID = "ses_0a1b2c3d4e5fAbCdEfGhIjKlMn"
SID2 = "ses_0a1b2c3d4e60ZyXwVuTsRqPoNm"
PROJECT = "/home/dev/shop"


def _id(prefix: str, n: int) -> str:
    return f"{prefix}_{n:012x}" + hashlib.sha1(f"{prefix}{n}".encode()).hexdigest()[:14]


class Agent:
    """OpenCode's side: a writer connection that stays open (WAL mode), as the app keeps it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = wal_writer(path, SCHEMA)
        self.conn.execute("INSERT INTO project VALUES ('p1', ?, 'git', 'shop', NULL, NULL, ?, ?,"
                          " NULL, '[]', NULL)", (PROJECT, T0, T0))
        self.n = 0

    def session(self, sid: str = SID, title: str = "Fix the cart", parent: str | None = None,
                directory: str = PROJECT) -> None:
        self.conn.execute(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version,"
            " time_created, time_updated) VALUES (?, 'p1', ?, 'slug', ?, ?, '1.2.0', ?, ?)",
            (sid, parent, directory, title, T0, T0))

    def message(self, role: str, parts: list[dict[str, Any]], sid: str = SID,
                completed: bool = True, raw: str | None = None) -> tuple[str, list[str]]:
        self.n += 1
        mid = _id("msg", self.n)
        when = T0 + self.n * 1000
        info: dict[str, Any] = {"role": role, "time": {"created": when}}
        if role == "assistant":
            info.update(parentID="", modelID="claude-sonnet-4", providerID="anthropic",
                        mode="build", path={"cwd": PROJECT, "root": PROJECT}, cost=0,
                        tokens={"input": 1, "output": 2, "reasoning": 0,
                                "cache": {"read": 0, "write": 0}})
            if completed:
                info["time"]["completed"] = when + 500
        else:
            info.update(agent="build", model={"providerID": "anthropic",
                                              "modelID": "claude-sonnet-4"})
        self.conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                          (mid, sid, when, when, raw if raw is not None else json.dumps(info)))
        ids = []
        for i, part in enumerate(parts):
            pid = _id("prt", self.n * 100 + i)
            data = part.pop("_raw", None) or json.dumps(part, ensure_ascii=False)
            self.conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                              (pid, mid, sid, when + i, when + i, data))
            ids.append(pid)
        self.conn.execute("UPDATE session SET time_updated = ? WHERE id = ?", (when, sid))
        return mid, ids

    def complete(self, mid: str) -> None:
        row = self.conn.execute("SELECT data FROM message WHERE id = ?", (mid,)).fetchone()
        info = json.loads(row[0])
        info["time"]["completed"] = info["time"]["created"] + 900
        self.conn.execute("UPDATE message SET data = ?, time_updated = time_updated + 1 "
                          "WHERE id = ?", (json.dumps(info), mid))


def text(words: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": words, **extra}


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    return Path.home() / ".local" / "share"


@pytest.fixture
def agent(data_home: Path):
    agent = Agent(data_home / "opencode" / "opencode.db")
    yield agent
    agent.conn.close()




def key(sid: str = SID, agent: str = "opencode", source: str = "opencode") -> str:
    return f"agent:{agent}:{source}:{sid}".lower()  # keys are stored lower-case



def test_first_sync_then_only_what_is_new(state: StateDir, agent: Agent,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    agent.session()
    agent.message("user", [text("why does the checkout total drift")])
    agent.message("assistant", [text("rounding happens per line item")])
    assert os.path.exists(f"{agent.path}-wal")
    report = sync_reading_only(state, agent.path)
    assert report.problems == [] and report.messages == 2
    [(k, _)] = hits(state, "checkout")
    assert k == key()
    msgs = history(state, key())
    assert [m["role"] for m in msgs] == ["user", "assistant"]
    session, events = only_session(state, "opencode")
    assert session.label == "shop: Fix the cart"
    assert events[0]["cwd"] == PROJECT and events[0]["type"] == "session"
    assert events[2]["message"]["model"] == "claude-sonnet-4"

    added: list[tuple[str, list[str]]] = []
    grown = unchanged_then_grown(state, monkeypatch, lambda: added.append(agent.message(
        "user", [text("and the tax line too")])))
    [(_mid, [pid])] = added
    assert grown.messages == 1
    assert hits(state, "tax") == [(key(), pid)]
    assert len(history(state, key())) == 3


def test_a_part_rewritten_in_place_is_matched_by_id(state: StateDir, agent: Agent) -> None:
    agent.session()
    _mid, [pid] = agent.message("user", [text("first wording")])
    sync(state)
    agent.conn.execute("UPDATE part SET data = ?, time_updated = time_updated + 5 WHERE id = ?",
                       (json.dumps(text("second wording")), pid))
    agent.conn.execute("UPDATE session SET time_updated = time_updated + 5")
    report = sync(state)
    assert report.problems == [] and report.events == 0
    assert [m["id"] for m in history(state, key())] == [pid]  # once, not twice


def test_a_reply_being_streamed_is_taken_when_whole(state: StateDir, agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("explain the cache")])
    mid, [pid] = agent.message("assistant", [text("The ca")], completed=False)
    sync(state)
    assert len(history(state, key())) == 1
    agent.conn.execute("UPDATE part SET data = ? WHERE id = ?",
                       (json.dumps(text("The cache keeps prices warm")), pid))
    agent.complete(mid)
    report = sync(state)
    assert report.messages == 1
    assert history(state, key())[-1]["content"][0]["text"] == "The cache keeps prices warm"


def test_a_session_deleted_in_opencode_stays(state: StateDir, agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("remember the walrus")])
    sync(state)
    agent.conn.execute("DELETE FROM part")
    agent.conn.execute("DELETE FROM message")
    agent.conn.execute("DELETE FROM session")
    report = sync(state)
    assert report.problems == []
    assert hits(state, "walrus") and len(history(state, key())) == 1


def test_malformed_data_is_one_sentence_and_the_rest_kept(state: StateDir,
                                                          agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("good words here"), {"_raw": "{not json"}])
    agent.message("user", [text("ignored")], raw="[broken")
    agent.message("assistant", [text("still answered")])
    report = sync(state)
    assert len(report.problems) == 2
    assert "is not a JSON object" in report.problems[0]
    assert [m["content"][0]["text"] for m in history(state, key())] == [
        "good words here", "still answered"]
    agent.message("user", [text("later")])
    assert sync(state).problems == []  # said once


def test_reasoning_tools_and_synthetic_text_are_not_indexed(state: StateDir,
                                                            agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("list the files"),
                           text("contextzebra from a file read", synthetic=True)])
    agent.message("assistant", [
        {"type": "step-start"},
        {"type": "reasoning", "text": "thinkingokapi about it", "time": {"start": T0}},
        {"type": "tool", "callID": "call_1", "tool": "bash",
         "state": {"status": "completed", "input": {"command": "ls"},
                   "output": "toolpangolin.txt", "title": "ls", "metadata": {},
                   "time": {"start": T0, "end": T0 + 1}}},
        text("there is one file"),
        {"type": "step-finish", "reason": "stop", "cost": 0,
         "tokens": {"input": 1, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}}},
    ])
    sync(state)
    tools_not_indexed(state, key(), "file", hidden=("contextzebra",))


def _step(n: int, cost: float) -> dict[str, Any]:
    return {"type": "step-finish", "reason": "tool-calls", "cost": cost,
            "tokens": {"input": 100 * n, "output": 10 * n, "reasoning": n,
                       "cache": {"read": 1000 * n, "write": 50 * n}}}


def test_each_step_carries_its_usage_once(state: StateDir, agent: Agent) -> None:
    """OpenCode ends each model call (a step) with a step-finish part holding its tokens and
    cost; the message's own tokens are the last step's only. Each step's usage goes on its
    last assistant entry; a step that wrote none gets an empty assistant message."""
    agent.session()
    agent.message("user", [text("list the files")])
    _mid, pids = agent.message("assistant", [
        {"type": "step-start"},
        {"type": "reasoning", "text": "look first", "time": {"start": T0}},
        {"type": "tool", "callID": "call_1", "tool": "bash",
         "state": {"status": "completed", "input": {"command": "ls"}, "output": "a.txt",
                   "title": "ls", "metadata": {}, "time": {"start": T0, "end": T0 + 1}}},
        _step(1, 0.25),
        {"type": "step-start"},
        _step(2, 0.5),  # a call that wrote nothing
        {"type": "step-start"},
        text("there is one file"),
        _step(3, 0.125),
    ])
    sync(state)
    with state.open("opencode") as db:
        [session] = db.sessions()
        messages = [(e["id"], e["message"]) for _, e in db.events(session.pk)
                    if "usage" in e.get("message", {})]
    assert [i for i, _ in messages] == [pids[2], f"{pids[5]}:usage", pids[7]]
    assert messages[0][1]["content"][0]["type"] == "toolCall"
    assert messages[1][1]["content"] == []
    assert messages[0][1]["usage"] == {
        "input": 100, "output": 11, "cacheRead": 1000, "cacheWrite": 50, "totalTokens": 1161,
        "cost": {"total": 0.25}}
    assert [m["usage"]["cost"]["total"] for _, m in messages] == [0.25, 0.5, 0.125]
    assert {(m["model"], m["provider"]) for _, m in messages} == {
        ("claude-sonnet-4", "anthropic")}


def test_a_message_without_steps_carries_its_own_usage(state: StateDir, agent: Agent) -> None:
    agent.session()
    agent.message("assistant", [text("rounding happens per line item")])
    sync(state)
    [message] = [m for m in history_messages(state) if "usage" in m]
    assert message["usage"] == {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0,
                                "totalTokens": 3, "cost": {"total": 0}}


def history_messages(state: StateDir) -> list[dict[str, Any]]:
    with state.open("opencode") as db:
        [session] = db.sessions()
        return [e["message"] for _, e in db.events(session.pk) if "message" in e]


def test_non_ascii_text(state: StateDir, agent: Agent) -> None:
    agent.session(title="Прайс-лист 価格")
    agent.message("user", [text("почему цена 価格 неверна 🙂")])
    sync(state)
    assert hits(state, "цена")
    assert history(state, key())[0]["content"][0]["text"] == "почему цена 価格 неверна 🙂"


def test_kilo_is_found_at_its_own_path(state: StateDir, data_home: Path) -> None:
    kilo = Agent(data_home / "kilo" / "kilo.db")
    try:
        kilo.session()
        kilo.message("user", [text("kilo remembers the harbour")])
        assert {(s.kind, str(s.path)) for s in all_sources(state.path)} == {
            ("kilo", str(data_home / "kilo"))}
        assert sync(state).problems == []
        assert hits(state, "harbour") == [(key(agent="kilo", source="kilo"), _id("prt", 100))]
        assert formats.get("kilo").label == "Kilo"
        by_source = {source: [r.session_key for r in sessions_search(
            state, SearchRequest(query="harbour", source=source), OPERATOR).results]
            for source in ("kilo", "opencode")}
        assert by_source == {"kilo": [key(agent="kilo", source="kilo")], "opencode": []}
    finally:
        kilo.conn.close()


def test_an_unknown_schema_is_one_sentence(state: StateDir, data_home: Path) -> None:
    path = data_home / "opencode" / "opencode.db"
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE session (id TEXT)")
    conn.close()
    report = sync(state)
    [problem] = report.problems
    assert "no table 'message'" in problem or "no column" in problem


def test_a_write_only_in_the_wal_is_a_change(state: StateDir, agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("one")])
    sync(state)
    db_stat = agent.path.stat()
    agent.message("user", [text("two")])
    assert agent.path.stat().st_size == db_stat.st_size  # only the -wal grew
    wal = Path(f"{agent.path}-wal")
    assert _transcript_change(None, str(wal)) and _transcript_change(None, str(agent.path))
    assert not _transcript_change(None, str(agent.path.parent / "opencode.db-shm"))
    assert combined_stat(str(agent.path), agent.path.stat()).st_size == (
        agent.path.stat().st_size + wal.stat().st_size)
    assert sync(state).messages == 1


def test_resume_command_takes_opencode_ids_only() -> None:
    assert resume_command("opencode", True, SID, PROJECT).command == (
        f"cd {PROJECT} && opencode --session {SID}")
    assert resume_command("kilo", True, SID, PROJECT).command == (
        f"cd {PROJECT} && kilo --session {SID}")
    assert resume_command("opencode", True, "-s ses_x", PROJECT).command is None
    assert resume_command("opencode", True, "0e6f0f2c-7c54-4a4e-9a41-5c3d3d1f6a10",
                          PROJECT).command is None


class Tree:
    """OpenCode's older JSON storage tree (before 1.2; anomalyco/opencode
    ``packages/opencode/src/storage/storage.ts`` then): one file per session, message, part,
    each holding its ids too, rewritten whole."""

    def __init__(self, storage: Path) -> None:
        self.storage = storage
        self.n = 0

    def write(self, *where: str, value: dict[str, Any]) -> Path:
        file = self.storage.joinpath(*where[:-1]) / f"{where[-1]}.json"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
        return file

    def session(self, sid: str = SID, title: str = "Old session") -> None:
        self.write("session", "p1", sid, value={
            "id": sid, "projectID": "p1", "directory": PROJECT, "title": title,
            "version": "0.9.0", "time": {"created": T0, "updated": T0}})

    def message(self, role: str, words: str, sid: str = SID) -> tuple[str, str]:
        self.n += 1
        mid, pid = _id("msg", self.n), _id("prt", self.n * 100)
        when = T0 + self.n * 1000
        info: dict[str, Any] = {"id": mid, "sessionID": sid, "role": role,
                                "time": {"created": when, "completed": when + 1}}
        if role == "assistant":
            info.update(modelID="gpt-5", providerID="openai")
        self.write("message", sid, mid, value=info)
        self.write("part", mid, pid, value={"id": pid, "sessionID": sid, "messageID": mid,
                                            **text(words)})
        return mid, pid


def test_the_older_json_tree_is_read_and_followed(state: StateDir, data_home: Path) -> None:
    tree = Tree(data_home / "opencode" / "storage")
    tree.session()
    tree.message("user", "where is the legacy invoice")
    _mid, pid = tree.message("assistant", "in the archive folder")
    first = sync(state)
    assert first.problems == [] and first.messages == 2
    assert hits(state, "invoice") and len(history(state, key())) == 2
    assert sync(state).read == 0  # unchanged: walked, not read
    mid3, pid3 = tree.message("user", "and the receipts")
    assert sync(state).messages == 1
    assert hits(state, "receipts") == [(key(), pid3)]
    tree.write("part", _id("msg", 2), pid, value={"id": pid, **text("rewritten whole")})
    assert sync(state).events == 0  # matched by id
    assert len(history(state, key())) == 3


def test_the_tree_and_the_database_holding_the_same_session_count_once(
        state: StateDir, agent: Agent, data_home: Path) -> None:
    tree = Tree(data_home / "opencode" / "storage")
    tree.session()
    _mid, pid = tree.message("user", "migrated walrus words")
    agent.session()  # the migration copies ids as they are
    mid = _id("msg", 1)
    agent.conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (
        mid, SID, T0 + 1000, T0 + 1000,
        json.dumps({"role": "user", "time": {"created": T0 + 1000}})))
    agent.conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (
        pid, mid, SID, T0 + 1000, T0 + 1000, json.dumps(text("migrated walrus words"))))
    report = sync(state)
    assert report.problems == []
    assert hits(state, "walrus") == [(key(), pid)]
    assert len(history(state, key())) == 1


def test_import_command_reads_the_folder(state: StateDir, agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("imported by hand")])
    report = formats.get("opencode").doors.import_into(state, agent.path.parent, None)
    assert report.skipped == [] and report.sessions == 1
    reconcile_all(state)
    assert hits(state, "hand")


def test_a_closed_agents_database_gets_no_files_beside_it(state: StateDir, agent: Agent) -> None:
    agent.session()
    agent.message("user", [text("closed for the night")])
    agent.conn.close()  # the last connection checkpoints and removes the -wal and -shm
    assert sorted(p.name for p in agent.path.parent.iterdir()) == ["opencode.db"]
    assert sync(state).messages == 1
    assert sorted(p.name for p in agent.path.parent.iterdir()) == ["opencode.db"]
    assert hits(state, "night")


def test_a_session_deleted_in_backscroll_is_not_taken_in_again(state: StateDir,
                                                               agent: Agent) -> None:
    from backscroll.core.ingest import delete_session

    agent.session()
    agent.session(SID2, title="other")
    agent.message("user", [text("forget this walrus")])
    agent.message("user", [text("keep this heron")], sid=SID2)
    sync(state)
    delete_session(state, key())
    agent.message("assistant", [text("walrus again")])
    agent.message("user", [text("heron again")], sid=SID2)
    report = sync(state)
    assert report.problems == [] and report.messages == 1
    assert hits(state, "walrus") == []
    assert len(history(state, key(SID2))) == 2


def test_a_locked_database_is_one_sentence_and_retried(state: StateDir, agent: Agent,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    agent.session()
    agent.message("user", [text("behind a lock")])
    [problem], after = sync_locked(state, agent.conn, "UPDATE session SET title = 'locked'",
                                   monkeypatch)
    assert "busy or cannot be opened now" in problem and "read again at the next sync" in problem
    assert after == []  # unchanged since, yet read: its state was not saved
    assert hits(state, "lock")


def test_a_file_that_is_not_yet_a_database_is_retried(state: StateDir, data_home: Path) -> None:
    path = data_home / "opencode" / "opencode.db"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 50)  # a header, half-written
    [problem] = sync(state).problems
    assert str(path) in problem and "next sync" in problem
    path.unlink()
    agent = Agent(path)
    try:
        agent.session()
        agent.message("user", [text("written at last")])
        assert sync(state).problems == []
        assert hits(state, "last")
    finally:
        agent.conn.close()


def _toy_store(db, path: Path, watermark, agent: str, report) -> dict[str, Any]:
    from backscroll.core.importers.common import store_converted

    sessions, after = reading_module.read_new(path, watermark, agent, report, "dbtoy")
    for one in sessions:
        store_converted(db, one.meta, one.events, report, path, live=watermark is not None)
    return after


def _toy_locate(root: Path) -> list[tuple[Path, str | None]]:
    return [(p, p.parent.parent.name) for p in sorted(root.glob("agents/*/agent/toy.sqlite"))]


def _toy_doors():
    from backscroll.core.importers.format import Database, Doors

    return Doors(import_path=lambda *a, **k: None, follow=lambda *a: None,
                 transcript=lambda name: name.endswith(".jsonl"),
                 database=Database(("toy.sqlite",), locate=_toy_locate, store=_toy_store))


def __getattr__(name: str) -> Any:  # the toy format's DOORS (Format.code is this module)
    if name == "DOORS":
        return _toy_doors()
    raise AttributeError(name)


def test_a_format_can_locate_its_databases_and_store_them_itself(
        state: StateDir, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SQLite source kind as a format with per-agent databases (as OpenClaw's store
    under ``agents/<id>/agent/``) that stores what it reads through its own path."""
    toy = formats.Format("dbtoy", "DB toy", "dbtoy", __name__, "DBTOY_HOME", ".dbtoy",
                         stored=("dbtoy",))
    monkeypatch.setattr(formats, "FORMATS", [*formats.FORMATS, toy])
    monkeypatch.delenv("DBTOY_HOME", raising=False)
    db = Agent(Path.home() / ".dbtoy" / "agents" / "helper" / "agent" / "toy.sqlite")
    try:
        db.session()
        db.message("user", [text("located somewhere deeper")])
        first = sync(state)
        assert first.problems == [] and first.messages == 1
        assert hits(state, "deeper") == [(key(agent="helper", source="dbtoy"), _id("prt", 100))]
        assert _transcript_change(None, f"{db.path}-wal")
        db.message("user", [text("and more")])
        assert sync(state).messages == 1
        assert sync(state).read == 0
    finally:
        db.conn.close()
