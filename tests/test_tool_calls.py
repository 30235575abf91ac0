"""The tool-call index (issue 26, SPEC 18, docs/tool-calls.md): what it holds, live and
rebuilt alike, and how ``tools_search`` / ``tool_calls`` answer, on both backends."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core.config import Config, _config, make_caller
from backscroll.core.errors import ValidationError
from backscroll.core.ingest import append_events
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.tool_index import (
    ARGS_CHARS,
    RESULT_HEAD_CHARS,
    RESULT_TAIL_CHARS,
    answer_of,
    failed_result,
    tool_rows_for_branch,
)
from backscroll.core.tool_search import ToolSearchRequest, tool_calls, tools_search
from backscroll.core.transcript import active_branch
from backscroll.core.visibility import OPERATOR, Caller, Policy

from .events import header, leaf, lines, msg

pytestmark = pytest.mark.backends

KEY = "agent:main:main"
SECRET = "sk-proj-Zq8vRt2LmW9xKp4NcJ7hYb3FdS6gTa1EuQ0iOw5r"


def call(cid: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": cid, "name": name, "arguments": arguments}


def result(entry_id: str, parent: str, cid: str | None, name: str, text: str,
           error: bool = False, ms: int | None = None, **details: Any) -> dict[str, Any]:
    event = msg(entry_id, parent, "toolResult", [{"type": "text", "text": text}], ms=ms)
    event["message"].update(toolName=name, isError=error)
    if cid is not None:
        event["message"]["toolCallId"] = cid
    if details:
        event["message"]["details"] = details
    return event


def conversation() -> list[dict[str, Any]]:
    return [
        header("sess-tools"),
        msg("u1", None, "user", "please deploy the service"),
        msg("a1", "u1", "assistant", [
            {"type": "text", "text": "running it"},
            call("c1", "bash", {"command": "kubectl rollout restart zanzibarquux"}),
            call("c2", "read", {"path": "/srv/app/config.yaml"}),
        ]),
        result("r1", "a1", "c1", "bash", "error: deployment gorgonzolix not found", error=True),
        result("r2", "r1", "c2", "read", "port: 8080"),
        msg("a2", "r2", "assistant", [call("c3", "bash", {"command": f"export TOKEN={SECRET}"})]),
        result("r3", "a2", "c3", "bash", f"exported {SECRET}", exitCode=0, durationMs=12),
        msg("a3", "r3", "assistant", "done"),
    ]


def store(state: StateDir, events: list[dict[str, Any]], key: str = KEY) -> None:
    report = append_events(state, SessionMeta(key), lines(*events))
    assert not report.refused


def rows(state: StateDir, key: str = KEY) -> list[tuple]:
    with state.open(key.split(":")[1]) as db:
        session = db.session(key)
        return [tuple(row[2:]) for row in db.session_tools(session.pk)]


def rebuild(state: StateDir, agent: str = "main") -> None:
    with state.open(agent, write=True) as db:
        with db.transaction():
            for pk in db.sessions_by_pk(set(range(1, 200))):
                db._mark_dirty(pk)
    reconcile_agent(state, agent)


def search(state: StateDir, query: str, caller: Caller = OPERATOR, **kw: Any):
    tool = kw.pop("tool", None)
    failed = kw.pop("failed", False)
    return tools_search(state, ToolSearchRequest(SearchRequest(query, **kw), tool, failed), caller)


# ------------------------------------------------------------------ what is indexed


def test_rows_of_a_conversation(state: StateDir) -> None:
    store(state, conversation())
    found = {row[0:2]: row for row in rows(state)}
    assert sorted(found) == [("a1", 1), ("a1", 2), ("a2", 0)]
    bash, read, secret = found[("a1", 1)], found[("a1", 2)], found[("a2", 0)]
    assert bash[2:5] == ("c1", "bash", "failed") and bash[7] == "r1"
    assert bash[6] == 1000  # the result came a second after the call
    assert read[4] == "ok" and secret[4] == "ok" and secret[6] == 12  # details.durationMs
    assert SECRET not in secret[8] and SECRET[8:-4] not in secret[8]


def test_live_append_equals_rebuild(state: StateDir) -> None:
    store(state, conversation())
    live = rows(state)
    rebuild(state)
    assert rows(state) == live


def test_result_in_a_later_append_updates_its_call(state: StateDir) -> None:
    events = conversation()
    store(state, events[:3])
    assert {r[1]: r[4] for r in rows(state)} == {1: "none", 2: "none"}
    assert not search(state, "gorgonzolix").results
    store(state, events[3:4])
    assert {r[1]: r[4] for r in rows(state)} == {1: "failed", 2: "none"}
    hits = search(state, "gorgonzolix").results
    assert [(h.tool, h.status, h.message_id) for h in hits] == [("bash", "failed", "a1")]


def test_a_rewind_drops_the_abandoned_branch(state: StateDir) -> None:
    events = conversation()
    store(state, events)
    assert search(state, "zanzibarquux").results
    # back to the user's message, and a different answer from there
    store(state, [leaf("l1", "u1", "a3"),
                  msg("b1", "u1", "assistant", [call("d1", "grep", {"pattern": "walrusfoo"})])])
    reconcile_agent(state, "main")
    assert not search(state, "zanzibarquux").results
    assert [h.tool for h in search(state, "walrusfoo").results] == ["grep"]
    assert [r[0] for r in rows(state)] == ["b1"]


def test_deleting_a_session_removes_its_tool_rows(state: StateDir) -> None:
    store(state, conversation())
    with state.open("main", write=True) as db:
        assert db.delete_session(KEY)
        assert db.tool_calls(_everything(db), _no_filters(), 10) == []


def _everything(db):
    from backscroll.core.storage import SessionScope

    return SessionScope(frozenset(range(1, 100)), frozenset())


def _no_filters():
    from backscroll.core.storage import MatchFilters

    return MatchFilters()


def test_incognito_sessions_hold_no_tool_rows(state: StateDir) -> None:
    key = "agent:main:subagent:incognito-1"
    store(state, conversation(), key)
    assert rows(state, key) == []


# ------------------------------------------------------------------ searching


def test_a_distinctive_argument_is_found_by_tools_only(state: StateDir) -> None:
    store(state, conversation())
    hits = search(state, "zanzibarquux").results
    assert [(h.tool, h.status, h.message_id, h.call_id) for h in hits] == [
        ("bash", "failed", "a1", "c1")]
    assert "zanzibarquux" in hits[0].arguments
    assert not sessions_search(state, SearchRequest("zanzibarquux"), OPERATOR).results


def test_a_secret_is_findable_by_neither(state: StateDir) -> None:
    store(state, conversation())
    for query in (SECRET, SECRET[8:20], f'"{SECRET}"'):
        assert not search(state, query).results
        assert not sessions_search(state, SearchRequest(query), OPERATOR).results
    hits = search(state, "exported").results
    assert hits and all(SECRET[8:-4] not in json.dumps(h.as_json()) for h in hits)


def test_filters_tool_and_failed(state: StateDir) -> None:
    store(state, conversation())
    assert {h.tool for h in search(state, "", tool="BASH").results} == {"bash"}
    assert len(search(state, "", tool="bash").results) == 2
    assert [h.message_id for h in search(state, "", failed=True).results] == ["a1"]
    assert [h.status for h in search(state, "deployment", failed=True).results] == ["failed"]
    assert not search(state, "port", failed=True).results
    assert not search(state, "port", tool="bash").results
    with pytest.raises(ValidationError):
        search(state, "")


def test_an_ungranted_agent_caller_gets_the_answer_of_a_word_found_nowhere(state: StateDir) -> None:
    store(state, conversation())
    caller = Caller(KEY, Policy(visibility="agent"))
    nothing = search(state, "qqqnowhereqqq", OPERATOR).as_json()
    assert search(state, "zanzibarquux", caller).as_json() == nothing
    assert search(state, "", caller, tool="bash").as_json() == nothing
    assert tool_calls(state, caller, agent="main").as_json() == nothing
    granted = Caller(KEY, Policy(visibility="agent", tool_calls=("ma*",)))
    assert [h.tool for h in search(state, "zanzibarquux", granted).results] == ["bash"]
    other = Caller(KEY, Policy(visibility="agent", tool_calls=("research",)))
    assert search(state, "zanzibarquux", other).as_json() == nothing


def test_a_granted_caller_sees_only_its_visible_sessions(state: StateDir) -> None:
    store(state, conversation())
    store(state, [header("sess-other"), msg("x1", None, "user", "hi"),
                  msg("x2", "x1", "assistant", [call("k1", "bash", {"command": "zanzibarquux"})])],
          "agent:main:telegram:group:7")
    granted = Caller("agent:main:subagent:lonely", Policy(visibility="self", tool_calls=("*",)))
    store(state, [header("sess-lonely"), msg("y1", None, "user", "hi")],
          "agent:main:subagent:lonely")
    assert not search(state, "zanzibarquux", granted).results
    assert len(search(state, "zanzibarquux").results) == 2


def test_sessions_search_is_unchanged_by_tool_calls(fresh_state) -> None:
    events = conversation()
    without = []
    for event in events:  # the same conversation, its tool calls taken out (no tool rows)
        message = event.get("message") or {}
        if isinstance(message.get("content"), list):
            event = json.loads(json.dumps(event))
            event["message"]["content"] = [b for b in event["message"]["content"]
                                           if b.get("type") != "toolCall"]
        without.append(event)
    queries = ("deploy", "done", "running", "service")
    answers = []
    for events_stored, tool_rows in ((without, 0), (events, 3)):  # one state after the other
        state = fresh_state()  # (on PostgreSQL, the test's database emptied)
        store(state, events_stored)
        assert len(rows(state)) == tool_rows
        answers.append([sessions_search(state, SearchRequest(q), OPERATOR).as_json()
                        for q in queries])
    for answer in answers:  # a session id is made up for each store
        for item in (item for one in answer for item in one["results"]):
            item.pop("sessionId")
    assert all(one["results"] for one in answers[0])
    assert answers[0] == answers[1]


def test_tool_calls_newest_first_with_status_and_duration(state: StateDir) -> None:
    events = conversation()
    store(state, events)
    answer = tool_calls(state, OPERATOR, agent="main")
    assert [(h.message_id, h.tool, h.status) for h in answer.results] == [
        ("a2", "bash", "ok"), ("a1", "bash", "failed"), ("a1", "read", "ok")]
    assert answer.results[0].duration_ms == 12
    assert [h.tool for h in tool_calls(state, OPERATOR, session_key=KEY, failed=True).results] \
        == ["bash"]
    late = events[5]["message"]["timestamp"]
    assert [h.message_id for h in tool_calls(state, OPERATOR, since_ms=late).results] == ["a2"]
    assert [h.message_id for h in tool_calls(state, OPERATOR, until_ms=late - 1,
                                             tool="read").results] == ["a1"]


# ------------------------------------------------------------------ rules without storage


def test_failed_rule() -> None:
    assert failed_result({"isError": True})
    assert failed_result({"isError": False, "details": {"exitCode": 2}})
    assert not failed_result({"isError": False, "details": {"exitCode": 0}})
    assert not failed_result({"details": {"exitCode": True}})
    assert not failed_result({"details": {"status": "error"}})


def test_bounds_of_a_row() -> None:
    big = "A" * 3000 + " middle " + "Z" * 3000
    events = [header(), msg("a", None, "assistant", [call("c", "bash", {"x": "w " * 5000})]),
              result("r", "a", "c", "bash", big)]
    [row] = tool_rows_for_branch(active_branch(enumerate(events, 1)), KEY)
    name, arguments, rest = row.body.split("\n", 2)
    assert len(arguments) <= ARGS_CHARS + 100
    assert len(rest) <= RESULT_HEAD_CHARS + RESULT_TAIL_CHARS + 200
    assert "middle" not in rest and rest.startswith("A") and rest.endswith("Z")


def test_pairing_by_id_then_by_order() -> None:
    events = [header(), msg("a", None, "assistant", [call("c1", "bash", {}), call("c2", "read", {})]),
              result("r2", "a", "c2", "read", "second"), result("r1", "r2", None, "bash", "first")]
    found = {r.block: r.result_entry_id for r in
             tool_rows_for_branch(active_branch(enumerate(events, 1)), KEY)}
    assert found == {0: "r1", 1: "r2"}
    assert answer_of(events[2]).call_id == "c2"


def test_config_tool_calls_policy() -> None:
    assert _config({}).policy.tool_calls == ()
    assert _config({"tools": {"sessions": {"toolCalls": True}}}).policy.tool_calls == ("*",)
    assert _config({"tools": {"sessions": {"toolCalls": ["re*"]}}}).policy.tool_calls == ("re*",)
    with pytest.raises(ValidationError):
        _config({"tools": {"sessions": {"toolCalls": "yes"}}})
    caller = make_caller(Config(Policy(tool_calls=("*",))), KEY)
    assert caller.policy.tool_calls == ("*",)


# ------------------------------------------------------------------ live equals rebuilt


@st.composite
def tool_conversations(draw):
    """A conversation of turns: calls with results now, later, never, or failed."""
    events: list[dict[str, Any]] = [header("sess-prop"), msg("u0", None, "user", "go")]
    parent = "u0"
    for turn in range(draw(st.integers(1, 4))):
        names = draw(st.lists(st.sampled_from(["bash", "read", "edit"]), min_size=1, max_size=3))
        calls = [call(f"c{turn}-{n}", name, {"arg": f"v{turn}{n}"}) for n, name in enumerate(names)]
        events.append(msg(f"a{turn}", parent, "assistant", calls))
        parent = f"a{turn}"
        order = draw(st.permutations(list(range(len(names)))))
        for n in order:
            if draw(st.booleans()):
                rid = f"r{turn}-{n}"
                events.append(result(rid, parent, calls[n]["id"], names[n], f"out {turn} {n}",
                                     error=draw(st.booleans())))
                parent = rid
    return events


@given(events=tool_conversations())
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_property_live_equals_rebuild(fresh_state, events) -> None:
    state = fresh_state()
    store(state, events)
    live = rows(state)
    rebuild(state)
    assert rows(state) == live


# ------------------------------------------------------------------ failures, format by format


def _failures(state: StateDir, agent: str) -> tuple[int, list[bool], list[str]]:
    """Tool rows, whether each failed row's result event is an error as the format wrote it,
    and the texts of results marked ok."""
    rows_seen, failed_ok, ok_texts = 0, [], []
    with state.open(agent) as db:
        for pk in db.sessions_by_pk(set(range(1, 500))):
            events = {e.get("id"): e for _seq, e in db.events(pk)}
            for row in db.session_tools(pk):
                rows_seen += 1
                if row.result_entry_id is None:
                    continue
                message = events[row.result_entry_id]["message"]
                text = json.dumps(message.get("content"))
                if row.status == "failed":
                    failed_ok.append(failed_result(message))
                else:
                    ok_texts.append(text)
    return rows_seen, failed_ok, ok_texts


def test_failed_calls_of_real_claude_code_and_codex_transcripts(data_dir, tmp_path) -> None:
    """Claude Code marks a failed tool result ``is_error`` (the converter's ``isError``);
    Codex records an exec's exit code in its output's header, which the converter reads."""
    from backscroll.core.importers.claude_code import import_claude_code
    from backscroll.core.importers.codex import import_codex

    state = StateDir(tmp_path / "state")
    import_claude_code(state, data_dir / "claude-code")
    import_codex(state, data_dir / "codex")
    for agent in state.storage.agents():
        reconcile_agent(state, agent)
    by_agent = {agent: _failures(state, agent) for agent in state.storage.agents()}
    for agent, (seen, failed, ok_texts) in by_agent.items():
        assert seen and failed and all(failed), agent
        assert not [t for t in ok_texts if re.search(r"Process exited with code [1-9]", t)]
    answer = tool_calls(state, OPERATOR, failed=True, limit=1000)
    assert len(answer.results) == sum(len(f) for _s, f, _o in by_agent.values())


def test_codex_exit_codes() -> None:
    from backscroll.core.importers.codex.blocks import output_text

    header = "Chunk ID: f0\nWall time: 0.1 seconds\nProcess exited with code {}\nOutput:\nx"
    assert output_text(header.format(1)) == (header.format(1), True)
    assert output_text(header.format(0))[1] is False
    assert output_text('{"output":"x","metadata":{"exit_code":2}}')[1] is True
    assert output_text("the log said: Process exited with code 3 once")[1] is False


def test_verify_checks_the_tool_rows(state: StateDir) -> None:
    from backscroll.core.verify import verify_state

    store(state, conversation())
    assert verify_state(state).problems == []
    with state.open("main", write=True) as db:
        with db.transaction():
            db.replace_tools([(db.session(KEY).pk, "", [])])
    [problem] = verify_state(state).problems
    assert "tool-call rows" in problem and "3 missing" in problem


def test_calls_of_one_millisecond_cut_by_the_limit_are_ordered_by_session_key(state) -> None:
    for n in (3, 1, 2, 4):
        store(state, [header(f"s{n}"), msg(f"u{n}", None, "user", "go", ms=0),
                      msg(f"a{n}", f"u{n}", "assistant", [call(f"c{n}", "bash", {"n": n})],
                          ms=5000)], f"agent:main:subagent:k{n}")
    keys = [h.session_key for h in search(state, "", tool="bash", limit=2).results]
    assert keys == ["agent:main:subagent:k1", "agent:main:subagent:k2"]
    keys = [h.session_key for h in search(state, "bash", order="recent", limit=3).results]
    assert keys == ["agent:main:subagent:k1", "agent:main:subagent:k2", "agent:main:subagent:k3"]
    keys = [h.session_key for h in tool_calls(state, OPERATOR, limit=1).results]
    assert keys == ["agent:main:subagent:k1"]


def test_a_session_filter_naming_no_visible_session_says_so_as_history_does(
        state: StateDir) -> None:
    """``calls --session`` and ``search --tools --session`` with a key found nowhere (a typo)
    say what history says; for an agent caller a session hidden from it and one that does not
    exist get the same answer; an ungranted caller still gets the answer of nothing."""
    from backscroll.core.errors import Forbidden
    from backscroll.core.history import HistoryRequest, sessions_history
    from backscroll.core.visible_sessions import FORBIDDEN

    store(state, conversation())
    hidden = "agent:main:telegram:group:7"
    store(state, [header("sess-other"), msg("x1", None, "user", "hi"),
                  msg("x2", "x1", "assistant", [call("k1", "bash", {"command": "ls"})])], hidden)
    lonely = "agent:main:subagent:lonely"
    store(state, [header("sess-lonely"), msg("y1", None, "user", "hi")], lonely)
    granted = Caller(lonely, Policy(visibility="self", tool_calls=("*",)))
    asks = {
        "calls": lambda caller, key: tool_calls(state, caller, session_key=key),
        "listing": lambda caller, key: search(state, "", caller, session_key=key),
        "words": lambda caller, key: search(state, "zanzibarquux", caller, session_key=key),
        "failed": lambda caller, key: search(state, "", caller, session_key=key, failed=True),
        "history": lambda caller, key: sessions_history(state, HistoryRequest(key), caller),
    }
    cases = [(OPERATOR, "agent:main:mian"), (OPERATOR, "agent:nobody:main"),
             (granted, hidden), (granted, "agent:main:nosuch"), (granted, KEY)]
    for name, ask in asks.items():
        for caller, key in cases:
            with pytest.raises(Forbidden) as raised:
                ask(caller, key)
            assert str(raised.value) == FORBIDDEN, (name, key)
    # a session it may see answers, with calls or without any
    assert [h.message_id for h in tool_calls(state, OPERATOR, session_key=KEY, failed=True)
            .results] == ["a1"]
    assert tool_calls(state, granted, session_key=lonely).results == []
    assert [h.session_key for h in search(state, "", session_key=hidden, tool="bash")
            .results] == [hidden]
    ungranted = Caller(lonely, Policy(visibility="self"))
    assert tool_calls(state, ungranted, session_key="agent:main:nosuch").results == []
    assert search(state, "", ungranted, session_key=hidden, failed=True).results == []
