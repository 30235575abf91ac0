"""``delete`` is not undone by ``sync``: the files that fed a deleted session remember it, so
a line appended afterwards opens the session on that line alone, and a read of the file from
the start (rewritten, or an OpenClaw follow that restarts) leaves the deleted lines out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backscroll.core.ingest import delete_session
from backscroll.core.reconcile import reconcile_all
from backscroll.core.sources import sync_sources
from backscroll.core.state import StateDir

from .fakehome import append, build_home, claude_user, codex_user, hits, openclaw_user

pytestmark = pytest.mark.backends

FILES = {"openclaw": "openclaw", "claude-code": "short", "codex": "rollout"}


@pytest.fixture
def home(data_dir: Path) -> dict[str, Path]:
    return build_home(Path.home(), data_dir)


def user_line(kind: str, path: Path, entry_id: str, text: str) -> dict[str, Any]:
    if kind == "openclaw":
        return openclaw_user(path, entry_id, text)
    if kind == "claude-code":
        return claude_user(path, entry_id, text)
    return codex_user(text)


def sync(state: StateDir) -> list[str]:
    report = sync_sources(state)
    assert report.problems == []
    reconcile_all(state)
    return report.notes


def texts_of(state: StateDir, key: str) -> list[str]:
    agent = key.split(":")[1]
    with state.open(agent) as db:
        session = db.session(key)
        assert session is not None
        return [json.dumps(event) for _, event in db.events(session.pk)]


@pytest.mark.parametrize("kind", sorted(FILES))
def test_a_deleted_session_is_not_taken_in_again(state: StateDir, home: dict[str, Path],
                                                 kind: str) -> None:
    path = home[FILES[kind]]
    append(path, user_line(kind, path, "secret-1", "the quetzalsecret password is hunter2"))
    sync(state)
    ((key, _),) = hits(state, "quetzalsecret")
    before = len(texts_of(state, key))
    assert before > 3
    delete_session(state, key)

    append(path, user_line(kind, path, "later-1", "a later wombatnote"))
    sync(state)
    assert hits(state, "quetzalsecret") == []
    assert [k for k, _ in hits(state, "wombatnote")] == [key]
    kept = texts_of(state, key)
    assert len(kept) < 4 and not any("quetzalsecret" in text for text in kept)

    # read again from the start (its first bytes changed): the deleted lines stay out
    path.write_bytes(b" " + path.read_bytes())
    notes = sync(state)
    assert any("held a deleted conversation" in note for note in notes)
    assert hits(state, "quetzalsecret") == []
    assert [k for k, _ in hits(state, "wombatnote")] == [key]
    assert not any("quetzalsecret" in text for text in texts_of(state, key))

    # what comes after is taken in as ever
    append(path, user_line(kind, path, "later-2", "then a numbatquote"))
    sync(state)
    assert [k for k, _ in hits(state, "numbatquote")] == [key]


def test_a_session_store_does_not_bring_a_deleted_session_back(
    state: StateDir, home: dict[str, Path]
) -> None:
    sync(state)
    path = home["openclaw"]
    append(path, openclaw_user(path, "secret-1", "the quetzalsecret password"))
    sync(state)
    ((key, _),) = hits(state, "quetzalsecret")
    delete_session(state, key)
    store = home["store"]
    store.write_text(store.read_text() + "\n")  # OpenClaw rewrites it on every turn
    sync(state)
    with state.open(key.split(":")[1]) as db:
        assert db.session(key) is None
    append(path, openclaw_user(path, "later-1", "a later wombatnote"))
    sync(state)
    assert [k for k, _ in hits(state, "wombatnote")] == [key]
    assert hits(state, "quetzalsecret") == []


# Files rewritten whole (``Doors.whole``, ``importers/whole.py``): a deleted conversation stays
# out when its file is rewritten; what the file merely gains after the delete opens it anew.

def _cline_turn(ts: int, text: str) -> dict[str, Any]:
    return {"role": "assistant", "ts": ts, "content": [{"type": "text", "text": text}]}


def _continue_turn(text: str) -> dict[str, Any]:
    return {"message": {"role": "assistant", "content": text}, "contextItems": []}


def test_a_deleted_cline_task_rewritten_whole_is_not_taken_in_again(state: StateDir) -> None:
    """Cline's ``api_conversation_history.json`` (cline ``disk.ts``, tests/test_import_cline.py)."""
    from .test_import_cline import KEY, cline_home, cline_task, write
    from .wholefiles import search

    file = cline_home(Path.home(), [*cline_task(), _cline_turn(1767000005000, "quetzalsecret")])
    assert sync_sources(state).problems == []
    assert search(state, "quetzalsecret") == [KEY]
    delete_session(state, KEY)

    # trimmed (Cline condenses): nothing of the deleted task comes back
    write(file, cline_task()[:1])
    report = sync_sources(state)
    assert report.problems == [] and report.events == 0
    assert any("not taken in again" in note for note in report.notes)
    # grown and rewritten: still nothing
    write(file, [*cline_task()[:1], _cline_turn(1767000005000, "quetzalsecret again"),
                 _cline_turn(1767000009000, "a wombatnote")])
    assert sync_sources(state).events == 0
    assert search(state, "quetzalsecret") == [] and search(state, "flamingo") == []
    with state.open("cline") as db:
        assert db.session(KEY) is None
    # a new task in another file is taken in as ever
    other = file.parent.parent / "1768000000000" / file.name
    write(other, cline_task(1768000000000)[:1])
    report = sync_sources(state)
    assert report.sessions == {"agent:cline:cline:1768000000000"}
    assert search(state, "flamingo") == ["agent:cline:cline:1768000000000"]


