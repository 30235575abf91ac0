"""The doors to the filesystem: agent ids and keys from every verb, reads that never write,
and a demo that never deletes what it did not make."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backscroll.core.errors import ValidationError
from backscroll.core.keys import MAX_AGENT_ID_CHARS, check_agent_id, normalize_key
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.verify import verify_state
from backscroll.tui.cli import main

from .events import header, lines, msg

BAD_AGENT_IDS = {
    "../../escape": "path separator",
    "..": "'..'",
    ".hidden": "'..'",
    "a/b": "path separator",
    "a\\b": "path separator",
    "/etc": "path separator",
    "x:y": "':'",
    "main\x1b[2J": "control",
    "ma\u200bin": "control or invisible",
    "a" * 300: "the limit is 64",
    "": "empty",
    "caf\u00e9": "letters a-z",
}


def tree(root: Path) -> dict[str, str]:
    """Every file and folder under ``root`` with a digest of its bytes."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        found[rel] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
    return found


def run(capsys, monkeypatch, *argv: str, stdin: str = "") -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def world(tmp_path: Path, data_dir: Path) -> tuple[Path, Path]:
    """A state dir with one agent, inside a folder we watch for anything new."""
    root = tmp_path / "world"
    state = StateDir(root / "deep" / "state")
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main"), json.dumps(header()))
        db.append(SessionMeta("agent:main:main"), json.dumps(msg("u1", None, "user", "hello")))
    transcripts = root / "in"
    (transcripts / "cc").mkdir(parents=True)
    (transcripts / "cc" / "short.jsonl").write_bytes(
        (data_dir / "claude-code" / "short.jsonl").read_bytes()
    )
    (transcripts / "codex").mkdir()
    for file in (data_dir / "codex").iterdir():
        (transcripts / "codex" / file.name).write_bytes(file.read_bytes())
    (transcripts / "oc").mkdir()
    for file in (data_dir / "openclaw" / "chairong").iterdir():
        (transcripts / "oc" / file.name).write_bytes(file.read_bytes())
    return root, state.path


def verbs_with_agent(agent: str, transcripts: Path) -> list[list[str]]:
    by_id = [
        ["import", "openclaw", str(transcripts / "oc"), "--agent", agent],
        ["import", "claude-code", str(transcripts / "cc"), "--agent", agent],
        ["import", "codex", str(transcripts / "codex"), "--agent", agent],
        ["search", "hello", "--agent", agent],
    ]
    if ":" in agent:  # agent:x:y:main is a well-formed key of agent x
        return by_id
    key = f"agent:{agent}:main"
    return by_id + [
        ["search", "hello", "--as", key],
        ["search", "hello", "--session", key],
        ["history", key],
        ["history", "agent:main:main", "--as", key],
        ["append", key],
        ["append", "agent:main:x", "--spawned-by", key],
        ["append", "agent:main:x", "--parent", key],
        ["delete", key],
    ]


@pytest.mark.parametrize("agent", sorted(BAD_AGENT_IDS))
def test_every_verb_refuses_a_bad_agent_id_and_creates_nothing(
    agent: str, world: tuple[Path, Path], capsys, monkeypatch
) -> None:
    root, state_path = world
    before = tree(root.parent)
    for argv in verbs_with_agent(agent, root / "in"):
        code, out, err = run(
            capsys, monkeypatch, "--state-dir", str(state_path), *argv,
            stdin=json.dumps(msg("z", None, "user", "never stored")),
        )
        assert code == 2, (argv, err)
        assert err.count("\n") == 1 and err.startswith("backscroll: "), (argv, err)
        if agent:  # the sentence names the rule that was broken
            assert BAD_AGENT_IDS[agent] in err or "session key" in err, (argv, err)
    assert tree(root.parent) == before  # not one byte, not one folder


def test_upper_case_agent_ids_are_the_same_agent(state: StateDir, capsys, monkeypatch) -> None:
    code, _, err = run(
        capsys, monkeypatch, "--state-dir", str(state.path), "append", "AGENT:MAIN:Main",
        stdin=json.dumps(msg("u1", None, "user", "shouting")),
    )
    assert code == 0, err
    assert state.agents() == ["main"]
    code, out, _ = run(capsys, monkeypatch, "--state-dir", str(state.path), "history",
                       "agent:main:main", "--json")
    assert code == 0 and json.loads(out)["messages"][0]["id"] == "u1"
    code, _, err = run(capsys, monkeypatch, "--state-dir", str(state.path), "delete",
                       "Agent:Main:MAIN")
    assert code == 0, err


