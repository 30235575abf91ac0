"""Importers of Claude Code projects and Codex CLI rollouts, on the real shared files."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from backscroll.core.errors import ValidationError
from backscroll.core.importers.claude_code import import_claude_code
from backscroll.core.importers.codex import import_codex
from backscroll.core.indexer import expected_rows
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage.sqlite import AgentReader
from backscroll.core.transcript import active_branch, indexable
from backscroll.core.visibility import OPERATOR, Caller, Policy

CC_MAIN = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
CC = "agent:claude-code:claude-code:"
CC_KEYS = {
    CC + CC_MAIN,
    CC + "55604662-cf2a-4331-851a-ec234028f8ca",  # short.jsonl
    CC + "491e126e-1e71-469c-ade2-fcc8af567c74",  # subagent.jsonl
    CC + "d6e0bada-1959-4eec-a9d2-0bfade768d8f",  # tool_heavy.jsonl
    "agent:claude-code:subagent:aac57f5",  # <main>/subagents/agent-aac57f5.jsonl
    "agent:claude-code:subagent:acompact-946d2b",  # the /compact summariser
    "agent:claude-code:subagent:afb92ff",  # known only from subagent.jsonl's progress lines
}
ROLLOUT = "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
CODEX_KEY = "agent:codex:codex:019e1625-789d-76c0-80ab-3724b5ddb799"


def kinds(events: list[tuple[int, dict[str, Any]]]) -> Counter:
    """``type:role`` (messages) or ``type:customType`` of each stored event."""
    out: Counter = Counter()
    for _, event in events:
        detail = (event.get("message") or {}).get("role") or event.get("customType") or ""
        out[f"{event['type']}:{detail}"] += 1
    return out


def branch_texts(db: AgentReader, key: str) -> list[tuple[str, str]]:
    """(role, text) the index would hold for the session's active branch."""
    session = db.session(key)
    assert session is not None, key
    rows, branch = expected_rows(db.events(session.pk), session.created_at)
    assert branch.problems == []
    return [(row.role, row.body) for row in rows]


def joined(rows: list[tuple[str, str]]) -> str:
    return "\n".join(text for _, text in rows)


@pytest.fixture
def cc_state(state: StateDir, data_dir: Path):
    report = import_claude_code(state, data_dir / "claude-code")
    return state, report


# ------------------------------------------------------------------ Claude Code


def test_claude_code_folder_imports_every_session_and_subagent(cc_state) -> None:
    state, report = cc_state
    assert report.skipped == []
    assert report.sessions == 7 and set(report.keys) == CC_KEYS
    assert report.events == 801
    assert state.agents() == ["claude-code"]
    with state.open("claude-code") as db:
        sessions = {s.key: s for s in db.sessions()}
        assert set(sessions) == CC_KEYS
        assert all(s.source == "claude-code" for s in sessions.values())
        # stored, not indexed: reconciliation picks them up
        assert db.counts()["indexed"] == 0
        assert {s.state for s in sessions.values()} == {"dirty"}
        main = sessions[CC + CC_MAIN]
        assert main.session_id == CC_MAIN and main.spawned_by is None
        assert main.label == (
            "spotter-4te: Work on bead spotter-4te. Run bd show spotter-4te to see the…"
        )
        assert main.created_at == 1770905517667  # 2026-02-12T14:11:57.667Z, the first prompt
        assert sessions[CC + "55604662-cf2a-4331-851a-ec234028f8ca"].label == (
            "spotter: mix phx.server doesnt seem to start"
        )


