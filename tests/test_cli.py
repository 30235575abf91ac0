from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.tui.cli import main

from .events import header, leaf, lines, msg


def run(capsys, *argv: str, stdin: str | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def filled(state, capsys, monkeypatch):
    events = "\n".join(
        lines(
            header(),
            msg("u1", None, "user", "the nightly backup failed with disk full"),
            msg("a1", "u1", "assistant", "I pruned old snapshots; the backup passed"),
        )
    )
    code, out, err = run(
        capsys,
        "--state-dir",
        str(state.path),
        "append",
        "agent:main:main",
        stdin=events,
        monkeypatch=monkeypatch,
    )
    assert code == 0, err
    return state


def test_append_then_search_json(filled, capsys) -> None:
    code, out, err = run(capsys, "search", "backup", "--state-dir", str(filled.path), "--json")
    assert code == 0
    answer = json.loads(out)
    assert sorted(r["messageId"] for r in answer["results"]) == ["a1", "u1"]
    assert set(answer["results"][0]) == {
        "sessionKey",
        "sessionId",
        "messageId",
        "timestamp",
        "role",
        "excerpt",
        "snippet",  # OpenClaw's name for the excerpt, the same text
        "score",
        "agent",
        "source",
        "host",
        "archived",  # in a cold archive (OpenClaw's store): not these
    }
    assert all(r["snippet"] == r["excerpt"] for r in answer["results"])
    assert not any(r["archived"] for r in answer["results"])
    assert "indexing" not in answer and "truncated" not in answer


def test_search_for_people_shows_key_role_and_excerpt(filled, capsys) -> None:
    code, out, _ = run(capsys, "search", "snapshots", "--state-dir", str(filled.path))
    assert code == 0
    assert "agent:main:main" in out and "assistant" in out and "pruned old snapshots" in out
    assert "ago" in out and out.rstrip().endswith("\n1 result as operator")


def test_history_json_and_text(filled, capsys) -> None:
    code, out, _ = run(
        capsys, "history", "agent:main:main", "--state-dir", str(filled.path), "--json"
    )
    answer = json.loads(out)
    assert code == 0 and [m["id"] for m in answer["messages"]] == ["u1", "a1"]
    assert {"truncated", "contentTruncated", "contentRedacted", "bytes", "hasMore"} <= set(answer)
    code, out, _ = run(capsys, "history", "agent:main:main", "--state-dir", str(filled.path))
    assert code == 0 and "disk full" in out


def test_append_refuses_a_malformed_line_naming_it(state, capsys, monkeypatch) -> None:
    stdin = "\n".join(
        [
            json.dumps(msg("a", None, "user", "first")),
            "{oops",
            json.dumps(msg("b", "a", "assistant", "second")),
        ]
    )
    code, out, err = run(
        capsys,
        "--state-dir",
        str(state.path),
        "append",
        "agent:main:main",
        "--json",
        stdin=stdin,
        monkeypatch=monkeypatch,
    )
    assert code == 2
    assert json.loads(out) == {
        "stored": 2,
        "indexed": 2,
        "dirty": 0,
        "refused": ["stdin:2: not valid JSON (Expecting property name enclosed in double quotes)"],
    }
    assert err.count("\n") == 1 and "stdin:2" in err


def test_bad_key_is_refused(state, capsys, monkeypatch) -> None:
    code, _out, err = run(
        capsys,
        "--state-dir",
        str(state.path),
        "append",
        "main",
        stdin="{}",
        monkeypatch=monkeypatch,
    )
    assert code == 2 and "not a session key" in err and err.count("\n") == 1


def test_status_and_verify(filled, capsys, monkeypatch) -> None:
    code, out, _ = run(capsys, "status", "--state-dir", str(filled.path), "--json")
    agent = json.loads(out)["agents"][0]
    assert code == 0 and (
        agent["agent"],
        agent["sessions"],
        agent["messages"],
        agent["indexed"],
        agent["dirty"],
    ) == ("main", 1, 2, 2, 0)
    code, out, _ = run(capsys, "verify", "--state-dir", str(filled.path), "--json")
    assert code == 0 and json.loads(out)["ok"] is True
    # a rewind makes the session dirty: status shows it, verify skips it
    run(
        capsys,
        "--state-dir",
        str(filled.path),
        "append",
        "agent:main:main",
        stdin=json.dumps(leaf("l", "u1")),
        monkeypatch=monkeypatch,
    )
    code, out, _ = run(capsys, "status", "--state-dir", str(filled.path), "--json")
    assert json.loads(out)["agents"][0]["dirty"] == 1


def test_verify_fails_with_a_diff_summary_when_the_index_is_wrong(filled, capsys) -> None:
    import sqlite3

    conn = sqlite3.connect(filled.db_path("main"))
    conn.execute("DELETE FROM message_fts WHERE rowid = (SELECT min(rowid) FROM message_index)")
    conn.execute("DELETE FROM message_index WHERE rowid = (SELECT min(rowid) FROM message_index)")
    conn.commit()
    conn.close()
    code, out, _ = run(capsys, "verify", "--state-dir", str(filled.path))
    assert code == 1 and "1 rows missing" in out and "u1" in out
    assert out.startswith("index differs from transcripts: ")


def test_verify_fails_when_the_stored_branch_is_not_the_active_branch(filled, capsys) -> None:
    import sqlite3

    code, out, _ = run(capsys, "verify", "--state-dir", str(filled.path))
    assert code == 0
    conn = sqlite3.connect(filled.db_path("main"))
    assert conn.execute("SELECT count(*) FROM branch_messages").fetchone()[0] > 0
    conn.execute("DELETE FROM branch_messages WHERE seq = (SELECT max(seq) FROM branch_messages)")
    conn.commit()
    conn.close()
    code, out, _ = run(capsys, "verify", "--state-dir", str(filled.path))
    assert code == 1 and "stored branch messages are not its active branch" in out


def test_delete(filled, capsys) -> None:
    code, _out, _ = run(capsys, "delete", "agent:main:main", "--state-dir", str(filled.path))
    assert code == 0
    code, out, _ = run(capsys, "search", "backup", "--state-dir", str(filled.path), "--json")
    assert json.loads(out)["results"] == []
    code, _out, err = run(capsys, "delete", "agent:main:main", "--state-dir", str(filled.path))
    assert code == 2 and "no session" in err


@pytest.mark.parametrize("limit", ["0", "26", "ten", "2.5"])
def test_bad_limit_names_the_range(filled, capsys, limit) -> None:
    code, _out, err = run(capsys, "search", "x", "--limit", limit, "--state-dir", str(filled.path))
    assert code == 2 and "1 to 25" in err and err.count("\n") == 1


def test_a_query_that_starts_with_a_dash_is_told_how_to_give_it(filled, capsys) -> None:
    code, _out, err = run(capsys, "search", "-backup", "--state-dir", str(filled.path))
    assert code == 2 and err.count("\n") == 1
    assert "-backup was read as an option" in err and "backscroll search -- -backup" in err
    code, out, _err = run(capsys, "search", "--json", "--state-dir", str(filled.path), "--", "-backup")
    assert code == 0 and json.loads(out)["results"]  # "-" is punctuation: the word backup
    code, _out, err = run(capsys, "search", "--state-dir", str(filled.path))
    # no query at all (optional since search --tools lists calls without words): one sentence
    assert code == 2 and "query is empty" in err and err.count("\n") == 1


def test_unknown_as_key_is_forbidden(filled, capsys) -> None:
    code, out, err = run(
        capsys,
        "search",
        "backup",
        "--as",
        "agent:main:ghost",
        "--json",
        "--state-dir",
        str(filled.path),
    )
    assert code == 3 and json.loads(out)["status"] == "forbidden"


def test_missing_state_dir_is_one_sentence(tmp_path, capsys) -> None:
    code, _out, err = run(capsys, "search", "x", "--state-dir", str(tmp_path / "nowhere"))
    assert code == 1 and "no backscroll state dir at" in err and "backscroll demo" in err
    assert err.count("\n") == 1


def test_import_then_search_reports_indexing_then_reindex(state, capsys, data_dir) -> None:
    code, out, err = run(
        capsys, "import", "openclaw", str(data_dir / "openclaw"), "--state-dir", str(state.path)
    )
    assert code == 0 and "imported" in out
    code, out, _ = run(capsys, "search", "the", "--json", "--state-dir", str(state.path))
    answer = json.loads(out)
    assert code == 0 and answer.get("indexing") is True and "warning" in answer
    code, out, _ = run(capsys, "reindex", "--json", "--state-dir", str(state.path))
    assert code == 0 and json.loads(out.splitlines()[-1])["done"] is True
    code, out, _ = run(capsys, "verify", "--json", "--state-dir", str(state.path))
    assert json.loads(out)["ok"] is True and json.loads(out)["sessionsSkipped"] == 0


FTS_NOISE = st.lists(
    st.sampled_from(
        list('"*^:()-+{}[] \t\n\x00\x01\x1b')
        + ["AND", "OR", "NOT", "NEAR", "NEAR(", "body:", "数据", "😀", "e\u0301", "x", "backup"]
    ),
    max_size=12,
).map("".join)


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=FTS_NOISE, prefix=st.booleans())
@pytest.mark.slow
def test_any_query_is_json_or_a_validation_error(filled, capsys, query, prefix) -> None:
    flags = ["--json", "--state-dir", str(filled.path)] + (["--prefix"] if prefix else [])
    code, out, err = run(capsys, "search", *flags, "--", query)
    assert code in (0, 2), err
    answer = json.loads(out)
    assert ("results" in answer) if code == 0 else (answer["status"] == "error")
    assert "Traceback" not in err