def test_a_folder_that_is_not_a_canonical_agent_id_is_not_an_agent(state: StateDir) -> None:
    with state.open("main", write=True):
        pass
    stray = state.path / "agents" / "MAIN"
    stray.mkdir()
    (stray / "sessions.sqlite").write_bytes(b"")
    assert state.agents() == ["main"]


@given(st.text(max_size=80))
def test_agent_ids_are_canonical_or_refused(text: str) -> None:
    try:
        agent = check_agent_id(text)
    except ValidationError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert agent == check_agent_id(agent)  # canonical is a fixed point
    assert 1 <= len(agent) <= MAX_AGENT_ID_CHARS
    assert agent[0].isalnum() and ".." not in agent
    assert all(c.isascii() and (c.isalnum() or c in "._-") for c in agent)
    assert not os.path.isabs(agent) and Path(agent).name == agent


@pytest.mark.parametrize(
    "key",
    [
        "agent:main:ma\u200bin",  # zero width
        "agent:main:\u202emain",  # bidi override
        "agent:main:m\u0430in",  # Cyrillic a
        "agent:main:ma in",
        "agent:main:x\x07",
        "agent:main:" + "x" * 600,
    ],
)
def test_look_alike_keys_are_refused(key: str) -> None:
    with pytest.raises(ValidationError):
        normalize_key(key)


LOOK_ALIKES = ["agent:main:ma\u200bin", "agent:main:\u202emain", "agent:main:m\u0430in",
               "agent:main:main\u2066", "agent:main:mai\u0578"]


@pytest.mark.parametrize("key", LOOK_ALIKES)
def test_every_verb_refuses_a_look_alike_key_and_creates_nothing(
    key: str, world: tuple[Path, Path], capsys, monkeypatch
) -> None:
    root, state_path = world
    before = tree(root.parent)
    for argv in (["search", "hello", "--as", key], ["search", "hello", "--session", key],
                 ["history", key], ["history", "agent:main:main", "--as", key], ["append", key],
                 ["append", "agent:main:x", "--spawned-by", key],
                 ["append", "agent:main:x", "--parent", key], ["delete", key]):
        code, _out, err = run(capsys, monkeypatch, "--state-dir", str(state_path), *argv,
                              stdin=json.dumps(msg("z", None, "user", "never stored")))
        assert code == 2 and "non-ASCII" in err and err.count("\n") == 1, (argv, err)
        assert "\u200b" not in err and "\u202e" not in err  # shown escaped, never raw
    assert tree(root.parent) == before


def test_importers_skip_look_alike_keys_with_a_reason(state: StateDir, tmp_path: Path) -> None:
    from backscroll.core.importers.claude_code import import_claude_code
    from backscroll.core.importers.openclaw import import_openclaw

    folder = tmp_path / "main" / "sessions"
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_text("\n".join(lines(header("s1"), msg("a", None, "user", "hi"))))
    (folder / "sessions.json").write_text(json.dumps({key: {"sessionId": "s1"}
                                                      for key in LOOK_ALIKES}))
    report = import_openclaw(state, folder)
    assert len([s for s in report.skipped if "non-ASCII" in s]) == len(LOOK_ALIKES)
    assert report.keys == ["agent:main:import:s1"]
    project = tmp_path / "projects" / "-p"
    project.mkdir(parents=True)
    record = {"type": "user", "uuid": "u1", "sessionId": "s\u200bx",
              "message": {"role": "user", "content": "hello"}}
    (project / "t.jsonl").write_text(json.dumps(record) + "\n")
    cc = import_claude_code(state, project.parent)
    assert cc.sessions == 0 and any("non-ASCII" in s for s in cc.skipped)
    with state.open("main") as db:
        assert [s.key for s in db.sessions()] == ["agent:main:import:s1"]


def test_fullwidth_keys_fold_to_ascii() -> None:
    assert normalize_key("ａｇｅｎｔ：ｍａｉｎ：ｍａｉｎ") == "agent:main:main"


# --- reads never write -------------------------------------------------------------------


