from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from backscroll.core.errors import StoreError, ValidationError
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.indexer import ROWID_SHIFT
from backscroll.core.query import parse_query
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta, SessionScope
from backscroll.core.verify import verify_state

from .events import header, leaf, lines, msg

pytestmark = pytest.mark.backends

MAIN = SessionMeta("agent:main:main")


def fts_hits(state: StateDir, agent: str, word: str) -> list[str]:
    """Entry ids whose index rows match a word in any session, dirty or not (the storage's
    match with no session filter), oldest first."""
    with state.open(agent) as db:
        every = SessionScope(frozenset(db.session_pks()), frozenset())
        found = db.match(parse_query(word), every, 25, 25, "recent")
    return [row.entry_id for row in reversed(found.rows)]


def test_append_indexes_in_the_same_transaction(state: StateDir) -> None:
    db = state.open("main", write=True)
    outcomes = [
        db.append(MAIN, line).outcome
        for line in lines(
            header(),
            msg("u1", None, "user", "the deploy failed"),
            msg(
                "a1",
                "u1",
                "assistant",
                [
                    {"type": "text", "text": "rolling back the deploy"},
                    {"type": "thinking", "thinking": "hmm zebra"},
                ],
            ),
            msg("t1", "a1", "toolResult", [{"type": "text", "text": "deploy log giraffe"}]),
        )
    ]
    assert outcomes == ["stored", "indexed", "indexed", "stored"]
    assert fts_hits(state, "main", "deploy") == ["u1", "a1"]
    assert fts_hits(state, "main", "zebra") == []  # thinking excluded
    assert fts_hits(state, "main", "giraffe") == []  # tool result excluded
    assert verify_state(state).ok


def test_rowids_follow_message_time(state: StateDir) -> None:
    db = state.open("main", write=True)
    for line in lines(
        msg("b", None, "user", "later", ms=5000), msg("c", "b", "user", "same ms", ms=5000)
    ):
        db.append(MAIN, line)
    rows = db.index_rows(db.session("agent:main:main").pk)
    stamps = [(rowid >> ROWID_SHIFT, row.ts) for rowid, row in rows]
    assert all(a == b for a, b in stamps) and len({r for r, _ in rows}) == 2


def test_leaf_control_and_branch_switch_mark_dirty(state: StateDir) -> None:
    db = state.open("main", write=True)
    for line in lines(msg("r", None, "user", "root"), msg("a", "r", "assistant", "alpha")):
        assert db.append(MAIN, line).outcome == "indexed"
    assert db.append(MAIN, json.dumps(msg("b", "r", "assistant", "beta"))).outcome == "dirty"
    session = db.session("agent:main:main")
    assert session.state == "dirty" and not session.searchable

    other = SessionMeta("agent:main:other")
    db.append(other, json.dumps(msg("x", None, "user", "x")))
    assert db.append(other, json.dumps(leaf("l", None))).outcome == "dirty"


def test_side_entries_keep_the_session_clean(state: StateDir) -> None:
    db = state.open("main", write=True)
    db.append(MAIN, json.dumps(msg("r", None, "user", "root")))
    out = db.append(MAIN, json.dumps(msg("s", "r", "assistant", "mirror copy", appendMode="side")))
    assert out.outcome == "stored"
    assert db.append(MAIN, json.dumps(msg("n", "r", "assistant", "next"))).outcome == "indexed"
    assert db.session("agent:main:main").searchable
    assert fts_hits(state, "main", "mirror") == []
    assert verify_state(state).ok


def test_parentless_entries_extend_the_leaf(state: StateDir) -> None:
    db = state.open("main", write=True)
    flat = [
        {"type": "message", "id": str(i), "message": {"role": "user", "content": f"flat {i}"}}
        for i in range(3)
    ]
    assert [db.append(MAIN, json.dumps(e)).outcome for e in flat] == ["indexed"] * 3
    assert verify_state(state).ok


def test_delete_leaves_nothing_of_the_session(state: StateDir) -> None:
    db = state.open("main", write=True)
    db.append(MAIN, json.dumps(msg("a", None, "user", "walrus one")))
    db.append(SessionMeta("agent:main:keep"), json.dumps(msg("k", None, "user", "walrus two")))
    assert db.delete_session("agent:main:main")
    assert fts_hits(state, "main", "walrus") == ["k"]
    counts = db.counts()
    assert (counts["sessions"], counts["messages"], counts["indexed"]) == (1, 1, 1)
    assert db.orphan_index_rows() == (0, 0) and db.session("agent:main:main") is None
    assert db.delete_session("agent:main:main") is False
    assert verify_state(state).ok


@pytest.mark.sqlite_only
def test_delete_leaves_no_index_row(state: StateDir) -> None:
    db = state.open("main", write=True)
    keep = SessionMeta("agent:main:keep")
    db.append(MAIN, json.dumps(msg("a", None, "user", "walrus one")))
    db.append(keep, json.dumps(msg("k", None, "user", "walrus two")))
    assert db.delete_session("agent:main:main")
    assert fts_hits(state, "main", "walrus") == ["k"]
    counts = [
        db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for table in ("sessions", "events", "index_state", "message_index", "message_fts")
    ]
    assert counts == [1, 1, 1, 1, 1]
    assert db.delete_session("agent:main:main") is False
    assert verify_state(state).ok


def test_bad_keys_and_events_are_refused_and_nothing_is_stored(state: StateDir) -> None:
    db = state.open("main", write=True)
    with pytest.raises(ValidationError, match="not a session key"):
        db.append(SessionMeta("main"), json.dumps(msg("a", None, "user", "x")))
    with pytest.raises(ValidationError, match="not valid JSON"):
        db.append(MAIN, '{"type": "message", ')
    assert db.sessions() == []