def test_no_traceback_from_a_real_process(tmp_path: Path) -> None:
    state = tmp_path / "s"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "backscroll.tui.cli",
            "search",
            '"unbalanced',
            "--state-dir",
            str(state),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1


@pytest.mark.parametrize("stamp", ["Infinity", "NaN", "1e300", "-5"])
def test_impossible_timestamps_fall_back_instead_of_crashing(state, capsys, monkeypatch, stamp) -> None:
    line = ('{"type":"message","id":"a","timestamp":%s,"message":{"role":"user","content":"hi yak",'
            '"timestamp":%s}}' % (stamp, stamp))
    code, _out, err = run(capsys, "--state-dir", str(state.path), "append", "agent:main:main",
                          stdin=line, monkeypatch=monkeypatch)
    assert code == 0, err
    code, out, _ = run(capsys, "search", "yak", "--json", "--state-dir", str(state.path))
    assert code == 0 and [r["messageId"] for r in json.loads(out)["results"]] == ["a"]
    code, out, _ = run(capsys, "verify", "--json", "--state-dir", str(state.path))
    assert json.loads(out)["ok"] is True


@pytest.mark.parametrize("since", ["99999999999999999999", "1000000000000000000000h", "yesterday"])
def test_impossible_times_are_validation_errors(filled, capsys, since) -> None:
    code, out, err = run(capsys, "search", "backup", "--since", since, "--json",
                         "--state-dir", str(filled.path))
    assert code == 2 and json.loads(out)["status"] == "error" and err.count("\n") == 1


