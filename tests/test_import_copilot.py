"""GitHub Copilot CLI sessions (``core/importers/copilot``). The CLI is closed source: the
files are built as its own files are shaped (``~/.copilot/session-state/<id>/events.jsonl``
lines ``{type, data, id, timestamp, parentId}``; the older
``history-session-state/<id>.json`` ``{sessionId, startTime, chatMessages, timeline}``), as
/work/shared/data/agent_formats.md and the real samples in
/work/shared/data/agents/copilot-cli show them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from backscroll.core import formats
from backscroll.core.resume import resume_command
from backscroll.core.sources import sync_sources
from backscroll.core.sources.listing import sources_status
from backscroll.core.state import StateDir

from .appended_formats import append_lines, write_lines
from .conftest import DATA as SHARED
from .fakehome import hits, sync

pytestmark = pytest.mark.backends  # storage behaviour: on both backends
DATA = SHARED / "agents" / "copilot-cli" / "home" / ".copilot"
SID = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
KEY = f"agent:copilot:copilot:{SID}"
_n = iter(range(1, 10_000))


def event(kind: str, data: dict[str, Any], ts: str = "2026-05-01T10:00:00.000Z") -> dict[str, Any]:
    n = next(_n)
    return {"type": kind, "data": data, "id": f"00000000-0000-0000-0000-{n:012d}",
            "timestamp": ts, "parentId": None}


def start(sid: str = SID) -> dict[str, Any]:
    return event("session.start", {"sessionId": sid, "version": 1, "producer": "copilot-agent",
                                   "startTime": "2026-05-01T10:00:00.000Z",
                                   "context": {"cwd": "/home/me/webapp"}})


def said(text: str) -> dict[str, Any]:
    return event("user.message", {"content": text, "transformedContent":
                                  f"<current_datetime>now</current_datetime> {text} sloth-reminder"})


def answer(text: str, **extra: Any) -> dict[str, Any]:
    return event("assistant.message", {"messageId": "m", "content": text, **extra})




def stored(state: StateDir, key: str = KEY) -> list[dict[str, Any]]:
    with state.open("copilot") as db:
        session = db.session(key)
        assert session is not None
        return [e for _, e in db.events(session.pk) if e["type"] != "session"]


def events_file(sid: str = SID) -> Path:
    return Path.home() / ".copilot" / "session-state" / sid / "events.jsonl"


def test_real_samples_both_layouts(state: StateDir) -> None:
    shutil.copytree(DATA, Path.home() / ".copilot")
    report = sync(state)
    assert report.problems == []
    v2 = "agent:copilot:copilot:96ef38f0-9d09-45c3-8124-6448c36090ed"
    assert report.sessions == {v2, "agent:copilot:copilot:0b2a81da-02cf-4cbb-ae14-07c597b84f4e"}
    entries = stored(state, v2)
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids))  # the sample's repeated event ids made unique
    assert not any("You are the GitHub Copilot CLI" in json.dumps(e) for e in entries)
    assert hits(state, "rustdoc")  # in the answers
    assert not any(e.get("customType") == "copilot.system.message" for e in entries)
    assert sync_sources(state).sessions == set()


def test_events_import_append_tools_reasoning_and_non_ascii(state: StateDir) -> None:
    log = events_file()
    write_lines(log, start(), event("system.message", {"role": "system", "content": "walrus rules"}),
                said("where is the heron config"))
    assert sync(state).sessions == {KEY}
    assert hits(state, "heron") and hits(state, "walrus") == [] and hits(state, "sloth") == []
    with state.open("copilot") as db:
        session = db.session(KEY)
        assert session is not None and session.label == "webapp: where is the heron config"
        head = db.events(session.pk)[0][1]
        assert head["cwd"] == "/home/me/webapp"
    append_lines(log, event("session.model_change", {"newModel": "claude-sonnet-4.6"}),
                 answer("", reasoningText="thinking about an ocelot", toolRequests=[
                     {"toolCallId": "t1", "name": "view", "arguments": {"path": "lynx.txt"}}]),
                 event("tool.execution_start", {"toolCallId": "t1", "toolName": "view",
                                                "arguments": {"path": "lynx.txt"}}),
                 event("tool.execution_complete", {"toolCallId": "t1", "success": True,
                                                   "result": {"content": "marmot inside"}}),
                 answer("the heron lives in naïve.toml"))
    sync(state)
    entries = [e for e in stored(state) if e["type"] == "message"]
    assert stored(state)[0]["customType"] == "copilot.session.start"  # the run's facts, kept
    kinds = [(e["message"]["role"], e["message"]["content"][0]["type"]) for e in entries]
    assert kinds == [("user", "text"), ("assistant", "thinking"), ("assistant", "toolCall"),
                     ("toolResult", "text"), ("assistant", "text")]
    assert entries[-1]["message"]["model"] == "claude-sonnet-4.6"
    chain = stored(state)
    assert [e["parentId"] for e in chain[1:]] == [e["id"] for e in chain[:-1]]  # file order
    assert len(hits(state, "heron")) == 2 and hits(state, "naïve")
    assert hits(state, "ocelot") == [] and hits(state, "marmot") == [] and hits(state, "lynx") == []
    assert "marmot inside" in json.dumps(entries) and "ocelot" in json.dumps(entries)


def test_malformed_line_vanished_file_and_resume(state: StateDir) -> None:
    log = events_file()
    write_lines(log, start(), said("first tapir"))
    with log.open("a") as out:
        out.write("{not json\n")
    append_lines(log, said("second tapir"))
    report = sync(state)
    assert len([p for p in report.problems if "events.jsonl:3" in p]) == 1
    assert len(hits(state, "tapir")) == 2
    shutil.rmtree(log.parent)
    sync(state)
    assert len(hits(state, "tapir")) == 2  # its conversation stays
    assert resume_command("copilot", True, SID, "/home/me/webapp").command == (
        f"cd /home/me/webapp && copilot --resume {SID}")


def test_legacy_file_rewritten_and_its_newer_copy(state: StateDir) -> None:
    legacy = Path.home() / ".copilot" / "history-session-state" / f"{SID}.json"
    legacy.parent.mkdir(parents=True)
    record: dict[str, Any] = {"sessionId": SID, "startTime": "2026-05-01T10:00:00.000Z",
                              "chatMessages": [], "timeline": [
                                  {"id": "t-1", "timestamp": "2026-05-01T10:00:01.000Z",
                                   "type": "user", "text": "legacy pelican"}]}
    legacy.write_text(json.dumps(record, indent=2))
    assert sync(state).sessions == {KEY}
    record["timeline"].append({"id": "t-2", "timestamp": "2026-05-01T10:00:02.000Z",
                               "type": "copilot", "text": "pelican answer"})
    legacy.write_text(json.dumps(record, indent=2))  # rewritten whole
    sync(state)
    assert [e["id"] for e in stored(state)] == ["t-1", "t-2"]
    # the newer layout holds the same session: the older copy is not taken in again
    other = "bbbbbbbb-bbbb-cccc-dddd-eeeeeeeeeeee"
    write_lines(events_file(other), start(other), said("moved puffin"))
    moved = legacy.parent / f"{other}.json"
    moved.write_text(json.dumps({**record, "sessionId": other}))
    sync(state)
    ids = [e["id"] for e in stored(state, f"agent:copilot:copilot:{other}")]
    assert "t-1" not in ids and hits(state, "puffin")  # one copy, from session-state/
    assert [k for k, _ in hits(state, "pelican")] == [KEY, KEY]


@pytest.mark.parametrize("name", ["gemini", "copilot"])
def test_default_folders_and_their_variables(name: str, state: StateDir,
                                             monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    fmt = formats.get(name)
    assert fmt is not None
    home = {"gemini": Path.home() / ".gemini" / "tmp", "copilot": Path.home() / ".copilot"}[name]
    home.mkdir(parents=True)
    listed = {s.source.kind: s for s in sources_status(state)}
    assert listed[name].source.path == home and listed[name].present
    moved = tmp_path / "elsewhere"
    monkeypatch.setenv(fmt.home_env, str(moved))
    want = moved / ".gemini" / "tmp" if name == "gemini" else moved
    assert fmt.default_folder({fmt.home_env: str(moved)}, Path.home()) == want


def test_reading_on_in_pieces_gives_what_a_whole_read_gives(state: StateDir) -> None:
    """``events.jsonl`` is read on from the last sync's offset with a carry (the entry to hang
    from, the model, the unanswered tool calls): the same entries, ids and chain as one read
    of the whole file."""
    from backscroll.core.importers.common import ImportReport
    from backscroll.core.importers.copilot.convert import convert_events
    from backscroll.core.importers.copilot.importer import read_events

    log = events_file()
    pieces = [
        [start(), said("one quail")],
        [event("session.model_change", {"newModel": "gpt-5"}),
         answer("", toolRequests=[{"toolCallId": "t9", "name": "bash", "arguments": {}}])],
        [event("tool.execution_start", {"toolCallId": "t9", "toolName": "bash"}),
         event("tool.execution_complete", {"toolCallId": "t9", "success": False,
                                           "error": {"message": "denied"}}),
         answer("two quail")],
    ]
    for n, piece in enumerate(pieces):
        (append_lines if n else write_lines)(log, *piece)
        sync(state)
    whole, _ = convert_events(SID, read_events(log, ImportReport(), None))
    got = stored(state)
    assert [(e["id"], e["parentId"]) for e in got] == [
        (e["id"], e["parentId"]) for e in whole.entries]
    assert got[-1]["message"]["model"] == "gpt-5"
    result = next(e for e in got if e.get("message", {}).get("role") == "toolResult")
    assert result["message"]["toolName"] == "bash" and result["message"]["isError"] is True
    assert len(hits(state, "quail")) == 2


def test_the_snap_home_is_found_when_it_exists(state: StateDir) -> None:
    """The Copilot CLI snap keeps its home in ``~/snap/copilot-cli/common/.copilot``: a
    ``Format.more_folders`` entry, listed and synced only when it exists."""
    snap = Path.home() / "snap" / "copilot-cli" / "common" / ".copilot"
    assert not any(s.source.path == snap for s in sources_status(state))
    write_lines(snap / "session-state" / SID / "events.jsonl", start(), said("snapped gecko"))
    assert sync(state).sessions == {KEY}
    assert [k for k, _ in hits(state, "gecko")] == [KEY]
    assert any(s.source.path == snap and s.present for s in sources_status(state))
