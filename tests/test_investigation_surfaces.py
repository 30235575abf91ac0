"""A token and a terminal escape planted in every field the investigation features of issue 26
read (a model name, a cwd, an edited file's path, a tool's name, arguments and result, a call
id) come out of no answer: ``usage``, ``calls``, ``search --tools``, ``history`` with its
facts, the session list, as text and as JSON, and the MCP server's ``sessions_list`` and
``tool_calls_search``. On the embedded backend: the storage is tested on both elsewhere."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR
from backscroll.tui.cli import main
from backscroll.tui.mcp.server import build_server

from .events import BASE_MS, header, iso, msg
from .test_tool_calls import store

TOKEN = "ghp_A1b2C3d4E5F6g7H8i9J0k1L2m3N4o5P6q7R8"
ESCAPES = "\x1b]0;pwned\x07\x1b[2J"
LEAKS = (TOKEN, TOKEN[6:-4], "\x1b")
KEY = "agent:main:main"


@pytest.fixture
def planted(tmp_path, monkeypatch) -> StateDir:
    state = StateDir(tmp_path / "state")
    monkeypatch.setenv("BACKSCROLL_STATE_DIR", str(state.path))
    path = f"/home/u/{TOKEN}/src{ESCAPES}.py"
    call = {"type": "toolCall", "id": f"c:{TOKEN}", "name": "Edit",
            "arguments": {"file_path": path, "new_string": f"key = {TOKEN}"}}
    assistant = msg("a1", "u1", "assistant", [call], ms=2)
    assistant["message"].update(model=f"{TOKEN}{ESCAPES}", provider="anthropic",
                                usage={"input": 10, "output": 5, "cost": {"total": 0.5}})
    result = msg("r1", "a1", "toolResult", [{"type": "text", "text": f"wrote {TOKEN} heron"}],
                 ms=3)
    result["message"].update(toolCallId=f"c:{TOKEN}", toolName="Edit", isError=True)
    other = {"type": "toolCall", "id": "c2", "name": f"Bash{ESCAPES} {TOKEN}",
             "arguments": {"command": f"echo {TOKEN}"}}
    assistant["message"]["content"].append(other)
    store(state, [dict(header("s1"), cwd=f"/work/{TOKEN}{ESCAPES}"),
                  msg("u1", None, "user", "edit it", ms=1), assistant, result])
    return state


def leaks(text: str) -> list[str]:
    return [leak for leak in LEAKS if leak in text]


def test_no_command_shows_the_token_or_the_escape(planted, capsys) -> None:
    window = ["--since", iso(BASE_MS - 86_400_000), "--until", iso(BASE_MS + 86_400_000)]
    for argv in (["usage", *window, "--by", "model"], ["usage", *window, "--by", "project"],
                 ["usage", *window], ["calls", "--agent", "main"], ["search", "--tools", "heron"],
                 ["search", "--failed"], ["history", KEY]):
        for json_flag in ([], ["--json"]):
            code = main(argv + json_flag)
            out, err = capsys.readouterr()
            assert code == 0, (argv, err)
            assert leaks(out + err) == [], (argv + json_flag, out)
    main(["usage", *window, "--by", "model", "--json"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [row["input"] for row in rows] == [10]  # the row is there, its name masked


async def test_no_mcp_answer_holds_the_token(planted) -> None:
    async with Client(build_server(planted, OPERATOR, on_pending=lambda agent: None)) as client:
        listed = (await client.call_tool("sessions_list", {})).structured_content
        found = (await client.call_tool("tool_calls_search", {"query": "heron"})
                 ).structured_content
    [session] = listed["sessions"]
    assert session["facts"]["models"] and session["facts"]["files"]
    assert found["results"]
    for answer in (listed, found):
        text = json.dumps(answer, ensure_ascii=False)
        assert leaks(text) == [], text


def test_the_facts_line_of_the_session_is_printable(planted) -> None:
    from backscroll.tui.amounts import facts_lines, facts_summary

    with planted.open("main") as db:
        session = db.session(KEY)
        (facts,) = db.session_facts([session.pk]).values()
    for text in (facts_summary(facts), *facts_lines(facts)):
        assert leaks(text) == [], text
