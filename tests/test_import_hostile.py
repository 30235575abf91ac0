"""Importers meet hostile files: one bad field, line or file is skipped with a reason and
never stops the import; links out of the folder given are not followed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from backscroll.core.importers.claude_code import import_claude_code
from backscroll.core.importers.codex import import_codex
from backscroll.core.importers.common import MAX_SKIPS_PER_FILE
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.reconcile import reconcile_all
from backscroll.core.state import StateDir
from backscroll.core.verify import verify_state
from backscroll.tui.cli import main

from .events import header, lines, msg


def transcript(folder: Path, sid: str, text: str = "hello otter") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sid}.jsonl"
    path.write_text("\n".join(lines(header(sid), msg(f"{sid}-m", None, "user", text))) + "\n")
    return path


def sessions_json(folder: Path, text: str) -> None:
    (folder / "sessions.json").write_text(text)


def keys(state: StateDir, agent: str = "main") -> dict[str, int]:
    with state.open(agent) as db:
        return {s.key: s.last_seq for s in db.sessions()}


BAD_STORES = {
    "list as sessionId": '{"agent:main:a": {"sessionId": ["sid-a"], "label": "x"}}',
    "dict as label": '{"agent:main:a": {"sessionId": "sid-a", "label": {"a": 1}}}',
    "Infinity": '{"agent:main:a": {"sessionId": "sid-a", "updatedAt": Infinity}}',
    "NaN": '{"agent:main:a": {"sessionId": "sid-a", "updatedAt": NaN}}',
    "30 digits": '{"agent:main:a": {"sessionId": "sid-a", "updatedAt": 123456789012345678901234567890}}',
    "5000 digits": '{"agent:main:a": {"sessionId": "sid-a", "updatedAt": ' + "9" * 5000 + "}}",
    "deep": '{"agent:main:a": ' + "[" * 5000 + "]" * 5000 + "}",
    "not an object": "[1, 2, 3]",
    "bad key": '{"agent:main:\\u200bmain": {"sessionId": "sid-a"}}',
    "entry not an object": '{"agent:main:a": 7}',
}


@pytest.mark.parametrize("case", sorted(BAD_STORES))
def test_a_bad_sessions_json_field_never_stops_the_import(
    case: str, state: StateDir, tmp_path: Path, capsys
) -> None:
    folder = tmp_path / "main" / "sessions"
    transcript(folder, "sid-a")
    transcript(folder, "sid-b", "second otter")
    sessions_json(folder, BAD_STORES[case])
    code = main(["--state-dir", str(state.path), "import", "openclaw", str(folder), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "internal error" not in err and "Traceback" not in err
    report = json.loads(out)
    assert report["skipped"], "the bad field is named"
    stored = keys(state)
    assert stored.get("agent:main:import:sid-b") == 2  # the other transcript is whole
    assert sorted(n for n in stored.values() if n) == [2, 2]  # sid-a whole too, keyed somehow
    reconcile_all(state)
    assert verify_state(state).ok


def test_header_with_an_object_id_a_bom_and_a_binary_file(state: StateDir, tmp_path: Path) -> None:
    folder = tmp_path / "main" / "sessions"
    folder.mkdir(parents=True)
    (folder / "odd.jsonl").write_text(
        '{"type":"session","version":3,"id":{"a":1}}\n'
        + lines(msg("o1", None, "user", "odd one"))[0] + "\n"
    )
    bom = transcript(folder, "with-bom")
    bom.write_bytes(b"\xef\xbb\xbf" + bom.read_bytes())
    (folder / "binary.jsonl").write_bytes(bytes(range(256)) * 40)
    report = import_openclaw(state, folder)
    stored = keys(state)
    assert stored["agent:main:import:with-bom"] == 2  # the header line was read
    with state.open("main") as db:
        session = db.session("agent:main:import:with-bom")
        assert db.events(session.pk)[0][1] == header("with-bom")
    assert stored["agent:main:import:odd"] == 1  # the message; the header is skipped
    assert any("odd.jsonl:1: the \"id\" of a session header" in s for s in report.skipped)
    binary = [s for s in report.skipped if "binary.jsonl" in s]
    assert binary == [f"{folder / 'binary.jsonl'}: a binary file, not JSON lines; skipped"]


def test_many_bad_lines_are_counted_not_listed(state: StateDir, tmp_path: Path) -> None:
    folder = tmp_path / "main" / "sessions"
    path = transcript(folder, "noisy")
    path.write_text(path.read_text() + "not json\n" * 500)
    report = import_openclaw(state, folder)
    noisy = [s for s in report.skipped if "noisy" in s]
    assert len(noisy) == MAX_SKIPS_PER_FILE + 1
    assert noisy[-1].endswith(f"{500 - MAX_SKIPS_PER_FILE} more malformed lines skipped")
    assert keys(state)["agent:main:import:noisy"] == 2


def test_links_out_of_the_folder_are_not_followed(state: StateDir, tmp_path: Path) -> None:
    outside = tmp_path / "private"
    secret = transcript(outside, "secret-sid", "private diary otter")
    sessions_json(outside, json.dumps({"agent:x:leak": {"sessionId": "secret-sid"}}))
    folder = tmp_path / "given" / "main" / "sessions"
    transcript(folder, "own")
    os.symlink(secret, folder / "secret-sid.jsonl")
    os.symlink(outside / "sessions.json", folder / "sessions.json")
    inside_link = folder.parent / "copy"
    inside_link.mkdir()
    os.symlink(folder / "own.jsonl", inside_link / "own-again.jsonl")  # a link inside: fine
    report = import_openclaw(state, folder)
    stored = keys(state)
    assert list(stored) == ["agent:main:import:own"]
    assert any("secret-sid.jsonl: a link to" in n and "not followed" in n for n in report.notes)
    assert any("sessions.json: a link to" in n for n in report.notes)

    claude = tmp_path / "claude" / "-proj"
    claude.mkdir(parents=True)
    os.symlink(secret, claude / "linked.jsonl")
    claude_report = import_claude_code(state, claude.parent)
    assert claude_report.sessions == 0 and any("not followed" in n for n in claude_report.notes)
    codex = tmp_path / "codex" / "2026" / "01" / "01"
    codex.mkdir(parents=True)
    os.symlink(secret, codex / "rollout-2026-01-01T00-00-00-x.jsonl")
    codex_report = import_codex(state, tmp_path / "codex")
    assert codex_report.sessions == 0 and any("not followed" in n for n in codex_report.notes)


def test_claude_code_hostile_lines(state: StateDir, tmp_path: Path, data_dir: Path) -> None:
    project = tmp_path / "projects" / "-p"
    project.mkdir(parents=True)
    good = project / "good.jsonl"
    shutil.copy(data_dir / "claude-code" / "short.jsonl", good)
    good.write_bytes(b"\xef\xbb\xbf" + good.read_bytes())
    first = json.loads(good.read_bytes()[3:].splitlines()[0])
    hostile = [
        {**first, "uuid": {"a": 1}},
        {**first, "uuid": "u-list", "sessionId": ["x"]},
        {**first, "uuid": "u-deep", "message": {"role": "user", "content": [
            {"type": "tool_result", "content": json.loads("[" * 98 + "]" * 98)}]}},
    ]
    bad = project / "bad.jsonl"
    bad.write_text("\n".join(json.dumps(r) for r in hostile) + "\n" + "[" * 3000 + "\n")
    (project / "binary.jsonl").write_bytes(b"\0\1\2\n" * 100)
    report = import_claude_code(state, project.parent)
    assert any(k.startswith("agent:claude-code:claude-code:") for k in report.keys)
    assert any("bad.jsonl:1:" in s for s in report.skipped)
    assert any("nested deeper" in s or "not valid JSON" in s for s in report.skipped)
    assert any("binary.jsonl" in n for n in report.notes)
    assert not any("unexpected data" in s for s in report.skipped)  # no rule was missing
    reconcile_all(state)
    assert verify_state(state).ok


def test_codex_deep_arguments_and_odd_meta(state: StateDir, tmp_path: Path) -> None:
    day = tmp_path / "sessions" / "2026" / "05" / "11"
    day.mkdir(parents=True)
    deep_args = "[" * 5000 + "]" * 5000
    records = [
        {"type": "session_meta", "payload": {"id": {"not": "a string"}, "cwd": ["x"]}},
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": "run it"}]}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell",
                                              "arguments": deep_args, "call_id": "c1"}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell",
                                              "arguments": '{"x": "\\ud800"}', "call_id": "c2"}},
        {"type": "response_item", "timestamp": 1e400,
         "payload": {"type": "message", "role": "assistant",
                     "content": [{"type": "output_text", "text": "done"}]}},
    ]
    path = day / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records).replace("1e+400", "1e400") + "\n")
    report = import_codex(state, tmp_path / "sessions")
    assert report.sessions == 1 and report.events >= 4
    assert not any("unexpected data" in s for s in report.skipped)
    reconcile_all(state)
    assert verify_state(state).ok


@pytest.mark.parametrize("kind", ["claude-code", "codex"])
def test_a_line_of_nul_bytes_near_the_start_loses_only_that_line(
    state: StateDir, tmp_path: Path, data_dir: Path, kind: str
) -> None:
    # A crash can leave a block of NUL bytes in a file that was being appended to; the
    # writer then goes on with whole lines. Only that line is lost, not the transcript.
    source = {
        "claude-code": data_dir / "claude-code" / "short.jsonl",
        "codex": next((data_dir / "codex").glob("rollout-*.jsonl")),
    }[kind]
    whole, padded = tmp_path / "whole" / source.name, tmp_path / "padded" / source.name
    for path in (whole, padded):
        path.parent.mkdir()
    shutil.copy(source, whole)
    first, rest = source.read_bytes().split(b"\n", 1)
    padded.write_bytes(first + b"\n" + b"\0" * 512 + b"\n" + rest)
    importer = {"claude-code": import_claude_code, "codex": import_codex}[kind]
    expected = importer(StateDir(tmp_path / "expected"), whole)
    report = importer(state, padded)
    assert (report.sessions, report.events) == (expected.sessions, expected.events)
    assert expected.events > 5
    assert report.skipped == [f"{padded}:2: not valid JSON (Expecting value)"]


def test_openclaw_import_of_other_tools_transcripts_stores_nothing(
    state: StateDir, tmp_path: Path, data_dir: Path
) -> None:
    # The wrong kind named by mistake: Claude Code and Codex records are JSON objects with a
    # "type", but no OpenClaw entry; they are not stored as empty sessions.
    folder = tmp_path / "mixed"
    folder.mkdir()
    shutil.copy(data_dir / "claude-code" / "short.jsonl", folder / "short.jsonl")
    rollout = next((data_dir / "codex").glob("rollout-*.jsonl"))
    shutil.copy(rollout, folder / rollout.name)
    transcript(folder, "sid-real", "a real openclaw otter")
    report = import_openclaw(state, folder)
    assert (report.sessions, report.keys) == (1, ["agent:mixed:import:sid-real"])
    assert sorted(report.notes) == [
        f"{folder / rollout.name}: not an OpenClaw transcript; skipped",
        f"{folder / 'short.jsonl'}: not an OpenClaw transcript; skipped",
    ]
    assert keys(state, "mixed") == {"agent:mixed:import:sid-real": 2}


@pytest.mark.parametrize("group", [1, 3, 10_000])
def test_sessions_share_import_transactions_and_each_stays_whole(
    state: StateDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, group: int
) -> None:
    """Imports commit a group of sessions at a time (``imports.IMPORT_GROUP_EVENTS``): a
    session whose store fails half-way leaves nothing of itself (its savepoint), the sessions
    around it are kept, and an error that ends the import keeps what was imported before."""
    from backscroll.core.storage import writeplan
    from backscroll.core.storage.sqlite import imports

    monkeypatch.setattr(imports, "IMPORT_GROUP_EVENTS", group)
    folder = tmp_path / "main" / "sessions"
    for sid in ("a1", "b2", "c3", "d4"):
        transcript(folder, sid)
    real = writeplan.new_events

    def failing(lines, parsed, *rest):  # after the session row was created
        if any("b2" in line for line in lines):
            raise ValueError("unexpected data")
        if any("d4" in line for line in lines):
            raise imports.sqlite3.OperationalError("disk I/O error")
        return real(lines, parsed, *rest)

    monkeypatch.setattr(writeplan, "new_events", failing)
    with pytest.raises(Exception, match="disk I/O"):
        import_openclaw(state, folder)
    assert keys(state) == {"agent:main:import:a1": 2, "agent:main:import:c3": 2}
