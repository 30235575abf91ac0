"""Reading OpenClaw's SQLite transcript store (core/importers/openclaw/store.py).

The stores are built here from the tables a reader uses, as OpenClaw's
``src/state/openclaw-agent-schema.sql`` defines them (agent schema 24: ``schema_meta``,
``session_nodes``, ``session_windows`` verbatim in their columns; ``transcript_events`` with the
v23 payload columns ``event_zstd``, ``event_utf8_bytes``, ``navigation_json`` of
``src/config/sessions/transcript-payload.ts``; ``session_transcript_cold_archives`` of v20).
The real file's ``octet_length()`` CHECKs (SQLite 3.43+) are left out: SQLite here is 3.40.
Cold archives are the envelope of ``session-cold-storage-codec.ts``, named by the SHA-256 of
the compressed bytes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import zstandard

from backscroll.core.errors import ValidationError
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.importers.common import ImportReport
from backscroll.core.importers.openclaw.store import (
    Mark,
    find_stores,
    import_store,
    read_store_file,
    state_dirs,
)
from backscroll.core.reconcile import reconcile_all
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR

from .sqlite_formats import wal_writer

pytestmark = pytest.mark.backends

SCHEMA = """
CREATE TABLE schema_meta (meta_key TEXT NOT NULL PRIMARY KEY, role TEXT NOT NULL,
  schema_version INTEGER NOT NULL, agent_id TEXT, app_version TEXT,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL) STRICT;
CREATE TABLE session_nodes (session_key TEXT NOT NULL PRIMARY KEY,
  current_session_id TEXT NOT NULL, entry_json TEXT NOT NULL,
  entry_valid INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL, status TEXT,
  created_at INTEGER, created_via TEXT, project_id TEXT, parent_session_key TEXT,
  spawned_by TEXT, fork_source_session_key TEXT, fork_source_session_id TEXT,
  fork_source_entry_id TEXT, label TEXT, display_name TEXT, pinned_at INTEGER,
  archived_at INTEGER, last_activity_at INTEGER) STRICT;
CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY,
  session_key TEXT NOT NULL, previous_session_id TEXT,
  reason TEXT CHECK (reason IS NULL OR reason IN ('initial', 'reset', 'rollover', 'fork',
    'rewind', 'switch', 'recovery', 'compaction')),
  session_scope TEXT NOT NULL DEFAULT 'conversation', created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, transcript_updated_at INTEGER DEFAULT NULL,
  started_at INTEGER, ended_at INTEGER, status TEXT, chat_type TEXT, channel TEXT,
  model_provider TEXT, model TEXT, parent_session_key TEXT, spawned_by TEXT,
  display_name TEXT) STRICT;
CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL,
  event_json TEXT, created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER,
  navigation_json TEXT, PRIMARY KEY (session_id, seq)) STRICT;
CREATE TABLE session_transcript_cold_archives (session_id TEXT NOT NULL PRIMARY KEY,
  generation TEXT NOT NULL, archive_name TEXT NOT NULL UNIQUE,
  archive_sha256 TEXT NOT NULL CHECK (length(archive_sha256) = 64),
  event_count INTEGER NOT NULL CHECK (event_count >= 1), raw_bytes INTEGER NOT NULL,
  archive_bytes INTEGER NOT NULL, last_seq INTEGER NOT NULL, archived_at INTEGER NOT NULL,
  storage TEXT NOT NULL CHECK (storage IN ('file', 'sqlite')), archive_blob BLOB,
  CHECK ((storage = 'file' AND archive_blob IS NULL) OR
         (storage = 'sqlite' AND archive_blob IS NOT NULL))) STRICT;
