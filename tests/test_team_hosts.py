"""Hosts on a team server: two hosts that each have ``agent:main:main`` keep two sessions, each
under the host it came from; a caller (``--as KEY``) is resolved within its own host and never
sees another host's session of the same key; answers show the host and ``--host`` filters."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from backscroll.core.errors import ValidationError
from backscroll.core.hosts import check_host, from_hostname
from backscroll.core.push import push_state
from backscroll.core.reconcile import reconcile_all
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.visibility import OPERATOR, Caller
from backscroll.tui.cli import main

from .events import msg
from .older_schema import pg_downgrade
from .test_postgres import sql

MAIN = "agent:main:main"
CHILD = "agent:main:subagent:helper"


def host_state(tmp_path: Path, name: str, word: str) -> Path:
    """A host's local state (SQLite) labelled ``name`` in its config.toml: OpenClaw's main
    session and a sub-agent it spawned, each saying ``word``."""
    path = tmp_path / name
    path.mkdir()
    (path / "config.toml").write_text(f'host = "{name}"\n[tools.sessions]\nvisibility = "tree"\n')
    state = StateDir(path, database_url="")
    with state.open("main", write=True) as db:
        db.append(SessionMeta(MAIN), json.dumps(msg("u1", None, "user", f"where is the {word}")))
        db.append(SessionMeta(MAIN), json.dumps(msg("a1", "u1", "assistant", f"{word} is here")))
        db.append(SessionMeta(CHILD, spawned_by=MAIN),
                  json.dumps(msg("c1", None, "user", f"the helper saw the {word}")))
    return path


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    sys.stdin = io.StringIO("")
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def as_json(capsys, *argv: str) -> dict:
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.fixture
def team(pg_url: str, tmp_path: Path, capsys) -> tuple[Path, Path]:
    """Hosts alpha and bravo pushed their states into one server."""
    alpha, bravo = host_state(tmp_path, "alpha", "heron"), host_state(tmp_path, "bravo", "osprey")
    for path in (alpha, bravo):
        assert cli(capsys, "push", pg_url, "--state-dir", str(path), "--json")[0] == 0
    return alpha, bravo


def test_two_hosts_pushing_the_same_key_keep_two_sessions(team, pg_url: str) -> None:
    assert sorted(sql(pg_url, "SELECT host, key FROM backscroll.sessions")) == [
        ("alpha", MAIN), ("alpha", CHILD), ("bravo", MAIN), ("bravo", CHILD)]
    assert sql(pg_url, "SELECT count(*) FROM backscroll.sessions WHERE key LIKE '%%import-%%'"
               ) == [(0,)]


def test_as_a_key_on_host_a_never_sees_host_b(team, pg_url: str, capsys) -> None:
    alpha, bravo = team
    at_alpha = ("--state-dir", str(alpha), "--database", pg_url)
    for word, visibility in [("osprey", "tree"), ("osprey", "agent"), ("osprey", "all")]:
        found = as_json(capsys, "search", word, "--as", MAIN, "--visibility", visibility, *at_alpha)
        assert found["results"] == [], visibility
    found = as_json(capsys, "search", "heron", "--as", MAIN, *at_alpha)
    assert {(r["messageId"], r["host"]) for r in found["results"]} == {
        ("u1", "alpha"), ("a1", "alpha"), ("c1", "alpha")}
    history = as_json(capsys, "history", MAIN, "--as", MAIN, *at_alpha)
    assert history["host"] == "alpha" and "heron" in json.dumps(history["messages"])
    assert "osprey" not in json.dumps(history)
    # Another host's session is asked for by its host, and is that host's caller's to see.
    code, _out, err = cli(capsys, "history", MAIN, "--host", "bravo", "--as", MAIN, *at_alpha)
    assert code == 3 and "not found or not visible" in err
    found = as_json(capsys, "search", "osprey", "--as", MAIN, "--as-host", "bravo", *at_alpha)
    assert {r["host"] for r in found["results"]} == {"bravo"} and len(found["results"]) == 3
    # The library: a caller on host alpha, and the same key on bravo, are two callers.
    state = StateDir(alpha, database_url=pg_url)
    assert sessions_search(state, SearchRequest("osprey"), Caller(MAIN)).results == []
    assert [r.host for r in sessions_search(state, SearchRequest("osprey"),
                                            Caller(MAIN, host="bravo")).results] == ["bravo"] * 3
    # One process, two machines' states: a caller's view is never the other machine's.
    at_bravo = StateDir(bravo, database_url=pg_url)
    assert [r.host for r in sessions_search(at_bravo, SearchRequest("osprey"), Caller(MAIN)
                                            ).results] == ["bravo"] * 3
    assert sessions_search(at_bravo, SearchRequest("heron"), Caller(MAIN)).results == []


def test_the_operator_sees_every_host_and_filters_by_one(team, pg_url: str, tmp_path: Path,
                                                          capsys) -> None:
    laptop = tmp_path / "laptop"
    laptop.mkdir()
    (laptop / "config.toml").write_text('host = "laptop"\n')
    at = ("--state-dir", str(laptop), "--database", pg_url)
    found = as_json(capsys, "search", "heron OR osprey", *at)
    assert found["results"] == []  # words are ANDed: one host's word each
    both = as_json(capsys, "search", "is", "--group", *at)
    assert sorted((c["sessionKey"], c["host"]) for c in both["conversations"]) == [
        (MAIN, "alpha"), (MAIN, "bravo")]
    only = as_json(capsys, "search", "is", "--group", "--host", "bravo", *at)
    assert [(c["sessionKey"], c["host"]) for c in only["conversations"]] == [(MAIN, "bravo")]
    # A key two other hosts hold is named by its host: one sentence, never a silent pick.
    code, _out, err = cli(capsys, "history", MAIN, *at)
    assert code == 2 and "on several hosts (alpha, bravo)" in err and "--host" in err
    code, _out, err = cli(capsys, "search", "is", "--session", MAIN, *at)
    assert code == 2 and "on several hosts (alpha, bravo)" in err
    found = as_json(capsys, "search", "is", "--session", MAIN, "--host", "bravo", *at)
    assert {(r["messageId"], r["host"]) for r in found["results"]} == {("u1", "bravo"), ("a1", "bravo")}
    history = as_json(capsys, "history", MAIN, "--host", "bravo", *at)
    assert history["host"] == "bravo" and "osprey" in json.dumps(history["messages"])
    code, out, err = cli(capsys, "search", "is", "--group", *at)
    assert code == 0 and f"{MAIN} on alpha" in out and f"{MAIN} on bravo" in out
    # Deleting on host alpha deletes alpha's session only.
    assert cli(capsys, "delete", MAIN, "--state-dir", str(team[0]), "--database", pg_url)[0] == 0
    assert sorted(sql(pg_url, "SELECT host FROM backscroll.sessions WHERE key = %s", (MAIN,))
                  ) == [("bravo",)]


def test_mcp_sessions_list_names_each_host(team, pg_url: str) -> None:
    from backscroll.core.catalog import visible_session_list

    state = StateDir(team[0], database_url=pg_url)
    listed = [s.as_json() for s in visible_session_list(state, OPERATOR, host="bravo")]
    assert sorted((s["sessionKey"], s["host"]) for s in listed) == [(MAIN, "bravo"), (CHILD, "bravo")]
    mine = [s.as_json() for s in visible_session_list(state, Caller(MAIN))]
    assert {s["host"] for s in mine} == {"alpha"} and len(mine) == 2


def test_schema_4_sessions_are_kept_and_claimed_by_their_host(pg_url: str, tmp_path: Path) -> None:
    """A server from before hosts: its sessions keep working (host unknown), the writer's
    migration keeps every row, and a host's next write of a session claims it."""
    alpha = host_state(tmp_path, "alpha", "heron")
    source = StateDir(alpha, database_url="")
    push_state(source, StateDir(alpha, database_url=pg_url))
    pg_downgrade(pg_url, 4)
    from backscroll.core.storage.postgres import driver

    driver.close_pools(pg_url)
    assert sql(pg_url, "SELECT value FROM backscroll.meta WHERE key = 'schema_version'") == [("4",)]
    server = StateDir(tmp_path / "laptop", database_url=pg_url, host="laptop")
    reconcile_all(server)  # the writer migrates
    assert sorted(sql(pg_url, "SELECT host, key FROM backscroll.sessions")) == [
        ("", MAIN), ("", CHILD)]
    assert [r.host for r in sessions_search(server, SearchRequest("heron"), OPERATOR).results
            ] == ["", "", ""]
    # bravo pushes its own main session: a new session, never the :import- re-key
    bravo = host_state(tmp_path, "bravo", "osprey")
    push_state(StateDir(bravo, database_url=""), StateDir(bravo, database_url=pg_url))
    # alpha's next push claims its two (same session ids), adding nothing
    assert push_state(source, StateDir(alpha, database_url=pg_url)).events == 0
    assert sorted(sql(pg_url, "SELECT host, key FROM backscroll.sessions")) == [
        ("alpha", MAIN), ("alpha", CHILD), ("bravo", MAIN), ("bravo", CHILD)]


