"""Cline and Roo Code tasks (``core/importers/cline``): ``api_conversation_history.json`` as
cline/cline ``apps/vscode/src/core/storage/disk.ts`` writes it (Anthropic-style
``[{role, content[], ts, modelInfo}]``, ``state/taskHistory.json`` with ``HistoryItem``s,
``src/shared/HistoryItem.ts``) and RooCodeInc/Roo-Code ``src/core/task-persistence/
apiMessages.ts`` (``ApiMessage`` with ``condenseParent``, ``isSummary``; ``history_item.json``
per task, ``TaskHistoryStore.ts``). Files rewritten whole: re-read by sync, nothing twice,
nothing lost when trimmed."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from backscroll.core import formats
from backscroll.core.importers.cline import import_tasks
from backscroll.core.sources import sync_sources
from backscroll.core.sources.detect import default_folders
from backscroll.core.sources.sync import SyncReport
from backscroll.core.sources.watch import _transcript_change, follow_sources
from backscroll.core.state import StateDir

from .wholefiles import events_of, history_json, search, session_of

pytestmark = pytest.mark.backends

SAMPLE = Path("/work/shared/data/agents/cline/home/.config/Code/User/globalStorage/"
              "saoudrizwan.claude-dev/tasks/1777073160794/api_conversation_history.json")
CLINE = ".config/Code/User/globalStorage/saoudrizwan.claude-dev"
ROO = ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline"
TASK = "1767000000000"
ROO_TASK = "0b6e1f9c-6a43-4a51-9d0e-3f1c2d4e5f60"


def cline_task(ts: int = 1767000000000) -> list[dict[str, Any]]:
    """A Cline task: the user's words in <task>, environment details beside them, an
    assistant reply with <thinking> and an XML tool call, a tool result, then feedback and a
    native tool call whose input is the answer."""
    return [
        {"role": "user", "ts": ts, "content": [
            {"type": "text", "text": "<task>\nfix the flamingo parser\n</task>"},
            {"type": "text", "text": "<environment_details>\n# Current Working Directory "
                                     "(/home/me/birds) Files\nquetzalfile.txt\n"
                                     "</environment_details>"}]},
        {"role": "assistant", "ts": ts + 1000, "modelInfo": {"modelId": "claude-sonnet-4",
                                                             "providerId": "anthropic"},
         "content": [{"type": "text", "text": "<thinking>pondering the axolotl</thinking>\n"
                                              "I will read the parser.\n<read_file>\n"
                                              "<path>parser.py</path>\n</read_file>"}]},
        {"role": "user", "ts": ts + 2000, "content": [
            {"type": "text", "text": "[read_file for 'parser.py'] Result:\ndef narwhal(): pass"},
            {"type": "text", "text": "<environment_details>\nnothing\n</environment_details>"}]},
        {"role": "assistant", "ts": ts + 3000, "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "attempt_completion",
             "input": {"result": "The pelican bug is fixed."}}]},
        {"role": "user", "ts": ts + 4000, "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"},
            {"type": "text", "text": "[attempt_completion] Result:\n<feedback>\nnow the "
                                     "résumé page, ça marche? 日本語\n</feedback>"}]},
    ]


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    return path


def cline_home(home: Path, messages: list[dict[str, Any]] | None = None) -> Path:
    tasks = home / CLINE / "tasks"
    write(home / CLINE / "state/taskHistory.json", [
        {"id": TASK, "ts": 1767000000000, "task": "fix the flamingo parser",
         "cwdOnTaskInitialization": "/home/me/birds", "tokensIn": 1, "tokensOut": 1,
         "totalCost": 0}])
    return write(tasks / TASK / "api_conversation_history.json", messages or cline_task())


KEY = f"agent:cline:cline:{TASK}"
ROO_KEY = f"agent:roo-code:roo-code:{ROO_TASK}"


def test_real_sample_imported_titled_and_searchable(state: StateDir) -> None:
    report = import_tasks(state, SAMPLE.parent.parent)
    key = "agent:cline:cline:1777073160794"
    ui_key = "agent:cline:cline:1767644899093"  # a task with only its ui_messages.json
    assert report.skipped == [] and report.keys == [ui_key, key]
    session = session_of(state, "cline", key)
    assert session.label.startswith("Marine-Response-Repo: ")  # cwd from the environment
    assert session.source == "cline" and session.created_at == 1777073160794
    events = events_of(state, "cline", key)
    assert events[0]["cwd"] == "c:/Apps/MRA022626 - Copy/Marine-Response-Repo"
    users = [e for e in events if e.get("message", {}).get("role") == "user"]
    assert users[0]["message"]["content"][0]["text"].startswith("The attached is a technical")
    assert all("<environment_details>" not in json.dumps(u) for u in users)
    assert key in search(state, "technical writeup", "cline")
    assert search(state, "environment_details") == []  # stored, never indexed
    # a re-import stores nothing twice
    assert import_tasks(state, SAMPLE.parent.parent).events == 0
    # the UI list: the task and the feedback are the user's, the answers the assistant's
    ui = events_of(state, "cline", ui_key)
    assert ui[1]["message"] == {"role": "user", "content": [{"type": "text", "text": "yo wassup"}]}
    assert search(state, "look at this project and tell me") == [ui_key]
    assert any(e["message"].get("model") == "x-ai/grok-code-fast-1" for e in ui[1:])
    assert search(state, "api_req_started") == [] and search(state, "task_progress") == []


def test_user_words_indexed_tools_and_environment_only_stored(state: StateDir) -> None:
    file = cline_home(Path.home())
    write(file.parent / "ui_messages.json", [  # the same task as shown: not read twice
        {"ts": 1767000000000, "type": "say", "say": "text", "text": "capybara task"}])
    report = sync_sources(state)
    assert report.problems == [] and report.sessions == {KEY}
    session = session_of(state, "cline", KEY)
    assert session.label == "birds: fix the flamingo parser"
    events = events_of(state, "cline", KEY)
    assert events[0]["cwd"] == "/home/me/birds"
    assert any(e.get("message", {}).get("model") == "claude-sonnet-4" for e in events)
    for word in ("flamingo", "pelican", "résumé", "日本語"):
        assert search(state, word) == [KEY], word
    assert search(state, "capybara") == []  # ui_messages.json beside the api history: unread
    for hidden in ("quetzalfile", "narwhal", "axolotl", "parser.py"):  # tool, env, thinking
        assert search(state, hidden) == [], hidden
        assert hidden in history_json(state, KEY, tools=True), hidden
    assert "narwhal" not in history_json(state, KEY, tools=False)
    assert "I will read the parser." in history_json(state, KEY, tools=False)


def test_rewrite_grows_then_trimmed_keeps_everything(state: StateDir) -> None:
    file = cline_home(Path.home())
    sync_sources(state)
    before = events_of(state, "cline", KEY)
    assert sync_sources(state).events == 0  # unchanged: not read
    grown = [*cline_task(), {"role": "assistant", "ts": 1767000005000,
                             "content": [{"type": "text", "text": "the wombat page is done"}]}]
    write(file, grown)
    report = sync_sources(state)
    assert (report.read, report.events, report.messages) == (1, 1, 1)
    assert search(state, "wombat") == [KEY]  # live: searchable at once
    # Cline condenses: the early messages go, a summary takes their place
    trimmed = [{"role": "user", "ts": 1767000006000, "content": [
        {"type": "text", "text": "<task>summary of the earlier work</task>"}]}, grown[-1]]
    write(file, trimmed)
    report = sync_sources(state)
    assert report.problems == [] and report.events == 1
    after = events_of(state, "cline", KEY)
    assert after[:len(before)] == before  # nothing lost
    assert search(state, "flamingo") == [KEY] and search(state, "wombat") == [KEY]
    assert len({e.get("id") for e in after}) == len(after)  # nothing twice


def test_vanished_task_keeps_its_conversation(state: StateDir) -> None:
    file = cline_home(Path.home())
    sync_sources(state)
    shutil.rmtree(file.parent)
    report = sync_sources(state)
    assert report.gone == 1
    assert search(state, "flamingo") == [KEY]


def test_malformed_record_and_broken_file_said_once_rest_kept(state: StateDir) -> None:
    messages = cline_task()
    file = cline_home(Path.home(), [messages[0], "not a message", {"ts": 5}, *messages[1:]])
    write(file.parent.parent / "1767000009999/api_conversation_history.json", [])
    broken = file.parent.parent / "1767000009998/api_conversation_history.json"
    broken.parent.mkdir()
    broken.write_text('[{"role": "user", "content": [')
    report = sync_sources(state)
    assert [p for p in report.problems if "message 1: not an object" in p] != []
    assert [p for p in report.problems if "message 2: no user or assistant role" in p] != []
    assert [p for p in report.problems if "1767000009998" in p and "not a Cline" in p] != []
    assert search(state, "pelican") == [KEY]
    assert sync_sources(state).problems == []  # said once: unchanged files are not read


def test_roo_code_task_condensed_without_deleting(state: StateDir) -> None:
    """Roo marks condensed messages with ``condenseParent`` and adds an ``isSummary`` one."""
    task = Path.home() / ROO / "tasks" / ROO_TASK
    messages = [
        {"role": "user", "ts": 1767100000000, "content": [
            {"type": "text", "text": "<task>tune the kiwi scheduler</task>"}]},
        {"type": "reasoning", "ts": 1767100000500, "text": "ocelot reasoning"},
        {"role": "assistant", "ts": 1767100001000, "content": [
            {"type": "text", "text": "Tuned the kiwi scheduler."}]},
    ]
    write(task / "history_item.json", {"id": ROO_TASK, "ts": 1767100000000, "number": 1,
                                       "task": "tune the kiwi scheduler",
                                       "workspace": "/home/me/orchard"})
    write(task / "api_conversation_history.json", messages)
    assert sync_sources(state).sessions == {ROO_KEY}
    condensed = [{**m, "condenseParent": "c1"} for m in messages] + [
        {"role": "assistant", "ts": 1767100002000, "isSummary": True, "condenseId": "c1",
         "content": [{"type": "text", "text": "summary: platypus"}]}]
    write(task / "api_conversation_history.json", condensed)
    report = sync_sources(state)
    assert report.events == 1  # only the summary is new
    assert session_of(state, "roo-code", ROO_KEY).label == "orchard: tune the kiwi scheduler"
    assert search(state, "kiwi", "roo-code") == [ROO_KEY]
    assert search(state, "ocelot") == [] and search(state, "platypus") == []


def test_default_folders_every_vscode_build_and_the_cli() -> None:
    home = Path.home()
    others = [home / ".cline/data/tasks",
              home / "Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/tasks",
              home / ".config/VSCodium/User/globalStorage/rooveterinaryinc.roo-cline/tasks"]
    assert not {s.path for s in default_folders()} & set(others)  # only when they exist
    for folder in others:
        folder.mkdir(parents=True)
    found = {(s.kind, s.path) for s in default_folders()}
    assert ("cline", home / CLINE / "tasks") in found
    assert ("cline", home / ".cline/data/tasks") in found
    assert ("cline", home / "Library/Application Support/Code/User/globalStorage/"
            "saoudrizwan.claude-dev/tasks") in found
    assert ("roo-code", home / ".config/VSCodium/User/globalStorage/"
            "rooveterinaryinc.roo-cline/tasks") in found
    assert formats.get("cline").resume is None and formats.get("roo-code").resume is None


def test_a_fork_folder_is_synced_only_when_it_exists(state: StateDir) -> None:
    home = Path.home()
    folder = home / ".config/Cursor/User/globalStorage/saoudrizwan.claude-dev/tasks" / TASK
    write(folder / "api_conversation_history.json", cline_task())
    report = sync_sources(state)
    assert report.files == 1 and report.sessions == {KEY}  # (Cursor's own editor source too)


def test_watch_follows_a_task_and_is_told_of_whole_files(state: StateDir) -> None:
    cline_home(Path.home())
    reports: list[SyncReport] = []
    stop = threading.Event()

    def on_sync(report: SyncReport) -> None:
        reports.append(report)
        stop.set()  # one pass: it goes through the same doors as sync

    follow_sources(state, on_sync, stop, polling=True)
    assert reports[0].sessions == {KEY}
    for name in ("api_conversation_history.json", f"{ROO_TASK}.json",
                 ".aider.chat.history.md"):
        assert _transcript_change(None, f"/x/{name}"), name  # the notifier's filter lets it in


def test_ui_messages_first_then_the_api_history_feed_one_session(state: StateDir) -> None:
    """``ui_messages.json`` (``ClineMessage``, cline/cline ``src/shared/ExtensionMessage.ts``)
    read while the task has no api history; the api history, once written, joins it."""
    folder = Path.home() / CLINE / "tasks" / TASK
    write(folder / "ui_messages.json", [
        {"ts": 1767000000000, "type": "say", "say": "text", "text": "fix the flamingo parser"},
        {"ts": 1767000000500, "type": "say", "say": "reasoning", "text": "gazelle musing"},
        {"ts": 1767000001000, "type": "say", "say": "command", "text": "ls hyena"},
        {"ts": "1767000002000", "type": "say", "say": "text", "text": "Looking", "partial": True},
    ])
    report = sync_sources(state)
    assert report.problems == [] and report.sessions == {KEY}
    events = events_of(state, "cline", KEY)
    assert [e["message"]["role"] for e in events[1:]] == ["user", "assistant", "toolResult"]
    assert search(state, "gazelle") == [] and search(state, "hyena") == []
    write(folder / "api_conversation_history.json", cline_task())
    report = sync_sources(state)
    assert report.problems == [] and report.sessions == {KEY}
    assert search(state, "pelican") == [KEY]
