"""OpenClaw's SQLite store as a live source (``openclaw/format.py``'s ``Doors.database``):
found where OpenClaw puts it, synced from its watermark, one conversation per session id in
a home that has both layouts, and a reset that moves the node's key on.

The stores are ``tests/test_openclaw_store.py``'s ``Store`` (OpenClaw's
``src/state/openclaw-agent-schema.sql``, agent schema 24), written in WAL mode with the
writer's connection held open while backscroll syncs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backscroll.core.sources import all_sources, sync_sources
from backscroll.core.sources.listing import sources_status
from backscroll.core.sources.watch import _transcript_change
from backscroll.core.state import StateDir

from .fakehome import hits, sync
from .test_openclaw_store import T0, Store, header, message

pytestmark = pytest.mark.backends

KEY = "agent:main:main"



def sessions(state: StateDir) -> dict[str, tuple[str | None, str | None, list[str]]]:
    """Per stored key: its session id, label and entry ids (repeats kept)."""
    out = {}
    for agent in state.agents():
        with state.open(agent) as db:
            for s in db.sessions():
                ids = sorted(e["id"] for _, e in db.events(s.pk) if e.get("id")
                             and e["type"] != "session")
                out[s.key] = (s.session_id, s.label, ids)
    return out


def conversation() -> list[dict]:
    return [header("s-1"), message("m1", None, "user", "kestrel question"),
            message("m2", "m1", "assistant", "kestrel answer")]


@pytest.fixture
def root() -> Path:
    return Path.home() / ".openclaw"


def store_with_one(root: Path) -> Store:
    store = Store(root, "main")
    store.node(KEY, "s-1", label="Daily chat")
    store.window("s-1", KEY)
    store.events("s-1", conversation())
    return store


def write_jsonl(root: Path, name: str, index: bool = True) -> Path:
    """The conversation as a JSONL transcript (and its ``sessions.json`` entry: a migration
    may have left none)."""
    folder = root / "agents" / "main" / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    if index:
        (folder / "sessions.json").write_text(json.dumps({KEY: {"sessionId": "s-1",
                                                                "label": "Daily chat"}}))
    path = folder / name
    path.write_text("".join(json.dumps(e) + "\n" for e in conversation()))
    return path


def test_the_store_is_a_source_read_from_its_watermark(state: StateDir, root: Path) -> None:
    store = store_with_one(root)
    try:
        status = next(s for s in sources_status(state) if s.source.kind == "openclaw")
        assert (status.files, status.unread, status.notes) == (1, 1, [])
        first = sync(state)
        assert first.problems == [] and (first.read, first.messages) == (1, 2)
        assert sorted(hits(state, "kestrel")) == [(KEY, "m1"), (KEY, "m2")]
        assert sync(state).read == 0  # unchanged: only stat'ed
        # the writer holds the store open: the new event is in the -wal only
        store.events("s-1", [message("m3", "m2", "user", "avocet follow-up")], start=4)
        assert _transcript_change(None, f"{store.path}-wal")
        again = sync_sources(state)  # the live write path: searchable at once
        assert (again.read, again.events, again.messages) == (1, 1, 1)
        assert again.pending == set()
        assert hits(state, "avocet") == [(KEY, "m3")]
        assert sessions(state)[KEY] == ("s-1", "Daily chat", ["m1", "m2", "m3"])
        after = next(s for s in sources_status(state) if s.source.kind == "openclaw")
        assert (after.files, after.sessions, after.unread) == (1, 1, 0)
        assert after.last_sync is not None
        # `status` counts it; the browser's source filter (OpenClaw) finds it
        from backscroll.core.search import SearchRequest, sessions_search
        from backscroll.core.status import state_status
        from backscroll.core.visibility import OPERATOR

        agents = {a.agent: (a.sessions, a.messages) for a in state_status(state).agents}
        assert agents == {"main": (1, 3)}
        for source, found in (("openclaw", 1), ("claude-code", 0)):
            request = SearchRequest("avocet", source=source)
            assert len(sessions_search(state, request, OPERATOR).results) == found
    finally:
        store.con.close()


def test_openclaw_homes_are_found_by_default(state: StateDir, monkeypatch) -> None:
    home = Path.home()
    for name in (".openclaw", ".openclaw-work", ".clawdbot"):
        (home / name).mkdir(parents=True)
    (home / ".openclaw-notes.txt").write_text("")  # not a folder
    found = [s.path for s in all_sources(state.path) if s.kind == "openclaw"]
    assert found == [home / ".openclaw", home / ".openclaw-work", home / ".clawdbot"]
    monkeypatch.setenv("OPENCLAW_STATE_DIR", str(home / ".clawdbot"))
    assert [s.path for s in all_sources(state.path) if s.kind == "openclaw"] == [
        home / ".clawdbot"]


EXPECTED = {KEY: ("s-1", "Daily chat", ["m1", "m2"])}


def the_other_layout_adds_nothing(state: StateDir) -> None:
    """A sync after the conversation's second layout appeared stores nothing new: the one
    conversation, each message once."""
    second = sync(state)
    assert second.problems == [] and second.events == 0
    assert sessions(state) == EXPECTED
    assert sorted(hits(state, "kestrel")) == [(KEY, "m1"), (KEY, "m2")]


@pytest.mark.parametrize("index", [True, False])
@pytest.mark.parametrize("name", ["s-1.jsonl.deleted.2026-06-01T10-00-00.000Z", "s-1.jsonl"])
def test_both_layouts_jsonl_first_give_each_conversation_once(state: StateDir, root: Path,
                                                              name: str, index: bool) -> None:
    write_jsonl(root, name, index)
    first = sync(state)
    assert first.problems == []
    store = store_with_one(root)
    try:
        the_other_layout_adds_nothing(state)
    finally:
        store.con.close()


@pytest.mark.parametrize("index", [True, False])
@pytest.mark.parametrize("name", ["s-1.jsonl.deleted.2026-06-01T10-00-00.000Z", "s-1.jsonl"])
def test_both_layouts_store_first_give_each_conversation_once(state: StateDir, root: Path,
                                                              name: str, index: bool) -> None:
    store = store_with_one(root)
    try:
        assert sync(state).problems == []
        write_jsonl(root, name, index)
        the_other_layout_adds_nothing(state)
    finally:
        store.con.close()


def test_both_layouts_in_one_sync_give_each_conversation_once(state: StateDir,
                                                              root: Path) -> None:
    write_jsonl(root, "s-1.jsonl.deleted.2026-06-01T10-00-00.000Z")
    store = store_with_one(root)
    try:
        assert sync(state).problems == []
        assert sessions(state) == EXPECTED
    finally:
        store.con.close()


def test_a_reset_moves_the_old_window_to_an_archive(state: StateDir, root: Path) -> None:
    store = store_with_one(root)
    try:
        sync(state)
        # OpenClaw resets the node: a new window is current, the old one ended
        store.con.execute("UPDATE session_windows SET ended_at=?, updated_at=? "
                          "WHERE session_id='s-1'", (T0 + 5, T0 + 5))
        store.window("s-2", KEY, "reset", T0 + 10, previous="s-1")
        store.events("s-2", [header("s-2"), message("r1", None, "user", "siskin after reset")])
        store.con.execute("UPDATE session_nodes SET current_session_id='s-2', entry_json=? "
                          "WHERE session_key=?", (json.dumps({"sessionId": "s-2"}), KEY))
        report = sync(state)
        assert report.problems == [] and report.messages == 1
        stored = sessions(state)
        assert set(stored) == {KEY, "agent:main:reset:s-1"}
        assert stored[KEY] == ("s-2", "Daily chat", ["r1"])
        old_id, old_label, old_ids = stored["agent:main:reset:s-1"]
        assert (old_id, old_ids) == ("s-1", ["m1", "m2"])
        assert old_label is not None and old_label.startswith("reset archive of s-1 (")
        assert sorted(hits(state, "kestrel")) == [("agent:main:reset:s-1", "m1"),
                                                   ("agent:main:reset:s-1", "m2")]
        assert hits(state, "siskin") == [(KEY, "r1")]
        # the old window goes on being written (late events): they join its archive
        store.events("s-1", [message("m4", "m2", "user", "late wren")], start=4)
        sync(state)
        assert hits(state, "wren") == [("agent:main:reset:s-1", "m4")]
        assert sync(state).read == 0
    finally:
        store.con.close()


def test_cold_conversations_say_archived_in_every_answer(state: StateDir, root: Path) -> None:
    from backscroll.core.catalog import visible_session_list
    from backscroll.core.grouped import conversations_search
    from backscroll.core.search import SearchRequest, sessions_search
    from backscroll.core.visibility import OPERATOR

    store = store_with_one(root)
    store.window("s-0", KEY, "initial", T0 - 10)  # an older window, moved cold (in a blob)
    store.events("s-0", [header("s-0"), message("z1", None, "user", "kestrel long ago")])
    store.node("agent:main:other", "s-9", label="Hot one")
    store.window("s-9", "agent:main:other")
    store.events("s-9", [header("s-9"), message("h1", None, "user", "kestrel still hot")])
    try:
        sync(state)  # read hot first: a window that turns cold later loses nothing
        store.make_cold("s-1")
        store.make_cold("s-0", generation="g0", storage="sqlite")
        assert sync(state).problems == []
        stored = sessions(state)
        assert stored[KEY] == ("s-1", "Daily chat (archived)", ["m1", "m2"])
        assert stored["agent:main:reset:s-0"][2] == ["z1"]
        assert stored["agent:main:reset:s-0"][1].endswith(") (archived)")
        assert stored["agent:main:other"] == ("s-9", "Hot one", ["h1"])
        cold = {KEY, "agent:main:reset:s-0"}
        request = SearchRequest("kestrel", limit=25)
        hits_ = sessions_search(state, request, OPERATOR).as_json()["results"]
        assert {(h["sessionKey"], h["archived"]) for h in hits_} == {
            (KEY, True), ("agent:main:reset:s-0", True), ("agent:main:other", False)}
        grouped = conversations_search(state, request, OPERATOR).as_json()["conversations"]
        assert {c["sessionKey"]: c["archived"] for c in grouped} == {
            k: k in cold for k in (*cold, "agent:main:other")}
        listed = visible_session_list(state, OPERATOR)
        assert {s.key: s.as_json()["archived"] for s in listed} == {
            k: k in cold for k in (*cold, "agent:main:other")}
        assert {s.key for s in visible_session_list(state, OPERATOR, archived=True)} == cold
        assert sync(state).read == 0  # an archive is read once
    finally:
        store.con.close()


def test_another_file_naming_a_window_of_the_store_is_a_claim(state: StateDir,
                                                              root: Path) -> None:
    """The store and a transcript are one family only for the transcript named after the
    window's session: any other file whose header names it plants nothing."""
    store = store_with_one(root)
    try:
        sync(state)
        folder = root / "agents" / "main" / "sessions"
        folder.mkdir(parents=True)
        rogue = [header("s-1"), message("x1", None, "user", "planted magpie")]
        (folder / "other.jsonl").write_text("".join(json.dumps(e) + "\n" for e in rogue))
        report = sync(state)
        assert any("other.jsonl: names session agent:main:main" in p for p in report.problems)
        assert hits(state, "magpie") == []
        assert sessions(state) == EXPECTED
    finally:
        store.con.close()