def test_a_deleted_cline_task_takes_in_only_what_it_gains_after(state: StateDir) -> None:
    from .test_import_cline import KEY, cline_home, cline_task, write
    from .wholefiles import events_of, search

    file = cline_home(Path.home())
    sync_sources(state)
    delete_session(state, KEY)
    write(file, cline_task())  # rewritten as it was: no empty session comes back
    assert sync_sources(state).events == 0
    with state.open("cline") as db:
        assert db.session(KEY) is None
    write(file, [*cline_task(), _cline_turn(1767000009000, "a wombatnote")])
    assert sync_sources(state).messages == 1
    assert search(state, "wombatnote") == [KEY] and search(state, "flamingo") == []
    assert len([e for e in events_of(state, "cline", KEY) if e.get("type") == "message"]) == 1


def test_a_deleted_continue_session_rewritten_whole_is_not_taken_in_again(
    state: StateDir
) -> None:
    """Continue's ``sessions/<id>.json`` (continuedev ``core/util/history.ts``)."""
    from .test_import_continue import KEY, history, sessions, write_session
    from .wholefiles import search

    file = write_session(sessions(), [*history(), _continue_turn("quetzalsecret")])
    assert sync_sources(state).problems == []
    assert search(state, "quetzalsecret") == [KEY]
    delete_session(state, KEY)

    write_session(sessions(), history()[:1])  # the user edits the first message: a cut
    report = sync_sources(state)
    assert report.problems == [] and report.events == 0
    write_session(sessions(), [*history()[:1], _continue_turn("quetzalsecret again"),
                               _continue_turn("a wombatnote")])  # grown and rewritten
    assert sync_sources(state).events == 0
    assert search(state, "quetzalsecret") == [] and search(state, "lemur") == []
    with state.open("continue") as db:
        assert db.session(KEY) is None
    # a new session in another file is taken in as ever
    sid = "1c0ffee0-1b7e-4d2c-9a61-0c2f4b5d6e7f"
    (file.parent / f"{sid}.json").write_text(json.dumps(
        {"sessionId": sid, "title": "t", "history": [_continue_turn("a numbatquote")]}))
    report = sync_sources(state)
    assert report.sessions == {f"agent:continue:continue:{sid}"}
    assert search(state, "numbatquote") == [f"agent:continue:continue:{sid}"]


