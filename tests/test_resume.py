"""The command that resumes a conversation (core/resume.py, ``catalog.resume_of``): offered
only when every part of it is safe to paste (a session id of the tool's own shape, a cwd
with no control, format or bidi character, each word read as that one word by bash, dash,
zsh and fish), none otherwise; the same ``resume`` field in the grouped search, history and
``sessions_list`` answers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client

from backscroll.core.catalog import SessionSummary, resume_of
from backscroll.core.resume import UUID
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.visibility import OPERATOR
from backscroll.tui.cli import main
from backscroll.tui.mcp.server import build_server

from .events import BASE_MS, header, msg

pytestmark = pytest.mark.backends  # the JSON answers read storage: on both backends

CLAUDE_ID = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"  # UUID v4, as Claude Code writes them
CODEX_ID = "019e1625-789d-76c0-80ab-3724b5ddb799"  # UUID v7, as Codex writes them
# A session id that Claude Code reads as an option: a SessionStart hook then runs a command.
HOOK_ID = ('--settings={"hooks":{"SessionStart":[{"hooks":[{"type":"command",'
           '"command":"touch /tmp/pwned"}]}]}}')
SKIP_ID = "--dangerously-skip-permissions"
# Ends a bracketed paste, clears the line (^U), types a command and presses Enter.
PASTE_CWD = "/x\x1b[201~\x15touch ~/pwned\r"
# shlex.quote's output read by fish, where \' is an escape inside single quotes: the command
# after the ; runs.
FISH_CWD = "/tmp/x\\'\";touch pwned;#"
TOOL_WORDS = {"claude-code": ["claude", "--resume"], "codex": ["codex", "resume", "--"]}
REFUSED = {"Cc", "Cf", "Zl", "Zp", "Cs"}

# --- reading a command as each shell does ---------------------------------------------------

_POSIX_STUBS = "".join(f"{name}() {{ printf '%s\\n' {name} \"$@\"; }}\n"
                       for name in ("cd", "claude", "codex"))
_FISH_STUBS = "".join(f"function {name}; printf '%s\\n' {name} $argv; end\n"
                      for name in ("cd", "claude", "codex"))
SHELLS = {  # name: (argv before the script, the functions that print their words)
    "bash": (["--norc", "--noprofile", "-c"], _POSIX_STUBS),
    "dash": (["-c"], _POSIX_STUBS),
    "zsh": (["-f", "-c"], _POSIX_STUBS),
    "fish": (["--no-config", "-c"], _FISH_STUBS),
    # as a person's prompt reads a paste: history expansion (!!, !$) on; the script on stdin
    "bash -i": (["--norc", "--noprofile", "-i"], _POSIX_STUBS),
    "zsh -i": (["-f", "-i"], _POSIX_STUBS),
}
PRESENT = {name: path for name in SHELLS if (path := shutil.which(name.split()[0])) is not None}
REQUIRED = ("bash", "dash", "bash -i")  # zsh and fish are read when installed, else skipped


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home and an empty PATH: whatever a broken command would run is not found."""
    home = tmp_path_factory.mktemp("paste")
    (home / "bin").mkdir()
    return home


def words_read_by(shell: str, commands: list[str], sandbox: Path) -> list[list[str]]:
    """The words of each command as ``shell`` reads them (``cd``, ``claude`` and ``codex``
    are functions printing theirs; an offered word never holds a line break)."""
    flags, stubs = SHELLS[shell]
    script = stubs + "".join(f"{command}\necho ---\n" for command in commands)
    typed = flags[-1] == "-i"  # read from stdin, line by line, as typed at a prompt
    done = subprocess.run(
        [PRESENT[shell], *flags] + ([] if typed else [script]),
        input=script.encode("utf-8", "surrogateescape") if typed else None,
        capture_output=True, cwd=sandbox, timeout=60,
        env={"PATH": str(sandbox / "bin"), "HOME": str(sandbox), "LC_ALL": "C.UTF-8"},
    )
    out = done.stdout.decode("utf-8", "surrogateescape")
    return [chunk.split("\n")[:-1] for chunk in out.split("---\n")[:-1]]


def shells() -> list[str]:
    missing = [name for name in REQUIRED if name not in PRESENT]
    assert not missing, f"{missing} not installed"
    return list(PRESENT)


def single_quoted_runs(command: str) -> list[str]:
    """What ``command`` holds between single quotes, as a POSIX shell pairs them."""
    runs, i = [], 0
    while i < len(command):
        char = command[i]
        if char == "\\":
            i += 2
        elif char in "'\"":
            end = command.index(char, i + 1) if char == "'" else _closing_double(command, i)
            if char == "'":
                runs.append(command[i + 1:end])
            i = end + 1
        else:
            i += 1
    return runs


def _closing_double(command: str, start: int) -> int:
    i = start + 1
    while command[i] != '"':
        i += 2 if command[i] == "\\" else 1
    return i