def test_claude_code_main_session_entries(cc_state) -> None:
    state, _ = cc_state
    with state.open("claude-code") as db:
        session = db.session(CC + CC_MAIN)
        events = db.events(session.pk)
        assert session.last_seq == 662
        assert kinds(events) == {
            "session:": 1,
            "message:user": 3,
            "message:assistant": 408,  # one entry per Claude record (one per content block)
            "message:toolResult": 242,
            "custom_message:claude-code.meta": 3,
            "custom:claude-code.stop_hook_summary": 2,
            "custom:claude-code.turn_duration": 2,
            "compaction:": 1,
        }
        header = events[0][1]
        assert header == {
            "type": "session",
            "version": 3,
            "id": CC_MAIN,
            "timestamp": "2026-02-12T14:11:57.667Z",
            "cwd": "/home/USER/projects/spotter-worktrees/spotter-4te",
        }
        by_id = {e.get("id"): e for _, e in events}
        # uuid -> id, parentUuid -> parentId (progress lines in between are passed through)
        first = by_id["858a6db7-6721-4caa-b306-39ec1f17cbf1"]
        assert first["parentId"] is None
        assert first["timestamp"] == "2026-02-12T14:11:57.667Z"
        assert first["message"]["timestamp"] == 1770905517667
        assert first["message"]["content"][0]["text"].startswith("Work on bead spotter-4te.")
        tool_calls = [
            b
            for _, e in events
            if e["type"] == "message"
            for b in e["message"]["content"]
            if isinstance(b, dict) and b.get("type") == "toolCall"
        ]
        assert len(tool_calls) == 242 and all(b["id"].startswith("toolu_") for b in tool_calls)
        results = [
            e["message"] for _, e in events if (e.get("message") or {}).get("role") == "toolResult"
        ]
        call_names = {b["id"]: b["name"] for b in tool_calls}
        assert all(r["toolName"] == call_names[r["toolCallId"]] for r in results)


def test_claude_code_compaction_keeps_the_conversation_before_it(cc_state) -> None:
    state, _ = cc_state
    with state.open("claude-code") as db:
        session = db.session(CC + CC_MAIN)
        events = db.events(session.pk)
        (compaction,) = [e for _, e in events if e["type"] == "compaction"]
        assert compaction["id"] == "434dc859-6299-4713-8613-d28662692f06"
        # hangs from logicalParentUuid (the turn_duration line before /compact)
        assert compaction["parentId"] == "23b73f9a-2123-4b8e-81a2-b98378c7498f"
        assert compaction["tokensBefore"] == 142431
        assert compaction["summary"].startswith(
            "This session is being continued from a previous conversation"
        )
        branch = active_branch(events)
        on_branch = {e.get("id") for _, e in branch.path}
        assert compaction["id"] in on_branch
        assert "858a6db7-6721-4caa-b306-39ec1f17cbf1" in on_branch  # first prompt, pre-compaction
        rows = branch_texts(db, CC + CC_MAIN)
        users = [text for role, text in rows if role == "user"]
        assert users[0].startswith("Work on bead spotter-4te.")
        assert users[1:] == [
            "/compact and continue with the reamining tasks",
            "continue implementation",
        ]
        text = joined(rows)
        assert "being continued from a previous conversation" not in text  # summary: not indexed
        assert "Caveat: The messages below were generated" not in text  # isMeta: not indexed
        assert "Compacted (ctrl+o to see full summary)" not in text  # command output
        assert "Base directory for this skill" not in text  # isMeta skill text
        assert len(rows) == 161
        # every indexable entry of the session is on the active branch
        assert {m.entry_id for _, e in events if (m := indexable(e))} == set(_row_ids(db, session))


def _row_ids(db: AgentReader, session) -> list[str]:
    rows, _ = expected_rows(db.events(session.pk), session.created_at)
    return [row.entry_id for row in rows]