"""

T0 = 1_780_000_000_000


def header(sid: str, version: int = 4) -> dict:
    return {"type": "session", "version": version, "id": sid,
            "timestamp": "2026-06-01T10:00:00.000Z", "cwd": "/w"}


def message(mid: str, parent: str | None, role: str, text: str, **extra) -> dict:
    body = {"role": role, "content": [{"type": "text", "text": text}], **extra}
    return {"type": "message", "id": mid, "parentId": parent,
            "timestamp": "2026-06-01T10:00:01.000Z", "message": body}


class Store:
    """An agent store being written, as OpenClaw would (WAL mode)."""

    def __init__(self, root: Path, agent: str, version: int = 24) -> None:
        self.path = root / "agents" / agent / "agent" / "openclaw-agent.sqlite"
        self.con = wal_writer(self.path, SCHEMA, checkpoints=True)
        self.con.execute(f"PRAGMA user_version={version}")
        self.con.execute("INSERT INTO schema_meta VALUES ('primary','agent',?,?,'2026.9.6',0,0)",
                         (version, agent))

    def node(self, key: str, current: str, label: str | None = None, **cols) -> None:
        names = ", ".join(["session_key", "current_session_id", "entry_json", "updated_at",
                           "label", *cols])
        values = [key, current, json.dumps({"sessionId": current}), T0, label, *cols.values()]
        self.con.execute(f"INSERT INTO session_nodes ({names}) VALUES "
                         f"({', '.join('?' * len(values))})", values)

    def window(self, sid: str, key: str, reason: str = "initial", at: int = T0,
               previous: str | None = None) -> None:
        self.con.execute("INSERT INTO session_windows (session_id, session_key, reason, "
                         "previous_session_id, created_at, updated_at, transcript_updated_at, "
                         "ended_at) VALUES (?,?,?,?,?,?,?,?)",
                         (sid, key, reason, previous, at, at, at, at))

    def events(self, sid: str, events: list[dict], compress: bool = False, start: int = 1) -> None:
        for seq, event in enumerate(events, start):
            text = json.dumps(event)
            if compress and event["type"] != "session":
                frame = zstandard.ZstdCompressor(level=1, write_checksum=True).compress(text.encode())
                self.raw(sid, seq, None, frame, len(text.encode()))
            else:
                self.raw(sid, seq, text, None, len(text.encode()))
        self.touch(sid)

    def raw(self, sid: str, seq: int, text: str | None, frame: bytes | None, size: int | None):
        self.con.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at,"
                         " event_zstd, event_utf8_bytes) VALUES (?,?,?,?,?,?)",
                         (sid, seq, text, T0, frame, size))

    def touch(self, sid: str) -> None:
        self.con.execute("UPDATE session_windows SET transcript_updated_at = "
                         "coalesce(transcript_updated_at, 0) + 1 WHERE session_id=?", (sid,))

    def make_cold(self, sid: str, generation: str = "g1", storage: str = "file") -> str:
        """Move a window's events into a cold archive, as the cold-storage worker does."""
        rows = self.con.execute("SELECT seq, event_json, created_at FROM transcript_events "
                                "WHERE session_id=? ORDER BY seq", (sid,)).fetchall()
        lines = [json.dumps({"kind": "header", "version": 1, "sessionId": sid,
                             "generation": generation})]
        lines += [json.dumps({"kind": "event", "row": {"seq": s, "event_json": j,
                                                       "created_at": c}}) for s, j, c in rows]
        lines.append(json.dumps({"kind": "identity", "row": {}}))
        compressor = zstandard.ZstdCompressor(level=1)
        chunks = compressor.compressobj()  # a stream: no content size in the frame
        data = chunks.compress("\n".join(lines).encode() + b"\n") + chunks.flush()
        sha = hashlib.sha256(data).hexdigest()
        name = f"{sha}.jsonl.zst"
        raw_bytes = sum(len(j.encode()) for _, j, _ in rows) + len(rows) - 1
        blob = None
        if storage == "file":
            cold = self.path.parent.parent / "sessions" / "cold"
            cold.mkdir(parents=True, exist_ok=True)
            (cold / name).write_bytes(data)
        else:
            blob = data
        self.con.execute("BEGIN IMMEDIATE")
        self.con.execute("INSERT INTO session_transcript_cold_archives VALUES "
                         "(?,?,?,?,?,?,?,?,?,?,?)", (sid, generation, name, sha, len(rows),
                                                    raw_bytes, len(data), rows[-1][0], T0,
                                                    storage, blob))
        self.con.execute("DELETE FROM transcript_events WHERE session_id=?", (sid,))
        self.con.execute("COMMIT")
        return sha


def keys_of(state: StateDir, agent: str) -> dict[str, str | None]:
    with state.open(agent) as db:
        return {s.key: s.label for s in db.sessions()}


def found(state: StateDir, text: str) -> set[str]:
    response = sessions_search(state, SearchRequest(text, limit=25), OPERATOR)
    return {r.session_key for r in response.results}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def main(home: Path) -> Store:
    """Agent main: a node with an older reset window, a fork window, zstd events and a
    spawned subagent; agent ops: one plain session."""
    root = home / ".openclaw"
    store = Store(root, "main")
    store.node("agent:main:main", "s-now", label="Daily chat")
    store.window("s-old", "agent:main:main", "initial", T0 - 50_000)
    store.events("s-old", [header("s-old", 3), message("o1", None, "user", "quartz before reset")])
    store.window("s-fork", "agent:main:main", "fork", T0 - 20_000, previous="s-old")
    store.events("s-fork", [header("s-fork"), message("f1", None, "user", "walnut in a fork")])
    store.window("s-now", "agent:main:main", "reset", T0, previous="s-fork")
    long = "heron " + "lorem ipsum " * 200  # compressible, over 1 KiB
    store.events("s-now", [
        header("s-now"),
        message("n1", None, "user", "Current time: Friday", runtimeContext={"retained": True}),
        message("n2", "n1", "user", long),
        message("n3", "n2", "assistant", "osprey answer",
                usage={"input": 12, "output": 3, "cost": {"total": 0.01}}),
    ], compress=True)
    store.node("agent:main:subagent:kid", "s-kid", label="helper",
               spawned_by="agent:main:main")
    store.window("s-kid", "agent:main:subagent:kid")
    store.events("s-kid", [header("s-kid"), message("k1", None, "user", "plover subtask")])
    ops = Store(root, "ops")
    ops.node("agent:ops:main", "s-ops")
    ops.window("s-ops", "agent:ops:main")
    ops.events("s-ops", [header("s-ops"), message("p1", None, "user", "bittern ops")])
    ops.con.close()
    return store


