"""The rules of core/facts.py one at a time: which tool calls edit which files, what a usage
record holds, and (a property) that the live write path and a rebuild fold the same facts
out of any log, entries stored twice and branches included."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core.facts import FILES_MAX, NO_USAGE, Facts, Usage, contribution, files_of, usage_of
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionFilter, SessionMeta

from .test_facts import PATCH, assistant, call


def test_each_formats_edits_and_writes_name_their_files() -> None:
    cases = [
        (call("1", "Edit", file_path="/a.py", old_string="x"), ["/a.py"]),  # Claude Code
        (call("1", "Write", file_path="/b.md", content="x"), ["/b.md"]),
        (call("1", "MultiEdit", file_path="/c.py", edits=[]), ["/c.py"]),
        (call("1", "NotebookEdit", notebook_path="/n.ipynb"), ["/n.ipynb"]),
        (call("1", "edit", path="notes/d.md", oldText="x"), ["notes/d.md"]),  # OpenClaw
        (call("1", "write", path="notes/e.md", content="x"), ["notes/e.md"]),
        (call("1", "edit", filePath="/f.ts", oldString="x"), ["/f.ts"]),  # OpenCode
        (call("1", "write_file", file_path="/g.txt", content="x"), ["/g.txt"]),  # Gemini
        (call("1", "replace", file_path="/h.go", old_string="x"), ["/h.go"]),
        (call("1", "apply_patch", input=PATCH), ["src/z.rs", "src/new.rs"]),  # Codex
        (call("1", "apply_patch", input="*** Update File: a\n*** Move to: b\n"), ["a", "b"]),
        (call("1", "Read", file_path="/only-read.py"), []),  # reading edits nothing
        (call("1", "exec", command="sed -i s/a/b/ x"), []),  # a shell's writes are not known
        (call("1", "Edit", file_path=""), []),
        (call("1", "Edit", file_path=7), []),
        (call("1", "Write", file_path="/x" * 3000), []),  # no path is that long
        ({"type": "toolCall", "id": "1", "name": "Edit", "arguments": "not an object"}, []),
    ]
    for block, files in cases:
        assert files_of(block) == files, block


def test_a_usage_record_keeps_only_what_it_records() -> None:
    assert usage_of(None) == NO_USAGE
    assert usage_of({"input": 5, "output": 2}) == Usage(5, 2, None, None, None)
    assert usage_of({"input": 1, "cost": {"input": 0.5}}) == Usage(1, None, None, None, None)
    assert usage_of({"input": True, "output": -3, "cacheRead": float("nan"),
                     "cacheWrite": "9", "cost": {"total": 0}}) == Usage(None, None, None, None, 0.0)
    assert usage_of({"cost": {"total": 1e300}}) == NO_USAGE


def test_a_message_without_usage_leaves_cost_unknown_not_zero() -> None:
    plain = contribution(assistant("a", None, "2026-11-01T00:00:00Z", [], "m", None), 0)
    assert plain is not None and plain.usage == NO_USAGE
    assert Facts().plus(plain).usage.cost is None
    costed = contribution(assistant("b", None, "2026-11-01T00:00:00Z", [], "m",
                                    {"cost": {"total": 0}}), 0)
    assert Facts().plus(plain).plus(costed).usage.cost == 0.0


def test_the_file_list_stops_at_its_cap_and_says_so() -> None:
    facts = Facts()
    for n in range(FILES_MAX + 5):
        event = assistant(f"a{n}", None, "2026-11-01T00:00:00Z",
                          [call(str(n), "Write", file_path=f"/f{n % (FILES_MAX + 2)}")], "m", None)
        facts = facts.plus(contribution(event, 0))
    assert len(facts.files) == FILES_MAX and facts.files_capped
    assert facts.files[0] == "/f0" and facts.tool_calls == FILES_MAX + 5


def test_the_models_list_stops_at_its_cap_but_usage_keeps_every_model() -> None:
    from backscroll.core.facts import MODELS_MAX, session_facts

    events = [(n, assistant(f"a{n}", None, "2026-11-01T00:00:00Z", [], f"model-{n}",
                            {"input": 1})) for n in range(MODELS_MAX + 3)]
    facts, usage = session_facts(events, 0)
    assert facts is not None and len(facts.models) == MODELS_MAX
    assert facts.models[0] == "model-0" and len(usage) == MODELS_MAX + 3


def test_a_message_without_a_time_counts_on_the_sessions_first_day() -> None:
    event = {"type": "message", "id": "x", "message": {"role": "assistant", "content": [],
                                                       "model": "m", "usage": {"input": 1}}}
    found = contribution(event, 1_796_040_000_000)
    assert found is not None and found.at is None and found.day == "2026-11-30"


_MESSAGE = st.fixed_dictionaries({
    "id": st.sampled_from(["m1", "m2", "m3", "m4", "m5", None]),
    "parent": st.sampled_from(["m1", "m2", "m3", None]),
    "role": st.sampled_from(["assistant", "assistant", "user", "toolResult", "custom"]),
    "model": st.sampled_from(["alpha", "beta", None]),
    "input": st.one_of(st.none(), st.integers(0, 10_000)),
    "cost": st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 1.125])),
    "day": st.integers(1, 3),
    "failed": st.booleans(),
    "file": st.sampled_from(["/a", "/b", None]),
})


def _event(spec: dict) -> dict:
    when = f"2026-11-0{spec['day']}T10:00:00Z"
    if spec["role"] == "custom":  # not a message: no facts (a log of only these has none)
        return {"type": "custom", "customType": "note", "id": spec["id"] or "n",
                "parentId": spec["parent"], "timestamp": when, "data": {}}
    message: dict = {"role": spec["role"], "content": []}
    if spec["role"] == "assistant":
        usage: dict = {}
        if spec["input"] is not None:
            usage["input"] = spec["input"]
        if spec["cost"] is not None:
            usage["cost"] = {"total": spec["cost"]}
        message.update(model=spec["model"], usage=usage)
        if spec["file"]:
            message["content"] = [call("c", "Write", file_path=spec["file"])]
    if spec["role"] == "toolResult":
        message["isError"] = spec["failed"]
    event = {"type": "message", "parentId": spec["parent"], "timestamp": when, "message": message}
    if spec["id"] is not None:
        event["id"] = spec["id"]
    return event


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_MESSAGE, min_size=1, max_size=12))
def test_live_appends_and_a_rebuild_fold_the_same_facts(tmp_path_factory, specs) -> None:
    events = [json.dumps(_event(spec)) for spec in specs]
    root = Path(tmp_path_factory.mktemp("facts"))
    live, imported = StateDir(root / "live", database_url=""), StateDir(root / "imp", database_url="")
    key = "agent:main:x"
    with live.open("main", write=True) as db:
        for line in events:
            db.append(SessionMeta(key, session_id="sx"), line)
    with imported.open("main", write=True) as db:
        db.import_session(SessionMeta(key, session_id="sx"), events)
    reconcile_agent(imported, "main")

    def read(state: StateDir) -> tuple:
        with state.open("main") as db:
            pk = db.session(key).pk
            return db.session_facts([pk]).get(pk), db.usage(SessionFilter([pk]), None, None)

    assert read(live) == read(imported)
