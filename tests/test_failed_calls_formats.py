"""Failed-call filtering on every format that records a tool failure (issue 26, SPEC 18):
for each, a small transcript in the format's own shape with one failed call (its arguments
name ``wombat``) and one that went well (``quokka``), taken in as a user takes it in (a sync
of the fake home), then ``search --tools --failed`` and ``calls --failed`` give exactly the
failed one, and the ok one is found without the filter. The rule per format is
docs/tool-calls.md's "Failed calls, format by format"; the formats that record no failure are
``NOT_RECORDED`` below, with why (that table says the same).

SQLite is enough here: the per-format part is the converters', the storage is shared code
(tests/test_tool_calls.py runs the filters on both backends)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, NamedTuple

import pytest

from backscroll.core import formats
from backscroll.core.search import SearchRequest
from backscroll.core.state import StateDir
from backscroll.core.tool_search import ToolSearchRequest, tool_calls, tools_search
from backscroll.core.visibility import OPERATOR

from . import test_import_cline as cline
from . import test_import_continue as continue_dev
from . import test_import_copilot as copilot
from . import test_import_crush as crush
from . import test_import_cursor_editor as cursor_editor
from . import test_import_droid as droid
from . import test_import_gemini as gemini
from . import test_import_goose as goose
from . import test_import_opencode as opencode
from . import test_import_qwen as qwen
from . import test_import_zed as zed
from . import test_openclaw_store as openclaw_store
from .appended_formats import write_lines
from .events import header, msg
from .fakehome import sync

FAILED_WORD, OK_WORD = "wombat", "quokka"
FAILED_ARGS = {"command": f"ls {FAILED_WORD}"}
OK_ARGS = {"command": f"ls {OK_WORD}"}
FAILED_OUT = f"ls: cannot access '{FAILED_WORD}': No such file or directory"
OK_OUT = f"{OK_WORD}.txt"

# Formats whose transcripts record no tool failure: no call of theirs is ever failed.
NOT_RECORDED = {
    "aider": "its chat history is Markdown: commands it ran and their output are text, no "
             "tool call or result with a status",
    "cursor": "Cursor's CLI agent writes its tool_use blocks but no tool results at all",
}


class Case(NamedTuple):
    fmt: str  # the registered format
    agent: str
    build: Callable[[Path], None]  # writes the transcript under the (fake) home


# ------------------------------------------------------------------ JSONL formats


def _claude_code(home: Path) -> None:
    sid = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"

    def record(uuid: str, parent: str | None, kind: str, second: int,
               content: Any) -> dict[str, Any]:
        message: dict[str, Any] = {"role": kind, "content": content}
        if kind == "assistant":
            message["model"] = "claude-sonnet-4-5"
        return {"parentUuid": parent, "isSidechain": False, "type": kind, "cwd": "/home/me/app",
                "sessionId": sid, "uuid": uuid, "version": "2.0.0",
                "timestamp": f"2026-06-01T10:00:{second:02d}.000Z", "message": message}

    write_lines(home / ".claude/projects/-home-me-app" / f"{sid}.jsonl",
                record("u1", None, "user", 1, "list the animals"),
                record("a1", "u1", "assistant", 2, [
                    {"type": "tool_use", "id": "toolu_f", "name": "Bash", "input": FAILED_ARGS},
                    {"type": "tool_use", "id": "toolu_o", "name": "Bash", "input": OK_ARGS}]),
                record("u2", "a1", "user", 3, [
                    {"type": "tool_result", "tool_use_id": "toolu_f", "content": FAILED_OUT,
                     "is_error": True},
                    {"type": "tool_result", "tool_use_id": "toolu_o", "content": OK_OUT}]))


def _codex(home: Path) -> None:
    sid = "0a1b2c3d-0000-4000-8000-00000000fa11"

    def line(second: int, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": f"2026-06-01T09:00:{second:02d}.000Z", "type": kind,
                "payload": payload}

    def output(code: int, text: str) -> str:
        return (f"Chunk ID: c0\nWall time: 0.1 seconds\nProcess exited with code {code}\n"
                f"Output:\n{text}")

    write_lines(home / ".codex/sessions/2026/06/01" / f"rollout-2026-06-01T09-00-00-{sid}.jsonl",
                line(0, "session_meta", {"id": sid, "timestamp": "2026-06-01T09:00:00.000Z",
                                         "cwd": "/home/dev/shop", "model_provider": "openai"}),
                line(1, "event_msg", {"type": "user_message", "message": "list the animals"}),
                line(2, "response_item", {"type": "function_call", "name": "exec_command",
                                          "call_id": "c1", "arguments": json.dumps(FAILED_ARGS)}),
                line(3, "response_item", {"type": "function_call_output", "call_id": "c1",
                                          "output": output(2, FAILED_OUT)}),
                line(4, "response_item", {"type": "function_call", "name": "exec_command",
                                          "call_id": "c2", "arguments": json.dumps(OK_ARGS)}),
                line(5, "response_item", {"type": "function_call_output", "call_id": "c2",
                                          "output": output(0, OK_OUT)}))


def _openclaw_shape(sid: str, cwd: bool = False) -> list[dict[str, Any]]:
    """OpenClaw's (and Pi's) events: an ``exec`` that exits 2 (``isError`` and
    ``details.exitCode``, as the runtime writes it) and one that exits 0."""
    head = header(sid)
    if cwd:
        head["cwd"] = "/home/me/app"
    calls = [{"type": "toolCall", "id": "call_f", "name": "exec", "arguments": FAILED_ARGS},
             {"type": "toolCall", "id": "call_o", "name": "exec", "arguments": OK_ARGS}]

    def result(entry_id: str, parent: str, cid: str, text: str, code: int) -> dict[str, Any]:
        event = msg(entry_id, parent, "toolResult", [{"type": "text", "text": text}])
        event["message"].update(toolCallId=cid, toolName="exec", isError=code != 0, details={
            "status": "completed", "exitCode": code, "durationMs": 5})
        return event

    return [head, msg("m1", None, "user", [{"type": "text", "text": "list the animals"}]),
            msg("m2", "m1", "assistant", calls),
            result("m3", "m2", "call_f", FAILED_OUT, 2), result("m4", "m3", "call_o", OK_OUT, 0)]


def _openclaw(home: Path) -> None:
    sid = "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"
    folder = home / ".openclaw/agents/main/sessions"
    write_lines(folder / f"{sid}.jsonl", *_openclaw_shape(sid))


def _pi(folder: str) -> Callable[[Path], None]:
    def build(home: Path) -> None:
        sid = "7e6d5c4b-3a2f-4e1d-9c8b-7a6f5e4d3c2b"
        write_lines(home / folder / "--home-me-app--" / f"2026-06-01T10-00-00-000Z_{sid}.jsonl",
                    *_openclaw_shape(sid, cwd=True))
    return build


def _gemini(home: Path) -> None:
    def call(cid: str, args: dict[str, Any], status: str, text: str) -> dict[str, Any]:
        return {"id": cid, "name": "run_shell_command", "args": args, "status": status,
                "timestamp": "2026-05-01T10:00:03.000Z", "result": [{"functionResponse": {
                    "id": cid, "name": "run_shell_command", "response": {"output": text}}}]}

    write_lines(gemini.chat_dir() / "session-2026-05-01T10-00-11111111.jsonl",
                gemini.meta(), gemini.user("u1", "list the animals"),
                gemini.gemini("g1", "Listing.", toolCalls=[
                    call("c1", FAILED_ARGS, "error", FAILED_OUT),
                    call("c2", OK_ARGS, "success", OK_OUT)]))


def _copilot(home: Path) -> None:
    event = copilot.event
    write_lines(copilot.events_file(), copilot.start(), copilot.said("list the animals"),
                copilot.answer("", toolRequests=[
                    {"toolCallId": "t1", "name": "bash", "arguments": FAILED_ARGS},
                    {"toolCallId": "t2", "name": "bash", "arguments": OK_ARGS}]),
                event("tool.execution_start", {"toolCallId": "t1", "toolName": "bash"}),
                event("tool.execution_complete", {"toolCallId": "t1", "success": False,
                                                  "error": {"message": FAILED_OUT}}),
                event("tool.execution_start", {"toolCallId": "t2", "toolName": "bash"}),
                event("tool.execution_complete", {"toolCallId": "t2", "success": True,
                                                  "result": {"content": OK_OUT}}),
                copilot.answer("done"))


def _qwen(home: Path) -> None:
    def result(uuid: str, parent: str, second: int, cid: str, status: str,
               response: dict[str, Any]) -> dict[str, Any]:
        return qwen.record(uuid, parent, "tool_result", second, message={
            "role": "user", "parts": [{"functionResponse": {
                "id": cid, "name": "run_shell_command", "response": response}}]},
            toolCallResult={"callId": cid, "status": status})

    write_lines(home / ".qwen/projects/-home-dev-weather-app/chats" / f"{qwen.SID}.jsonl",
                qwen.user("u1", None, 1, "list the animals"),
                qwen.model("u2", "u1", 2,
                           {"functionCall": {"id": "c1", "name": "run_shell_command",
                                             "args": FAILED_ARGS}},
                           {"functionCall": {"id": "c2", "name": "run_shell_command",
                                             "args": OK_ARGS}}),
                result("u3", "u2", 3, "c1", "error", {"error": FAILED_OUT}),
                result("u4", "u3", 4, "c2", "success", {"output": OK_OUT}))


def _droid(home: Path) -> None:
    message = droid.message
    write_lines(droid.session_file(), droid.start(),
                message("m1", None, 1, "user", droid.text("list the animals")),
                message("m2", "m1", 2, "assistant",
                        {"type": "tool_use", "id": "tu1", "name": "Execute", "input": FAILED_ARGS},
                        {"type": "tool_use", "id": "tu2", "name": "Execute", "input": OK_ARGS}),
                message("m3", "m2", 3, "user",
                        {"type": "tool_result", "tool_use_id": "tu1", "content": FAILED_OUT,
                         "is_error": True},
                        {"type": "tool_result", "tool_use_id": "tu2", "content": OK_OUT}))


def _cline_messages(ts: int) -> list[dict[str, Any]]:
    """Cline's (and Roo Code's) native tool calls: ``tool_use`` blocks answered by
    ``tool_result`` blocks, a failure marked ``is_error``."""
    return [
        {"role": "user", "ts": ts, "content": [
            {"type": "text", "text": "<task>\nlist the animals\n</task>"}]},
        {"role": "assistant", "ts": ts + 1000, "content": [
            {"type": "tool_use", "id": "toolu_f", "name": "execute_command", "input": FAILED_ARGS},
            {"type": "tool_use", "id": "toolu_o", "name": "execute_command", "input": OK_ARGS}]},
        {"role": "user", "ts": ts + 2000, "content": [
            {"type": "tool_result", "tool_use_id": "toolu_f", "content": FAILED_OUT,
             "is_error": True},
            {"type": "tool_result", "tool_use_id": "toolu_o", "content": OK_OUT}]},
    ]


def _cline(home: Path) -> None:
    cline.cline_home(home, _cline_messages(1767000000000))


def _roo_code(home: Path) -> None:
    task = home / cline.ROO / "tasks" / cline.ROO_TASK
    cline.write(task / "history_item.json", {"id": cline.ROO_TASK, "ts": 1767100000000,
                                             "number": 1, "task": "list the animals",
                                             "workspace": "/home/me/orchard"})
    cline.write(task / "api_conversation_history.json", _cline_messages(1767100000000))


# ------------------------------------------------------------------ SQLite formats
# Each builds the tool's database with the writer its own tests use, then closes it.


def _opencode(folder: str) -> Callable[[Path], None]:
    def tool(call_id: str, state: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool", "callID": call_id, "tool": "bash", "state": {
            "title": "ls", "metadata": {}, "time": {"start": opencode.T0, "end": opencode.T0 + 1},
            **state}}

    def build(home: Path) -> None:
        agent = opencode.Agent(home / ".local/share" / folder / f"{folder}.db")
        agent.session()
        agent.message("user", [opencode.text("list the animals")])
        agent.message("assistant", [
            tool("call_f", {"status": "error", "input": FAILED_ARGS, "error": FAILED_OUT}),
            tool("call_o", {"status": "completed", "input": OK_ARGS, "output": OK_OUT})])
        agent.conn.close()
    return build


def _cursor_editor(result: bool) -> Callable[[Path], None]:
    """Cursor's editor: a bubble's ``toolFormerData`` with ``status`` ``error``; without
    ``result``: a failed call whose status is all it holds."""
    def build(home: Path) -> None:
        cursor = cursor_editor.Cursor(home / ".config/Cursor/User")
        cursor.bubble(1, "list the animals")
        failed = {"tool": 15, "toolCallId": "toolu_f", "name": "run_terminal_cmd",
                  "status": "error", "params": json.dumps(FAILED_ARGS)}
        if result:
            failed["result"] = json.dumps({"output": FAILED_OUT})
        cursor.bubble(2, "", toolFormerData=failed)
        cursor.bubble(2, "", toolFormerData={
            "tool": 15, "toolCallId": "toolu_o", "name": "run_terminal_cmd",
            "status": "completed", "params": json.dumps(OK_ARGS),
            "result": json.dumps({"output": OK_OUT})})
        cursor.composer()
        cursor.conn.close()
    return build


def _zed(home: Path) -> None:
    def use(cid: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"ToolUse": {"id": cid, "name": "terminal", "raw_input": json.dumps(args),
                            "input": args, "is_input_complete": True}}

    def result(cid: str, text: str, error: bool) -> dict[str, Any]:
        return {"tool_use_id": cid, "tool_name": "terminal", "is_error": error,
                "content": {"Text": text}, "output": None}

    thread = zed.Zed(home / ".local/share/zed/threads/threads.db")
    thread.save(zed.TID, [zed.user("u1", "list the animals"),
                          zed.agent_says(use("toolu_f", FAILED_ARGS), use("toolu_o", OK_ARGS),
                                         results={"toolu_f": result("toolu_f", FAILED_OUT, True),
                                                  "toolu_o": result("toolu_o", OK_OUT, False)})])
    thread.conn.close()


def _goose(mcp: bool) -> Callable[[Path], None]:
    """Goose: a tool ``Result`` that is an ``error``, or (``mcp``) a ``success`` whose MCP
    ``CallToolResult`` says ``isError``."""
    def request(cid: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"type": "toolRequest", "id": cid, "toolCall": {"status": "success", "value": {
            "name": "developer__shell", "arguments": args}}}

    def build(home: Path) -> None:
        failed: dict[str, Any] = {"status": "error", "error": FAILED_OUT}
        if mcp:
            failed = {"status": "success", "value": {
                "content": [{"type": "text", "text": FAILED_OUT}], "isError": True}}
        agent = goose.Agent(home / ".local/share/goose/sessions/sessions.db")
        agent.session()
        agent.message("user", [goose.text("list the animals")])
        agent.message("assistant", [request("call_f", FAILED_ARGS), request("call_o", OK_ARGS)])
        agent.message("user", [
            {"type": "toolResponse", "id": "call_f", "toolResult": failed},
            {"type": "toolResponse", "id": "call_o", "toolResult": {
                "status": "success", "value": {"content": [{"type": "text", "text": OK_OUT}],
                                               "isError": False}}}])
        agent.conn.close()
    return build


def _crush(home: Path) -> None:
    def call(cid: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool_call", "data": {"id": cid, "name": "bash", "input": json.dumps(args),
                                              "provider_executed": False, "finished": True}}

    def result(cid: str, text: str, error: bool) -> dict[str, Any]:
        return {"type": "tool_result", "data": {"tool_call_id": cid, "name": "bash",
                                                "content": text, "metadata": "",
                                                "is_error": error}}

    data_dir = home / ".local/share/crush"
    data_dir.mkdir(parents=True)
    agent = crush.Agent(home / "work" / "shop")
    crush.register(data_dir, agent.project)
    agent.session()
    agent.message("user", [crush.text("list the animals")])
    agent.message("assistant", [call("call_f", FAILED_ARGS), call("call_o", OK_ARGS),
                                crush.finish()])
    agent.message("tool", [result("call_f", FAILED_OUT, True), result("call_o", OK_OUT, False)])
    agent.conn.close()


def _openclaw_store(home: Path) -> None:
    store = openclaw_store.Store(home / ".openclaw", "main")
    store.node("agent:main:main", "s-now")
    store.window("s-now", "agent:main:main")
    store.events("s-now", _openclaw_shape("s-now", cwd=True))
    store.con.close()


def _continue(older: bool) -> Callable[[Path], None]:
    """Continue: the assistant item's ``toolCallStates`` (``older``: one ``toolCallState``)
    mark a call ``errored``; the ``tool`` message answering it carries no mark itself."""
    def build(home: Path) -> None:
        def call(cid: str, args: dict[str, Any]) -> dict[str, Any]:
            return {"id": cid, "type": "function",
                    "function": {"name": "run_terminal_command", "arguments": json.dumps(args)}}

        def state(cid: str, args: dict[str, Any], status: str) -> dict[str, Any]:
            return {"toolCallId": cid, "toolCall": call(cid, args), "status": status,
                    "parsedArgs": args}

        def asked(cid: str, args: dict[str, Any], status: str) -> dict[str, Any]:
            item: dict[str, Any] = {"message": {"role": "assistant", "content": "",
                                                "toolCalls": [call(cid, args)]},
                                    "contextItems": []}
            if older:
                item["toolCallState"] = state(cid, args, status)
            else:
                item["toolCallStates"] = [state(cid, args, status)]
            return item

        def answered(cid: str, text: str) -> dict[str, Any]:
            return {"message": {"role": "tool", "content": text, "toolCallId": cid},
                    "contextItems": []}

        continue_dev.write_session(continue_dev.sessions(), [
            {"message": {"role": "user", "content": "list the animals"}, "contextItems": []},
            asked("call_f", FAILED_ARGS, "errored"), answered("call_f", FAILED_OUT),
            asked("call_o", OK_ARGS, "done"), answered("call_o", OK_OUT)])
    return build


CASES: dict[str, Case] = {
    "claude-code": Case("claude-code", "claude-code", _claude_code),
    "codex": Case("codex", "codex", _codex),
    "openclaw": Case("openclaw", "main", _openclaw),
    "openclaw-store": Case("openclaw", "main", _openclaw_store),
    "pi": Case("pi", "pi", _pi(".pi/agent/sessions")),
    "omp": Case("omp", "omp", _pi(".omp/agent/sessions")),
    "gemini": Case("gemini", "gemini", _gemini),
    "copilot": Case("copilot", "copilot", _copilot),
    "qwen-code": Case("qwen-code", "qwen-code", _qwen),
    "droid": Case("droid", "droid", _droid),
    "cline": Case("cline", "cline", _cline),
    "roo-code": Case("roo-code", "roo-code", _roo_code),
    "opencode": Case("opencode", "opencode", _opencode("opencode")),
    "kilo": Case("kilo", "kilo", _opencode("kilo")),
    "cursor-editor": Case("cursor-editor", "cursor", _cursor_editor(result=True)),
    "cursor-editor-status-only": Case("cursor-editor", "cursor", _cursor_editor(result=False)),
    "zed": Case("zed", "zed", _zed),
    "goose": Case("goose", "goose", _goose(mcp=False)),
    "goose-mcp-error": Case("goose", "goose", _goose(mcp=True)),
    "crush": Case("crush", "crush", _crush),
    "continue": Case("continue", "continue", _continue(older=False)),
    "continue-older": Case("continue", "continue", _continue(older=True)),
}


def test_every_format_is_here_or_says_why_not() -> None:
    names = {f.name for f in formats.known()}
    tested = {case.fmt for case in CASES.values()}
    assert tested | set(NOT_RECORDED) == names
    assert not tested & set(NOT_RECORDED)


def _search(state: StateDir, query: str, failed: bool = False) -> list[Any]:
    request = ToolSearchRequest(SearchRequest(query, limit=25), failed=failed)
    return tools_search(state, request, OPERATOR).results


@pytest.mark.parametrize("name", sorted(CASES))
def test_failed_calls_of_the_format(name: str, state: StateDir) -> None:
    case = CASES[name]
    case.build(Path.home())
    sync(state)
    assert state.agents() == [case.agent]
    every = tool_calls(state, OPERATOR, limit=100).results
    assert sorted(h.status for h in every) == ["failed", "ok"], every
    [failed] = tool_calls(state, OPERATOR, failed=True, limit=100).results
    assert failed.status == "failed" and FAILED_WORD in failed.arguments
    [agent_failed] = tool_calls(state, OPERATOR, agent=case.agent, failed=True).results
    assert agent_failed == failed
    [found] = _search(state, FAILED_WORD, failed=True)
    assert (found.status, found.message_id, found.call_id) == (
        "failed", failed.message_id, failed.call_id)
    assert [h.call_id for h in _search(state, "", failed=True)] == [failed.call_id]
    assert _search(state, OK_WORD, failed=True) == []
    [ok] = _search(state, OK_WORD)
    assert ok.status == "ok" and OK_WORD in ok.arguments