def test_stores_are_found_where_openclaw_puts_them(home: Path, main: Store) -> None:
    (home / ".openclaw-work" / "agents" / "x" / "agent").mkdir(parents=True)
    (home / ".clawdbot").mkdir()
    assert state_dirs({}, home) == [home / ".openclaw", home / ".openclaw-work",
                                    home / ".clawdbot"]
    assert state_dirs({"OPENCLAW_STATE_DIR": "/else"}, home) == [Path("/else")]
    assert [a for a, _ in find_stores(home / ".openclaw")] == ["main", "ops"]
    assert find_stores(home / ".openclaw")[0][1] == main.path


def test_windows_become_sessions_as_jsonl_resets_do(state: StateDir, main: Store) -> None:
    report, marks = import_store(state, main.path)
    assert not report.skipped, report.skipped
    labels = keys_of(state, "main")
    assert labels["agent:main:main"] == "Daily chat"
    assert labels["agent:main:reset:s-old"].startswith("reset archive of s-old (")
    assert labels["agent:main:reset:s-fork"].startswith("reset archive of s-fork (")
    with state.open("main") as db:
        kid = db.session("agent:main:subagent:kid")
        assert kid is not None and kid.spawned_by == "agent:main:main"
        now = db.session("agent:main:main")
        assert now is not None and now.session_id == "s-now"
        events = [e for _, e in db.events(now.pk)]
    assert events[0]["version"] == 4
    assert events[-1]["message"]["usage"] == {"input": 12, "output": 3, "cost": {"total": 0.01}}
    assert marks["s-now"].seq == 4 and marks["s-kid"].seq == 2
    reconcile_all(state)
    assert found(state, "heron") == {"agent:main:main"}  # the zstd event
    assert found(state, "walnut") == {"agent:main:reset:s-fork"}
    assert found(state, "plover") == {"agent:main:subagent:kid"}
    report, _ = import_store(state, main.path.parents[2] / "ops" / "agent" / main.path.name)
    reconcile_all(state)
    assert found(state, "bittern") == {"agent:ops:main"}


def test_runtime_context_is_shown_as_context_never_indexed(state: StateDir, main: Store) -> None:
    import_store(state, main.path)
    reconcile_all(state)
    assert found(state, "Friday") == set()
    history = sessions_history(state, HistoryRequest("agent:main:main"), OPERATOR).as_json()
    shown = {m["id"]: m for m in history["messages"]}
    assert shown["n1"].get("context") is True
    assert "context" not in shown["n2"]


def test_damaged_frames_are_reported_and_skipped(state: StateDir, main: Store) -> None:
    good = json.dumps(message("n4", "n3", "user", "grebe " * 300)).encode()
    frame = zstandard.ZstdCompressor().compress(good)
    main.raw("s-now", 5, None, frame, len(good) + 7)  # wrong length
    main.raw("s-now", 6, None, b"\x28\xb5\x2f\xfdgarbage", 40)  # not zstd
    main.raw("s-now", 7, None, frame, len(good))  # fine
    main.touch("s-now")
    report, marks = import_store(state, main.path)
    bad = [s for s in report.skipped if "#s-now:" in s]
    assert [s.split("#s-now:")[1].split(":")[0] for s in bad] == ["5", "6"]
    assert "not the" in bad[0] and "zstd" in bad[1]
    assert marks["s-now"].seq == 7
    with state.open("main") as db:
        ids = [e.get("id") for _, e in db.events(db.session("agent:main:main").pk)]
    assert ids[-2:] == ["n3", "n4"]


def test_an_unknown_version_is_refused_in_one_sentence(tmp_path: Path, state: StateDir) -> None:
    store = Store(tmp_path, "main", version=31)
    with pytest.raises(ValidationError) as err:
        import_store(state, store.path)
    assert "schema version 31 is not one backscroll reads (it reads 20 to 24)" in str(err.value)
    assert str(err.value).count(". ") == 0


