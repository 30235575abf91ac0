"""Faults found reviewing the investigation features of issue 26 (the tool-call index, the
facts of a session, usage): secrets that reached an output, hostile numbers that crashed a
write, answers that told an agent caller about sessions it may not see. Each test failed
before its fix; on both backends where storage answers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core.catalog import facts_json
from backscroll.core.facts import TOKENS_MAX, Usage
from backscroll.core.ingest import append_events
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.redact import redact
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.tool_index import (
    RESULT_TAIL_CHARS,
    ToolAnswer,
    ToolCall,
    shown,
    tool_row,
)
from backscroll.core.usage import usage_report
from backscroll.core.visibility import OPERATOR

from .events import BASE_MS, header, lines, msg

pytestmark = pytest.mark.backends

SECRETS_TSV = Path("/work/shared/data/secrets_true.tsv")
KEY = "agent:main:main"
MODEL_TOKEN = "sk-ant-api03-" + "Zq8vRt2LmW9xKp4NcJ7hYb3FdS6gTa1EuQ0iOw5r" * 2 + "-AAAAAAAA"


def true_secrets() -> list[tuple[str, str]]:
    """The vectors of secrets_true.tsv (a literal \\n stands for a line break)."""
    rows = SECRETS_TSV.read_text().splitlines()[1:]
    return [(kind, text.replace("\\n", "\n")) for kind, text in (r.split("\t", 1) for r in rows)]


def hidden_words(text: str) -> list[str]:
    """The long words of ``text`` that redaction takes out of it: what must never be shown."""
    masked = redact(text)
    return [w for w in re.findall(r"[A-Za-z0-9_+/=.-]{10,}", text) if w not in masked]


# ------------------------------------------------------------------ tool rows: the result's tail


@pytest.mark.skipif(not SECRETS_TSV.exists(), reason="the shared secrets file is not here")
def test_a_tail_cut_never_parts_a_secret_from_its_context() -> None:
    """The tail of a long result was cut first, then redacted: a cut landing between
    ``client_secret" : "`` and its value left the bare value, which no rule knows without
    its context, to the index and to every output."""
    call = ToolCall("a1", 0, "c1", "bash", "{}", 1_000)
    checked = 0
    for _kind, secret in true_secrets():
        words = hidden_words(secret)
        if not words:
            continue
        for cut in range(len(secret)):  # the tail's raw start lands on each character
            after = " " * max(RESULT_TAIL_CHARS - (len(secret) - cut), 0)
            text = "lorem ipsum " * 300 + secret + after
            body = tool_row(call, ToolAnswer("r1", "c1", "bash", False, text, 2_000, None)).body
            leaked = [w for w in words if w in body]
            assert not leaked, (secret, cut, leaked)
            checked += 1
    assert checked > 500


# ------------------------------------------------------------------ model names


def _assistant(entry_id: str, parent: str | None, model: str, usage: dict[str, Any],
               ms: int) -> dict[str, Any]:
    event = msg(entry_id, parent, "assistant", [{"type": "text", "text": "ok"}], ms=ms)
    event["message"].update(model=model, usage=usage, provider="anthropic")
    return event


def test_a_model_name_holding_a_token_is_redacted_in_every_answer(state: StateDir) -> None:
    """A transcript's ``model`` is free text: ``usage --by model`` and the facts of
    ``sessions_list`` / ``history --json`` gave it verbatim."""
    events = [header("s1"), msg("u1", None, "user", "hi", ms=1),
              _assistant("a1", "u1", MODEL_TOKEN, {"input": 10, "output": 5}, ms=2)]
    assert not append_events(state, SessionMeta(KEY), lines(*events)).refused
    report = usage_report(state, OPERATOR, by="model", now_ms=BASE_MS + 86_400_000)
    assert [line.key for line in report.lines] == [redact(MODEL_TOKEN)]
    assert MODEL_TOKEN[10:-6] not in json.dumps(report.as_json())
    with state.open("main") as db:
        facts = db.session_facts([db.session(KEY).pk])
    (found,) = facts.values()
    assert found.models == (MODEL_TOKEN,)  # stored as the transcript has it, shown redacted
    assert facts_json(found)["models"] == [redact(MODEL_TOKEN)]


# ------------------------------------------------------------------ huge token counts


def _huge_session(messages: int) -> list[dict[str, Any]]:
    events = [header("s-huge")]
    parent = None
    for n in range(messages):
        events.append(_assistant(f"a{n}", parent, "m", {"input": 10**15 - 1, "output": 3,
                                                          "cost": {"total": 1.5}}, ms=n + 1))
        parent = f"a{n}"
    return events


def _huge_usage(state: StateDir) -> Usage:
    report = usage_report(state, OPERATOR, by="model", now_ms=BASE_MS + 86_400_000)
    assert not report.warnings
    (line,) = report.lines
    return line.usage


def test_huge_counts_stop_at_the_cap_and_never_overflow_a_rebuild(state: StateDir) -> None:
    """9,300 messages of 10**15 - 1 input tokens each (every one a count the rule takes)
    summed past 2**63: the rebuild's publish raised OverflowError (SQLite) or bigint out of
    range (PostgreSQL) and the session stayed unindexed for good."""
    events = _huge_session(9_300)
    with state.open("main", write=True) as db:
        db.import_session(SessionMeta(KEY, session_id="s-huge"), [json.dumps(e) for e in events])
    stats = reconcile_agent(state, "main")
    assert stats.error is None and not stats.problems
    assert _huge_usage(state) == Usage(TOKENS_MAX, 9_300 * 3, None, None, 9_300 * 1.5)
    with state.open("main") as db:
        (facts,) = db.session_facts([db.session(KEY).pk]).values()
    assert facts.usage == Usage(TOKENS_MAX, 9_300 * 3, None, None, 9_300 * 1.5)


def test_huge_counts_appended_live_stop_at_the_cap_as_a_rebuild_does(state: StateDir) -> None:
    events = _huge_session(12)  # 12 * (10**15 - 1) > 2**53: the live sum reaches the cap
    assert not append_events(state, SessionMeta(KEY), lines(*events)).refused
    expected = Usage(TOKENS_MAX, 36, None, None, 18.0)
    assert _huge_usage(state) == expected
    with state.open("main") as db:
        (facts,) = db.session_facts([db.session(KEY).pk]).values()
    assert facts.usage == expected


def test_the_cap_is_one_rule_for_sums() -> None:
    assert Usage(TOKENS_MAX - 1).plus(Usage(5)) == Usage(TOKENS_MAX)
    assert Usage(None, 2).plus(Usage(None, None)) == Usage(None, 2)
    assert Usage(cost=0.5).plus(Usage(cost=0.25)).cost == 0.75


def test_the_shown_parts_of_a_row_never_hold_the_tail_secret() -> None:
    """What an answer shows of a call (``shown``) comes from the same body."""
    secret = "SUPER_SEECRET_VALUE = 'c3VwZXIgbG9uZyBzdHJpbmcgc2hvdWxkIGJlIGhpZGRlbg=='"
    call = ToolCall("a1", 0, "c1", "bash", "{}", 1_000)
    words = hidden_words(secret)
    assert words
    for cut in range(len(secret)):
        text = "lorem ipsum " * 300 + secret + " " * (RESULT_TAIL_CHARS - len(secret) + cut)
        body = tool_row(call, ToolAnswer("r1", "c1", "bash", False, text, 2_000, None)).body
        assert not any(w in shown(body).result for w in words)


# ------------------------------------------------------------------ visibility of usage


def test_usage_says_nothing_of_an_invisible_session_being_indexed(state: StateDir) -> None:
    """``usage`` warned "some sessions are still being indexed" when any session of a
    database awaited reconciliation, one the caller may not see included: an agent caller
    learned that another session was written or imported. The warning follows the visible
    sessions, as a search's ``indexing`` does."""
    from backscroll.core.visibility import Caller, Policy

    mine, other = "agent:main:mine", "agent:main:other"
    for key, model in ((mine, "m-mine"), (other, "m-other")):
        events = [header(key), _assistant("a1", None, model, {"input": 4}, ms=5)]
        assert not append_events(state, SessionMeta(key), lines(*events)).refused
    caller = Caller(mine, Policy(visibility="self"))
    now = BASE_MS + 86_400_000

    def answer() -> dict[str, Any]:
        return usage_report(state, caller, by="model", now_ms=now).as_json()

    clean = answer()
    assert [row["model"] for row in clean["rows"]] == ["m-mine"] and "warning" not in clean
    with state.open("main", write=True) as db, db.transaction():
        db._mark_dirty(db.session(other).pk)
    assert answer() == clean
    operator = usage_report(state, OPERATOR, by="model", now_ms=now).as_json()
    assert "still being indexed" in operator["warning"]  # the operator sees that session