def summary(session_id: str, cwd: str | None, source: str = "claude-code",
            key: str | None = None) -> SessionSummary:
    return SessionSummary(key or f"agent:cc:{source}:s1", "cc", session_id, None, None, 0, 0, 1,
                          True, False, source=source, cwd=cwd)


# --- the rule ---------------------------------------------------------------------------------


def test_ids_that_a_tool_reads_as_options_get_no_command() -> None:
    for evil in (HOOK_ID, SKIP_ID, "-r", "--", f"--{CLAUDE_ID}", f"{CLAUDE_ID} --yolo",
                 f"{CLAUDE_ID}\n", "abc", ""):
        for source in ("claude-code", "codex"):
            resume = resume_of(summary(evil, "/home/me/shop", source))
            assert resume is not None and resume.kind == "none", (evil, source)
            assert resume.text.startswith("no resume command: ") and resume.command is None


def test_a_cwd_with_control_format_or_bidi_characters_gets_no_command() -> None:
    for cwd in (PASTE_CWD, "/a\nb", "/a\rb", "/a\x00b", "/a\x7fb", "/a\x85b", "/a\x9bb",
                "/a\u202eb", "/a\u2066b", "/a\u200bb", "/a\ufeffb", "/a\u2028b", "/a\ud800b"):
        resume = resume_of(summary(CLAUDE_ID, cwd))
        assert resume is not None and resume.kind == "none", repr(cwd)
        assert resume.text == "no resume command: its folder's name holds control or invisible characters"


def test_other_refusals_say_why_in_one_sentence() -> None:
    why = {
        "no cwd": resume_of(summary(CLAUDE_ID, None)),
        "relative": resume_of(summary(CLAUDE_ID, "work/shop")),
        "windows": resume_of(summary(CLAUDE_ID, "C:\\Users\\me")),
        "too long": resume_of(summary(CLAUDE_ID, "/" + "a" * 4096)),
        "sidechain": resume_of(summary(CLAUDE_ID, "/w", key="agent:cc:subagent:aac57f5")),
    }
    assert {name: r.text for name, r in why.items()} == {
        "no cwd": "no resume command: the folder it ran in is not known",
        "relative": "no resume command: its folder is not an absolute path",
        "windows": "no resume command: its folder is not an absolute path",
        "too long": "no resume command: its folder's name is longer than 4096 bytes",
        "sidechain": "no resume command: it has no session id of its own (a sub-agent's conversation)",
    }
    assert all(r.kind == "none" and r.command is None for r in why.values())


def test_commands_put_the_id_where_only_an_id_can_be() -> None:
    assert resume_of(summary(CLAUDE_ID, "/home/me/shop")).text == (
        f"cd /home/me/shop && claude --resume {CLAUDE_ID}")
    codex = resume_of(summary(CODEX_ID, "/w/my project", "codex"))
    assert codex.text == f"cd '/w/my project' && codex resume -- {CODEX_ID}"
    assert codex.command == codex.text
    openclaw = resume_of(summary("s1", None, "openclaw", key="agent:main:telegram:group:42"))
    assert (openclaw.kind, openclaw.text, openclaw.command) == (
        "key", "agent:main:telegram:group:42", None)


def test_the_fish_breakout_of_shlex_quote_is_one_word(sandbox: Path) -> None:
    resume = resume_of(summary(CLAUDE_ID, FISH_CWD))
    assert resume is not None and resume.kind == "command"
    # fish reads \' and \\ as escapes inside single quotes: none is ever there
    assert not any("\\" in run for run in single_quoted_runs(resume.text))
    for shell in shells():
        assert words_read_by(shell, [resume.text], sandbox) == [
            ["cd", FISH_CWD, "claude", "--resume", CLAUDE_ID]], shell


def test_quotes_and_backslashes_are_one_word_in_every_shell(sandbox: Path) -> None:
    cwds = ["/it's", "/a\\b", "/\\", "/'", "/a b'\\'c", "/$(touch pwned)", "/`id`", "/a;b&&c|d",
            "/~x", "/!x", "/a!!b", "/x!$", "/!-1", "/*", "/{a,b}", "/%self", "/=ls", "/a#b",
            "/é ü", "/日本"]
    commands = [resume_of(summary(CLAUDE_ID, cwd)).text for cwd in cwds]
    expected = [["cd", cwd, "claude", "--resume", CLAUDE_ID] for cwd in cwds]
    for shell in shells():
        assert words_read_by(shell, commands, sandbox) == expected, shell


SHELL_CHARS = "'\\\"$`!*?[]{}()~#;&|<> %=^,:@+-_.é日"
REFUSED_CHARS = "\t\n\x1b\x15\r\x7f\x85\u202e\u2066\u200b\u2028\ufeff"
pasteable = st.one_of(st.sampled_from(SHELL_CHARS),
                      st.characters(blacklist_categories=tuple(REFUSED)))
