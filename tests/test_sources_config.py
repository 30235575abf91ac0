"""Which folders are sources: detection, ``[[sources]]`` in config.toml (read, added, removed
without losing the rest of the file), and what ``backscroll sources`` shows."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from backscroll.core import formats
from backscroll.core.config import load_config
from backscroll.core.errors import ValidationError
from backscroll.core.sources import add_source, all_sources, remove_source, sync_sources
from backscroll.core.sources.detect import Source
from backscroll.core.sources.listing import sources_status
from backscroll.core.state import StateDir
from backscroll.tui.cli import main

from .fakehome import build_home

USER_CONFIG = """# my settings, keep them
[tools.sessions]
visibility = "agent"   # agents see their whole agent

[[sources]]
kind = "codex"
path = "~/work/codex-sessions"
agent = "work"
"""


@pytest.fixture
def home(data_dir: Path) -> dict[str, Path]:
    return build_home(Path.home(), data_dir)


def kinds_and_paths(sources: list[Source]) -> list[tuple[str, str]]:
    return [(s.kind, str(s.path).replace(str(Path.home()), "~")) for s in sources]


def test_detected_where_each_tool_keeps_its_transcripts(state: StateDir, home, tmp_path,
                                                        monkeypatch) -> None:
    assert kinds_and_paths(all_sources(state.path)) == [
        ("claude-code", "~/.claude/projects"), ("codex", "~/.codex/sessions"),
        ("openclaw", "~/.openclaw")]
    elsewhere = tmp_path / "elsewhere"
    for name, sub in (("CLAUDE_CONFIG_DIR", "claude/projects"), ("CODEX_HOME", "codex/sessions"),
                      ("OPENCLAW_STATE_DIR", "openclaw")):
        (elsewhere / sub).mkdir(parents=True)
        monkeypatch.setenv(name, str(elsewhere / sub.split("/")[0]))
    assert [str(s.path) for s in all_sources(state.path)] == [
        str(elsewhere / "claude/projects"), str(elsewhere / "codex/sessions"),
        str(elsewhere / "openclaw")]


def test_missing_default_folders_are_not_sources(state: StateDir) -> None:
    assert all_sources(state.path) == []
    assert len(all_sources(state.path, include_missing=True)) == len(
        [f for f in formats.known() if f.detected])  # one default folder each (Aider: none)


def test_add_and_remove_keep_the_rest_of_the_file(state: StateDir, home, tmp_path) -> None:
    state.path.mkdir(parents=True)
    config = state.path / "config.toml"
    config.write_text(USER_CONFIG)
    config.chmod(0o640)
    (Path.home() / "work" / "codex-sessions").mkdir(parents=True)
    extra = tmp_path / "team-claude"
    extra.mkdir()
    entry = add_source(state.path, "claude-code", extra, agent="Team")
    assert (entry.kind, entry.path, entry.agent) == ("claude-code", extra, "team")
    text = config.read_text()
    assert text.startswith(USER_CONFIG)  # comments and settings untouched
    assert load_config(state.path).policy.visibility == "agent"
    sources = all_sources(state.path)
    assert sources[-2:] == [Source("codex", Path.home() / "work" / "codex-sessions", "work", "config"),
                            Source("claude-code", extra, "team", "config")]
    assert "removed" in remove_source(state.path, Path("~/work/codex-sessions"))
    data = tomllib.loads(config.read_text())
    assert data["sources"] == [{"kind": "claude-code", "path": str(extra), "agent": "team"}]
    assert "# my settings, keep them" in config.read_text()
    assert config.stat().st_mode & 0o777 == 0o640  # the file keeps its mode


def test_removing_a_detected_folder_turns_it_off_and_adding_it_back_works(state: StateDir,
                                                                          home) -> None:
    codex = Path.home() / ".codex" / "sessions"
    text = remove_source(state.path, codex)
    assert "turned off" in text
    assert [s.kind for s in all_sources(state.path)] == ["claude-code", "openclaw"]
    add_source(state.path, "codex", codex)
    assert [s.kind for s in all_sources(state.path)] == ["claude-code", "codex", "openclaw"]
    assert tomllib.loads((state.path / "config.toml").read_text())["sources"] == [
        {"kind": "codex", "path": str(codex)}]


@pytest.mark.parametrize("entry, problem", [
    ('[[sources]]\nkind = "windsurf"\npath = "/x"\n', "[[sources]] entry 1: a source kind is one of"),
    ('[[sources]]\nkind = "codex"\n', "[[sources]] entry 1 needs a path"),
    ('[[sources]]\nkind = "codex"\npath = "/x"\nagent = "../up"\n', "[[sources]] entry 1: "),
    ('[[sources]]\nkind = "codex"\npath = "/x"\nenabled = "no"\n', "enabled must be true or false"),
    ('sources = "everything"\n', "sources must be [[sources]] tables"),
    ('[[sources]\n', "cannot be read as TOML"),
])
def test_a_bad_entry_is_one_sentence_naming_the_file(state: StateDir, entry: str,
                                                     problem: str) -> None:
    state.path.mkdir(parents=True)
    (state.path / "config.toml").write_text(entry)
    with pytest.raises(ValidationError) as err:
        all_sources(state.path)
    assert str(err.value).startswith(str(state.path / "config.toml"))
    assert problem in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("kind", ["folder", "link to nothing"])
def test_a_config_that_is_not_a_file_is_one_sentence(state: StateDir, kind: str, capsys) -> None:
    from backscroll.tui.cli import main

    state.path.mkdir(parents=True)
    config = state.path / "config.toml"
    config.mkdir() if kind == "folder" else config.symlink_to(state.path / "gone.toml")
    with pytest.raises(ValidationError, match="config.toml cannot be read: not a file"):
        all_sources(state.path)
    code = main(["--state-dir", str(state.path), "search", "otter", "--as", "agent:main:main"])
    err = capsys.readouterr().err
    assert code == 2 and "config.toml cannot be read: not a file" in err and err.count("\n") == 1


def test_add_refuses_what_cannot_be_a_source(state: StateDir, home, tmp_path) -> None:
    with pytest.raises(ValidationError, match="does not exist"):
        add_source(state.path, "codex", tmp_path / "nope")
    with pytest.raises(ValidationError, match="is not a folder"):
        add_source(state.path, "claude-code", home["short"])
    with pytest.raises(ValidationError, match="a source kind is one of"):
        add_source(state.path, "windsurf", tmp_path)
    add_source(state.path, "codex", tmp_path)
    with pytest.raises(ValidationError, match="already a source"):
        add_source(state.path, "codex", tmp_path)
    with pytest.raises(ValidationError, match="is not a source"):
        remove_source(state.path, tmp_path / "other")


def test_sources_status_counts_and_says_why(state: StateDir, home) -> None:
    before = {s.source.kind: s for s in sources_status(state)}
    assert {k: (s.files, s.sessions, s.unread, s.last_sync) for k, s in before.items()
            if s.files} == {
        "claude-code": (3, 0, 3, None), "codex": (1, 0, 1, None), "openclaw": (5, 0, 5, None)}
    sync_sources(state)
    home["rollout"].unlink()
    after = {s.source.kind: s for s in sources_status(state)}
    assert after["claude-code"].sessions == 4  # three files, one of them with a sub-agent
    assert after["codex"].files == 0 and after["codex"].sessions == 1 and after["codex"].gone == 1
    assert any("1 file gone from disk; its sessions are kept" in n for n in after["codex"].notes)
    assert all(s.last_sync and s.unread == 0 for k, s in after.items() if before[k].files)


def test_cli_sources_sync_and_edits(state: StateDir, home, tmp_path, capsys) -> None:
    assert main(["sources", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["sources"]
    assert [(s["kind"], s["files"], s["unsynced"]) for s in listed if s["files"]] == [
        ("claude-code", 3, 3), ("codex", 1, 1), ("openclaw", 5, 5)]
    assert main(["sync", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["read"], report["problems"]) == (9, [])
    assert main(["sync"]) == 0
    assert "nothing new: 0 files read of 9 in 3 sources" in capsys.readouterr().out
    assert main(["sources", "add", "codex", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err
    assert err == f"backscroll: {tmp_path / 'absent'} does not exist\n"
    assert main(["sources", "add", "codex", str(tmp_path), "--agent", "team", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["added"]["agent"] == "team"
    assert main(["sources", "remove", str(tmp_path)]) == 0
    assert "its sessions stay" in capsys.readouterr().out


def test_sync_prints_a_file_name_with_an_escape_sequence_as_symbols(state: StateDir, capsys) -> None:
    folder = Path.home() / ".claude" / "projects" / "p"
    folder.mkdir(parents=True)
    (folder / "evil\x1b]0;PWNED\x07\x1b[2J.jsonl").write_text("not json\n")
    assert main(["sync"]) == 0
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err and "\x07" not in out + err
    assert "evil␛]0;PWNED␇␛[2J.jsonl:notaClaudeCode" in "".join(out.split())  # however wrapped