def test_incremental_read_takes_only_new_events(state: StateDir, main: Store) -> None:
    _, marks = import_store(state, main.path)
    report, again = import_store(state, main.path, marks)
    assert report.sessions == 0 and again == marks  # nothing changed: nothing read
    main.events("s-now", [message("n5", "n3", "user", "avocet later")], start=5)
    read = read_store_file(main.path, ImportReport(), marks)
    assert [(w.session_id, [s for s, _ in w.lines]) for w in read.windows if w.lines] == \
        [("s-now", [5])]
    _, marks = import_store(state, main.path, marks)
    assert marks["s-now"].seq == 5
    reconcile_all(state)
    assert found(state, "avocet") == {"agent:main:main"}
    assert Mark.of_json(json.loads(json.dumps(marks["s-now"].as_json()))) == marks["s-now"]


@pytest.mark.parametrize("storage", ["file", "sqlite"])
def test_cold_windows_are_read_once_and_lose_nothing(state: StateDir, main: Store,
                                                     storage: str) -> None:
    _, marks = import_store(state, main.path)  # hot first
    main.events("s-old", [message("o2", "o1", "assistant", "egret reply")], start=3)
    sha = main.make_cold("s-old", storage=storage)  # moved to cold between two reads
    main.make_cold("s-kid", storage=storage)
    report, marks = import_store(state, main.path, marks)
    assert not report.skipped, report.skipped
    assert marks["s-old"] == Mark(3, T0 - 50_000, marks["s-old"].transcript_updated_at, sha)
    with state.open("main") as db:
        old = [e.get("id") for _, e in db.events(db.session("agent:main:reset:s-old").pk)]
    assert old == ["s-old", "o1", "o2"]
    assert keys_of(state, "main")["agent:main:subagent:kid"] == "helper (archived)"
    reconcile_all(state)
    assert found(state, "quartz") == {"agent:main:reset:s-old"}
    assert found(state, "egret") == {"agent:main:reset:s-old"}
    again = read_store_file(main.path, ImportReport(), marks)
    assert all(not w.lines for w in again.windows)  # immutable: never read twice


def test_a_cold_archive_that_does_not_verify_is_not_read(state: StateDir, main: Store) -> None:
    sha = main.make_cold("s-old")
    archive = main.path.parent.parent / "sessions" / "cold" / f"{sha}.jsonl.zst"
    archive.write_bytes(archive.read_bytes()[:-1] + b"\0")
    report, marks = import_store(state, main.path)
    assert any("does not match its recorded length and SHA-256" in s for s in report.skipped)
    assert marks["s-old"] == Mark()  # read again next time
    archive.unlink()
    report, _ = import_store(state, main.path)
    assert any("cannot be read" in s for s in report.skipped)
    assert "agent:main:main" in keys_of(state, "main")  # the other windows were stored


@pytest.mark.sqlite_only
def test_a_writer_holding_the_store_open_sees_nothing_written(state: StateDir,
                                                               main: Store) -> None:
    main.con.execute("BEGIN IMMEDIATE")  # a write transaction open during the read
    main.con.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at) "
                     "VALUES ('s-kid', 9, '{}', 0)")
    files = [main.path, Path(f"{main.path}-wal"), Path(f"{main.path}-shm")]
    before = [(p.read_bytes(), p.stat().st_mtime_ns) for p in files]
    assert len(before[1][0]) > 0  # the events are in the -wal, not checkpointed
    report, marks = import_store(state, main.path)
    assert not report.skipped and marks["s-now"].seq == 4
    assert marks["s-kid"].seq == 2  # the open transaction is not seen
    after = [(p.read_bytes(), p.stat().st_mtime_ns) for p in files]
    assert after[:2] == before[:2]
    main.con.execute("ROLLBACK")


def test_a_leaf_control_moves_the_active_branch(state: StateDir, main: Store) -> None:
    """``{"type":"leaf","targetId"}`` (session-manager-types.ts) makes its target the active
    leaf; later rows continue from it, so the abandoned turn is no longer shown."""
    main.events("s-kid", [
        message("k2", "k1", "assistant", "first try"),
        {"type": "leaf", "id": "L1", "parentId": "k2", "timestamp": "2026-06-01T10:00:02.000Z",
         "targetId": "k1"},
        message("k3", "k1", "assistant", "second try"),
    ], start=3)
    import_store(state, main.path)
    history = sessions_history(state, HistoryRequest("agent:main:subagent:kid"), OPERATOR)
    assert [m["id"] for m in history.as_json()["messages"]] == ["k1", "k3"]
