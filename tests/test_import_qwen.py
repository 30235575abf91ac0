"""Qwen Code chats (``ChatRecord`` JSONL, QwenLM/qwen-code
``packages/core/src/services/chatRecordingService.ts``; folders from
``packages/core/src/config/storage.ts``): the records these tests write have the fields that
file defines (``uuid``, ``parentUuid``, ``sessionId``, ``timestamp``, ``type``, ``cwd``,
``message{role, parts}``, ``subtype``/``systemPayload``), plus the real sample in
/work/shared/data/agents/qwen-code."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from backscroll.core import formats
from backscroll.core.importers.qwen_code import import_qwen_code
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR

from .appended_formats import append_lines, history, hits, session_of, stored, sync, write_lines

pytestmark = pytest.mark.backends

SID = "5b0c7d0e-1a2b-4c3d-8e4f-112233445566"
KEY = f"agent:qwen-code:qwen-code:{SID}"
SAMPLE = "adc026b4-c620-43e4-8cc4-295593889d18"
CWD = "/home/dev/weather-app"


def record(uuid: str, parent: str | None, kind: str, second: int, **rest: Any) -> dict[str, Any]:
    return {"uuid": uuid, "parentUuid": parent, "sessionId": SID, "type": kind,
            "timestamp": f"2026-05-05T11:00:{second:02d}.000Z", "cwd": CWD, "version": "0.15.6",
            **rest}


def user(uuid: str, parent: str | None, second: int, text: str) -> dict[str, Any]:
    return record(uuid, parent, "user", second, message={"role": "user", "parts": [{"text": text}]})


def model(uuid: str, parent: str | None, second: int, *parts: dict[str, Any]) -> dict[str, Any]:
    return record(uuid, parent, "assistant", second, model="qwen3-coder-plus",
                  message={"role": "model", "parts": list(parts)})


def conversation() -> list[dict[str, Any]]:
    """A prompt, reasoning and a tool call, its result, then an answer."""
    return [
        user("u1", None, 1, "Why does the forecast page flicker?"),
        model("u2", "u1", 2, {"text": "thinking about zeppelin rendering", "thought": True},
              {"text": "Let me read the component."},
              {"functionCall": {"id": "call-1", "name": "read_file",
                                "args": {"path": "src/Forecast.tsx"}}}),
        record("u3", "u2", "tool_result", 3, message={"role": "user", "parts": [
            {"functionResponse": {"id": "call-1", "name": "read_file",
                                  "response": {"output": "const marmalade = useEffect()"}}}]},
               toolCallResult={"callId": "call-1", "status": "success"}),
        model("u4", "u3", 4, {"text": "The effect re-renders on every tick."}),
    ]


@pytest.fixture
def chat(state: StateDir) -> Path:
    path = Path.home() / ".qwen/projects/-home-dev-weather-app/chats" / f"{SID}.jsonl"
    write_lines(path, *conversation())
    return path


def test_registered_with_its_folder_and_resume_command(monkeypatch) -> None:
    fmt = formats.get("qwen-code")
    assert fmt is not None and fmt.label == "Qwen Code"
    home = Path("/home/u")
    assert fmt.default_folder({}, home) == home / ".qwen"
    assert fmt.default_folder({"QWEN_HOME": "/q"}, home) == Path("/q")
    # the runtime folder, where Qwen Code writes chats, wins over QWEN_HOME
    assert fmt.default_folder({"QWEN_HOME": "/q", "QWEN_RUNTIME_DIR": "/r"}, home) == Path("/r")
    assert fmt.resume == ("qwen", "--resume")


def test_first_import_by_sync(state: StateDir, chat: Path) -> None:
    report = sync(state)
    assert report.problems == [] and KEY in report.sessions
    session, events = session_of(state, "qwen-code", KEY)
    assert session.label == "weather-app: Why does the forecast page flicker?"
    header = events[0][1]
    assert header["cwd"] == CWD and header["timestamp"] == "2026-05-05T11:00:01.000Z"
    ids = [e.get("id") for _, e in events[1:]]
    assert ids == ["u1", "u2:model", "u2", "u3", "u4"]
    assert [h[0] for h in hits(state, "flicker")] == [KEY]
    assert [h[0] for h in hits(state, "tick")] == [KEY]
    _, response = history(state, KEY)
    assert response.source == "qwen-code"
    assert response.resume == f"cd {CWD} && qwen --resume {SID}"
    # the search's source filter knows it (through the registry)
    found = sessions_search(state, SearchRequest("flicker", source="qwen-code"), OPERATOR)
    assert [r.session_key for r in found.results] == [KEY]
    assert sessions_search(state, SearchRequest("flicker", source="codex"),
                           OPERATOR).results == []


def test_tool_result_reasoning_and_calls_are_not_indexed(state: StateDir, chat: Path) -> None:
    sync(state)
    # the tool_result record has role user in the file: never the user's words
    assert hits(state, "marmalade") == []
    assert hits(state, "zeppelin") == []  # a thought part
    assert hits(state, "Forecast.tsx") == []  # a functionCall's arguments
    plain, _ = history(state, KEY)
    with_tools, response = history(state, KEY, tools=True)
    assert "marmalade" not in plain and "marmalade" in with_tools
    roles = [m.get("role") for m in response.messages]
    assert roles.count("user") == 1 and "toolResult" in roles


def test_appended_records_are_taken_in_by_the_next_sync(state: StateDir, chat: Path) -> None:
    sync(state)
    append_lines(chat, user("u5", "u4", 5, "Und jetzt die Überschrift, bitte"),
                 model("u6", "u5", 6, {"text": "Done: the heading is fixed."}))
    report = sync(state)
    assert report.events == 2
    assert [h[0] for h in hits(state, "Überschrift")] == [KEY]
    assert sync(state).events == 0  # nothing new: nothing stored twice


def test_rewind_makes_a_branch_and_the_last_record_is_the_active_leaf(
        state: StateDir, chat: Path) -> None:
    sync(state)
    # the user rewinds to before u1's answer and asks something else: the new records hang
    # from u1 (a rewind record, then the new turn)
    append_lines(chat,
                 record("r1", "u1", "system", 5, subtype="rewind",
                        systemPayload={"truncatedCount": 3}),
                 user("u7", "r1", 6, "Rather explain the caching layer"),
                 model("u8", "u7", 7, {"text": "The cache keeps forecasts for ten minutes."}))
    sync(state)
    assert [h[0] for h in hits(state, "caching")] == [KEY]
    # the abandoned branch is stored (history of the tree) but not on the active branch
    assert hits(state, "tick") == []
    ids, rows = stored(state)[KEY]
    assert {"u4", "u8", "r1"} <= set(ids)
    assert [entry for entry, _ in rows] == ["u1", "u7", "u8"]


def test_rewritten_file_stores_nothing_twice(state: StateDir, chat: Path) -> None:
    sync(state)
    before = stored(state)[KEY]
    # rewritten whole (same records, one more): matched by uuid
    write_lines(chat, *conversation(), user("u5", "u4", 5, "one more question about radar"))
    sync(state)
    ids, _rows = stored(state)[KEY]
    assert len(ids) == len(set(ids)) == len(before[0]) + 1
    assert [h[0] for h in hits(state, "radar")] == [KEY]


def test_trimmed_or_vanished_file_keeps_its_conversation(state: StateDir, chat: Path) -> None:
    sync(state)
    write_lines(chat, *conversation()[:1])  # the agent trims its file
    sync(state)
    assert [h[0] for h in hits(state, "tick")] == [KEY]
    chat.unlink()
    report = sync(state)
    assert report.gone == 1
    assert [h[0] for h in hits(state, "flicker")] == [KEY]


def test_malformed_record_is_reported_once_and_the_rest_kept(
        state: StateDir, chat: Path) -> None:
    records = conversation()
    write_lines(chat, records[0], "{not json", {"type": "user", "message": {}}, *records[1:])
    report = sync(state)
    assert len(report.problems) == 2, report.problems
    assert any(":2:" in p for p in report.problems)
    assert any('needs a string "uuid"' in p for p in report.problems)
    assert [h[0] for h in hits(state, "tick")] == [KEY]
    assert sync(state).problems == []  # said once


def test_older_tmp_layout_non_ascii_and_title(state: StateDir) -> None:
    path = Path.home() / ".qwen/tmp/3f1a9c/chats" / f"{SID}.jsonl"
    write_lines(path, user("u1", None, 1, "天气预报页面为什么闪烁？"),
                model("u2", "u1", 2, {"text": "因为每秒都重新渲染。"}),
                record("t1", "u2", "system", 3, subtype="custom_title",
                       systemPayload={"customTitle": "Flicker 修复", "titleSource": "manual"}))
    sync(state)
    session, _ = session_of(state, "qwen-code", KEY)
    assert session.label == "Flicker 修复"
    assert [h[0] for h in hits(state, "闪烁")] == [KEY]
    assert [h[0] for h in hits(state, "渲染")] == [KEY]


def test_real_sample_import(state: StateDir, data_dir: Path) -> None:
    home = data_dir / "agents/qwen-code/home/.qwen"
    report = import_qwen_code(state, home)
    key = f"agent:qwen-code:qwen-code:{SAMPLE}"
    assert report.keys == [key] and report.skipped == []
    _, events = session_of(state, "qwen-code", key)
    assert events[0][1]["cwd"] == "/Users/alice/code/sample-project"
    from backscroll.core.reconcile import reconcile_all
    reconcile_all(state)
    assert [h[0] for h in hits(state, "Calculate")] == [key]
    assert hits(state, "multiplication") == []  # only in the thought part
    assert import_qwen_code(state, home).events == 0


def test_real_sample_under_a_copied_home_by_sync(state: StateDir, data_dir: Path) -> None:
    shutil.copytree(data_dir / "agents/qwen-code/home/.qwen", Path.home() / ".qwen")
    report = sync(state)
    assert f"agent:qwen-code:qwen-code:{SAMPLE}" in report.sessions
    assert report.problems == []