def test_claude_code_tool_output_and_thinking_are_not_indexed(cc_state) -> None:
    state, _ = cc_state
    with state.open("claude-code") as db:
        rows = branch_texts(db, CC + "55604662-cf2a-4331-851a-ec234028f8ca")
        assert rows == [
            ("user", "mix phx.server doesnt seem to start"),
            (
                "assistant",
                "Let me check the project structure and try running the server to see the error.",
            ),
        ]
        session = db.session(CC + "55604662-cf2a-4331-851a-ec234028f8ca")
        events = {e.get("id"): e for _, e in db.events(session.pk)}
        thinking = events["c228f841-697c-48dd-b33e-3ebc5ced6a41"]["message"]["content"][0]
        assert thinking["type"] == "thinking" and "signature" not in thinking
        assert thinking["thinking"].startswith("The user is having trouble starting their Phoenix")
        result = events["ff80d82a-4ac1-4945-83dd-1226f98b8cf6"]
        assert result["message"]["role"] == "toolResult" and result["message"]["isError"] is True
        assert result["message"]["toolCallId"] == "toolu_0116Hyi5v8ut7Ffb7d8qV1Sc"
        assert result["message"]["toolName"] == "Bash"
        assert (
            events["c06a9fe4-ba05-44f2-b619-a057c18101e5"]["type"] == "custom_message"
        )  # interrupt
        main_text = joined(branch_texts(db, CC + CC_MAIN))
        assert "opentelemetry" in main_text.lower()
        assert "spotter-4te [EPIC]" not in main_text  # a Bash tool result (`bd show`)
        assert "Let me analyze" not in main_text


def test_claude_code_every_indexable_text_is_on_the_active_branch(cc_state) -> None:
    """Side branches hold only tool output (parallel tool results), never searchable text."""
    state, _ = cc_state
    with state.open("claude-code") as db:
        for session in db.sessions():
            events = db.events(session.pk)
            every = {m.entry_id for _, e in events if (m := indexable(e))}
            assert every and every == set(_row_ids(db, session)), session.key


def test_claude_code_subagent_file_is_a_spawned_session(cc_state) -> None:
    state, _ = cc_state
    with state.open("claude-code") as db:
        sub = db.session("agent:claude-code:subagent:aac57f5")
        assert sub.spawned_by == CC + CC_MAIN and sub.parent_key == CC + CC_MAIN
        assert sub.session_id != CC_MAIN  # records carry the parent's sessionId
        assert sub.label == "spotter-4te: general-purpose: Check OTEL hex package versions"
        events = db.events(sub.pk)
        assert kinds(events) == {
            "session:": 1,
            "message:user": 1,
            "message:assistant": 15,
            "message:toolResult": 12,
        }
        rows = branch_texts(db, "agent:claude-code:subagent:aac57f5")
        assert rows[0][0] == "user" and rows[0][1].startswith(
            "Search hex.pm for the latest versions of these Elixir packages"
        )
        assert len(rows) == 4
        # the sub-agent's copies in the parent's progress lines do not enter the parent
        assert "Search hex.pm for the latest versions" not in joined(branch_texts(db, CC + CC_MAIN))
        compact = db.session("agent:claude-code:subagent:acompact-946d2b")
        assert compact.spawned_by == CC + CC_MAIN
        assert compact.label == "spotter-4te: compaction summariser"
        first = db.events(compact.pk)[1][1]
        assert first["parentId"] is None  # its parentUuid points into the parent's file


def test_claude_code_subagent_rebuilt_from_progress_lines(cc_state) -> None:
    state, report = cc_state
    assert any("sub-agent afb92ff rebuilt from 19 progress lines" in n for n in report.notes)
    with state.open("claude-code") as db:
        sub = db.session("agent:claude-code:subagent:afb92ff")
        parent = CC + "491e126e-1e71-469c-ade2-fcc8af567c74"
        assert sub.spawned_by == parent and sub.parent_key == parent
        assert sub.label == "spotter: Plan: Draft beads for linting setup"
        rows = branch_texts(db, "agent:claude-code:subagent:afb92ff")
        assert rows[0][1].startswith(
            "Draft bead content for setting up Credo, Dialyxir, and mix_audit"
        )
        parent_rows = branch_texts(db, parent)
        assert parent_rows[0][1].startswith("/handgemacht:create-beads websearch to learn")


def test_claude_code_single_subagent_file_links_to_its_parent(
    state: StateDir, data_dir: Path
) -> None:
    file = data_dir / "claude-code" / CC_MAIN / "subagents" / "agent-aac57f5.jsonl"
    report = import_claude_code(state, file, agent="Laptop")
    assert report.keys == ["agent:laptop:subagent:aac57f5"]
    with state.open("laptop") as db:
        (sub,) = db.sessions()
        assert sub.spawned_by == f"agent:laptop:claude-code:{CC_MAIN}"