def test_a_deleted_aider_run_takes_in_only_what_is_appended_after(state: StateDir) -> None:
    """Aider's ``.aider.chat.history.md`` (aider ``aider/io.py``): appended, read whole."""
    from backscroll.core.sources import add_source

    from .test_import_aider import RUN_1, as_aider, project
    from .wholefiles import events_of, search

    file = project(Path.home() / "code")
    add_source(state.path, "aider", Path.home() / "code", None)
    sync_sources(state)
    (key,) = search(state, "heron")
    delete_session(state, key)
    with file.open("a") as out:
        out.write(as_aider("\n#### now the wombatnote\n\nDone with the wombatnote.\n"))
    report = sync_sources(state)
    assert report.problems == [] and report.messages == 2
    assert search(state, "wombatnote") == [key] and search(state, "heron") == []
    assert not any("heron" in json.dumps(e) for e in events_of(state, "aider", key))
    # rewritten without its start: the run stays as it is now
    file.write_text(as_aider(RUN_1.replace("heron", "heron2")))
    assert sync_sources(state).events == 0
    assert search(state, "heron") == [] and search(state, "heron2") == []


def test_a_deleted_qwen_chat_takes_in_only_what_is_appended_after(state: StateDir) -> None:
    """Qwen Code's ``ChatRecord`` JSONL (the appended formats' driver, ``importers/appended.py``)."""
    from .appended_formats import append_lines, hits, write_lines
    from .test_import_qwen import KEY, SID, conversation, user

    path = Path.home() / ".qwen/projects/-home-dev-weather-app/chats" / f"{SID}.jsonl"
    write_lines(path, *conversation(), user("u5", "u4", 5, "the quetzalsecret password"))
    sync(state)
    assert [k for k, _ in hits(state, "quetzalsecret")] == [KEY]
    delete_session(state, KEY)
    append_lines(path, user("u6", "u5", 6, "a later wombatnote"))
    sync(state)
    assert hits(state, "quetzalsecret") == [] and hits(state, "forecast") == []
    assert [k for k, _ in hits(state, "wombatnote")] == [KEY]
    assert not any("quetzalsecret" in text for text in texts_of(state, KEY))
    path.write_bytes(b" " + path.read_bytes())  # read again from the start
    sync(state)
    assert hits(state, "quetzalsecret") == [] and hits(state, "forecast") == []
    assert [k for k, _ in hits(state, "wombatnote")] == [KEY]


def test_a_deleted_cursor_or_droid_chat_takes_in_only_what_is_appended_after(
    state: StateDir
) -> None:
    """Cursor CLI's agent transcripts and Factory Droid's sessions (the appended driver), as
    tests/test_import_cursor_cli.py and tests/test_import_droid.py build them."""
    from . import test_import_cursor_cli as cursor
    from . import test_import_droid as droid
    from .appended_formats import append_lines, hits, write_lines

    cases = [
        (cursor.KEY, cursor.folder() / f"{cursor.SID}.jsonl",
         [*cursor.conversation(), cursor.said("the quetzalsecret password")],
         cursor.said("a later wombatnote")),
        (droid.KEY, droid.session_file(),
         [*droid.conversation(), droid.message("m5", "m4", 5, "user",
                                               droid.text("the quetzalsecret password"))],
         droid.message("m6", "m5", 6, "user", droid.text("a later wombatnote"))),
    ]
    for key, path, lines, later in cases:
        write_lines(path, *lines)
        sync(state)
        assert [k for k, _ in hits(state, "quetzalsecret")] == [key]
        delete_session(state, key)
        append_lines(path, later)
        sync(state)
        assert hits(state, "quetzalsecret") == []
        assert [k for k, _ in hits(state, "wombatnote")] == [key]
        path.write_bytes(b" " + path.read_bytes())  # read again from the start
        sync(state)
        assert hits(state, "quetzalsecret") == []
        assert not any("quetzalsecret" in text for text in texts_of(state, key))
        assert [k for k, _ in hits(state, "wombatnote")] == [key]
        delete_session(state, key)  # the next case's words stand alone


# Pi / Oh My Pi, Gemini CLI, Copilot CLI (appended JSONL) and OpenClaw's own SQLite store.