def test_reserved_ids_are_refused(state, capsys, monkeypatch) -> None:
    line = '{"type":"message","id":"#3","message":{"role":"user","content":"x"}}'
    code, _out, err = run(capsys, "--state-dir", str(state.path), "append", "agent:main:main",
                          stdin=line, monkeypatch=monkeypatch)
    assert code == 2 and "reserved" in err


def test_escape_sequences_in_transcripts_print_as_symbols(state, capsys, monkeypatch) -> None:
    line = json.dumps(msg("e", None, "user", "\x1b[31mred[/] alert [bold]x[/bold]"))
    run(capsys, "--state-dir", str(state.path), "append", "agent:main:main", stdin=line,
        monkeypatch=monkeypatch)
    code, out, _ = run(capsys, "search", "alert", "--state-dir", str(state.path))
    assert code == 0 and "\x1b" not in out and "red[/] alert [bold]x[/bold]" in out
    code, out, _ = run(capsys, "history", "agent:main:main", "--state-dir", str(state.path))
    assert code == 0 and "\x1b" not in out and "␛[31mred[/] alert [bold]x[/bold]" in out


def test_bidi_overrides_in_transcripts_print_as_replacement_characters(state, capsys,
                                                                      monkeypatch) -> None:
    line = json.dumps(msg("b", None, "user", "invoice \u202etxt.exe\u202c and \u2067isolate\u2069"
                                             " with a mark \u200f kept"))
    run(capsys, "--state-dir", str(state.path), "append", "agent:main:main", stdin=line,
        monkeypatch=monkeypatch)
    for verb in (["search", "invoice"], ["history", "agent:main:main"]):
        code, out, _ = run(capsys, *verb, "--state-dir", str(state.path))
        assert code == 0
        assert "invoice \ufffdtxt.exe\ufffd and \ufffdisolate\ufffd with a mark \u200f kept" in out