# ------------------------------------------------------------------ duplicate call ids


def _tool_result(entry_id: str, parent: str, call_id: str | None, name: str | None,
                 text: str) -> dict[str, Any]:
    event = msg(entry_id, parent, "toolResult", [{"type": "text", "text": text}])
    if call_id is not None:
        event["message"]["toolCallId"] = call_id
    if name is not None:
        event["message"]["toolName"] = name
    return event


def _tool_call(call_id: str | None, name: str) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "toolCall", "name": name, "arguments": {"n": name}}
    if call_id is not None:
        block["id"] = call_id
    return block


def _tool_rows(state: StateDir) -> list[tuple]:
    with state.open("main") as db:
        return [tuple(row[2:]) for row in db.session_tools(db.session(KEY).pk)]


def _rebuilt(state: StateDir) -> list[tuple]:
    with state.open("main", write=True) as db, db.transaction():
        db._mark_dirty(db.session(KEY).pk)
    reconcile_agent(state, "main")
    return _tool_rows(state)


def test_two_calls_given_one_id_are_answered_alike_live_and_rebuilt(state: StateDir) -> None:
    """Two calls of one message with one id, two results naming it: the live path answered
    the second call first, then the first; a rebuild answered the second, then lost the id
    and paired the other result by order with a third call. Now both answer the older open
    call of the id first."""
    events = [header("s-dup"), msg("u1", None, "user", "go"),
              msg("a1", "u1", "assistant", [_tool_call("x", "bash"), _tool_call("x", "read"),
                                            _tool_call("y", "edit")]),
              _tool_result("r1", "a1", "x", "bash", "first answer"),
              _tool_result("r2", "r1", "x", None, "second answer")]
    for event in events:  # one append each, as a live runtime writes them
        assert not append_events(state, SessionMeta(KEY), lines(event)).refused
    live = _tool_rows(state)
    assert [(row[1], row[3], row[7]) for row in live] == [
        (0, "bash", "r1"), (1, "read", "r2"), (2, "edit", None)]
    assert _rebuilt(state) == live


