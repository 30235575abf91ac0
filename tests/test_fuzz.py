"""Fuzzing (hypothesis) of what reads untrusted input: JSON-line decoding, each importer's line
and store decoding, ``append`` and the time parser. Every input gives a clear error or a skip
with a reason; no other exception, nothing half stored, and a second import adds nothing.
(The query parser's fuzz tests are in test_query.py; scripts/fuzz_atheris.py runs longer,
coverage-guided campaigns of the same targets.)"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core.errors import ValidationError
from backscroll.core.importers.claude_code import import_claude_code
from backscroll.core.importers.codex import import_codex
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.ingest import append_events
from backscroll.core.reconcile import reconcile_all
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.timeparse import parse_time
from backscroll.core.transcript import decode_line, parse_event
from backscroll.core.verify import verify_state
from backscroll.tui.cli import main

FUZZ = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# The field names the importers read, so generated records reach deep into them.
FIELDS = ["type", "id", "parentId", "targetId", "message", "role", "content", "text", "timestamp",
          "sessionId", "uuid", "parentUuid", "isSidechain", "agentId", "payload", "arguments",
          "name", "call_id", "output", "mimeType", "data", "updatedAt", "label", "spawnedBy",
          "cwd", "source", "subagent", "thread_spawn", "parent_thread_id", "toolUseResult",
          "appendMode", "summary", "input", "tool_use_id", "image_url"]
TYPES = ["session", "message", "leaf", "custom", "compaction", "label", "user", "assistant",
         "system", "progress", "summary", "session_meta", "response_item", "event_msg",
         "function_call", "function_call_output", "text", "image", "toolCall", "tool_use",
         "tool_result", "input_text", "output_text", "thinking", "agent_progress"]
ROLES = ["user", "assistant", "toolResult", "developer", "system"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=10**20, max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
    st.sampled_from(TYPES + ROLES + ["2026-05-01T00:00:00Z", "Infinity", "", "#x"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), children, max_size=6),
    max_leaves=25,
)
records = st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=8).map(
    lambda d: {"type": d.get("type") if isinstance(d.get("type"), str) else "message", **d}
)
# Content blocks and Claude Code records of the right shape with fuzzed fields mixed in, so
# generated data gets past the first checks into conversion and storing.
blocks = st.builds(
    lambda kind, text, extra: {**extra, "type": kind, "text": text},
    st.sampled_from(["text", "input_text", "output_text", "tool_use", "tool_result", "thinking",
                     "image"]),
    st.text(max_size=30), st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=3))
claude_records = st.builds(
    lambda kind, content, extra: {**extra, "type": kind,
                                  "message": {"role": kind, "content": content}},
    st.sampled_from(["user", "assistant"]),
    st.one_of(st.text(max_size=40), st.lists(blocks, max_size=3)),
    st.dictionaries(st.sampled_from(["parentUuid", "isSidechain", "timestamp", "cwd", "agentId",
                                     "toolUseResult", "sessionId"]), json_values, max_size=3))
codex_payloads = st.builds(
    lambda kind, role, content, extra: {**extra, "type": kind, "role": role, "content": content},
    st.sampled_from(["message", "message", "function_call", "function_call_output", "reasoning"]),
    st.sampled_from(["user", "assistant", "developer"]),
    st.one_of(st.lists(blocks, max_size=3), json_values),
    st.dictionaries(st.sampled_from(["name", "arguments", "call_id", "output", "id"]), json_values,
                    max_size=3))
raw_lines = st.one_of(
    records.map(lambda r: json.dumps(r).encode()),  # NaN and Infinity included: JSON5-ish
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=60),
    st.sampled_from([b'{"type":"message","id":"x","message":{"role":"user","content":"\\ud800"}}',
                     b"\xef\xbb\xbf" + b'{"type":"session","id":"s"}', b"[" * 300, b"{" * 99]),
)


def check_stored(state: StateDir) -> None:
    """Nothing half stored: after reconciliation, every clean session's index is its branch."""
    reconcile_all(state)
    report = verify_state(state)
    assert report.ok, report.problems


def check_import(report: Any) -> None:
    # A skip names its reason; "unexpected data" means a rule was missing: a bug.
    assert all(": " in line for line in report.skipped)
    assert not [line for line in report.skipped if "unexpected data" in line], report.skipped


def run_import(importer: Any, folder: Path, state: StateDir, agent: str | None = None) -> Any:
    """The first import's report (None: refused with one sentence), checked."""
    try:
        report = importer(state, folder, agent=agent) if agent else importer(state, folder)
    except ValidationError as err:  # e.g. nothing in it is a transcript: one sentence
        assert "\n" not in str(err)
        return None
    check_import(report)
    check_stored(state)
    again = importer(state, folder, agent=agent) if agent else importer(state, folder)
    assert again.events == 0  # importing again adds nothing
    return report


def reached_the_store(report: Any) -> bool:
    """The sound first message was stored, or a rule stopped the file, saying so: the fuzzed
    records went through conversion and storing, not only through decoding."""
    return report is not None and (
        report.messages >= 1 or any("not imported" in line for line in report.skipped))


