"""The facts of a session and the usage sums (issue 26) equal what the transcripts hold: a
hand-built fixture (two agents, two models, two days, a failed call, an edit, a write, a patch,
an entry stored twice, an abandoned branch, a message with no usage) whose numbers are worked
out by hand below; on both backends, by the live write path and by a rebuild."""

from __future__ import annotations

import json

import pytest

from backscroll.core.catalog import visible_session_list
from backscroll.core.facts import Facts, Usage
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.storage import SessionMeta
from backscroll.core.usage import usage_report
from backscroll.core.visibility import OPERATOR, Caller, Policy

pytestmark = pytest.mark.backends

DAY1 = "2026-11-01"
DAY2 = "2026-11-02"


def at(day: str, hms: str) -> str:
    return f"{day}T{hms}Z"


def message(entry_id: str, parent: str | None, when: str, **msg) -> dict:
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": when,
            "message": msg}


def assistant(entry_id: str, parent: str | None, when: str, content: list, model: str | None,
              usage: dict | None, provider: str = "anthropic") -> dict:
    fields: dict = {"role": "assistant", "content": content, "provider": provider}
    if model is not None:
        fields["model"] = model
    if usage is not None:
        fields["usage"] = usage
    return message(entry_id, parent, when, **fields)


def call(call_id: str, name: str, **arguments) -> dict:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}


PATCH = ("*** Begin Patch\n*** Update File: src/z.rs\n@@\n-a\n+b\n*** Add File: src/new.rs\n"
         "+fn main() {}\n*** End Patch")

# Session A (agent main, cwd /work/alpha): u1 a1 r1 r2 a2 (a2 stored twice), a delivery mirror,
# then a3, a second answer to u1: the active branch is u1 a3, and a1..m1 an abandoned branch
# whose tokens were spent all the same. Every stored message counts, each entry once.
SESSION_A = [
    {"type": "session", "version": 3, "id": "sa", "timestamp": at(DAY1, "09:59:00"),
     "cwd": "/work/alpha"},
    message("u1", None, at(DAY1, "10:00:00"), role="user",
            content=[{"type": "text", "text": "fix the parser"}]),
    assistant("a1", "u1", at(DAY1, "10:00:05"),
              [{"type": "text", "text": "on it"},
               call("c1", "Edit", file_path="/work/alpha/x.py", old_string="a", new_string="b"),
               call("c2", "Write", file_path="/work/alpha/y.md", content="notes")],
              "claude-x",
              {"input": 100, "output": 20, "cacheRead": 1000, "cacheWrite": 50,
               "totalTokens": 1170, "cost": {"input": 0.125, "output": 0.125, "total": 0.25}}),
    message("r1", "a1", at(DAY1, "10:00:06"), role="toolResult", toolCallId="c1",
            toolName="Edit", content=[{"type": "text", "text": "ok"}], isError=False),
    message("r2", "r1", at(DAY1, "10:00:07"), role="toolResult", toolCallId="c2",
            toolName="Write", content=[{"type": "text", "text": "denied"}], isError=True),
    assistant("a2", "r2", at(DAY2, "09:00:00"),
              [call("c3", "apply_patch", input=PATCH)], "gpt-y", {"input": 10, "output": 5}),
    assistant("a2", "r2", at(DAY2, "09:00:00"),  # the same entry again: counts once
              [call("c3", "apply_patch", input=PATCH)], "gpt-y", {"input": 10, "output": 5}),
    assistant("m1", "a2", at(DAY2, "09:00:01"), [{"type": "text", "text": "sent"}],
              "delivery-mirror", {"input": 0, "output": 0, "cost": {"total": 0}},
              provider="openclaw"),
    assistant("a3", "u1", at(DAY2, "09:30:00"), [{"type": "text", "text": "again"}],
              "claude-x", {"input": 1, "output": 1, "cost": {"total": 0.5}}),
]
# Session B (agent ops, no cwd): a message recording no usage, one with input tokens only.
SESSION_B = [
    assistant("b1", None, at(DAY1, "12:00:00"), [{"type": "text", "text": "hello"}],
              "claude-x", None),
    assistant("b2", "b1", at(DAY1, "12:01:00"), [{"type": "text", "text": "more"}],
              "claude-x", {"input": 7}),
]
KEY_A, KEY_B = "agent:main:a", "agent:ops:b"


def ms(day: str, hms: str) -> int:
    from backscroll.core.transcript import iso_to_ms

    return iso_to_ms(at(day, hms))


FACTS_A = Facts(
    models=("claude-x", "gpt-y"),  # the mirror names no model anyone ran
    usage=Usage(100 + 10 + 1, 20 + 5 + 1, 1000, 50, 0.25 + 0.5),
    first_at=ms(DAY1, "10:00:00"), last_at=ms(DAY2, "09:30:00"),
    tool_calls=3, failed_calls=1,
    files=("/work/alpha/x.py", "/work/alpha/y.md", "src/z.rs", "src/new.rs"),
)
FACTS_B = Facts(models=("claude-x",), usage=Usage(7, None, None, None, None),
                first_at=ms(DAY1, "12:00:00"), last_at=ms(DAY1, "12:01:00"))