def test_claude_code_sidechain_records_in_a_main_file_become_a_subagent(
    state: StateDir, data_dir: Path, tmp_path: Path
) -> None:
    """The older flat layout: sidechain records of a sub-agent next to the main records."""
    main = (data_dir / "claude-code" / "short.jsonl").read_text().splitlines()
    side = (
        (data_dir / "claude-code" / CC_MAIN / "subagents" / "agent-aac57f5.jsonl")
        .read_text()
        .splitlines()
    )
    sid = "55604662-cf2a-4331-851a-ec234028f8ca"
    moved = []
    for line in side:
        record = json.loads(line)
        record["sessionId"] = sid
        moved.append(json.dumps(record))
    file = tmp_path / f"{sid}.jsonl"
    file.write_text("\n".join(main + moved) + "\n")
    report = import_claude_code(state, file)
    assert sorted(report.keys) == [CC + sid, "agent:claude-code:subagent:aac57f5"]
    with state.open("claude-code") as db:
        sub = db.session("agent:claude-code:subagent:aac57f5")
        assert sub.spawned_by == CC + sid
        assert len(branch_texts(db, "agent:claude-code:subagent:aac57f5")) == 4
        assert [r for r, _ in branch_texts(db, CC + sid)] == ["user", "assistant"]


def test_claude_code_reimport_adds_nothing(cc_state, data_dir: Path) -> None:
    state, _ = cc_state
    again = import_claude_code(state, data_dir / "claude-code")
    assert again.events == 0 and again.sessions == 7 and again.skipped == []
    with state.open("claude-code") as db:
        assert len(db.sessions()) == 7
        assert db.session(CC + CC_MAIN).last_seq == 662


def test_claude_code_malformed_line_is_reported_and_the_rest_imports(
    state: StateDir, data_dir: Path, tmp_path: Path
) -> None:
    lines = (data_dir / "claude-code" / "short.jsonl").read_text().splitlines()
    assert "Let me check the project structure" in lines[6]
    lines[6] = '{"parentUuid": "c228f841'  # cut off mid-write
    lines.append("[1, 2]")
    copy = tmp_path / "short.jsonl"
    copy.write_text("\n".join(lines) + "\n")
    report = import_claude_code(state, copy)
    assert report.skipped == [
        f"{copy}:7: not valid JSON (Unterminated string starting at)",
        f"{copy}:16: a Claude Code record must be a JSON object",
    ]
    assert report.sessions == 1 and report.events == 11
    with state.open("claude-code") as db:
        rows = branch_texts(db, CC + "55604662-cf2a-4331-851a-ec234028f8ca")
        assert rows == [("user", "mix phx.server doesnt seem to start")]
        events = {e.get("id"): e for _, e in db.events(db.sessions()[0].pk)}
        # the next record's parent is gone: it continues from the entry before
        assert events["194d33b0-6cf7-4c54-8200-07dfd3fb88cf"]["parentId"] is None
    # the repaired file later: the missing record is added, the leaf stays at the file's end
    shutil.copy(data_dir / "claude-code" / "short.jsonl", copy)
    fixed = import_claude_code(state, copy)
    assert fixed.skipped == [] and fixed.events == 2  # the record + a leaf control
    with state.open("claude-code") as db:
        session = db.sessions()[0]
        branch = active_branch(db.events(session.pk))
        assert branch.leaf == "40003bdd-2613-4975-83d5-36fb0b6bbc59"  # the file's last record


def test_claude_code_non_transcripts_and_bad_input(state: StateDir, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="does not exist"):
        import_claude_code(state, tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValidationError, match="holds no Claude Code transcripts"):
        import_claude_code(state, tmp_path / "empty")
    history = tmp_path / "history.jsonl"
    history.write_text('{"display": "hi", "timestamp": 1}\n{"display": "again"}\n')
    report = import_claude_code(state, history)
    assert report.sessions == 0 and report.skipped == []
    assert report.notes == [f"{history}: not a Claude Code transcript; skipped"]
    with pytest.raises(ValidationError, match="agent id"):
        import_claude_code(state, history, agent="bad/agent")


