"""Gemini CLI chats (``core/importers/gemini``), built as google-gemini/gemini-cli
``packages/core/src/services/chatRecordingService.ts`` writes them (``appendRecord``,
``pushMessage``, ``rewindTo``, ``updateMessagesFromHistory``; the shapes in
``chatRecordingTypes.ts``), and the real samples in /work/shared/data/agents/gemini-cli."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from backscroll.core.sources import sync_sources
from backscroll.core.state import StateDir
from backscroll.core.transcript import active_branch

from .appended_formats import append_lines, write_lines
from .conftest import DATA as SHARED
from .fakehome import hits, sync

pytestmark = pytest.mark.backends  # storage behaviour: on both backends
DATA = SHARED / "agents" / "gemini-cli" / "home" / ".gemini"
SID = "11111111-2222-3333-4444-555555555555"
KEY = f"agent:gemini:gemini:{SID}"


def meta(sid: str = SID, **extra: Any) -> dict[str, Any]:
    return {"sessionId": sid, "projectHash": "h", "startTime": "2026-05-01T10:00:00.000Z",
            "lastUpdated": "2026-05-01T10:00:00.000Z", "kind": "main", **extra}


def user(mid: str, text: str, ts: str = "2026-05-01T10:00:01.000Z") -> dict[str, Any]:
    return {"id": mid, "timestamp": ts, "type": "user", "content": [{"text": text}]}


def gemini(mid: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"id": mid, "timestamp": "2026-05-01T10:00:02.000Z", "type": "gemini",
            "content": text, "model": "gemini-2.5-pro", **extra}


def chat_dir(project: str = "myproj") -> Path:
    chats = Path.home() / ".gemini" / "tmp" / project / "chats"
    chats.mkdir(parents=True, exist_ok=True)
    (chats.parent / ".project_root").write_text(f"/home/me/{project}")
    return chats




def events(state: StateDir, key: str = KEY) -> list[tuple[int, dict[str, Any]]]:
    with state.open("gemini") as db:
        session = db.session(key)
        assert session is not None
        return list(db.events(session.pk))


def ids(state: StateDir, key: str = KEY) -> list[str]:
    return [e["id"] for _, e in events(state, key)
            if isinstance(e.get("id"), str) and e["type"] != "session"]


def branch_ids(state: StateDir, key: str = KEY) -> list[str]:
    return [e["id"] for _, e in active_branch(events(state, key)).path]


def test_real_samples_legacy_json_and_upsert_log(state: StateDir) -> None:
    shutil.copytree(DATA, Path.home() / ".gemini")
    report = sync(state)
    assert report.problems == []
    assert report.sessions == {"agent:gemini:gemini:8a20078e-2d5e-4f81-a640-9b879bbb7e6d",
                               "agent:gemini:gemini:0ab84937-9fe7-4284-986a-33c832af0b6a"}
    log = "agent:gemini:gemini:0ab84937-9fe7-4284-986a-33c832af0b6a"
    stored = ids(state, log)
    assert len(stored) == len(set(stored))  # records re-written under one id: stored once
    # the /init prompt as typed is the user message; the expanded prompt is context
    by_id = {e.get("id"): e for _, e in events(state, log)}
    init = "8828dd6a-d778-464f-8160-eb2e1604a122"
    assert by_id[init]["message"]["content"] == [{"type": "text", "text": "/init"}]
    assert by_id[f"{init}:expanded"]["type"] == "custom_message"
    assert [h for h in hits(state, "poring")] == []  # only in a thought
    assert hits(state, "uv") and all(k == log for k, _ in hits(state, "uv"))  # non-ASCII prompt
    assert sync_sources(state).sessions == set()  # nothing new


def test_upsert_log_import_append_rewrite_and_tools(state: StateDir) -> None:
    chats = chat_dir()
    log = chats / "session-2026-05-01T10-00-11111111.jsonl"
    write_lines(log, meta(), user("u1", "where is the zebra config"),
                {"$set": {"lastUpdated": "2026-05-01T10:00:01.000Z"}})
    assert sync(state).sessions == {KEY}
    assert hits(state, "zebra") == [(KEY, "u1")]
    with state.open("gemini") as db:
        session = db.session(KEY)
        assert session is not None and session.label == "myproj: where is the zebra config"
    head = events(state)[0][1]
    assert head["cwd"] == "/home/me/myproj" and head["timestamp"] == "2026-05-01T10:00:00.000Z"
    # the answer, then the same record re-written with tokens and a tool call, then its result
    call = {"id": "c1", "name": "read_file", "args": {"path": "giraffe.txt"},
            "status": "executing", "timestamp": "2026-05-01T10:00:03.000Z"}
    thought = [{"subject": "Pondering", "description": "okapi thoughts",
                "timestamp": "2026-05-01T10:00:02.000Z"}]
    append_lines(log, gemini("g1", "the zebra lives in café.toml", thoughts=thought))
    append_lines(log, gemini("g1", "the zebra lives in café.toml", thoughts=thought,
                             tokens={"input": 1, "output": 2, "cached": 0, "total": 3},
                             toolCalls=[call]))
    done = {**call, "status": "success", "result": [{"functionResponse": {
        "id": "c1", "name": "read_file", "response": {"output": "narwhal inside"}}}]}
    append_lines(log, gemini("g1", "the zebra lives in café.toml", thoughts=thought, toolCalls=[done]))
    sync(state)
    # the tokens came with the second copy: an entry of their own (the first's are stored)
    assert ids(state) == ["u1", "g1:thoughts", "g1", "g1:call:c1", "g1:usage", "g1:result:c1"]
    [usage] = [e["message"] for _, e in events(state) if e["id"] == "g1:usage"]
    assert (usage["content"], usage["model"], usage["usage"]) == (
        [], "gemini-2.5-pro", {"input": 1, "output": 2, "cacheRead": 0, "totalTokens": 3})
    assert sorted(hits(state, "zebra")) == [(KEY, "g1"), (KEY, "u1")]
    assert hits(state, "café") == [(KEY, "g1")]  # non-ASCII
    assert hits(state, "okapi") == [] and hits(state, "narwhal") == []  # reasoning, tool output
    assert hits(state, "giraffe") == []
    assert branch_ids(state)[-1] == "g1:result:c1"
    texts = json.dumps([e for _, e in events(state)], ensure_ascii=False)
    assert "narwhal inside" in texts and "okapi thoughts" in texts  # kept, with the tools


def test_compression_set_and_rewind_lose_nothing(state: StateDir) -> None:
    chats = chat_dir()
    log = chats / "session-2026-05-01T10-00-11111111.jsonl"
    write_lines(log, meta(), user("u1", "first alpaca"), gemini("g1", "answer alpaca"),
                user("u2", "second bison"), gemini("g2", "answer bison"))
    sync(state)
    # compression: the list replaced by a summary and the last turn (u1, g1 gone from it)
    summary = user("s1", "summary of yak talk")
    append_lines(log, {"$set": {"messages": [summary, gemini("s2", "ok yak"), user("u2", "second bison"),
                                             gemini("g2", "answer bison")]}})
    sync(state)
    assert ids(state) == ["u1", "g1", "u2", "g2", "s1", "s2"]
    assert hits(state, "alpaca")  # nothing lost
    # the conversation goes on from the new list's last message
    append_lines(log, user("u3", "third camel"))
    sync(state)
    assert branch_ids(state) == ["u1", "g1", "u2", "g2", "u3"]
    # a rewind to u3 (u3 removed, as the CLI does) then a new prompt: a branch from g2
    append_lines(log, {"$rewindTo": "u3"}, user("u4", "fourth dingo"))
    sync(state)
    assert branch_ids(state) == ["u1", "g1", "u2", "g2", "u4"]
    assert "u3" in ids(state)  # stored; like any entry off an OpenClaw tree's active
    assert hits(state, "camel") == []  # branch it leaves the index (it holds that branch)
    assert hits(state, "dingo") == [(KEY, "u4")]


def test_rewrite_vanish_malformed_and_legacy_json(state: StateDir) -> None:
    chats = chat_dir("legacy")
    old = chats / "session-2026-05-01T10-00-22222222.json"
    sid = "22222222-3333-4444-5555-666666666666"
    key = f"agent:gemini:gemini:{sid}"
    record = {**meta(sid), "messages": [user("a1", "whole file ibis")]}
    old.write_text(json.dumps(record, indent=2))  # pretty-printed, no last newline
    assert sync(state).sessions == {key}
    record["messages"].append(gemini("a2", "ibis answer"))
    old.write_text(json.dumps(record, indent=2))  # rewritten whole
    sync(state)
    assert ids(state, key) == ["a1", "a2"]
    record["messages"] = record["messages"][1:]  # the CLI trims its own file
    old.write_text(json.dumps(record, indent=2))
    sync(state)
    assert ids(state, key) == ["a1", "a2"]
    old.unlink()  # vanished: its conversation stays
    sync(state)
    assert hits(state, "ibis")
    log = chats / "session-2026-05-01T10-00-11111111.jsonl"
    log.write_text(json.dumps(meta()) + "\n{broken\n" + json.dumps(user("u1", "kept koala"))
                   + "\n")
    report = sync(state)
    assert len([p for p in report.problems if f"{log.name}:2:" in p]) == 1  # once
    assert hits(state, "koala") == [(KEY, "u1")]


def test_subagent_chat_is_spawned_by_its_parent(state: StateDir) -> None:
    chats = chat_dir()
    write_lines(chats / "session-2026-05-01T10-00-11111111.jsonl", meta(), user("u1", "parent"))
    child = "99999999-8888-7777-6666-555555555555"
    (chats / SID).mkdir()
    write_lines(chats / SID / f"{child}.jsonl", meta(child, kind="subagent"), user("c1", "child quokka"))
    assert sync(state).sessions == {KEY, f"agent:gemini:gemini:{child}"}
    with state.open("gemini") as db:
        session = db.session(f"agent:gemini:gemini:{child}")
        assert session is not None and session.spawned_by == KEY


def test_a_chat_the_cli_migrated_to_jsonl_is_one_session(state: StateDir) -> None:
    """``initialize`` on resume: a ``.json`` chat is copied to ``<name>.jsonl`` (metadata
    line, every message) and goes on there; the old file stays."""
    chats = chat_dir()
    old = chats / "session-2026-05-01T10-00-11111111.json"
    old.write_text(json.dumps({**meta(), "messages": [user("u1", "old emu"),
                                                      gemini("g1", "emu answer")]}, indent=2))
    sync(state)
    write_lines(chats / (old.name + "l"), meta(), user("u1", "old emu"), gemini("g1", "emu answer"),
                {"$set": {"sessionId": SID}}, user("u2", "new emu question"))
    report = sync(state)
    assert report.problems == []
    assert ids(state) == ["u1", "g1", "u2"]
    assert len(hits(state, "emu")) == 3


def test_watch_reacts_to_whole_file_json_chats() -> None:
    """``watch``'s filter asks the registry: a Gemini ``session-*.json`` and a Copilot
    ``history-session-state/<uuid>.json`` are rewritten whole, never ``.jsonl``."""
    from backscroll.core.sources.watch import _transcript_change

    assert _transcript_change(None, "/h/.gemini/tmp/p/chats/session-2026-05-01T10-00-1111.json")
    assert _transcript_change(None, f"/h/.copilot/history-session-state/{SID}.json")
    assert not _transcript_change(None, "/h/.gemini/settings.json")


def test_reading_on_line_by_line_gives_what_a_whole_read_gives(state: StateDir) -> None:
    """A ``.jsonl`` log read on after each record (the carry: the CLI's current message list,
    each with its last entry) stores the entries, ids and parents one read of it gives:
    rewrites under one id, a compression ``$set`` and a rewind among them."""
    from backscroll.core.importers.common import ImportReport
    from backscroll.core.importers.gemini.convert import convert
    from backscroll.core.importers.gemini.importer import read_records

    log = chat_dir() / "session-2026-05-01T10-00-11111111.jsonl"
    call = {"id": "c1", "name": "ls", "args": {}, "status": "success", "result": "out",
            "timestamp": "2026-05-01T10:00:03.000Z"}
    records = [meta(), user("u1", "one wombat"), gemini("g1", "ans"),
               gemini("g1", "ans", toolCalls=[call]), user("u2", "two wombat"),
               {"$set": {"messages": [user("s1", "summary"), user("u2", "two wombat")]}},
               gemini("g2", "three"), {"$rewindTo": "g2"}, user("u3", "four wombat")]
    for n, record in enumerate(records):
        (append_lines if n else write_lines)(log, record)
        assert sync(state).problems == []
    whole, _ = convert(read_records(log, ImportReport(), None))
    got = [(e["id"], e.get("parentId")) for _, e in events(state) if e["type"] != "session"]
    assert got == [(e["id"], e.get("parentId")) for e in whole.entries]
    assert branch_ids(state) == ["u1", "g1", "g1:call:c1", "g1:result:c1", "u2", "u3"]
    assert len(hits(state, "wombat")) == 3