def append_all(state, key: str, events: list[dict]) -> None:
    with state.open(key.split(":")[1], write=True) as db:
        for event in events:
            db.append(SessionMeta(key), json.dumps(event))


def import_all(state, key: str, events: list[dict]) -> None:
    with state.open(key.split(":")[1], write=True) as db:
        db.import_session(SessionMeta(key, session_id=key.replace(":", "-")),
                          [json.dumps(e) for e in events])


def stored_facts(state, key: str) -> Facts | None:
    with state.open(key.split(":")[1]) as db:
        session = db.session(key)
        return db.session_facts([session.pk]).get(session.pk)


def test_the_live_write_path_keeps_the_facts_the_transcript_holds(state) -> None:
    append_all(state, KEY_A, SESSION_A)
    append_all(state, KEY_B, SESSION_B)
    assert stored_facts(state, KEY_A) == FACTS_A
    assert stored_facts(state, KEY_B) == FACTS_B  # no cost recorded: None, not 0
    reconcile_agent(state, "main")  # a3 moved the leaf: a rebuild recomputes from the log
    assert stored_facts(state, KEY_A) == FACTS_A


def test_an_import_rebuilt_has_the_same_facts_as_live_appends(state) -> None:
    import_all(state, KEY_A, SESSION_A)
    import_all(state, KEY_B, SESSION_B)
    assert stored_facts(state, KEY_A) is None  # stored unindexed: not computed yet
    reconcile_agent(state, "main")
    reconcile_agent(state, "ops")
    assert stored_facts(state, KEY_A) == FACTS_A
    assert stored_facts(state, KEY_B) == FACTS_B


def fill(state) -> None:
    append_all(state, KEY_A, SESSION_A)
    append_all(state, KEY_B, SESSION_B)
    reconcile_agent(state, "main")


def rows(report) -> dict:
    return {line.key: tuple(line.usage) for line in report.lines}


def test_usage_sums_by_day_model_agent_and_project(state) -> None:
    fill(state)
    window = {"since": DAY1, "until": DAY2}
    by_day = usage_report(state, OPERATOR, by="day", **window)
    assert rows(by_day) == {DAY1: (100 + 7, 20, 1000, 50, 0.25),
                            DAY2: (10 + 1, 5 + 1, None, None, 0.5)}
    assert tuple(by_day.total) == (118, 26, 1000, 50, 0.75)
    assert rows(usage_report(state, OPERATOR, by="model", **window)) == {
        "claude-x": (100 + 1 + 7, 21, 1000, 50, 0.75), "gpt-y": (10, 5, None, None, None)}
    assert rows(usage_report(state, OPERATOR, by="agent", **window)) == {
        "main": (111, 26, 1000, 50, 0.75), "ops": (7, None, None, None, None)}
    assert rows(usage_report(state, OPERATOR, by="project", **window)) == {
        "/work/alpha": (111, 26, 1000, 50, 0.75), None: (7, None, None, None, None)}
    only_day2 = usage_report(state, OPERATOR, by="model", since=DAY2, until=DAY2)
    assert rows(only_day2) == {"claude-x": (1, 1, None, None, 0.5),
                               "gpt-y": (10, 5, None, None, None)}


def test_a_caller_sums_only_the_sessions_it_may_see(state) -> None:
    fill(state)
    caller = Caller(KEY_B, Policy(visibility="self"))
    report = usage_report(state, caller, by="agent", since=DAY1, until=DAY2)
    assert rows(report) == {"ops": (7, None, None, None, None)}


def test_lists_and_history_return_the_facts(state) -> None:
    fill(state)
    listed = {s.key: s for s in visible_session_list(state, OPERATOR)}
    facts = listed[KEY_A].as_json()["facts"]
    assert facts["models"] == ["claude-x", "gpt-y"]
    assert facts["tokens"] == {"input": 111, "output": 26, "cacheRead": 1000, "cacheWrite": 50,
                               "cost": 0.75}
    assert (facts["toolCalls"], facts["failedToolCalls"]) == (3, 1)
    assert facts["durationMs"] == ms(DAY2, "09:30:00") - ms(DAY1, "10:00:00")
    assert facts["files"] == ["/work/alpha/x.py", "/work/alpha/y.md", "src/z.rs", "src/new.rs"]
    assert listed[KEY_B].as_json()["facts"]["tokens"]["cost"] is None
    history = sessions_history(state, HistoryRequest(KEY_B), OPERATOR).as_json()
    assert history["facts"]["models"] == ["claude-x"]
    assert history["facts"]["tokens"]["input"] == 7


def test_a_deleted_session_takes_its_usage_with_it(state) -> None:
    fill(state)
    with state.open("ops", write=True) as db:
        assert db.delete_session(KEY_B)
    report = usage_report(state, OPERATOR, by="agent", since=DAY1, until=DAY2)
    assert rows(report) == {"main": (111, 26, 1000, 50, 0.75)}