def test_read_commands_never_create_or_migrate(state: StateDir, capsys, monkeypatch) -> None:
    empty = state.db_path("main")
    empty.parent.mkdir(parents=True)
    empty.write_bytes(b"")
    before = tree(state.path)
    for argv in (
        ["search", "hello", "--json"],
        ["history", "agent:main:main", "--json"],
        ["status", "--json"],
        ["verify", "--json"],
        ["search", "hello", "--agent", "other"],
    ):
        run(capsys, monkeypatch, "--state-dir", str(state.path), *argv)
        assert tree(state.path) == before, argv
    assert empty.stat().st_size == 0


def test_status_and_search_name_an_empty_database(state: StateDir, capsys, monkeypatch) -> None:
    with state.open("good", write=True) as db:
        db.append(SessionMeta("agent:good:main"), json.dumps(msg("u1", None, "user", "hello")))
    empty = state.db_path("main")
    empty.parent.mkdir(parents=True)
    empty.write_bytes(b"")
    code, out, _ = run(capsys, monkeypatch, "--state-dir", str(state.path), "search", "hello",
                       "--json")
    answer = json.loads(out)
    assert code == 0 and [r["messageId"] for r in answer["results"]] == ["u1"]
    assert "holds no backscroll data yet" in answer["warning"]


# --- the demo ----------------------------------------------------------------------------


def test_demo_never_touches_a_folder_it_did_not_make(
    tmp_path: Path, state: StateDir, data_dir: Path, capsys, monkeypatch
) -> None:
    with state.open("main", write=True) as db:  # a user's real state
        db.append(SessionMeta("agent:main:main"), json.dumps(msg("u1", None, "user", "mine")))
    home = tmp_path / "openclaw-home"  # an agent runtime's home: config, credentials
    (home / "agents" / "main" / "sessions").mkdir(parents=True)
    (home / "openclaw.json").write_text('{"token": "do-not-lose"}')
    (home / "credentials").mkdir()
    (home / "credentials" / "key").write_text("secret")
    for file in (data_dir / "openclaw" / "chairong").iterdir():
        (home / "agents" / "main" / "sessions" / file.name).write_bytes(file.read_bytes())
    for target in (state.path, home, home / "openclaw.json"):
        before = tree(tmp_path)
        code, _, err = run(capsys, monkeypatch, "demo", "--state-dir", str(target), "--no-browser")
        assert code == 2, err
        assert err.count("\n") == 1 and "demo" in err
        assert tree(tmp_path) == before


def test_demo_rebuilds_only_its_own_folder(tmp_path: Path, capsys, monkeypatch) -> None:
    target = tmp_path / "demo"
    argv = ("demo", "--state-dir", str(target), "--no-browser", "--messages", "40")
    assert run(capsys, monkeypatch, *argv)[0] == 0
    assert run(capsys, monkeypatch, *argv, "--rebuild")[0] == 0
    assert StateDir(target).agents()
    # a half-built demo (interrupted before it finished) carries the marker and is redone
    (target / ".demo-complete").unlink()
    assert run(capsys, monkeypatch, *argv)[0] == 0


def test_append_reads_every_line_after_a_bad_byte(state: StateDir, capsys, monkeypatch) -> None:
    good = lines(msg("u1", None, "user", "first"), msg("u2", "u1", "user", "second"))
    data = good[0].encode() + b"\n\xff\xfe broken\n" + good[1].encode() + b"\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code = main(["--state-dir", str(state.path), "append", "agent:main:main", "--json"])
    out, err = capsys.readouterr()
    assert code == 2
    assert json.loads(out) == {
        "stored": 2, "indexed": 2, "dirty": 0, "refused": ["stdin:2: not valid UTF-8 (byte 1)"]
    }
    assert "stdin:2: not valid UTF-8 (byte 1)" in err


def test_demo_built_by_two_processes_at_once_is_whole_for_both(tmp_path: Path) -> None:
    # the README's first command, started twice before the first run finished
    target = tmp_path / "demo"
    script = ("import sys; from backscroll.core.demo import ensure_demo; "
              "print(ensure_demo(sys.argv[1], messages=1000).path)")
    runs = [subprocess.Popen([sys.executable, "-c", script, str(target)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(3)]
    answers = [(run.wait(timeout=120), *run.communicate()) for run in runs]
    assert answers == [(0, f"{target}\n", "")] * 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"]  # no building folder left
    assert (target / ".demo-complete").is_file()
    report = verify_state(StateDir(target))
    assert report.ok and report.sessions_checked > 0, report.problems
