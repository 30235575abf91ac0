"""Deleted means gone: after ``backscroll delete``, no word of the session is left in the raw
bytes of the database, its WAL or its SHM file (index segments merged, freed pages zeroed,
the log checkpointed and truncated)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backscroll.core.ingest import delete_session
from backscroll.core.reconcile import reconcile_all
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.storage.sqlite.writes import Writes
from backscroll.core.verify import verify_state
from backscroll.core.visibility import OPERATOR
from backscroll.tui.cli import main

from .events import header, lines, msg

SECRET_WORDS = (b"quetzalcoatlus", b"zyxwvutsrq", b"Hoatzin-Label")


def fill(state: StateDir) -> None:
    """Fifty ordinary sessions, a doomed one (live and imported parts, a label, a rebuild),
    and their index; the doomed words were indexed, re-indexed and merged before the delete."""
    with state.open("main", write=True) as db:
        for s in range(50):
            meta = SessionMeta(f"agent:main:s{s}")
            for i in range(10):
                db.append(meta, json.dumps(msg(f"m{i}", f"m{i - 1}" if i else None, "user",
                                               f"ordinary words {i} of session {s} about herons")))
        doomed = SessionMeta("agent:main:doomed", session_id="doomed", label="Hoatzin-Label")
        db.import_session(doomed, lines(header("doomed"), *[
            msg(f"d{i}", f"d{i - 1}" if i else None, "user", f"the quetzalcoatlus zyxwvutsrq {i}")
            for i in range(30)
        ]))
    reconcile_all(state)
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:doomed"), json.dumps(
            {"type": "leaf", "targetId": "d10"}))  # a rebuild replaces its rows
    reconcile_all(state)
    assert len(sessions_search(state, SearchRequest("quetzalcoatlus"), OPERATOR).results) == 10


def raw_hits(state: StateDir) -> dict[str, int]:
    path = state.db_path("main")
    found = {}
    for suffix in ("", "-wal", "-shm"):
        file = Path(f"{path}{suffix}")
        data = file.read_bytes() if file.exists() else b""
        found[suffix or "db"] = sum(data.count(word) for word in SECRET_WORDS)
    return found


def test_a_deleted_session_leaves_no_word_in_the_files(state: StateDir, capsys) -> None:
    fill(state)
    with state.open("main") as reader:  # another process reading at the same time
        reader.sessions()
        assert sum(raw_hits(state).values()) > 0
        assert main(["--state-dir", str(state.path), "delete", "agent:main:doomed"]) == 0
        assert raw_hits(state) == {"db": 0, "-wal": 0, "-shm": 0}
    assert sessions_search(state, SearchRequest("quetzalcoatlus"), OPERATOR).results == []
    assert len(sessions_search(state, SearchRequest("herons", limit=25), OPERATOR).results) == 25
    assert verify_state(state).ok
    capsys.readouterr()


@pytest.mark.slow
def test_a_purge_interrupted_or_blocked_is_finished_by_the_next_pass(
    state: StateDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(state)
    real = Writes.purge
    monkeypatch.setattr(Writes, "purge", lambda self, only_if_pending=False: True)  # "killed"
    delete_session(state, "agent:main:doomed")
    assert raw_hits(state)["db"] + raw_hits(state)["-wal"] > 0  # still in old index segments
    monkeypatch.setattr(Writes, "purge", real)
    with state.open("main") as reader, reader.snapshot():  # a reader holds the log
        reader.sessions()
        reconcile_all(state)
    reconcile_all(state)  # the log could not be truncated then; now it is
    assert raw_hits(state) == {"db": 0, "-wal": 0, "-shm": 0}
    assert verify_state(state).ok


def test_a_delete_a_reader_blocks_says_the_purge_is_pending_and_the_next_pass_ends_it(
    state: StateDir, capsys
) -> None:
    """A reader holding a read transaction keeps the log: `delete` tries again briefly, then
    says the words wait in the file and its WAL until the next delete or reconciliation pass,
    instead of "gone"; that pass, once the reader is done, leaves no word in the files."""
    fill(state)
    with state.open("main") as reader, reader.snapshot():
        reader.sessions()
        assert main(["--state-dir", str(state.path), "delete", "agent:main:doomed",
                     "--json"]) == 0
        answer = json.loads(capsys.readouterr().out)
        assert answer["deleted"] == "agent:main:doomed" and answer["purgePending"] is True
        assert "a purge is pending" in answer["remains"][0]
        assert "sessions.sqlite-wal" in answer["remains"][0]
        assert raw_hits(state)["-wal"] > 0
        assert main(["--state-dir", str(state.path), "delete", "agent:main:s1"]) == 0
        text = " ".join(capsys.readouterr().out.split())
        assert "deleted agent:main:s1" in text and "a purge is pending" in text
    assert sessions_search(state, SearchRequest("quetzalcoatlus"), OPERATOR).results == []
    reconcile_all(state)  # the next pass, the reader gone
    assert raw_hits(state) == {"db": 0, "-wal": 0, "-shm": 0}
    assert main(["--state-dir", str(state.path), "delete", "agent:main:s2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "deleted": "agent:main:s2", "purgePending": False, "remains": []}