def cli(capsys, state, *argv: str) -> tuple[int, str, str]:
    from backscroll.tui.cli import main

    code = main(["--state-dir", str(state.path), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_usage_command_answers_json_and_a_table(state, capsys) -> None:
    fill(state)
    code, out, _err = cli(capsys, state, "usage", "--since", DAY1, "--until", DAY2, "--by",
                          "model", "--json")
    assert code == 0
    assert json.loads(out) == {
        "since": DAY1, "until": DAY2, "by": "model",
        "rows": [{"model": "claude-x", "input": 108, "output": 21, "cacheRead": 1000,
                  "cacheWrite": 50, "cost": 0.75},
                 {"model": "gpt-y", "input": 10, "output": 5, "cacheRead": None,
                  "cacheWrite": None, "cost": None}],
        "total": {"input": 118, "output": 26, "cacheRead": 1000, "cacheWrite": 50,
                  "cost": 0.75},
    }
    code, out, _err = cli(capsys, state, "usage", "--since", DAY1, "--until", DAY2)
    assert code == 0 and "2026-11-01" in out and "$0.75" in out and "total" in out
    code, out, err = cli(capsys, state, "usage", "--since", DAY2, "--until", DAY1, "--json")
    assert code == 2 and json.loads(out)["error"].startswith("the window ends (2026-11-01)")
    assert "Traceback" not in err


def test_history_json_gives_the_facts(state, capsys) -> None:
    fill(state)
    code, out, _err = cli(capsys, state, "history", KEY_A, "--json")
    assert code == 0
    facts = json.loads(out)["facts"]
    assert (facts["models"], facts["toolCalls"], facts["failedToolCalls"]) == (
        ["claude-x", "gpt-y"], 3, 1)


def test_a_session_without_messages_has_no_facts_either_way(state) -> None:
    header = [{"type": "session", "version": 3, "id": "sh", "timestamp": at(DAY1, "08:00:00"),
               "cwd": "/work/beta"}]
    append_all(state, "agent:main:quiet", header)
    import_all(state, "agent:main:quiet-import", header)
    reconcile_agent(state, "main")
    assert stored_facts(state, "agent:main:quiet") is None
    assert stored_facts(state, "agent:main:quiet-import") is None


def test_verify_proves_the_facts_and_finds_a_changed_one(state) -> None:
    from backscroll.core.verify import verify_state

    fill(state)
    reconcile_agent(state, "ops")
    assert verify_state(state).ok
    with state.open("main", write=True) as db, db.transaction():
        pk = db.session(KEY_A).pk
        db._save_facts(pk, FACTS_A._replace(tool_calls=99))  # as a bug would leave it
    report = verify_state(state)
    assert not report.ok
    assert any("stored facts or usage" in p and KEY_A in p for p in report.problems)


def test_real_openclaw_transcripts_give_the_sums_they_hold(state, data_dir) -> None:
    """Real OpenClaw files (shared test data) imported and rebuilt: the facts and usage sums
    equal what a plain read of the files counts (each entry once; OpenClaw's own mirror and
    gateway messages name no model)."""
    from backscroll.core import formats
    from backscroll.core.reconcile import reconcile_all

    files = sorted((data_dir / "openclaw").glob("*/*.jsonl"))
    tokens = calls = failed = 0
    cost = 0.0
    for path in files:
        seen: set[str] = set()
        for line in path.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            msg = event.get("message") if event.get("type") == "message" else None
            entry = event.get("id")
            if not isinstance(msg, dict) or entry in seen:
                continue
            if isinstance(entry, str):
                seen.add(entry)
            if msg.get("role") == "toolResult" and msg.get("isError") is True:
                failed += 1
            if msg.get("role") != "assistant":
                continue
            calls += sum(1 for b in msg.get("content") or [] if b.get("type") == "toolCall")
            usage = msg.get("usage") or {}
            if msg.get("provider") != "openclaw":
                tokens += usage.get("input", 0)
                cost += (usage.get("cost") or {}).get("total", 0)
    assert tokens > 0 and calls > 0
    formats.get("openclaw").doors.import_into(state, str(data_dir / "openclaw"), None)
    reconcile_all(state)
    listed = visible_session_list(state, OPERATOR)
    assert sum(s.facts.tool_calls for s in listed if s.facts) == calls
    assert sum(s.facts.failed_calls for s in listed if s.facts) == failed
    report = usage_report(state, OPERATOR, since="2020-01-01", until="2029-12-31", by="agent")
    assert report.total.input == tokens
    assert report.total.cost == pytest.approx(cost)


def test_an_incognito_session_is_in_no_sum_and_keeps_no_file_names(state) -> None:
    fill(state)
    hidden = "agent:main:subagent:incognito-1"
    append_all(state, hidden, SESSION_A[1:3])  # u1 and a1: an edit and a write, 0.25 spent
    facts = stored_facts(state, hidden)
    assert facts is not None and facts.tool_calls == 2 and facts.files == ()
    report = usage_report(state, OPERATOR, by="agent", since=DAY1, until=DAY2)
    assert rows(report)["main"] == (111, 26, 1000, 50, 0.75)  # as without it