def test_claude_code_summary_titles_only_from_the_same_file(
    state: StateDir, tmp_path: Path
) -> None:
    sid = "11111111-2222-4333-8444-555555555555"
    base = {"sessionId": sid, "cwd": "/work/demo", "isSidechain": False, "type": "user"}
    records = [
        {"type": "summary", "summary": "Another session's title", "leafUuid": "elsewhere"},
        {"type": "summary", "summary": "Fixing the flaky importer", "leafUuid": "u2"},
        {
            **base,
            "uuid": "u1",
            "parentUuid": None,
            "timestamp": "2026-01-01T10:00:00Z",
            "message": {"role": "user", "content": "why does the import hang?"},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "u2",
            "parentUuid": "u1",
            "timestamp": "2026-01-01T10:00:05Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "A lock is held."}],
            },
        },
        # a rewind: the user edits the first prompt; the new branch is the active one
        {
            **base,
            "uuid": "u3",
            "parentUuid": None,
            "timestamp": "2026-01-01T10:01:00Z",
            "message": {"role": "user", "content": "why does the import hang on NFS?"},
        },
    ]
    file = tmp_path / f"{sid}.jsonl"
    file.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    report = import_claude_code(state, file)
    assert report.notes == [f"{file}: 1 summary lines about other sessions ignored"]
    with state.open("claude-code") as db:
        session = db.session(CC + sid)
        assert session.label == "demo: Fixing the flaky importer"
        assert branch_texts(db, CC + sid) == [("user", "why does the import hang on NFS?")]
        info = [e for _, e in db.events(session.pk) if e["type"] == "session_info"]
        assert info == [
            {
                "type": "session_info",
                "id": "cc-summary-u2",
                "parentId": None,
                "timestamp": "2026-01-01T10:00:05Z",
                "appendMode": "side",
                "name": "Fixing the flaky importer",
            }
        ]


def test_claude_code_import_then_reconcile_then_search(cc_state) -> None:
    state, _ = cc_state
    reconcile_agent(state, "claude-code")
    hits = sessions_search(state, SearchRequest("phx.server", limit=25), OPERATOR).results
    assert (CC + "55604662-cf2a-4331-851a-ec234028f8ca", "user") in {
        (h.session_key, h.role) for h in hits
    }
    # words found only in tool results ("The tool use was rejected") and in the compaction
    # summary ("This session is being continued") never match
    assert sessions_search(state, SearchRequest("rejected"), OPERATOR).results == []
    assert sessions_search(state, SearchRequest("continued"), OPERATOR).results == []
    # the main session sees its spawned sub-agent under the default `tree` policy
    caller = Caller(CC + CC_MAIN, Policy())
    hits = sessions_search(state, SearchRequest("opentelemetry_exporter", limit=25), caller).results
    assert "agent:claude-code:subagent:aac57f5" in {h.session_key for h in hits}


# ------------------------------------------------------------------ Codex


