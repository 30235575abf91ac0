"""Factory Droid sessions. Droid is closed source: the lines these tests write have the
shape /work/shared/data/agent_formats.md gives (a ``session_start`` line, then Claude-Code-like
``message`` lines whose user content opens with an injected ``<system-reminder>`` block),
beside a ``<id>.settings.json``. No real sample is kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backscroll.core import formats
from backscroll.core.importers.droid import import_droid
from backscroll.core.reconcile import reconcile_all
from backscroll.core.state import StateDir

from .appended_formats import append_lines, history, hits, session_of, stored, sync, write_lines

pytestmark = pytest.mark.backends

SID = "3e4f5a6b-7c8d-4e9f-a0b1-c2d3e4f5a6b7"
KEY = f"agent:droid:droid:{SID}"
CWD = "/home/dev/payments"
REMINDER = ("<system-reminder>\nThe working directory holds a gazebo of rules; the user "
            "cannot see this.\n</system-reminder>")


def start() -> dict[str, Any]:
    return {"type": "session_start", "id": SID, "title": "", "owner": "dev", "version": 2,
            "cwd": CWD}


def message(mid: str, parent: str | None, second: int, role: str,
            *content: dict[str, Any]) -> dict[str, Any]:
    line: dict[str, Any] = {"type": "message", "id": mid,
                            "timestamp": f"2026-06-01T09:00:{second:02d}.000Z",
                            "message": {"role": role, "content": list(content)}}
    if parent:
        line["parentId"] = parent
    return line


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def conversation() -> list[dict[str, Any]]:
    return [
        start(),
        message("m1", None, 1, "user", text(REMINDER), text("Refund flow double-charges")),
        message("m2", "m1", 2, "assistant", {"type": "thinking", "thinking": "a walrus race?"},
                text("Checking the handler."),
                {"type": "tool_use", "id": "tu1", "name": "Read",
                 "input": {"file_path": "refund.py"}}),
        message("m3", "m2", 3, "user", {"type": "tool_result", "tool_use_id": "tu1",
                                        "content": "def refund(): pelican()"}),
        message("m4", "m3", 4, "assistant", text("The retry is not idempotent.")),
    ]


def session_file() -> Path:
    return Path.home() / ".factory/sessions/-home-dev-payments" / f"{SID}.jsonl"


@pytest.fixture
def droid(state: StateDir) -> Path:
    path = write_lines(session_file(), *conversation())
    path.with_name(f"{SID}.settings.json").write_text(
        json.dumps({"model": "claude-sonnet-4-5", "reasoningEffort": "medium"}))
    return path


def test_registered_with_its_folder_and_resume_command() -> None:
    fmt = formats.get("droid")
    assert fmt is not None and fmt.label == "Factory Droid"
    home = Path("/home/u")
    assert fmt.default_folder({}, home) == home / ".factory/sessions"
    assert fmt.default_folder({"FACTORY_HOME": "/f"}, home) == Path("/f/sessions")
    assert fmt.resume == ("droid", "--resume")


def test_first_import(state: StateDir, droid: Path) -> None:
    report = sync(state)
    assert report.problems == [] and KEY in report.sessions
    session, events = session_of(state, "droid", KEY)
    assert session.label == "payments: Refund flow double-charges"
    assert events[0][1]["cwd"] == CWD
    assistant = [e for _, e in events if (e.get("message") or {}).get("role") == "assistant"]
    assert {e["message"]["model"] for e in assistant} == {"claude-sonnet-4-5"}
    assert [h[0] for h in hits(state, "idempotent")] == [KEY]
    _, response = history(state, KEY)
    assert response.resume == f"cd {CWD} && droid --resume {SID}"


def test_system_reminder_is_kept_but_not_indexed(state: StateDir, droid: Path) -> None:
    sync(state)
    assert hits(state, "gazebo") == []
    assert [h[0] for h in hits(state, "Refund")] == [KEY]
    _, events = session_of(state, "droid", KEY)
    users = [e for _, e in events if (e.get("message") or {}).get("role") == "user"]
    assert [u["message"]["content"] for u in users] == [[text("Refund flow double-charges")]]
    context = [e for _, e in events if e.get("customType") == "droid.context"]
    assert len(context) == 1 and "gazebo" in context[0]["content"][0]["text"]


def test_tool_output_and_thinking_are_not_indexed(state: StateDir, droid: Path) -> None:
    sync(state)
    assert hits(state, "pelican") == [] and hits(state, "walrus") == []
    plain, _ = history(state, KEY)
    with_tools, _ = history(state, KEY, tools=True)
    assert "pelican" not in plain and "pelican" in with_tools


def test_append_rewrite_and_vanish(state: StateDir, droid: Path) -> None:
    sync(state)
    append_lines(droid, message("m5", "m4", 5, "user", text(REMINDER),
                                text("Add a test for the ledger")),
                 message("m6", "m5", 6, "assistant", text("Test added.")))
    assert sync(state).events == 3  # the context, the prompt and the answer
    assert [h[0] for h in hits(state, "ledger")] == [KEY]
    before, _ = stored(state)[KEY]
    write_lines(droid, *conversation())  # the agent rewrites its file shorter
    sync(state)
    assert stored(state)[KEY][0] == before  # nothing twice, nothing lost
    droid.unlink()
    assert sync(state).gone == 1
    assert [h[0] for h in hits(state, "ledger")] == [KEY]


def test_malformed_line_reported_once_rest_kept(state: StateDir) -> None:
    lines = conversation()
    write_lines(session_file(), lines[0], lines[1], "[1, 2", {"type": "message",
                                                              "message": {"role": 7}},
                *lines[2:])
    report = sync(state)
    assert len(report.problems) == 2, report.problems
    assert [h[0] for h in hits(state, "idempotent")] == [KEY]
    assert sync(state).problems == []


def test_non_ascii_and_import_command(state: StateDir, tmp_path: Path) -> None:
    folder = tmp_path / "sessions/-home-dev-kasse"
    write_lines(folder / f"{SID}.jsonl", start(),
                message("m1", None, 1, "user", text(REMINDER + "\nDie Rückerstattung hängt")),
                message("m2", "m1", 2, "assistant", text("払い戻しのリトライを直しました。")))
    report = import_droid(state, tmp_path / "sessions")
    assert report.keys == [KEY] and report.skipped == []
    reconcile_all(state)
    assert [h[0] for h in hits(state, "Rückerstattung")] == [KEY]
    assert [h[0] for h in hits(state, "リトライ")] == [KEY]
    assert hits(state, "gazebo") == []
    assert import_droid(state, tmp_path / "sessions").events == 0
