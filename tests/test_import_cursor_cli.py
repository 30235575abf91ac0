"""Cursor's CLI agent transcripts. Cursor is closed source: the lines these tests write have
the shape of its files (``{"role", "message": {"content": [text | tool_use]}}``, no ids, no
times; /work/shared/data/agent_formats.md) and the real sample in
/work/shared/data/agents/cursor (a session and its sub-agent) is read as it is."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from backscroll.core import formats
from backscroll.core.importers.cursor_cli import import_cursor_cli
from backscroll.core.reconcile import reconcile_all
from backscroll.core.state import StateDir

from .appended_formats import append_lines, history, hits, session_of, stored, sync, write_lines

pytestmark = pytest.mark.backends

SID = "7c1d2e3f-4a5b-4c6d-8e7f-8091a2b3c4d5"
SUB = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
KEY = f"agent:cursor:cursor:{SID}"
SUB_KEY = f"agent:cursor:cursor:{SUB}"
SAMPLE = "9f3e2d1c-0b4a-4c5d-8e6f-7a8b9c0d1e2f"
SAMPLE_SUB = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
T0 = 1_780_000_000  # the file's modification time the tests set (seconds)


def said(text: str) -> dict[str, Any]:
    return {"role": "user", "message": {"content": [
        {"type": "text", "text": f"<user_query>\n{text}\n</user_query>"}]}}


def answer(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "message": {"content": list(blocks)}}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def conversation() -> list[dict[str, Any]]:
    return [
        said("find the slow query in the billing service"),
        answer(text("Looking at the repository."),
               {"type": "tool_use", "name": "Shell", "input": {"command": "grep -r quokka ."}},
               {"type": "thinking", "thinking": "maybe an ocelot index is missing"}),
        answer(text("The invoices query has no index on customer_id.")),
    ]


def folder(root: Path | None = None) -> Path:
    return (root or Path.home() / ".cursor") / "projects/home-dev-billing/agent-transcripts" / SID


@pytest.fixture
def transcript(state: StateDir) -> Path:
    path = write_lines(folder() / f"{SID}.jsonl", *conversation())
    os.utime(path, (T0, T0))
    return path


def test_registered_with_its_folder_and_resume_command() -> None:
    fmt = formats.get("cursor")
    assert fmt is not None
    home = Path("/home/u")
    assert fmt.default_folder({}, home) == home / ".cursor/projects"
    assert fmt.default_folder({"CURSOR_CONFIG_DIR": "/c"}, home) == Path("/c/projects")
    assert fmt.resume == ("cursor-agent", "--resume")


def test_first_import_derived_ids_and_the_files_time(state: StateDir, transcript: Path) -> None:
    report = sync(state)
    assert report.problems == [] and KEY in report.sessions
    session, events = session_of(state, "cursor", KEY)
    assert session.label == "home-dev-billing: find the slow query in the billing service"
    assert session.created_at == T0 * 1000
    messages = [e for _, e in events if e["type"] == "message"]
    assert len(messages) == 3 and {m["message"]["timestamp"] for m in messages} == {T0 * 1000}
    assert [m["parentId"] for m in messages[1:]] == [m["id"] for m in messages[:-1]]
    # the <user_query> tags are not the user's words
    assert messages[0]["message"]["content"] == [
        {"type": "text", "text": "find the slow query in the billing service"}]
    assert [h[0] for h in hits(state, "billing")] == [KEY]
    assert hits(state, "user_query") == []
    # the folder it ran in is only in Cursor's encoded project name, which cannot be decoded
    # without guessing: no command is offered (resume.py asks for the folder)
    _, response = history(state, KEY)
    assert response.resume is None


def test_tool_calls_and_thinking_are_not_indexed(state: StateDir, transcript: Path) -> None:
    sync(state)
    assert hits(state, "quokka") == [] and hits(state, "ocelot") == []
    plain, _ = history(state, KEY)
    with_tools, _ = history(state, KEY, tools=True)
    assert "quokka" not in plain and "quokka" in with_tools


def test_appended_lines_get_their_time_and_old_lines_keep_theirs(
        state: StateDir, transcript: Path) -> None:
    sync(state)
    append_lines(transcript, said("and the ledger export?"), answer(text("It streams rows.")))
    os.utime(transcript, (T0 + 60, T0 + 60))
    report = sync(state)
    assert report.events == 2
    _, events = session_of(state, "cursor", KEY)
    times = [e["message"]["timestamp"] for _, e in events if e["type"] == "message"]
    assert times == [T0 * 1000] * 3 + [(T0 + 60) * 1000] * 2
    # read again whole (rewritten with the same lines): nothing twice, times unchanged
    write_lines(transcript, *conversation(), said("and the ledger export?"),
                answer(text("It streams rows.")))
    os.utime(transcript, (T0 + 120, T0 + 120))
    sync(state)
    ids, _ = stored(state)[KEY]
    assert len(ids) == len(set(ids)) == 6  # header + 5 messages
    _, again = session_of(state, "cursor", KEY)
    assert [e["message"]["timestamp"] for _, e in again if e["type"] == "message"] == times
    assert [h[0] for h in hits(state, "ledger")] == [KEY]


def test_subagent_is_linked_to_its_parent(state: StateDir, transcript: Path) -> None:
    write_lines(folder() / "subagents" / f"{SUB}.jsonl", said("list the migrations"),
                answer(text("There are twelve migrations.")))
    sync(state)
    session, _ = session_of(state, "cursor", SUB_KEY)
    assert session.spawned_by == KEY and session.parent_key == KEY
    assert session.label.startswith("home-dev-billing: subagent: list the migrations")
    assert [h[0] for h in hits(state, "twelve")] == [SUB_KEY]


def test_vanished_file_keeps_its_conversation(state: StateDir, transcript: Path) -> None:
    sync(state)
    transcript.unlink()
    assert sync(state).gone == 1
    assert [h[0] for h in hits(state, "billing")] == [KEY]


def test_malformed_line_reported_once_rest_kept(state: StateDir) -> None:
    lines = conversation()
    write_lines(folder() / f"{SID}.jsonl", lines[0], '{"role": "user", "mess', {"role": 3},
                *lines[1:])
    report = sync(state)
    assert len(report.problems) == 2, report.problems
    assert [h[0] for h in hits(state, "customer_id")] == [KEY]
    assert sync(state).problems == []


def test_non_ascii(state: StateDir) -> None:
    write_lines(folder() / f"{SID}.jsonl", said("Почему тормозит выгрузка счетов?"),
                answer(text("Нет индекса по клиенту — добавьте его.")))
    sync(state)
    assert [h[0] for h in hits(state, "выгрузка")] == [KEY]
    assert [h[0] for h in hits(state, "индекса")] == [KEY]


def test_real_sample(state: StateDir, data_dir: Path) -> None:
    projects = data_dir / "agents/cursor/home/.cursor/projects"
    report = import_cursor_cli(state, projects)
    main, sub = f"agent:cursor:cursor:{SAMPLE}", f"agent:cursor:cursor:{SAMPLE_SUB}"
    assert sorted(report.keys) == sorted([main, sub]) and report.skipped == []
    session, _ = session_of(state, "cursor", sub)
    assert session.spawned_by == main
    reconcile_all(state)
    assert [h[0] for h in hits(state, "clean")] == [main]
    assert hits(state, "description") == []  # only in a tool call's input
    assert import_cursor_cli(state, projects).events == 0


def test_real_sample_by_sync(state: StateDir, data_dir: Path) -> None:
    shutil.copytree(data_dir / "agents/cursor/home/.cursor", Path.home() / ".cursor")
    (Path.home() / ".cursor/extensions/x").mkdir(parents=True)
    (Path.home() / ".cursor/extensions/x/log.jsonl").write_text('{"a": 1}\n')
    report = sync(state)
    assert report.problems == [] and report.notes == []
    assert {f"agent:cursor:cursor:{SAMPLE}", f"agent:cursor:cursor:{SAMPLE_SUB}"} <= set(
        report.sessions)