def test_codex_rollout_import(state: StateDir, data_dir: Path) -> None:
    report = import_codex(state, data_dir / "codex")
    assert report.skipped == [] and report.notes == []
    assert report.keys == [CODEX_KEY] and report.events == 253 + 66  # + token counts
    with state.open("codex") as db:
        (session,) = db.sessions()
        assert session.key == CODEX_KEY
        assert session.session_id == "019e1625-789d-76c0-80ab-3724b5ddb799"
        assert session.label == "codemie-code: show tools"
        assert session.source == "codex" and session.spawned_by is None
        assert session.created_at == 1778488015042  # session_meta.timestamp 08:26:55.042Z
        assert db.counts()["indexed"] == 0
        events = db.events(session.pk)
        assert kinds(events) == {
            "session:": 1,
            "custom:codex.session_meta": 1,
            "model_change:": 1,
            "thinking_level_change:": 1,
            "custom_message:codex.context": 2,  # developer permissions + AGENTS.md preamble
            "message:user": 2,
            # 13 texts, 25 reasoning, 105 tool calls, 66 token counts (usage, no content)
            "message:assistant": 143 + 66,
            "message:toolResult": 102,
        }
        assert events[0][1]["cwd"] == "/Users/Sample_User/repos/codemie-ai/codemie-code"
        # a linear chain by parentId
        entries = [e for _, e in events[1:]]
        assert entries[0]["parentId"] is None
        assert all(b["parentId"] == a["id"] for a, b in pairwise(entries))
        model = next(e for e in entries if e["type"] == "model_change")
        assert model["provider"] == "openai"
        calls = {
            b["id"]: b["name"]
            for e in entries
            if (e.get("message") or {}).get("role") == "assistant"
            for b in e["message"]["content"]
            if b["type"] == "toolCall"
        }
        assert Counter(calls.values())["exec_command"] > 0 and "apply_patch" in calls.values()
        results = [
            e["message"] for e in entries if (e.get("message") or {}).get("role") == "toolResult"
        ]
        assert all(r["toolName"] == calls[r["toolCallId"]] for r in results)
        rows = branch_texts(db, CODEX_KEY)
        assert Counter(role for role, _ in rows) == {"user": 2, "assistant": 13}
        assert rows[0] == ("user", "show tools")
        assert rows[2] == ("user", "let's update the defailt context compart to 90 in env var")
        assert rows[-1][1].startswith("Implemented the default context compaction setting")
        text = joined(rows)
        assert "AGENTS.md instructions" not in text and "permissions instructions" not in text
        assert "Chunk ID: a21e41" not in text  # function_call_output
        assert "sed -n '1,180p'" not in text  # function_call arguments
        assert "gAAAA" not in text  # reasoning stays out


def test_codex_reimport_and_copies_add_nothing(
    state: StateDir, data_dir: Path, tmp_path: Path
) -> None:
    import_codex(state, data_dir / "codex")
    assert import_codex(state, data_dir / "codex").events == 0
    nested = tmp_path / "sessions" / "2026" / "05" / "11"
    nested.mkdir(parents=True)
    shutil.copy(data_dir / "codex" / ROLLOUT, nested / ROLLOUT)
    again = import_codex(state, tmp_path / "sessions")  # found recursively; same ids
    assert again.keys == [CODEX_KEY] and again.events == 0
    with state.open("codex") as db:
        assert db.sessions()[0].last_seq == 253 + 66


def test_codex_malformed_line_is_reported_and_the_rest_imports(
    state: StateDir, data_dir: Path, tmp_path: Path
) -> None:
    lines = (data_dir / "codex" / ROLLOUT).read_text().splitlines()
    assert '"show tools"' in lines[5]
    lines[5] = lines[5][:40]
    lines.insert(
        10, '{"timestamp": "2026-05-11T08:27:22Z", "type": "response_item", "payload": []}'
    )
    copy = tmp_path / ROLLOUT
    copy.write_text("\n".join(lines) + "\n")
    report = import_codex(state, copy)
    assert report.skipped == [
        f"{copy}:6: not valid JSON (Expecting property name enclosed in double quotes)",
        f'{copy}:11: "payload" must be a JSON object',
    ]
    assert report.events == 253 + 66  # the prompt's broken response item: taken from its event
    with state.open("codex") as db:
        session = db.session(CODEX_KEY)
        assert session.label == "codemie-code: show tools"
        rows = branch_texts(db, CODEX_KEY)
        assert [text for role, text in rows if role == "user"] == [
            "show tools", "let's update the defailt context compart to 90 in env var"
        ]
        assert rows[1][1].startswith("Available tool groups in this session")
        assert len(rows) == 15