def _appended_case(state: StateDir, agent: str, key: str, path: Path, later: str,
                   secret: str = "quetzalsecret") -> None:
    """``key`` (fed by ``path``, which holds ``secret``) deleted; ``later`` (a line holding
    "wombatnote") appended: only that line is taken in; then the file read again from the
    start: the deleted lines stay out."""
    from .appended_formats import hits as found

    sync(state)
    assert [k for k, _ in found(state, secret)] == [key]
    delete_session(state, key)
    with path.open("a", encoding="utf-8") as out:
        out.write(later + "\n")
    sync(state)
    assert found(state, secret) == []
    assert [k for k, _ in found(state, "wombatnote")] == [key]
    assert not any(secret in text for text in texts_of(state, key))
    path.write_bytes(b" " + path.read_bytes())  # read again from the start
    sync(state)
    assert found(state, secret) == []
    assert not any(secret in text for text in texts_of(state, key))
    assert [k for k, _ in found(state, "wombatnote")] == [key]


@pytest.mark.parametrize("tool", ["pi", "omp"])
def test_a_deleted_pi_session_takes_in_only_what_is_appended_after(state: StateDir,
                                                                  tool: str) -> None:
    """Pi's and Oh My Pi's session JSONL (pi-mono ``session-manager.ts``; the shared real
    samples)."""
    from .test_import_pi import OMP_KEY, PI_KEY, pi_home

    path = pi_home(Path.home())[tool]
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"type": "message", "timestamp": "2025-12-09T03:00:00.000Z",
                              "message": {"role": "user", "content": [
                                  {"type": "text", "text": "the quetzalsecret password"}]}}) + "\n")
    later = json.dumps({"type": "message", "timestamp": "2025-12-09T03:01:00.000Z",
                        "message": {"role": "user", "content": [
                            {"type": "text", "text": "a later wombatnote"}]}})
    _appended_case(state, tool, PI_KEY if tool == "pi" else OMP_KEY, path, later)


def test_a_deleted_gemini_chat_takes_in_only_what_is_appended_after(state: StateDir) -> None:
    """Gemini CLI's JSONL chat log (gemini-cli ``chatRecordingService.ts``)."""
    from .appended_formats import write_lines
    from .test_import_gemini import KEY, chat_dir, gemini, meta, user

    path = chat_dir() / "session-2026-05-01T10-00-11111111.jsonl"
    write_lines(path, meta(), user("u1", "the quetzalsecret password"), gemini("g1", "noted"))
    _appended_case(state, "gemini", KEY, path, json.dumps(user("u2", "a later wombatnote")))


def test_a_deleted_copilot_session_takes_in_only_what_is_appended_after(
    state: StateDir
) -> None:
    """Copilot CLI's ``session-state/<id>/events.jsonl`` (tests/test_import_copilot.py)."""
    from .appended_formats import write_lines
    from .test_import_copilot import KEY, answer, events_file, said, start

    path = events_file()
    write_lines(path, start(), said("the quetzalsecret password"), answer("noted"))
    _appended_case(state, "copilot", KEY, path, json.dumps(said("a later wombatnote")))