absolute = st.text(pasteable, max_size=24).map(lambda rest: "/" + rest)
cwds = st.one_of(
    absolute, absolute, absolute,  # mostly offered: these are read by the shells
    st.text(st.one_of(pasteable, st.sampled_from(REFUSED_CHARS)), max_size=24)
    .map(lambda rest: "/" + rest),
    st.text(max_size=12),
    st.none(),
)
uuids = st.uuids().map(str)
ids = st.one_of(uuids, uuids, uuids, uuids.map(str.upper),
                st.sampled_from([HOOK_ID, SKIP_ID, f"-{CLAUDE_ID}", f"{CLAUDE_ID};id"]),
                st.text(max_size=40))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["claude-code", "codex"]), ids, cwds),
                min_size=1, max_size=12))
@pytest.mark.slow
def test_an_offered_command_is_exactly_its_words_in_every_shell(sandbox: Path, cases) -> None:
    offered, expected = [], []
    for source, session_id, cwd in cases:
        resume = resume_of(summary(session_id, cwd, source))
        if resume is None or resume.kind == "none":
            assert resume is not None, "no sentence saying why"
            assert resume.command is None and resume.text.startswith("no resume command: ")
            continue
        assert resume.kind == "command" and UUID.fullmatch(session_id) and cwd
        assert not any(unicodedata.category(c) in REFUSED for c in resume.text)
        assert not any("\\" in run for run in single_quoted_runs(resume.text))
        offered.append(resume.text)
        expected.append(["cd", cwd, *TOOL_WORDS[source], session_id])
    if offered:
        for shell in shells():
            assert words_read_by(shell, offered, sandbox) == expected, shell


def test_real_transcripts_get_their_commands(state: StateDir, data_dir: Path) -> None:
    from backscroll.core.catalog import list_sessions
    from backscroll.core.importers.claude_code import import_claude_code
    from backscroll.core.importers.codex import import_codex

    import_claude_code(state, data_dir / "claude-code")
    import_codex(state, data_dir / "codex")
    mains = [s for s in list_sessions(state) if ":subagent:" not in s.key and s.cwd]
    assert {s.source for s in mains} == {"claude-code", "codex"}
    for found in mains:
        resume = resume_of(found)
        assert resume.kind == "command", resume.text
        assert resume.text.endswith(f" {' '.join(TOOL_WORDS[found.source])} {found.session_id}")


# --- the JSON answers ---------------------------------------------------------------------


def planted(state: StateDir) -> dict[str, str | None]:
    """A good Claude Code session, two planted ones and an OpenClaw one, each saying "heron";
    the ``resume`` each must get."""
    sessions = {
        "agent:cc:claude-code:good": (CLAUDE_ID, "/home/me/shop", "claude-code"),
        "agent:cc:claude-code:hook": (HOOK_ID, "/home/me/shop", "claude-code"),
        "agent:cc:codex:paste": (CODEX_ID, PASTE_CWD, "codex"),
        "agent:cc:main": ("oc-1", None, "openclaw"),
    }
    for n, (key, (session_id, cwd, source)) in enumerate(sessions.items()):
        first = header(session_id, ms=BASE_MS + n * 1000)
        if cwd is not None:
            first["cwd"] = cwd
        with state.open("cc", write=True) as db:
            meta = SessionMeta(key, session_id=session_id, source=source)
            db.append(meta, json.dumps(first))
            db.append(meta, json.dumps(msg(f"m{n}", None, "user", f"the heron {n}")))
    return {"agent:cc:claude-code:good": f"cd /home/me/shop && claude --resume {CLAUDE_ID}",
            "agent:cc:claude-code:hook": None, "agent:cc:codex:paste": None,
            "agent:cc:main": None}


def run_json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_grouped_search_and_history_json_say_resume(state: StateDir, capsys) -> None:
    wanted = planted(state)
    grouped = run_json(capsys, "search", "heron", "--group", "--json", "--state-dir",
                       str(state.path))
    assert {c["sessionKey"]: c["resume"] for c in grouped["conversations"]} == wanted
    for key, resume in wanted.items():
        history = run_json(capsys, "history", key, "--json", "--state-dir", str(state.path))
        assert history["resume"] == resume, key


async def test_sessions_list_says_resume(state: StateDir) -> None:
    wanted = planted(state)
    async with Client(build_server(state, OPERATOR, on_pending=lambda agent: None)) as client:
        listed = await client.call_tool("sessions_list", {"limit": 10})
        history = await client.call_tool("sessions_history",
                                         {"sessionKey": "agent:cc:claude-code:good"})
    assert {s["sessionKey"]: s["resume"] for s in listed.structured_content["sessions"]} == wanted
    assert json.loads(listed.content[0].text) == listed.structured_content
    assert history.structured_content["resume"] == wanted["agent:cc:claude-code:good"]
    assert os.linesep not in (history.structured_content["resume"] or "")