@st.composite
def _colliding_ids(draw: Any) -> list[dict[str, Any]]:
    """Turns of calls whose ids come from a pool of two (or none), results naming one of
    the pool, in any order, each appended on its own."""
    events: list[dict[str, Any]] = [header("s-prop"), msg("u0", None, "user", "go")]
    parent, n = "u0", 0
    for turn in range(draw(st.integers(1, 3))):
        names = draw(st.lists(st.sampled_from(["bash", "read"]), min_size=1, max_size=3))
        ids = [draw(st.sampled_from(["p", "q", None])) for _ in names]
        events.append(msg(f"a{turn}", parent, "assistant",
                          [_tool_call(i, name) for i, name in zip(ids, names)]))
        parent = f"a{turn}"
        for _ in range(draw(st.integers(0, len(names) + 1))):
            n += 1
            events.append(_tool_result(f"r{n}", parent, draw(st.sampled_from(["p", "q", None])),
                                       draw(st.sampled_from(["bash", "read", None])), f"o{n}"))
            parent = f"r{n}"
    return events


@given(events=_colliding_ids())
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_property_colliding_call_ids_live_equals_rebuild(fresh_state, events) -> None:
    state = fresh_state()
    for event in events:
        assert not append_events(state, SessionMeta(KEY), lines(event)).refused
    live = _tool_rows(state)
    assert _rebuilt(state) == live