@pytest.mark.parametrize("argv", [["search", "x"], ["status"], ["import", "codex", "CODEX"],
                                  ["append", "agent:main:main"], ["sync"], ["sync", "--json"],
                                  []])
def test_a_state_dir_that_is_a_file_is_named_as_one(tmp_path, capsys, monkeypatch, data_dir,
                                                     argv) -> None:
    from backscroll.tui import app

    monkeypatch.setattr(app, "run_browser", lambda *a, **k: pytest.fail("the browser opened"))
    not_a_folder = tmp_path / "state"
    not_a_folder.write_text("notes\n")
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))  # a source for sync to read
    shutil.copytree(data_dir / "codex", tmp_path / "codex" / "sessions")
    argv = [str(data_dir / "codex") if a == "CODEX" else a for a in argv]
    code, out, err = run(capsys, *argv, "--state-dir", str(not_a_folder), stdin="",
                         monkeypatch=monkeypatch)
    assert code == 2
    assert out == ("" if "--json" not in argv else json.dumps(
        {"status": "error", "error": err.removeprefix("backscroll: ").rstrip()}) + "\n")
    assert err == (f"backscroll: {not_a_folder} is a file, not a folder: choose a state dir with "
                   "--state-dir or BACKSCROLL_STATE_DIR\n")
    assert not_a_folder.read_text() == "notes\n"


def test_a_narrow_terminal_gets_every_value_of_status_and_sources(filled, capsys, monkeypatch,
                                                                  tmp_path) -> None:
    from backscroll.tui.cli.render import console

    monkeypatch.setattr(console, "width", 20)
    folder = tmp_path / "codex-sessions-of-the-work-laptop"
    folder.mkdir()
    state = ["--state-dir", str(filled.path)]
    assert run(capsys, "sources", "add", "codex", str(folder), "--agent", "work", *state)[0] == 0
    code, out, _ = run(capsys, "status", *state)
    assert code == 0
    assert [line.split() for line in out.splitlines() if "sessions:" in line or "agent:" in line] \
        == [["agent:", "main"], ["sessions:", "1"]]
    assert "messages: 2" in out and "indexed rows: 2" in out and "to reindex: 0" in out
    code, out, _ = run(capsys, "sources", *state)
    assert code == 0
    assert str(folder) in "".join(out.split())  # the path, whole (folded at the edge)
    assert "agent: work" in out
    assert max(len(line) for line in out.splitlines()) <= 20


@pytest.mark.parametrize("messages", ["9", "-5", "2000001", "99999999999"])
def test_a_demo_size_out_of_range_is_refused_before_anything_is_built(tmp_path, capsys,
                                                                      messages) -> None:
    code, out, err = run(capsys, "demo", "--messages", messages, "--no-browser",
                         "--state-dir", str(tmp_path / "demo"))
    assert (code, out) == (2, "")
    assert err == f"backscroll: --messages must be from 10 to 2,000,000, not {messages}\n"
    assert not (tmp_path / "demo").exists()


@pytest.mark.parametrize("argv", [["status"], ["status", "--json"], ["search", "otter"],
                                  ["search", "otter", "--json"]])