def test_the_machine_label(tmp_path: Path, capsys) -> None:
    assert from_hostname("Build-01.Example.COM") == "build-01.example.com"
    assert from_hostname("my host_name!") == "my-host_name-"[:-1]
    token = "ghp_" + "R7xK2mQ9vL4pT8nW3sY6bH1jF5dC0gA2eU7iZ"[:36]
    assert from_hostname(token) == "ghp_r7-eu7i"  # redacted before it is folded
    assert len(from_hostname("x" * 300)) == 64 and from_hostname("...") == "localhost"
    assert check_host("Alpha") == "alpha"
    with pytest.raises(ValidationError, match="is not a host label"):
        check_host("a b")
    (tmp_path / "config.toml").write_text('host = "no spaces please"\n')
    code, _out, err = cli(capsys, "status", "--state-dir", str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and "config.toml: host" in err
    (tmp_path / "config.toml").write_text('host = "desk"\n')
    state = StateDir(tmp_path, database_url="")
    with state.open("main", write=True) as db:
        db.append(SessionMeta(MAIN), json.dumps(msg("u1", None, "user", "a local heron")))
    found = as_json(capsys, "search", "heron", "--state-dir", str(tmp_path))
    assert [r["host"] for r in found["results"]] == ["desk"]  # a local store: its one host
    assert as_json(capsys, "search", "heron", "--host", "elsewhere",
                   "--state-dir", str(tmp_path))["results"] == []


def test_each_host_keeps_its_own_record_of_a_synced_path(pg_url: str, tmp_path: Path) -> None:
    """Two hosts syncing the same path (the same home layout) each remember how far they read
    their own file: one host's record never makes the other skip or re-read."""
    from backscroll.core.storage import FileState

    path = "/root/.openclaw/agents/main/sessions/main.jsonl"
    for name, size in (("alpha", 100), ("bravo", 7)):
        state = StateDir(tmp_path / name, database_url=pg_url, host=name)
        with state.open("main", write=True) as db, db.atomic():
            db.save_file_state(FileState(path, "openclaw", "/root/.openclaw", 1, 2, size, 3,
                                         done_bytes=size, synced_at=5))
            db.record_sync([("/root/.openclaw", "openclaw")], 5 + size)
    for name, size in (("alpha", 100), ("bravo", 7)):
        with StateDir(tmp_path / name, database_url=pg_url, host=name).open("main") as db:
            assert db.file_state(path).done_bytes == size
            assert [s.done_bytes for s in db.file_states().values()] == [size]
            assert db.source_syncs() == {"/root/.openclaw": 5 + size}


def test_a_browser_opens_the_session_of_the_row_it_shows(team, pg_url: str, tmp_path: Path) -> None:
    """The browser's rows carry their host, and a conversation is opened by key and host: two
    hosts' agent:main:main are two conversations, never an error or the other one."""
    from backscroll.core.catalog import visible_session_list
    from backscroll.core.conversation import conversation_outline, window_around

    laptop = StateDir(tmp_path / "laptop", database_url=pg_url, host="laptop")
    rows = [s for s in visible_session_list(laptop, OPERATOR) if s.key == MAIN]
    assert sorted(s.host for s in rows) == ["alpha", "bravo"]
    for row in rows:
        word = {"alpha": "heron", "bravo": "osprey"}[row.host]
        preview = window_around(laptop, OPERATOR, row.key, None, 5, row.host)
        assert preview.host == row.host and word in json.dumps(preview.messages)
        assert conversation_outline(laptop, OPERATOR, row.key, row.host).ids == ("u1", "a1")


async def test_view_as_lists_each_hosts_session_of_a_key_and_picks_its_host() -> None:
    """The browser's "view as": two hosts' agent:main:main are two choices, each named with its
    host, each with its sub-agent under it; picking one gives a caller on that host."""
    from textual.widgets import OptionList

    from backscroll.core.catalog import SessionSummary
    from backscroll.tui.screens import ViewAsChoice, ViewAsScreen

    from .test_tui import Host, frozen

    def summary(key: str, host: str, spawned_by: str | None = None) -> SessionSummary:
        return SessionSummary(key, "main", "sid", None, spawned_by, 1, 1, 3, True, False,
                              host=host)

    sessions = [summary(MAIN, "alpha"), summary(CHILD, "alpha", MAIN), summary(MAIN, "bravo"),
                summary(CHILD, "bravo", MAIN), summary("agent:main:solo", "bravo")]
    screen = ViewAsScreen(sessions, OPERATOR, frozen)
    app = Host(screen)
    async with app.run_test() as pilot:
        listing = screen.query_one("#view-as-list", OptionList)
        prompts = [listing.get_option_at_index(i).prompt.plain.split("  ")[0]
                   for i in range(listing.option_count)]
        assert prompts == ["operator", f"{MAIN} on alpha", f" ↳ {CHILD} on alpha",
                           f"{MAIN} on bravo", f" ↳ {CHILD} on bravo", "agent:main:solo"]
        await pilot.press("j", "j", "j", "enter")
        assert app.answer == ViewAsChoice(MAIN, False, "bravo")


def test_export_and_resume_lookup_take_the_rows_host(team, pg_url: str, tmp_path: Path) -> None:
    from backscroll.core.catalog import visible_session
    from backscroll.core.export import export_conversation

    laptop = StateDir(tmp_path / "laptop", database_url=pg_url, host="laptop")
    with pytest.raises(ValidationError, match="several hosts"):
        export_conversation(laptop, MAIN, OPERATOR)
    assert "osprey" in export_conversation(laptop, MAIN, OPERATOR, host="bravo")
    assert visible_session(laptop, OPERATOR, MAIN, "alpha").host == "alpha"