# ------------------------------------------------------------------ both backends agree

_HOSTILE_NUMBERS = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 10**6), st.integers(10**14, 2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["12", "", "1e3"]))


@st.composite
def _usage_sessions(draw: Any) -> list[tuple[str, list[dict[str, Any]]]]:
    """Sessions in two projects whose assistant messages record any numbers (hostile ones
    too) over a few days and models, one of them twice under one id."""
    sessions = []
    for n in range(draw(st.integers(1, 3))):
        key = f"agent:main:s{n}"
        events: list[dict[str, Any]] = [dict(header(f"s{n}"), cwd=f"/work/p{n % 2}")]
        parent = None
        for m in range(draw(st.integers(1, 5))):
            usage = {k: draw(_HOSTILE_NUMBERS) for k in ("input", "output", "cacheRead",
                                                           "cacheWrite")}
            usage["cost"] = {"total": draw(_HOSTILE_NUMBERS)}
            model = draw(st.sampled_from(["m-a", "m-b", "", " m-a "]))
            event = _assistant(f"a{m}", parent, model, usage,
                               ms=draw(st.sampled_from([0, 3_600_000, 90_000_000])) + m)
            events.append(event)
            if draw(st.booleans()):
                events.append(event)  # stored twice under one id: counted once
            parent = f"a{m}"
        sessions.append((key, events))
    return sessions


def _facts_and_usage(state: StateDir, keys: list[str]) -> tuple:
    with state.open("main") as db:
        pks = [db.session(key).pk for key in keys]
        facts = db.session_facts(pks)
        stored = [facts.get(pk) for pk in pks]
    now = BASE_MS + 5 * 86_400_000
    reports = [usage_report(state, OPERATOR, by=by, now_ms=now).as_json()
               for by in ("day", "model", "project")]
    return stored, reports


