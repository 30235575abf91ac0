"""``search --tools``, ``calls`` and the MCP server's ``tool_calls_search`` (issue 26): the
front ends of core/tool_search.py, on the embedded backend (the storage is tested on both in
test_tool_calls.py)."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR, Caller, Policy
from backscroll.tui.cli import main
from backscroll.tui.mcp.server import build_server

from .test_tool_calls import KEY, SECRET, conversation, store


@pytest.fixture
def tools_state(tmp_path, monkeypatch) -> StateDir:
    state = StateDir(tmp_path / "state")
    monkeypatch.setenv("BACKSCROLL_STATE_DIR", str(state.path))
    store(state, conversation())
    return state


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_search_tools_json(tools_state, capsys) -> None:
    code, out, _ = run(capsys, "search", "--tools", "zanzibarquux", "--json")
    [hit] = json.loads(out)["results"]
    assert code == 0 and (hit["tool"], hit["status"], hit["messageId"]) == ("bash", "failed", "a1")
    assert hit["arguments"] == "kubectl rollout restart zanzibarquux"
    code, out, _ = run(capsys, "search", "zanzibarquux", "--json")
    assert json.loads(out)["results"] == []


def test_search_tools_for_people_says_how_to_open_the_call(tools_state, capsys) -> None:
    code, out, _ = run(capsys, "search", "--failed")
    assert code == 0
    assert "bash" in out and "failed" in out and "kubectl rollout restart zanzibarquux" in out
    assert f"backscroll history {KEY} --message-id a1 --include-tools" in out
    code, out, _ = run(capsys, "calls", "--agent", "main", "--tool", "BASH")
    assert code == 0 and out.count("open: ") == 2 and SECRET[8:-4] not in out


def test_search_tools_refuses_what_it_cannot_do(tools_state, capsys) -> None:
    code, _, err = run(capsys, "search", "--tools", "x", "--group")
    assert code == 2 and "--group" in err
    code, _, err = run(capsys, "search", "--tools")
    assert code == 2 and "filter" in err
    code, _, err = run(capsys, "calls", "--agent", "main", "--session", KEY)
    assert code == 2 and "not both" in err


def test_as_an_agent_without_the_grant(tools_state, capsys) -> None:
    nothing = run(capsys, "search", "--tools", "qqqnowhere", "--json")[1]
    assert run(capsys, "search", "--tools", "zanzibarquux", "--as", KEY, "--json")[1] == nothing
    (tools_state.path / "config.toml").write_text('[tools.sessions]\ntoolCalls = ["main"]\n')
    _, out, _ = run(capsys, "search", "--tools", "zanzibarquux", "--as", KEY, "--json")
    assert [h["tool"] for h in json.loads(out)["results"]] == ["bash"]
    _, out, _ = run(capsys, "calls", "--as", KEY, "--json")
    assert len(json.loads(out)["results"]) == 3


async def _call(state: StateDir, caller: Caller, arguments: dict) -> dict:
    async with Client(build_server(state, caller, on_pending=lambda agent: None)) as client:
        return (await client.call_tool("tool_calls_search", arguments)).structured_content


async def test_mcp_tool_calls_search(tools_state) -> None:
    found = await _call(tools_state, OPERATOR, {"query": "gorgonzolix"})
    assert [(h["tool"], h["status"]) for h in found["results"]] == [("bash", "failed")]
    listed = await _call(tools_state, OPERATOR, {"tool": "read"})
    assert [h["arguments"] for h in listed["results"]] == ["/srv/app/config.yaml"]
    ungranted = Caller(KEY, Policy(visibility="agent"))
    assert await _call(tools_state, ungranted, {"query": "gorgonzolix"}) == await _call(
        tools_state, OPERATOR, {"query": "qqqnowhere"})
    granted = Caller(KEY, Policy(visibility="agent", tool_calls=("*",)))
    assert (await _call(tools_state, granted, {"query": "gorgonzolix"}))["results"]


def test_an_escape_sequence_in_a_message_id_never_reaches_the_terminal(tmp_path, monkeypatch,
                                                                        capsys) -> None:
    """``calls`` and ``search --tools`` print the command that opens a call: its message id is
    transcript text, and was printed raw (Rich keeps ESC), so a transcript could retitle or
    clear the terminal (review of issue 26)."""
    from .events import header, msg
    from .test_tool_calls import call, result

    state = StateDir(tmp_path / "state")
    monkeypatch.setenv("BACKSCROLL_STATE_DIR", str(state.path))
    hostile = "a1\x1b]0;pwned\x07\x1b[2J"
    store(state, [header("s"), msg("u1", None, "user", "go"),
                  msg(hostile, "u1", "assistant", [call("c1", "bash", {"command": "ls"})]),
                  result("r1", hostile, "c1", "bash", "listed")])
    for argv in (("calls", "--agent", "main"), ("search", "--tools", "listed")):
        code, out, _ = run(capsys, *argv)
        assert code == 0 and "--message-id" in out and "\x1b" not in out, argv