def test_a_deleted_openclaw_store_session_is_not_taken_in_again(state: StateDir) -> None:
    """OpenClaw's own SQLite store (``openclaw-agent.sqlite``, tests/test_openclaw_store.py):
    the rule of every SQLite format (``follow_database``): a session deleted in backscroll is
    not taken in again from the database, whatever the agent adds to it."""
    from .appended_formats import hits as found
    from .test_openclaw_store import Store, header, message

    store = Store(Path.home() / ".openclaw", "main")
    try:
        store.node("agent:main:main", "s-1", label="Daily chat")
        store.window("s-1", "agent:main:main")
        store.events("s-1", [header("s-1"), message("m1", None, "user", "quetzalsecret")])
        sync(state)
        ((key, _),) = found(state, "quetzalsecret")
        delete_session(state, key)
        # (a) the agent adds an event to the window
        store.events("s-1", [message("m2", "m1", "assistant", "a wombatnote")], start=3)
        sync(state)
        assert found(state, "quetzalsecret") == [] and found(state, "wombatnote") == []
        with state.open("main") as db:
            assert db.session(key) is None
        # (b) the store read again from the start (its watermark lost): still nothing
        with state.open("main", write=True) as db:
            (file_state,) = db.file_states().values()
            assert file_state.context and '"carry":"' in file_state.context
            db.save_file_state(file_state._replace(context=file_state.context.replace(
                '"carry":', '"carry":null,"x":')))
        store.touch("s-1")
        sync(state)
        assert found(state, "quetzalsecret") == [] and found(state, "wombatnote") == []
        # another conversation of the store is taken in as ever
        store.node("agent:main:other", "s-2")
        store.window("s-2", "agent:main:other")
        store.events("s-2", [header("s-2"), message("n1", None, "user", "a numbatquote")])
        sync(state)
        assert [k for k, _ in found(state, "numbatquote")] == ["agent:main:other"]
        assert found(state, "quetzalsecret") == []
        # the deleted node reset: its new window is a new conversation, taken in (and on)
        store.window("s-3", "agent:main:main", reason="reset")
        store.con.execute("UPDATE session_nodes SET current_session_id = 's-3' "
                          "WHERE session_key = 'agent:main:main'")
        store.events("s-3", [header("s-3"), message("r1", None, "user", "a tapirword")])
        sync(state)
        assert [k for k, _ in found(state, "tapirword")] == [key]
        store.events("s-3", [message("r2", "r1", "assistant", "an okapiword")], start=3)
        sync(state)
        assert [k for k, _ in found(state, "okapiword")] == [key]
        assert found(state, "quetzalsecret") == [] and found(state, "wombatnote") == []
    finally:
        store.con.close()


def test_a_deleted_legacy_json_chat_rewritten_whole_is_not_taken_in_again(
    state: StateDir
) -> None:
    """Gemini CLI's older ``chats/session-*.json`` (gemini-cli ``chatRecordingService.ts``
    before the JSONL log) and Copilot CLI's ``history-session-state/<id>.json``: files
    rewritten whole, read whole; a deleted conversation of one is not taken in again (the
    rule of the SQLite formats: these layouts are no longer written by the current CLIs)."""
    from .appended_formats import hits as found
    from .test_import_copilot import KEY as COPILOT
    from .test_import_copilot import SID
    from .test_import_gemini import chat_dir, gemini, meta, user

    sid = "22222222-3333-4444-5555-666666666666"
    chat = chat_dir("legacy") / "session-2026-05-01T10-00-22222222.json"
    record = {**meta(sid), "messages": [user("a1", "the quetzalsecret password")]}
    legacy = Path.home() / ".copilot" / "history-session-state" / f"{SID}.json"
    legacy.parent.mkdir(parents=True)
    timeline: dict[str, Any] = {"sessionId": SID, "startTime": "2026-05-01T10:00:00.000Z",
                                "chatMessages": [], "timeline": [
                                    {"id": "t-1", "timestamp": "2026-05-01T10:00:01.000Z",
                                     "type": "user", "text": "the zorillasecret password"}]}
    chat.write_text(json.dumps(record, indent=2))
    legacy.write_text(json.dumps(timeline, indent=2))
    sync(state)
    cases = [(f"agent:gemini:gemini:{sid}", "quetzalsecret"), (COPILOT, "zorillasecret")]
    for key, secret in cases:
        assert [k for k, _ in found(state, secret)] == [key]
        delete_session(state, key)
    record["messages"].append(gemini("a2", "a wombatnote"))  # rewritten whole, grown
    chat.write_text(json.dumps(record, indent=2))
    timeline["timeline"].append({"id": "t-2", "timestamp": "2026-05-01T10:00:02.000Z",
                                 "type": "copilot", "text": "a wombatnote"})
    legacy.write_text(json.dumps(timeline, indent=2))
    report = sync_sources(state)
    assert report.problems == [] and report.events == 0
    for key, secret in cases:
        assert found(state, secret) == [] and found(state, "wombatnote") == []
        with state.open(key.split(":")[1]) as db:
            assert db.session(key) is None
