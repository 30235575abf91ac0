"""The bulk import path (docs/reconciliation.md#importing): a big OpenClaw import builds each
transcript's index as it reads it, and the storage publishes it with the events of a session
the import creates, in the transaction that stores them. What it leaves must be what an
import followed by reconciliation leaves, session by session, and a failure or a crash in
the middle must leave no session half visible and lose nothing."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from backscroll.core.demo.corpus import generate
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.reconcile import reconcile_all
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage.sqlite.claims import Claims
from backscroll.core.verify import verify_state
from backscroll.core.visibility import OPERATOR

from .conftest import DATA


def write_archive(folder: Path, messages: int, seed: int = 5, reverse: bool = False) -> None:
    """The demo generator's corpus as one OpenClaw sessions folder per agent; ``reverse``
    names the files so that sub-agents sort before their spawners."""
    stores: dict[str, dict] = {}
    for n, session in enumerate(generate(seed=seed, messages=messages, agents=2)):
        agent = session.key.split(":")[1]
        sessions = folder / "agents" / agent / "sessions"
        sessions.mkdir(parents=True, exist_ok=True)
        name = f"{10_000 - n if reverse else n:05d}-{session.session_id}"
        with open(sessions / f"{name}.jsonl", "w", encoding="utf-8") as out:
            for event in session.events:
                if event.get("type") == "session":
                    event = {**event, "id": name}
                out.write(json.dumps(event, ensure_ascii=False) + "\n")
        entry = {"sessionId": name, "updatedAt": session.created_at}
        if session.spawned_by:
            entry["spawnedBy"] = session.spawned_by
        stores.setdefault(agent, {})[session.key] = entry
    for agent, store in stores.items():
        (folder / "agents" / agent / "sessions" / "sessions.json").write_text(json.dumps(store))


def dump(state: StateDir) -> dict[str, object]:
    """Everything an index holds, by session key and entry id (rowids and pks aside: they
    are placed in the order rows are written)."""
    out: dict[str, object] = {}
    for agent in state.agents():
        conn = sqlite3.connect(state.db_path(agent))
        keys = dict(conn.execute("SELECT pk, key FROM sessions"))

        def tree(text: str) -> str:
            return " ".join(keys[int(pk)] for pk in text.split())

        out[agent] = {
            "sessions": sorted(conn.execute(
                "SELECT key, leaf_id, title, last_message_at, cwd, last_seq FROM sessions")),
            "state": sorted(
                (keys[r[0]], *r[1:6], tree(r[6]), r[7], r[8]) for r in conn.execute(
                    "SELECT session_pk, state, indexed_seq, indexed_leaf, indexer_version, "
                    "problems, tree, rows, chars FROM index_state")),
            "rows": sorted(
                (keys[r[0]], *r[1:5]) for r in conn.execute(
                    "SELECT m.session_pk, m.entry_id, m.role, m.ts, f.body FROM message_index m "
                    "JOIN message_fts f ON f.rowid = m.rowid")),
            "scopes": sorted(
                (keys[r[0]], " ".join(sorted(
                    keys[int(tag[1:])] + tag[0] for tag in r[1].split())))
                for r in conn.execute(
                    "SELECT m.session_pk, f.scope FROM message_index m "
                    "JOIN message_fts f ON f.rowid = m.rowid")),
            "branches": sorted(
                (keys[r[0]], *r[1:]) for r in conn.execute(
                    "SELECT session_pk, seq, entry_id, role, at FROM branch_messages")),
            "fts": conn.execute(
                "INSERT INTO message_fts (message_fts, rank) VALUES ('integrity-check', 1)"
            ).fetchall(),
        }
        conn.close()
    return out


def pending(state: StateDir) -> int:
    total = 0
    for agent in state.agents():
        with state.open(agent) as db:
            total += db.pending_count()[0]
    return total


def both_ways(tmp_path: Path, archive: Path) -> tuple[StateDir, StateDir]:
    """The archive imported in bulk and imported plainly, each then reconciled."""
    bulk, plain = StateDir(tmp_path / "bulk"), StateDir(tmp_path / "plain")
    import_openclaw(bulk, archive, read_ahead=True)
    import_openclaw(plain, archive)
    return bulk, plain


@pytest.mark.parametrize("reverse", [False, True])
def test_a_bulk_import_leaves_what_an_import_and_reconciliation_leave(
    tmp_path: Path, reverse: bool
) -> None:
    archive = tmp_path / "archive"
    write_archive(archive, 6000, reverse=reverse)  # several import groups
    bulk, plain = both_ways(tmp_path, archive)
    assert pending(plain) > 0
    # every session indexed by the import itself: spawners are read first whatever the
    # files' names (StoreView.in_link_order)
    assert pending(bulk) == 0
    reconcile_all(bulk)
    reconcile_all(plain)
    assert pending(bulk) == pending(plain) == 0
    assert dump(bulk) == dump(plain)
    assert verify_state(bulk).ok


def test_a_session_whose_links_name_a_session_not_stored_yet_waits_for_reconciliation(
    tmp_path: Path,
) -> None:
    """Its rows would name an incomplete tree (its spawner's tag missing), so it stays dirty
    and reconciliation, after the import, builds them; a session linked to one stored
    earlier in the import is indexed at once."""
    from backscroll.core.indexer import build_index
    from backscroll.core.storage import SessionMeta
    from backscroll.core.storage.sqlite.imports import IMPORT_GROUP_EVENTS

    def transcript(sid: str, n: int) -> tuple[list[str], list[dict]]:
        events = [{"type": "message", "id": f"{sid}-{i}", "parentId": f"{sid}-{i - 1}" if i else None,
                   "timestamp": "2026-03-01T10:00:00Z",
                   "message": {"role": "user", "content": f"heron {i}"}} for i in range(n)]
        return [json.dumps(e) for e in events], events

    def store(db, key: str, spawner: str | None, n: int) -> None:  # noqa: ANN001
        lines, events = transcript(key.rsplit(":", 1)[1], n)
        meta = SessionMeta(key, session_id=key.rsplit(":", 1)[1], spawned_by=spawner)
        db.import_session(meta, lines, events, build_index(enumerate(events, start=1), None))

    state = StateDir(tmp_path / "state")
    with state.open("main", write=True) as db, db.importing():
        store(db, "agent:main:child", "agent:main:spawner", IMPORT_GROUP_EVENTS)  # a group
        store(db, "agent:main:spawner", None, 3)
        store(db, "agent:main:grandchild", "agent:main:spawner", 3)
    with state.open("main") as db:
        states = {s.key: s.state for s in db.sessions()}
    assert states == {"agent:main:child": "dirty", "agent:main:spawner": "clean",
                      "agent:main:grandchild": "clean"}
    reconcile_all(state)
    (held,) = dump(state).values()
    trees = {key: tree for key, _state, _seq, _leaf, _v, _p, tree, _rows, _chars
             in held["state"]}
    assert trees["agent:main:child"] == "agent:main:child agent:main:spawner"
    assert verify_state(state).ok


def test_a_folder_imported_again_builds_no_index(tmp_path: Path, monkeypatch) -> None:
    """Its sessions are stored: building their index as they are read would be thrown away
    (the folder's new transcripts, if any, are reconciled as before)."""
    from backscroll.core.importers import openclaw

    archive = tmp_path / "archive"
    write_archive(archive, 300)
    state = StateDir(tmp_path / "state")
    built = []
    real = openclaw.build_index
    monkeypatch.setattr(openclaw, "build_index", lambda *a: built.append(1) or real(*a))
    import_openclaw(state, archive, read_ahead=True)  # (small: read in this process)
    first = len(built)
    assert first > 0 and pending(state) == 0
    import_openclaw(state, archive, read_ahead=True)
    assert len(built) == first


def test_real_transcripts_import_in_bulk_as_they_reconcile(tmp_path: Path) -> None:
    for folder in sorted((DATA / "openclaw").iterdir()):
        bulk, plain = both_ways(tmp_path / folder.name, folder)
        reconcile_all(bulk)
        reconcile_all(plain)
        assert dump(bulk) == dump(plain), folder.name
        assert verify_state(bulk).ok


def test_bulk_imported_sessions_are_searchable_before_any_reconciliation(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    write_archive(archive, 800)
    state = StateDir(tmp_path / "state")
    import_openclaw(state, archive, read_ahead=True)
    assert pending(state) == 0
    found = sessions_search(state, SearchRequest(query="the", limit=5), OPERATOR)
    assert len(found.results) == 5
    assert verify_state(state).ok


def test_a_session_the_import_does_not_create_is_left_to_reconciliation(tmp_path: Path) -> None:
    """Only a session created from the whole transcript is indexed by the import: new lines
    of a stored session, and a transcript with a message of no time (its row would take the
    session's creation time, known only where it is stored), make it dirty as before."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    transcript = folder / "s1.jsonl"
    header = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-02T03:04:05Z"}

    def message(n: int, at: str | None) -> dict:
        event = {"type": "message", "id": f"m{n}", "parentId": f"m{n - 1}" if n > 1 else None,
                 "message": {"role": "user", "content": f"word{n} kingfisher"}}
        return {**event, "timestamp": at} if at else event

    def write(events: list[dict]) -> None:
        transcript.write_text("".join(json.dumps(e) + "\n" for e in events))

    state = StateDir(tmp_path / "state")
    write([header, message(1, "2026-01-02T03:05:00Z")])
    import_openclaw(state, folder, read_ahead=True)
    assert pending(state) == 0
    write([header, message(1, "2026-01-02T03:05:00Z"), message(2, "2026-01-02T03:06:00Z")])
    import_openclaw(state, folder, read_ahead=True)
    assert pending(state) == 1
    reconcile_all(state)

    undated = StateDir(tmp_path / "undated")
    write([header, message(1, None)])
    import_openclaw(undated, folder, read_ahead=True)
    assert pending(undated) == 1
    reconcile_all(undated)
    (held,) = dump(undated).values()
    assert verify_state(undated).ok and len(held["rows"]) == 1


def test_a_failed_index_step_keeps_the_events_and_leaves_the_sessions_dirty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "archive"
    write_archive(archive, 600)
    state = StateDir(tmp_path / "state")

    def broken(self, items, owner):  # noqa: ANN001 - the signature of Claims.publish
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(Claims, "publish", broken)
    with pytest.raises(Exception):
        import_openclaw(state, archive, read_ahead=True)
    monkeypatch.undo()
    assert verify_state(state).ok  # nothing half visible
    stored = pending(state)
    assert stored > 0
    import_openclaw(state, archive, read_ahead=True)  # the rest of the archive
    reconcile_all(state)
    plain = StateDir(tmp_path / "plain")
    import_openclaw(plain, archive)
    reconcile_all(plain)
    assert dump(state) == dump(plain)


def test_an_interrupted_index_step_leaves_no_session_half_visible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a kill between two statements of the index step would stop it (the fault campaign
    kills a bulk import at random points too: tests/faults.py)."""
    archive = tmp_path / "archive"
    write_archive(archive, 600)
    state = StateDir(tmp_path / "state")
    real = Claims.replace_rows
    calls = []

    def interrupted(self, batch):  # noqa: ANN001
        calls.append(len(batch))
        if len(calls) == 2:
            real(self, batch[: len(batch) // 2])
            raise KeyboardInterrupt
        real(self, batch)

    monkeypatch.setattr(Claims, "replace_rows", interrupted)
    with pytest.raises(KeyboardInterrupt):
        import_openclaw(state, archive, read_ahead=True)
    monkeypatch.undo()
    assert verify_state(state).ok
    import_openclaw(state, archive, read_ahead=True)
    reconcile_all(state)
    plain = StateDir(tmp_path / "plain")
    import_openclaw(plain, archive)
    reconcile_all(plain)
    assert dump(state) == dump(plain)


def answers(state: StateDir) -> dict[str, object]:
    """What the storage API gives of every session and a few searches (any backend)."""
    sessions = {}
    for agent in state.agents():
        with state.open(agent) as db:
            for s in db.sessions():
                sessions[s.key] = (s.state, s.indexed_seq, s.leaf_id, s.title, s.messages,
                                   s.last_message_at, s.problems)
    found = {}
    for query in ("the", "réplica", "数据库", '"in the"'):
        result = sessions_search(state, SearchRequest(query=query, limit=20), OPERATOR)
        found[query] = [(r.session_key, r.message_id, round(r.score, 9)) for r in result.results]
    return {"sessions": sessions, "found": found}


@pytest.mark.backends
def test_on_either_backend_a_bulk_import_answers_as_an_import_and_reconciliation(
    tmp_path: Path, fresh_state
) -> None:  # noqa: ANN001 - the fixture's factory
    archive = tmp_path / "archive"
    write_archive(archive, 1500)
    bulk = fresh_state()
    import_openclaw(bulk, archive, read_ahead=True)
    assert pending(bulk) == 0  # searchable before any reconciliation
    now = answers(bulk)
    plain = fresh_state()  # (on PostgreSQL the same database, emptied)
    import_openclaw(plain, archive)
    assert pending(plain) > 0
    reconcile_all(plain)
    assert now == answers(plain)
