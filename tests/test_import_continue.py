"""Continue sessions (``core/importers/continue_dev``): ``~/.continue/sessions/<id>.json`` as
continuedev/continue ``core/index.d.ts`` defines it (``Session``, ``ChatHistoryItem``,
``ChatMessage`` with ``MessageContent`` a string or parts, ``ToolCallDelta``), written whole by
``core/util/history.ts`` with the ``sessions.json`` index (``BaseSessionMetadata``), under
``$CONTINUE_GLOBAL_DIR`` when set (``core/util/paths.ts``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backscroll.core import formats
from backscroll.core.importers.continue_dev import folder_of, import_continue
from backscroll.core.sources import sync_sources
from backscroll.core.sources.detect import default_folders
from backscroll.core.state import StateDir

from .wholefiles import events_of, history_json, search, session_of

pytestmark = pytest.mark.backends

SID = "8f0a3c52-1b7e-4d2c-9a61-0c2f4b5d6e7f"
KEY = f"agent:continue:continue:{SID}"


def history() -> list[dict[str, Any]]:
    return [
        {"message": {"role": "user", "content": "why does the lemur cache miss?"},
         "contextItems": [{"name": "cache.py", "description": "file",
                           "content": "def gecko_lookup(): ..."}],
         "editorState": {"type": "doc", "content": [{"type": "paragraph", "content": [
             {"type": "text", "text": "why does the lemur cache miss?"}]}]}},
        {"message": {"role": "assistant", "content": "", "toolCalls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "read_file", "arguments": "{\"path\": \"tapir.py\"}"}}]},
         "contextItems": [], "reasoning": {"active": False, "text": "mongoose thoughts",
                                           "startAt": 1}},
        {"message": {"role": "tool", "content": "def okapi(): pass", "toolCallId": "call_1"},
         "contextItems": []},
        {"message": {"role": "assistant", "content": [
            {"type": "text", "text": "The lemur cache keys on the wrong field."}]},
         "contextItems": []},
        {"message": {"role": "user", "content": [
            {"type": "text", "text": "merci, ça marche — 谢谢"}]}, "contextItems": []},
    ]


def write_session(folder: Path, items: list[Any], title: str = "Lemur cache") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sessions.json").write_text(json.dumps([
        {"sessionId": SID, "title": title, "dateCreated": "1767200000000",
         "workspaceDirectory": "file:///home/me/zoo%20app"}]))
    file = folder / f"{SID}.json"
    file.write_text(json.dumps({"sessionId": SID, "title": title,
                                "workspaceDirectory": "file:///home/me/zoo%20app",
                                "chatModelTitle": "GPT-5", "history": items},
                               ensure_ascii=False))
    return file


def sessions() -> Path:
    return Path.home() / ".continue/sessions"


def test_first_import_title_folder_model_and_what_is_indexed(state: StateDir) -> None:
    write_session(sessions(), history())
    report = sync_sources(state)
    assert report.problems == [] and report.sessions == {KEY}
    session = session_of(state, "continue", KEY)
    assert session.label == "zoo app: Lemur cache"
    assert session.created_at == 1767200000000
    events = events_of(state, "continue", KEY)
    assert events[0]["cwd"] == "/home/me/zoo app"
    assert any(e.get("message", {}).get("model") == "GPT-5" for e in events)
    assert search(state, "lemur") == [KEY]
    assert search(state, "ça marche") == [KEY] and search(state, "谢谢") == [KEY]
    for hidden in ("gecko_lookup", "tapir", "okapi", "mongoose"):  # context, tools, reasoning
        assert search(state, hidden) == [], hidden
        assert hidden in history_json(state, KEY, tools=True), hidden
    # editorState repeats the user's words: they are stored and indexed once
    shown = history_json(state, KEY, tools=False)
    assert shown.count("why does the lemur cache miss?") == 1


def test_rewritten_file_adds_only_new_messages_and_a_cut_loses_nothing(state: StateDir) -> None:
    file = write_session(sessions(), history()[:2])
    sync_sources(state)
    before = events_of(state, "continue", KEY)
    write_session(sessions(), history())
    report = sync_sources(state)
    assert report.problems == [] and report.messages == 3
    assert search(state, "谢谢") == [KEY]  # live: searchable at once
    # the user edits the first message: Continue cuts the history there
    edited = [{"message": {"role": "user", "content": "why does the lemur cache hit?"},
               "contextItems": []}]
    write_session(sessions(), edited)
    report = sync_sources(state)
    assert report.messages == 1
    after = events_of(state, "continue", KEY)
    assert after[:len(before)] == before and len(after) == len({e.get("id") for e in after})
    assert search(state, "okapi") == [] and "okapi" in history_json(state, KEY, tools=True)
    file.unlink()
    assert sync_sources(state).gone == 1
    assert search(state, "lemur") == [KEY]  # a vanished file: its conversation stays


def test_an_answer_usage_is_an_entry_of_its_own(state: StateDir) -> None:
    """An assistant message's ``usage`` (OpenAI's object: the prompt counts the cached
    tokens) becomes an empty assistant message beside the answer, added when it comes."""
    items = history()
    file = write_session(sessions(), items)
    sync_sources(state)
    items[3]["message"]["usage"] = {
        "promptTokens": 900, "completionTokens": 40,
        "promptTokensDetails": {"cachedTokens": 600, "cacheWriteTokens": 100},
        "completionTokensDetails": {"reasoningTokens": 12}}
    write_session(sessions(), items)
    assert file.is_file()
    sync_sources(state)
    usages = [e["message"] for e in events_of(state, "continue", KEY)
              if "usage" in e.get("message", {})]
    assert [(m["content"], m["model"], m["usage"]) for m in usages] == [
        ([], "GPT-5", {"input": 300, "output": 40, "cacheRead": 600, "cacheWrite": 100,
                       "totalTokens": 1040})]


def test_two_equal_messages_are_two_entries(state: StateDir) -> None:
    same = {"message": {"role": "user", "content": "again"}, "contextItems": []}
    reply = {"message": {"role": "assistant", "content": "ok"}, "contextItems": []}
    write_session(sessions(), [same, reply, same, reply])
    sync_sources(state)
    messages = [e for e in events_of(state, "continue", KEY) if e["type"] == "message"]
    assert len(messages) == 4


def test_malformed_item_said_once_and_the_rest_kept(state: StateDir) -> None:
    write_session(sessions(), [history()[0], {"contextItems": []}, "junk", *history()[3:]])
    broken, other = (f"0000000{n}-0000-4000-8000-000000000000.json" for n in (1, 2))
    (sessions() / broken).write_text("{\"history\": [")
    (sessions() / other).write_text("[1, 2]")
    (sessions() / "settings.json").write_text("{}")  # not a session's name: not read
    report = sync_sources(state)
    said = report.problems
    assert any("history item 1: no message with a role" in p for p in said)
    assert any("history item 2: no message with a role" in p for p in said)
    assert any(broken in p and "not a Continue session" in p for p in said)
    assert any(other in p and "no history list" in p for p in said)
    assert not any("settings.json" in p for p in said)
    assert report.sessions == {KEY} and search(state, "lemur") == [KEY]
    assert sync_sources(state).problems == []


def test_import_command_and_the_env_override(state: StateDir, monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    write_session(tmp_path / "elsewhere/sessions", history())
    monkeypatch.setenv("CONTINUE_GLOBAL_DIR", str(tmp_path / "elsewhere"))
    assert {s.path for s in default_folders() if s.kind == "continue"} == {
        tmp_path / "elsewhere/sessions"}
    report = import_continue(state, tmp_path / "elsewhere/sessions")
    assert report.keys == [KEY] and import_continue(state, tmp_path / "elsewhere/sessions").events == 0
    assert formats.get("continue").resume is None


def test_workspace_uri_forms() -> None:
    assert folder_of("file:///home/me/a%20b") == "/home/me/a b"
    assert folder_of("file:///c%3A/code/app") == "c:/code/app"
    assert folder_of("/plain/path") == "/plain/path" and folder_of("") is None