def test_codex_spawned_thread_links_to_its_parent(state: StateDir, tmp_path: Path) -> None:
    parent, child = "019e0000-0000-7000-8000-00000000000a", "019e0000-0000-7000-8000-00000000000b"

    def line(ts: str, kind: str, payload: dict) -> str:
        return json.dumps({"timestamp": f"2026-05-11T08:{ts}Z", "type": kind, "payload": payload})

    def user(text: str) -> dict:
        return {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        }

    rollout = [
        line(
            "00:00.000",
            "session_meta",
            {
                "id": child,
                "cwd": "/repo",
                "agent_nickname": "Hypatia",
                "source": {"subagent": {"thread_spawn": {"parent_thread_id": parent, "depth": 1}}},
            },
        ),
        line("00:00.001", "session_meta", {"id": parent, "cwd": "/repo", "source": "cli"}),
        line("00:00.002", "response_item", user("the parent's question, replayed")),
        line(
            "00:00.003",
            "turn_context",
            {"turn_id": "t1", "model": "gpt-5.2-codex", "effort": "high"},
        ),
        line(
            "00:00.004",
            "response_item",
            user("<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"),
        ),
        line("00:00.005", "response_item", user("review the docs folder")),
        line(
            "00:01.000",
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "**Planning the review**"}],
                "encrypted_content": "gAAAAB",
            },
        ),
        line(
            "00:02.000",
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Two pages are stale."}],
            },
        ),
        line("00:03.000", "compacted", {"message": "Reviewed docs; two stale pages."}),
    ]
    file = tmp_path / f"rollout-2026-05-11T08-00-00-{child}.jsonl"
    file.write_text("\n".join(rollout) + "\n")
    report = import_codex(state, file)
    assert report.notes == [f"{file}: 2 lines replayed from a parent thread skipped"]
    with state.open("codex") as db:
        session = db.session(f"agent:codex:codex:{child}")
        assert session.spawned_by == f"agent:codex:codex:{parent}"
        assert session.parent_key == f"agent:codex:codex:{parent}"
        assert session.label == "repo: subagent Hypatia: review the docs folder"
        assert branch_texts(db, f"agent:codex:codex:{child}") == [
            ("user", "review the docs folder"),
            ("assistant", "Two pages are stale."),
        ]
        events = [e for _, e in db.events(session.pk)]
        thinking = next(
            e
            for e in events
            if e.get("message", {}).get("content", [{}])[0].get("type") == "thinking"
        )
        assert thinking["message"]["content"][0]["thinking"] == "**Planning the review**"
        assert (
            events[-1]["type"] == "compaction"
            and events[-1]["summary"] == "Reviewed docs; two stale pages."
        )
        assert [e["thinkingLevel"] for e in events if e["type"] == "thinking_level_change"] == [
            "high"
        ]


def test_codex_oldest_rollout_format(state: StateDir, tmp_path: Path) -> None:
    sid = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    lines = [
        {"id": sid, "timestamp": "2025-04-20T10:00:00.000Z", "instructions": None},
        {"record_type": "state"},
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "list the files"}],
        },
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command": ["ls"]}',
            "call_id": "c1",
        },
        {"type": "function_call_output", "call_id": "c1", "output": '{"output": "README.md"}'},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "One file."}],
        },
    ]
    file = tmp_path / f"rollout-2025-04-20T10-00-00-{sid}.jsonl"
    file.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    report = import_codex(state, file)
    assert report.skipped == [] and report.keys == [f"agent:codex:codex:{sid}"]
    with state.open("codex") as db:
        assert branch_texts(db, f"agent:codex:codex:{sid}") == [
            ("user", "list the files"),
            ("assistant", "One file."),
        ]
        session = db.session(f"agent:codex:codex:{sid}")
        call = db.events(session.pk)[3][1]["message"]["content"][0]
        assert call == {
            "type": "toolCall",
            "id": "c1",
            "name": "shell",
            "arguments": {"command": ["ls"]},
        }


def test_codex_bad_input(state: StateDir, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="does not exist"):
        import_codex(state, tmp_path / "nope")
    with pytest.raises(ValidationError, match="holds no Codex rollouts"):
        import_codex(state, tmp_path)
    other = tmp_path / "rollout-notes.jsonl"
    other.write_text('{"session_id": "x", "ts": 1, "text": "hello"}\n')
    report = import_codex(state, other)
    assert report.sessions == 0 and report.notes == [f"{other}: not a Codex rollout; skipped"]
