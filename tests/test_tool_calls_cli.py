"""``search --tools``, ``calls`` and the MCP server's ``tool_calls_search`` (issue 26): the
front ends of core/tool_search.py, on the embedded backend (the storage is tested on both in
test_tool_calls.py)."""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client

from backscroll.core.state import StateDir
from backscroll.core.tool_pairs import head_and_tail
from backscroll.core.visibility import OPERATOR, Caller, Policy
from backscroll.tui.cli import main
from backscroll.tui.mcp.server import build_server

from .events import header, msg
from .test_tool_calls import KEY, SECRET, call, conversation, result, store


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


def _openers(out: str) -> list[list[str]]:
    return [shlex.split(line.removeprefix("open: "))[1:] for line in out.splitlines()
            if line.startswith("open: ")]


@pytest.mark.parametrize("argv", [["search", "deploy"], ["search", "deploy", "--group"],
                                  ["search", "--failed"], ["calls", "--agent", "main"]])
def test_every_hit_for_people_says_the_command_that_opens_it_there(tools_state, capsys,
                                                                   argv) -> None:
    code, out, _ = run(capsys, *argv)
    openers = _openers(out)
    assert code == 0 and openers and len(openers) == out.count(f"{KEY}  ")
    for argv_open in openers:
        code, shown, err = run(capsys, *argv_open)
        assert code == 0 and err == ""
        [marked] = [line for line in shown.splitlines() if line.startswith("▶ ")]
        assert argv_open[argv_open.index("--message-id") + 1] in marked


def test_an_agent_callers_hit_opens_as_that_caller(tools_state, capsys) -> None:
    (tools_state.path / "config.toml").write_text('[tools.sessions]\ntoolCalls = true\n')
    for argv in (["calls", "--as", KEY, "--limit", "1"], ["search", "deploy", "--as", KEY]):
        _, out, _ = run(capsys, *argv)
        [argv_open] = _openers(out)
        assert argv_open[-4:] == ["--as", KEY, "--visibility", "tree"]
        assert run(capsys, *argv_open)[0] == 0
    _, out, _ = run(capsys, "search", "deploy", "--as", KEY, "--sandboxed")
    assert _openers(out)[0][-3:] == ["--as", KEY, "--sandboxed"]


def test_calls_give_the_utc_time_to_the_second(tools_state, capsys) -> None:
    _, out, _ = run(capsys, "calls", "--agent", "main", "--json")
    stamps = [hit["timestamp"] for hit in json.loads(out)["results"]]
    _, out, _ = run(capsys, "calls", "--agent", "main")
    for ms in stamps:
        assert datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC · ") in out


def test_opening_a_calls_message_without_tools_says_to_ask_with_them(tools_state,
                                                                     capsys) -> None:
    for only_tools in ("a2", "r1"):  # a turn that only called a tool; a tool result
        code, _, err = run(capsys, "history", KEY, "--message-id", only_tools)
        assert code == 2 and "holds only tool calls or their results" in err
        assert "--include-tools" in err
        assert run(capsys, "history", KEY, "--message-id", only_tools, "--include-tools")[0] == 0
    code, _, err = run(capsys, "history", KEY, "--message-id", "nosuchid")
    assert code == 2 and "is not on the active branch" in err and "tools" not in err


def test_an_open_command_is_one_line_on_a_narrow_terminal(tools_state, capsys,
                                                           monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")  # narrower than any of the commands
    for argv in (["calls", "--agent", "main"], ["search", "deploy"]):
        _, out, _ = run(capsys, *argv)
        lines = [line for line in out.splitlines() if line.startswith("open: ")]
        assert lines and all(line.rstrip().endswith(("--include-tools", "a1", "u1", "a3"))
                             for line in lines), out


@given(st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=12), min_size=1,
                max_size=120), st.integers(min_value=40, max_value=300))
def test_a_listed_result_keeps_its_start_and_its_end(words: list[str], limit: int) -> None:
    text = " ".join(words)
    shown = head_and_tail(text, limit)
    assert len(shown) <= limit
    if len(text) <= limit:
        assert shown == text
    else:
        head, tail = shown.split(" … ")
        assert head and tail and text.startswith(head) and text.endswith(tail)


def test_a_listed_failed_call_shows_the_end_of_its_output(tmp_path, capsys, monkeypatch) -> None:
    state = StateDir(tmp_path / "state")
    monkeypatch.setenv("BACKSCROLL_STATE_DIR", str(state.path))
    noise = " ".join(f"step {n} done" for n in range(200))
    store(state, [header("sess-long"), msg("u1", None, "user", "deploy"),
                  msg("a1", "u1", "assistant", [call("c1", "bash", {"command": "./deploy.sh"})]),
                  result("r1", "a1", "c1", "bash", f"{noise}\ndeploy failed with exit code 1",
                         error=True)])
    _, out, _ = run(capsys, "search", "--failed", "--json")
    [hit] = json.loads(out)["results"]
    assert hit["excerpt"].startswith("step 0 done") and hit["excerpt"].endswith("exit code 1")
    assert " … " in hit["excerpt"] and len(hit["excerpt"]) <= 300
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


@pytest.mark.parametrize("argv", [["calls", "--session"], ["search", "--tools", "--session"],
                                  ["search", "--failed", "--json", "--session"],
                                  ["search", "--tools", "deploy", "--session"],
                                  ["calls", "--json", "--session"]])
def test_a_session_found_nowhere_is_said_as_history_says_it(tools_state, capsys, argv) -> None:
    typo = KEY.replace("main:main", "main:mian")
    as_json = ["--json"] if "--json" in argv else []
    history = run(capsys, "history", typo, *as_json)
    code, out, err = run(capsys, *argv, typo)
    assert (code, out, err) == history and code == 3
    assert err.count("\n") == 1 and "session not found" in err
    assert json.loads(out)["status"] == "forbidden" if as_json else out == ""
    assert run(capsys, *argv, KEY)[0] == 0


async def test_mcp_a_session_found_nowhere_is_historys_answer(tools_state) -> None:
    from backscroll.core.visible_sessions import FORBIDDEN

    hidden = "agent:main:telegram:group:7"
    store(tools_state, [header("sess-other"), msg("x1", None, "user", "hi"),
                        msg("x2", "x1", "assistant", [call("k1", "bash", {"command": "ls"})])],
          hidden)
    granted = Caller(KEY, Policy(visibility="self", tool_calls=("*",)))
    async with Client(build_server(tools_state, granted, on_pending=lambda agent: None)) as client:
        for key in ("agent:main:mian", hidden):  # missing; not its own
            for tool, arguments in (("tool_calls_search", {"failed": True, "sessionKey": key}),
                                    ("sessions_history", {"sessionKey": key})):
                found = await client.call_tool(tool, arguments)
                assert found.is_error and found.content[0].text == FORBIDDEN, (tool, key)
