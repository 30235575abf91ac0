"""``backscroll mcp`` as a real process on stdio, and without the optional extra."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from importlib.metadata import version
from pathlib import Path

import pytest

from backscroll.core.history import FORBIDDEN
from backscroll.tui.cli import main
from backscroll.tui.mcp.wire import LONE_SURROGATE, NO_VALID_ID, NOT_JSON

from .test_search import add

pytestmark = pytest.mark.backends  # the server on either storage

PROTOCOL = "2025-06-18"


def start(state: Path, *argv: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "backscroll.tui.cli", "mcp", "--state-dir", str(state), *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


@pytest.mark.slow
def test_a_real_process_serves_both_tools_and_only_protocol_on_stdout(state) -> None:
    add(state, "agent:main:main", "m1", "the nightly backup failed with disk full", 1_000)
    add(state, "agent:main:subagent:a", "a1", "backup retried: API_TOKEN=abcdefghijklmnopqrstuvwx", 2_000,
        spawned_by="agent:main:main")
    add(state, "agent:main:subagent:b", "b1", "backup of the sibling", 3_000, spawned_by="agent:main:main")
    proc = start(state.path, "--as", "agent:main:subagent:a")
    watchdog = threading.Timer(60, proc.kill)  # a hung server fails the test instead of hanging it
    watchdog.start()
    try:
        def send(message: dict | str) -> None:
            proc.stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
            proc.stdin.flush()

        def reply() -> dict:
            line = proc.stdout.readline()
            message = json.loads(line)  # every stdout line is one JSON-RPC message
            assert message["jsonrpc"] == "2.0"
            return message

        def call(request_id: int, tool: str, arguments: dict) -> dict:
            send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                  "params": {"name": tool, "arguments": arguments}})
            message = reply()
            assert message["id"] == request_id
            return message["result"]

        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}})
        server = reply()["result"]["serverInfo"]  # serving now
        if Path("/proc/self/fd").is_dir():  # stdin is the wire's alone: a child reads nothing
            assert os.readlink(f"/proc/{proc.pid}/fd/0") == os.devnull
        assert (server["name"], server["version"]) == ("backscroll", version("backscroll"))
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send("this line is not JSON-RPC")
        assert reply() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": NOT_JSON}}
        # half an emoji (a lone surrogate escape): JSON all the same, answered under its id
        send('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": '
             '"sessions_search", "arguments": {"query": "backup \\ud83d"}}}')
        assert reply() == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": LONE_SURROGATE}}
        # an id that is not a string or an integer: answered with id null, not taken as a
        # notification (which gets no answer)
        for bad_id in ({"a": 1}, [1], 1.5, True, None):
            send({"jsonrpc": "2.0", "id": bad_id, "method": "tools/list"})
            assert reply() == {"jsonrpc": "2.0", "id": None,
                               "error": {"code": -32600, "message": NO_VALID_ID}}
        found = call(2, "sessions_search", {"query": "backup", "visibility": "all"})
        hits = found["structuredContent"]["results"]
        assert [h["sessionKey"] for h in hits] == ["agent:main:subagent:a"]  # fixed at launch
        assert "abcdefghijklmnopqrstuvwx" not in json.dumps(found)
        history = call(3, "sessions_history", {"sessionKey": "agent:main:subagent:a", "messageId": "a1"})
        assert [m["id"] for m in history["structuredContent"]["messages"]] == ["a1"]
        assert history["structuredContent"]["contentRedacted"] is True
        sibling = call(4, "sessions_history", {"sessionKey": "agent:main:subagent:b"})
        assert sibling == {"content": [{"type": "text", "text": FORBIDDEN}], "isError": True}
        proc.stdin.close()  # the client leaves: the server ends, cleanly
        rest, err = proc.stdout.read(), proc.stderr.read()
        assert proc.wait() == 0
    finally:
        watchdog.cancel()
        proc.kill()
    assert rest == ""
    assert err.splitlines()[0] == (
        f"backscroll mcp: serving on stdio as session agent:main:subagent:a (tree), from {state.describe()}"
    )
    assert "Traceback" not in err


@pytest.mark.slow
def test_the_startup_line_names_the_operator_and_a_caller_that_does_not_exist(tmp_path) -> None:
    for argv, says in [
        ([], "as the operator (every session of every agent)"),
        (["--as", "agent:main:subagent:nobody", "--sandboxed"], "no backscroll state dir at"),
    ]:
        proc = start(tmp_path / "nothing-here", *argv)
        out, err = proc.communicate("", timeout=60)
        assert proc.returncode == 0 and out == ""
        assert err.startswith("backscroll mcp: serving on stdio as ") and says in err
    assert "agent:main:subagent:nobody (sandboxed)" in err


def test_a_bad_caller_is_refused_at_launch(tmp_path, capsys) -> None:
    assert main(["mcp", "--as", "main", "--state-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("backscroll: ")
    # (an unknown tools.sessions.visibility falls back to tree: test_tools_contract.py)
    (tmp_path / "config.toml").write_text('[agents.defaults.sandbox]\nmode = "sometimes"\n')
    assert main(["mcp", "--state-dir", str(tmp_path)]) == 2
    assert "agents.defaults.sandbox.mode must be one of" in capsys.readouterr().err


def test_without_the_extra_it_says_how_to_install_it(state, capsys, monkeypatch) -> None:
    for name in [n for n in sys.modules if n.split(".")[0] == "mcp" or n.startswith("backscroll.tui.mcp")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # import mcp now fails as if not installed
    assert main(["mcp", "--state-dir", str(state.path)]) == 1
    err = capsys.readouterr().err
    assert err == (
        "backscroll: backscroll mcp needs the optional MCP support (mcp is not installed): "
        "install it with pip install 'backscroll[mcp]'\n"
    )


@pytest.mark.parametrize("argv", [["--help"], ["search", "x", "--json"], ["mcp", "--help"]])
def test_no_other_verb_loads_the_sdk(tmp_path, argv) -> None:
    code = (
        "import sys\nfrom backscroll.tui.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print('LOADED' if 'mcp' in sys.modules else 'CLEAN', file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv, "--state-dir", str(tmp_path)], capture_output=True, text=True
    )
    assert proc.stderr.strip().endswith("CLEAN")