@FUZZ
@given(st.lists(raw_lines, max_size=12))
@pytest.mark.slow
def test_decoding_a_line_is_a_value_or_one_sentence(lines: list[bytes]) -> None:
    for line in lines:
        for form in (line, line.decode("utf-8", "replace")):
            try:
                parse_event(form)
                decode_line(form)
            except ValidationError as err:
                assert str(err) and "\n" not in str(err)


@FUZZ
@given(st.lists(raw_lines, min_size=1, max_size=12), json_values)
@pytest.mark.slow
def test_openclaw_lines_and_store(lines: list[bytes], store: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "main" / "sessions"
        folder.mkdir(parents=True)
        (folder / "sid-1.jsonl").write_bytes(b"\n".join(lines) + b"\n")
        (folder / "sid-2.jsonl").write_bytes(b'{"type":"session","id":"sid-2"}\n')
        store_text = json.dumps({"agent:main:a": store, "agent:main:b": {"sessionId": "sid-2"}})
        (folder / "sessions.json").write_text(store_text)
        state = StateDir(Path(tmp) / "state")
        run_import(import_openclaw, folder, state)
        with state.open("main") as db:
            assert db.session("agent:main:b") is not None  # the good entry and transcript


@FUZZ
@given(st.lists(claude_records | records, min_size=1, max_size=10), st.lists(raw_lines, max_size=4))
@pytest.mark.slow
def test_claude_code_records(items: list[dict[str, Any]], noise: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "projects" / "-p"
        project.mkdir(parents=True)
        sound = {"type": "user", "uuid": "u-first", "sessionId": "s-1",
                 "message": {"role": "user", "content": "a sound first message"}}
        lines = [json.dumps(sound).encode()]
        lines += [json.dumps({"uuid": f"u{i}", "sessionId": "s-1", "parentUuid": "u-first", **r})
                  .encode() for i, r in enumerate(items)]
        (project / "s-1.jsonl").write_bytes(b"\n".join(lines + noise) + b"\n")
        report = run_import(import_claude_code, project.parent, StateDir(Path(tmp) / "state"))
        assert reached_the_store(report), report


@FUZZ
@given(st.lists(codex_payloads | records, min_size=1, max_size=10), json_values)
@pytest.mark.slow
def test_codex_rollouts(items: list[dict[str, Any]], meta: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        day = Path(tmp) / "sessions" / "2026" / "05" / "01"
        day.mkdir(parents=True)
        lines = [json.dumps({"type": "session_meta", "payload": {"id": "c-1", "x": meta}}),
                 json.dumps({"type": "response_item", "payload": {
                     "type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "a sound first message"}]}})]
        lines += [json.dumps({"type": r.get("type") if r.get("type") in (
            "response_item", "event_msg", "compacted", "turn_context") else "response_item",
            "timestamp": r.get("timestamp"), "payload": r}) for r in items]
        (day / "rollout-2026-05-01T00-00-00-c-1.jsonl").write_text("\n".join(lines) + "\n")
        report = run_import(import_codex, Path(tmp) / "sessions", StateDir(Path(tmp) / "state"))
        assert reached_the_store(report), report


@FUZZ
@given(st.lists(raw_lines, min_size=1, max_size=15))
@pytest.mark.slow
def test_append_stores_or_refuses_every_line(lines: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        state = StateDir(Path(tmp) / "state")
        report = append_events(state, SessionMeta("agent:main:main"), lines)
        nonblank = [line for line in lines if line.strip()]
        assert report.stored + len(report.refused) == len(nonblank)
        assert all(r.startswith("stdin:") and r.count(":") >= 2 for r in report.refused)
        with state.open("main") as db:
            session = db.session("agent:main:main")
            assert (session.last_seq if session else 0) == report.stored
        check_stored(state)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.from_regex(r"[0-9²³¹٣]{1,30}", fullmatch=True),
                 st.from_regex(r"[0-9]{1,15}\s*(m|min|h|d|w)( ago)?", fullmatch=True),
                 st.from_regex(r"-?[0-9]{1,6}-[0-9]{2}-[0-9]{2}(T[0-9:.]{1,15})?(Z|[+-][0-9:]{1,6})?",
                               fullmatch=True)))
@pytest.mark.slow
def test_the_time_parser_gives_a_time_or_one_sentence(text: str) -> None:
    try:
        ms = parse_time(text, now_ms=1_780_000_000_000)
    except ValidationError as err:
        assert "\n" not in str(err) and len(str(err)) < 300
        return
    assert ms is None or isinstance(ms, int)


@pytest.mark.parametrize("since", ["²", "9" * 5000, "１２", "3ｈ", "2026-13-40", "99999-01-01",
                                   "1" * 30 + "d"])
def test_odd_since_values_are_bad_input(since: str, state: StateDir, capsys) -> None:
    with state.open("main", write=True):
        pass
    code = main(["--state-dir", str(state.path), "search", "x", "--since", since])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "internal error" not in err, err