def test_a_reader_that_goes_away_ends_the_command_quietly(filled, argv) -> None:
    # `backscroll status | head -1`: the same quiet exit 0 for people's output and for JSON
    proc = subprocess.Popen([sys.executable, "-m", "backscroll.tui.cli", *argv, "--state-dir",
                             str(filled.path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # before anything is written
    err = proc.stderr.read().decode()
    assert (proc.wait(timeout=60), err) == (0, "")


def test_emoji_codes_in_keys_and_queries_print_as_typed(state, capsys, monkeypatch) -> None:
    # Rich turns ``:x:`` into an emoji unless told not to; a key such as agent:x:main has one
    line = json.dumps(msg("e", None, "user", "ship it :rocket: now"))
    code, out, _ = run(capsys, "--state-dir", str(state.path), "append", "agent:x:main",
                       stdin=line, monkeypatch=monkeypatch)
    assert code == 0 and out.startswith("agent:x:main: stored 1 event, indexed 1")
    code, out, _ = run(capsys, "search", "nowhere", "--as", "agent:x:main",
                       "--state-dir", str(state.path))
    assert code == 0 and out.startswith("no results for nowhere as agent:x:main (tree)")


@pytest.mark.parametrize("argv", [["search", "otter", "--since", "soon", "--json"],
                                  ["search", "otter", "--since", "soon"]])
def test_an_error_keeps_its_exit_code_when_the_reader_went_away(filled, argv) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "backscroll.tui.cli", *argv, "--state-dir",
                             str(filled.path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # before anything is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 2
    assert err.startswith("backscroll: 'soon' is not a time") and err.count("\n") == 1


def test_reindex_with_nothing_to_do_shows_no_unfinished_bar(filled, capsys, monkeypatch) -> None:
    line = json.dumps(msg("u2", "a1", "user", "and the restore test?"))
    run(capsys, "--state-dir", str(filled.path), "append", "agent:ops:main", stdin=line,
        monkeypatch=monkeypatch)
    run(capsys, "--state-dir", str(filled.path), "append", "agent:ops:main",
        stdin=json.dumps(leaf("l", "u2")), monkeypatch=monkeypatch)  # ops has one to do
    code, out, _ = run(capsys, "reindex", "--state-dir", str(filled.path))
    assert code == 0
    bars = re.findall(r"^(\S+)\s.*?(\d+/\d+) sessions", out, re.M)
    assert bars == [("ops", "1/1")]  # main had nothing to do: no "0/1 sessions" bar for it


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_output_to_a_full_disk_is_one_sentence_not_an_internal_error(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "backscroll.tui.cli", "--state-dir", str(tmp_path), "status"],
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=60,
        )
    assert done.returncode == 1
    assert done.stderr == "backscroll: cannot write the output: No space left on device\n"


def test_an_io_error_elsewhere_is_not_called_the_output(capsys, monkeypatch, tmp_path: Path) -> None:
    """An I/O error while reading (a failing disk under a transcript, say) is not "cannot
    write the output": the output is fine, so it is an internal error, still one line."""
    import errno

    import backscroll.core.status as status

    def failing(state):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(status, "state_status", failing)
    code, out, err = run(capsys, "--state-dir", str(tmp_path), "status")
    assert code == 1 and out == ""
    assert err == ("backscroll: internal error: OSError: [Errno 5] Input/output error "
                   "(set BACKSCROLL_DEBUG=1 to see where)\n")


def test_a_huge_label_neither_empties_a_grouped_search_nor_hides_another_hit(
        state, capsys, monkeypatch) -> None:
    """A 100 KB label is shown cut (after redaction, with a marker); the conversation it
    names keeps its place, and so does every other conversation's hit."""
    from backscroll.core.catalog import LABEL_MAX_CHARS, label_cut_marker

    where = ("--state-dir", str(state.path))
    big = "deploy notes " + "word " * 20_000
    for key, label, when in (("agent:main:big", big, 2_000), ("agent:main:small", "tidy", 1_000)):
        events = "\n".join(lines(msg("u1", None, "user", "the deploy went fine", ms=when)))
        code, _, err = run(capsys, *where, "append", key, "--label", label, stdin=events,
                           monkeypatch=monkeypatch)
        assert code == 0, err
    code, out, _ = run(capsys, *where, "search", "deploy", "--group", "--json", "--recent")
    assert code == 0
    answer = json.loads(out)
    found = {c["sessionKey"]: c["title"] for c in answer["conversations"]}
    assert found == {
        "agent:main:big": big[:LABEL_MAX_CHARS] + label_cut_marker(len(big) - LABEL_MAX_CHARS),
        "agent:main:small": "tidy",
    }
    assert "truncated" not in answer
    code, out, _ = run(capsys, *where, "search", "deploy", "--group")
    assert code == 0 and "agent:main:small" in out


def test_the_grouped_cap_cuts_an_oversized_conversation_instead_of_dropping_the_others(
        state, capsys, monkeypatch) -> None:
    """Were a label not bounded, the conversation over its share of the 32 KiB would have its
    title cut; before, the cap dropped conversations from the end until the answer fit,
    the oversized one last: none was left."""
    from backscroll.core import catalog, grouped

    monkeypatch.setattr(catalog, "LABEL_MAX_CHARS", 10**6)
    monkeypatch.setattr(catalog, "_LABEL_REDACTED_CHARS", 10**6)
    where = ("--state-dir", str(state.path))
    big = "deploy notes " + "word " * 20_000
    for n, when in enumerate((3_000, 2_000, 1_000)):
        events = "\n".join(lines(msg("u1", None, "user", "the deploy went fine", ms=when)))
        label = big if n == 0 else f"tidy {n}"
        code, _, err = run(capsys, *where, "append", f"agent:main:s{n}", "--label", label,
                           stdin=events, monkeypatch=monkeypatch)
        assert code == 0, err
    code, out, _ = run(capsys, *where, "search", "deploy", "--group", "--json", "--recent")
    answer = json.loads(out)
    cut = grouped._SHARE_TITLE_CHARS
    assert [(c["sessionKey"], c["title"]) for c in answer["conversations"]] == [
        ("agent:main:s0", big[:cut] + catalog.label_cut_marker(len(big) - cut)),
        ("agent:main:s1", "tidy 1"), ("agent:main:s2", "tidy 2"),
    ]


# ------------------------------------------------------------------ help, version, width


def test_version_prints_the_package_version(capsys) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as ended:
        main(["--version"])
    assert ended.value.code == 0
    assert capsys.readouterr().out == f"backscroll {version('backscroll')}\n"


def _parsers(parser):
    import argparse

    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_every_positional_and_json_flag_has_help_and_as_says_what_it_does(capsys) -> None:
    from backscroll.tui.cli import build_parser

    missing = [
        f"{p.prog} {a.dest}" for p in _parsers(build_parser()) for a in p._actions
        if (not a.option_strings and a.nargs != "A...") or "--json" in a.option_strings
        if not a.help
    ]
    assert missing == []
    with pytest.raises(SystemExit):
        main(["history", "--help"])
    usage = " ".join(capsys.readouterr().out.split())
    assert "--as KEY show it only if this session may see it, as that session would" in usage
    assert "search as" not in usage


def test_search_help_gives_the_query_syntax(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    usage = capsys.readouterr().out
    assert "query syntax:" in usage and '"double quotes" make a phrase' in usage
    assert "more: docs/query-language.md" in usage


def test_an_unknown_agent_is_one_sentence_not_an_empty_answer(filled, capsys) -> None:
    where = ("--state-dir", str(filled.path))
    code, out, err = run(capsys, "search", "backup", "--agent", "nope", *where)
    assert (code, out, err) == (2, "", "backscroll: there is no agent 'nope'; the agents are main\n")
    code, out, err = run(capsys, "search", "backup", "--agent", "nope", "--json", *where)
    assert code == 2 and json.loads(out) == {
        "status": "error", "error": "there is no agent 'nope'; the agents are main"}
    code, out, _ = run(capsys, "search", "backup", "--agent", "MAIN", "--json", *where)
    assert code == 0 and len(json.loads(out)["results"]) == 2


def test_output_that_is_not_a_terminal_is_not_wrapped(state, capsys, monkeypatch) -> None:
    long_line = " ".join(f"backup{n}" for n in range(60))  # ~470 characters, many words
    events = "\n".join(lines(msg("u1", None, "user", long_line)))
    where = ("--state-dir", str(state.path))
    assert run(capsys, *where, "append", "agent:main:main", stdin=events, monkeypatch=monkeypatch)[0] == 0
    code, out, _ = run(capsys, *where, "history", "agent:main:main")
    assert code == 0 and long_line in out.splitlines()
    code, out, _ = run(capsys, *where, "search", "backup7")
    assert code == 0 and any(len(line) > 200 for line in out.splitlines())  # the excerpt, whole