@given(sessions=_usage_sessions())
@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@pytest.mark.slow
def test_both_backends_store_and_sum_the_same_facts(tmp_path_factory, pg_url, sessions) -> None:
    """Facts and usage sums, appended live and then rebuilt, equal on SQLite and PostgreSQL
    (hostile numbers included: none may crash either write)."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DELETE FROM backscroll.agents")
    root = tmp_path_factory.mktemp("agree-facts")
    lite, pg = StateDir(root / "lite", database_url=""), StateDir(root / "pg", database_url=pg_url)
    keys = [key for key, _events in sessions]
    answers = []
    for state in (lite, pg):
        for key, events in sessions:
            meta = SessionMeta(key, session_id=key.replace(":", "-"))
            assert not append_events(state, meta, lines(*events)).refused
        live = _facts_and_usage(state, keys)
        with state.open("main", write=True) as db, db.transaction():
            for key in keys:
                db._mark_dirty(db.session(key).pk)
        assert reconcile_agent(state, "main").error is None
        assert _facts_and_usage(state, keys) == live
        answers.append(live)
    assert answers[0] == answers[1]


def test_a_token_count_is_one_rule_for_importers_and_facts() -> None:
    """The facts read 1.5 tokens as 1 where the importers' rule says no count; a count of
    10**15 or more was written by an importer and then read as none. One rule now."""
    from backscroll.core.facts import usage_of
    from backscroll.core.importers.usage import count, openclaw_usage

    hostile = [1.5, -1, True, "12", float("nan"), float("inf"), 10**15, 2**70, None]
    assert [count(v) for v in hostile] == [None] * len(hostile)
    assert [count(v) for v in (0, 7, 7.0, 10**15 - 1)] == [0, 7, 7, 10**15 - 1]
    assert usage_of({"input": 1.5, "output": 2.0, "cacheRead": 10**15}) == Usage(None, 2)
    assert openclaw_usage(input=1.5, output=2.0, cache_read=10**15) == {"output": 2,
                                                                       "totalTokens": 2}


def test_a_tool_named_by_a_secret_is_found_by_no_filter(state: StateDir) -> None:
    """The tool name column (what ``--tool`` compares) held the name as the transcript gave
    it: ``--tool <the secret>`` answered whether a call had that secret for a name."""
    from backscroll.core.search import SearchRequest
    from backscroll.core.tool_search import ToolSearchRequest, tools_search

    events = [header("s-name"), msg("u1", None, "user", "go"),
              msg("a1", "u1", "assistant", [_tool_call("c1", MODEL_TOKEN)]),
              _tool_result("r1", "a1", "c1", None, "done")]
    assert not append_events(state, SessionMeta(KEY), lines(*events)).refused
    for rows in (_tool_rows(state), _rebuilt(state)):
        assert rows and all(MODEL_TOKEN[10:-6] not in repr(row) for row in rows)
    request = ToolSearchRequest(SearchRequest(""), MODEL_TOKEN)
    assert tools_search(state, request, OPERATOR).as_json() == {"results": []}
    hits = tools_search(state, ToolSearchRequest(SearchRequest("done")), OPERATOR).results
    assert [h.tool for h in hits] == [redact(MODEL_TOKEN)]


# ------------------------------------------------------------------ the visibility rule, everywhere

_KEYS = ["agent:main:main", "agent:main:subagent:a", "agent:main:subagent:b", "agent:ops:main",
         "agent:ops:subagent:c"]


@st.composite
def _callers_and_trees(draw: Any) -> tuple[list[tuple[str, str | None]], Any]:
    from backscroll.core.visibility import VISIBILITY_MODES, Caller, Policy

    keys = draw(st.lists(st.sampled_from(_KEYS), min_size=1, max_size=5, unique=True))
    tree = [(key, draw(st.sampled_from([None, *keys[:n]]))) for n, key in enumerate(keys)]
    caller = Caller(draw(st.sampled_from(keys)),  # a caller is a stored session
                    Policy(visibility=draw(st.sampled_from(VISIBILITY_MODES)),
                           a2a_enabled=draw(st.booleans()), tool_calls=("*",)))
    return tree, caller


@given(case=_callers_and_trees())
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_property_calls_tool_search_and_usage_follow_the_list_rule(fresh_state, case) -> None:
    """Whatever the caller and the tree: the sessions ``calls`` and a tool search answer
    from, and the tokens ``usage`` sums, are those of the sessions the caller may list."""
    from backscroll.core.catalog import visible_session_list
    from backscroll.core.search import SearchRequest
    from backscroll.core.tool_search import ToolSearchRequest, tool_calls, tools_search

    tree, caller = case
    state = fresh_state()
    tokens = {}
    for n, (key, parent) in enumerate(tree):
        tokens[key] = 2**n  # each session's tokens tell it apart in a sum
        events = [header(f"s{n}"), msg("u1", None, "user", "go", ms=1),
                  _assistant("a1", "u1", "m", {"input": 2**n}, ms=2)]
        events[-1]["message"]["content"] = [_tool_call("c1", "bash")]
        events[-1]["message"]["content"][0]["arguments"] = {"command": "zyxmarker"}
        meta = SessionMeta(key, spawned_by=parent)
        assert not append_events(state, meta, lines(*events)).refused
    listed = {s.key for s in visible_session_list(state, caller)}
    assert {h.session_key for h in tool_calls(state, caller, limit=100).results} == listed
    found = tools_search(state, ToolSearchRequest(SearchRequest("zyxmarker", limit=25)), caller)
    assert {h.session_key for h in found.results} == listed
    report = usage_report(state, caller, by="agent", now_ms=BASE_MS + 86_400_000)
    assert report.total.input == (sum(tokens[key] for key in listed) if listed else None)


# ------------------------------------------------------------------ a NUL in a name


def test_a_nul_in_a_model_tool_call_id_or_path_loses_no_event(state: StateDir) -> None:
    """PostgreSQL refused the whole assistant message (and so its answer) when its model,
    a tool's name or a call id held a NUL, which SQLite stored: the new columns (usage
    model, tool name, call id) took the names as given. Both store U+FFFD now."""
    call = {"type": "toolCall", "id": "c\x001", "name": "Ed\x00it",
            "arguments": {"file_path": "/x\x00y"}}
    edit = {"type": "toolCall", "id": "c2", "name": "Edit", "arguments": {"file_path": "/x\x00y"}}
    answer = msg("a1", "u1", "assistant", [call, edit], ms=2)
    answer["message"].update(model="m\x00x", usage={"input": 3}, provider="anthropic")
    events = [header("s-nul"), msg("u1", None, "user", "go", ms=1), answer,
              _tool_result("r1", "a1", "c\x001", "Ed\x00it", "done")]
    report = append_events(state, SessionMeta(KEY), lines(*events))
    assert report.stored == 4 and not report.refused
    live = _tool_rows(state)
    assert [(row[2], row[3], row[7]) for row in live] == [
        ("c\ufffd1", "Ed\ufffdit", "r1"), ("c2", "Edit", None)]
    assert _rebuilt(state) == live
    with state.open("main") as db:
        (facts,) = db.session_facts([db.session(KEY).pk]).values()
    assert (facts.models, facts.files) == (("m\ufffdx",), ("/x\ufffdy",))
    report = usage_report(state, OPERATOR, by="model", now_ms=BASE_MS + 86_400_000)
    assert [(line.key, line.usage.input) for line in report.lines] == [("m\ufffdx", 3)]


# ------------------------------------------------------------------ hostile usage through an importer


@pytest.mark.parametrize("usage", [
    {"input_tokens": float("nan"), "output_tokens": float("inf"), "cache_read_input_tokens": -5},
    {"input_tokens": 2**70, "output_tokens": True, "cache_creation_input_tokens": "12"},
    {"input_tokens": 1.5, "output_tokens": [3], "cache_read_input_tokens": {"n": 1}},
    "not an object",
])
def test_hostile_usage_in_a_claude_code_file_is_unknown_not_a_crash(state: StateDir, tmp_path,
                                                                    usage) -> None:
    """Claude Code's ``usage`` with numbers no count is (NaN, Infinity, 2**70, negative,
    booleans, strings, fractions, lists) or no object at all: the import, the rebuild and
    verify go through, the message is kept, and its counts are unknown (None), as on every
    backend; a model name holding a NUL is kept as U+FFFD."""
    from backscroll.core.importers.claude_code import import_claude_code
    from backscroll.core.reconcile import reconcile_all
    from backscroll.core.verify import verify_state

    project = tmp_path / "projects" / "-p"
    project.mkdir(parents=True)
    base = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/p",
            "sessionId": "55604662-cf2a-4331-851a-ec234028f8ca", "version": "2.1.38"}
    records = [
        {**base, "type": "user", "uuid": "u-1", "timestamp": "2026-05-28T10:00:00Z",
         "message": {"role": "user", "content": "count the otters"}},
        {**base, "type": "assistant", "uuid": "a-1", "parentUuid": "u-1",
         "timestamp": "2026-05-28T10:00:01Z",
         "message": {"model": "claude-\x00x", "id": "msg_1", "type": "message",
                     "role": "assistant", "content": [{"type": "text", "text": "seven otters"}],
                     "usage": usage}},
    ]
    text = "\n".join(json.dumps(r) for r in records)  # NaN and Infinity as JSON tokens
    (project / "s.jsonl").write_text(text + "\n")
    report = import_claude_code(state, project.parent)
    assert len(report.keys) == 1 and not report.skipped
    reconcile_all(state)
    assert verify_state(state).ok
    (key,) = report.keys
    with state.open(key.split(":")[1]) as db:
        (facts,) = db.session_facts([db.session(key).pk]).values()
    assert facts.models == ("claude-\ufffdx",)
    assert facts.usage.input is None and facts.usage.output is None