@pytest.mark.sqlite_only
def test_newer_schema_is_refused_in_one_sentence(state: StateDir) -> None:
    state.open("main", write=True).close()
    conn = sqlite3.connect(state.db_path("main"))
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StoreError, match="newer backscroll"):
        state.open("main")


@pytest.mark.sqlite_only
def test_not_a_database_is_one_sentence(state: StateDir) -> None:
    path = state.db_path("main")
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a usable backscroll database"):
        state.open("main")


@pytest.mark.sqlite_only
def test_state_dir_that_is_a_file_is_one_sentence(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot create .*writable --state-dir"):
        StateDir(blocker / "state").open("main", write=True)


def without_root_powers(argv: list[str]) -> list[str]:
    """``argv`` run so that file modes bind: root ignores them, so as root the command runs
    without the capabilities that override them (still uid 0, the owner of the test's files)."""
    if os.geteuid() != 0:
        return argv
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv (util-linux): file modes do not bind")
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner", *argv]


@pytest.mark.sqlite_only
def test_unwritable_state_dir(tmp_path: Path) -> None:
    """A state dir that cannot be made: one sentence from the library and from the CLI
    (exit 1), and nothing made."""
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    state = str(locked / "state")
    library = (
        "import sys\nfrom backscroll.core.errors import StoreError\n"
        "from backscroll.core.state import StateDir\n"
        "try:\n    StateDir(sys.argv[1]).open('main', write=True)\n"
        "except StoreError as err:\n    print(err)\n"
    )
    said = subprocess.run(without_root_powers([sys.executable, "-c", library, state]),
                          capture_output=True, text=True, timeout=60)
    assert said.returncode == 0 and "cannot create" in said.stdout, said
    event = json.dumps(msg("m", None, "user", "kept nowhere"))
    cli = subprocess.run(
        without_root_powers([sys.executable, "-m", "backscroll.tui.cli", "append",
                             "agent:main:main", "--state-dir", state]),
        input=event + "\n", capture_output=True, text=True, timeout=60,
    )
    assert cli.returncode == 1 and cli.stdout == "", cli
    assert cli.stderr.startswith("backscroll: ") and cli.stderr.count("\n") == 1, cli.stderr
    assert "cannot create" in cli.stderr and "Traceback" not in cli.stderr
    assert list(locked.iterdir()) == []


@pytest.mark.sqlite_only
def test_state_dir_is_private(state: StateDir) -> None:
    state.open("main", write=True).close()
    assert state.path.stat().st_mode & 0o777 == 0o700


def test_import_openclaw_keeps_keys_and_spawned_subagents(state: StateDir, data_dir: Path) -> None:
    report = import_openclaw(state, data_dir / "openclaw")
    assert report.skipped == []
    with state.open("chairong") as db:
        sessions = {s.key: s for s in db.sessions()}
        subagents = [s for s in sessions.values() if ":subagent:" in s.key]
        assert len(subagents) == 2
        assert {s.spawned_by for s in subagents} == {"agent:chairong:main"}
        assert "agent:chairong:main" in sessions  # store entry without a transcript kept
        group = sessions["agent:chairong:feishu:group:oc_cb25f688202b98fbb8a1d0682cf1246d"]
        assert group.last_seq == 8 and group.state == "dirty" and group.indexer_version == 0
        assert db.counts()["indexed"] == 0  # imported, not indexed
    again = import_openclaw(state, data_dir / "openclaw")
    assert again.events == 0
    with state.open("chairong") as db:
        assert len(db.sessions()) == len(sessions)


def test_import_reports_malformed_lines_and_keeps_the_rest(state: StateDir, tmp_path: Path) -> None:
    folder = tmp_path / "agents" / "ops" / "sessions"
    folder.mkdir(parents=True)
    good = lines(
        header("s-1"), msg("a", None, "user", "hello"), msg("b", "a", "assistant", "there")
    )
    (folder / "s-1.jsonl").write_text("\n".join([good[0], good[1], "{broken", "", good[2]]) + "\n")
    (folder / "sessions.json").write_text(json.dumps({"agent:ops:main": {"sessionId": "s-1"}}))
    report = import_openclaw(state, tmp_path)
    assert report.skipped == [
        f"{folder / 's-1.jsonl'}:3: not valid JSON (Expecting property name enclosed in double quotes)"
    ]
    with state.open("ops") as db:
        session = db.session("agent:ops:main")
        assert session.last_seq == 3


def test_import_of_missing_path_is_a_validation_error(state: StateDir, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="does not exist"):
        import_openclaw(state, tmp_path / "nope")


@pytest.mark.sqlite_only
def test_status_counts_read_indexes_not_every_event(state: StateDir, data_dir: Path) -> None:
    # The browser's status bar asks for these on every poll: at a million messages a scan of
    # the event log costs ~300 ms, the partial index of messages a few.
    import_openclaw(state, data_dir / "openclaw")
    with state.open("chairong") as db:
        counted = db.counts()["messages"]
        plan = db.conn.execute(
            "EXPLAIN QUERY PLAN SELECT count(*) FROM events WHERE kind = 'message'"
        ).fetchall()
        rows = db.conn.execute("SELECT body FROM events").fetchall()
    assert counted == sum(json.loads(body)["type"] == "message" for (body,) in rows) > 0
    assert "USING COVERING INDEX events_messages" in plan[0][-1]
