"""A corrupted file, a newer schema and a read-only file: each is one sentence (a row state in
``status``, a problem in ``verify`` (exit 1), the search warning), and the other agents keep
working in every verb."""

from __future__ import annotations

import io
import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.tui.cli import main

from .events import header, lines, msg
from .test_tui import app_for, type_query, until

AGENTS = ("alpha", "broken", "zulu")


def build(state: StateDir) -> None:
    """Three agents, each with a searchable session and an imported one awaiting reindex."""
    for agent in AGENTS:
        with state.open(agent, write=True) as db:
            for i in range(3):
                db.append(SessionMeta(f"agent:{agent}:main"), json.dumps(
                    msg(f"m{i}", f"m{i - 1}" if i else None, "user", f"heron {i} in {agent} " * 40)))
            db.import_session(SessionMeta(f"agent:{agent}:old", session_id=f"{agent}-old"), lines(
                header(f"{agent}-old"), msg("o1", None, "user", f"egret from the past in {agent}")))


def corrupt(path: Path) -> None:
    """Every page after the first (the header and the schema stay) becomes noise."""
    rng = random.Random(9)
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.seek(4096)
        handle.write(rng.randbytes(size - 4096))


def newer(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()


def make_read_only(path: Path) -> None:
    if os.geteuid() != 0:
        os.chmod(path, 0o400)
        os.chmod(path.parent, 0o500)
        return
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True)  # root ignores modes
    if done.returncode != 0:
        pytest.skip("running as root on a filesystem without chattr +i: no read-only file")


def writable_again(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True)
    else:
        os.chmod(path.parent, 0o700)
        os.chmod(path, 0o600)


@pytest.fixture(params=["corrupt", "newer schema", "read-only"])
def broken(request, state: StateDir):
    build(state)
    path = state.db_path("broken")
    {"corrupt": corrupt, "newer schema": newer, "read-only": make_read_only}[request.param](path)
    yield request.param, state
    writable_again(path)


def cli(state: StateDir, capsys, monkeypatch, *argv: str, stdin: bytes = b"") -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(["--state-dir", str(state.path), *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    return code, out, err


def test_every_verb_names_the_broken_database_and_serves_the_others(broken, capsys, monkeypatch) -> None:
    kind, state = broken
    path = str(state.db_path("broken"))
    readable = kind == "read-only"

    code, out, _ = cli(state, capsys, monkeypatch, "status", "--json")
    rows = {row["agent"]: row for row in json.loads(out)["agents"]}
    assert code == 1
    assert rows["broken"]["state"] == ("read-only" if readable else "unreadable")
    assert path in rows["broken"]["error"] and "\n" not in rows["broken"]["error"]
    if kind == "newer schema":
        assert "newer backscroll" in rows["broken"]["error"]
    assert rows["alpha"]["state"] == rows["zulu"]["state"] == "ok"
    assert rows["zulu"]["sessions"] == 2
    code, out, _ = cli(state, capsys, monkeypatch, "status")
    assert code == 1 and ("read-only" if readable else "unreadable") in out

    code, out, _ = cli(state, capsys, monkeypatch, "verify", "--json")
    report = json.loads(out)
    assert code == 1 and report["sessionsChecked"] >= 2
    assert [p.split(":")[0] for p in report["problems"]] == ["broken"]
    code, out, _ = cli(state, capsys, monkeypatch, "verify")  # the index itself is right
    assert code == 1 and out.startswith("not every database could be checked: ")

    code, out, err = cli(state, capsys, monkeypatch, "search", "egret", "--json")
    answer = json.loads(out)
    assert code == 0 and answer["indexing"] is True and path in answer["warning"]

    code, out, err = cli(state, capsys, monkeypatch, "reindex", "--json")
    done = json.loads(out.splitlines()[-1])
    assert code == 1 and [f["agent"] for f in done["failed"]] == ["broken"] and path in err
    assert done["sessions"] == 2  # alpha's and zulu's imported sessions

    code, out, _ = cli(state, capsys, monkeypatch, "search", "egret", "--json")
    found = {r["sessionKey"] for r in json.loads(out)["results"]}
    assert found == {"agent:alpha:old", "agent:zulu:old"}
    code, out, _ = cli(state, capsys, monkeypatch, "search", "heron", "--limit", "25", "--json")
    agents = {r["sessionKey"].split(":")[1] for r in json.loads(out)["results"]}
    assert agents == ({"alpha", "broken", "zulu"} if readable else {"alpha", "zulu"})

    event = lines(msg("new", "m2", "user", "a fresh kingfisher"))[0].encode() + b"\n"
    assert cli(state, capsys, monkeypatch, "append", "agent:zulu:main", stdin=event)[0] == 0
    code, _, err = cli(state, capsys, monkeypatch, "append", "agent:broken:main", stdin=event)
    assert code == 1 and path in err and len(err.strip().splitlines()) == 1
    assert cli(state, capsys, monkeypatch, "history", "agent:alpha:main")[0] == 0
    code, out, err = cli(state, capsys, monkeypatch, "history", "agent:broken:main")
    assert code == (0 if readable else 1) and (readable or path in err)
    assert cli(state, capsys, monkeypatch, "delete", "agent:alpha:old")[0] == 0
    code, _, err = cli(state, capsys, monkeypatch, "delete", "agent:broken:old")
    assert code == 1 and path in err


def test_a_read_only_database_starts_no_reconciler_and_says_why(state: StateDir, capsys,
                                                                 monkeypatch) -> None:
    build(state)
    path = state.db_path("broken")
    make_read_only(path)
    try:
        started: list[str] = []
        monkeypatch.setattr("backscroll.core.reconcile.start_background",
                            lambda _state, agent, _mode: started.append(agent))
        code, out, _ = cli(state, capsys, monkeypatch, "search", "egret", "--json")
        answer = json.loads(out)
        assert code == 0 and sorted(started) == ["alpha", "zulu"]
        assert f"{path} is read-only" in answer["warning"]
        code, out, _ = cli(state, capsys, monkeypatch, "search", "egret", "--json",
                           "--as", "agent:alpha:main", "--visibility", "self")
        assert "read-only" not in json.loads(out).get("warning", "")  # not this caller's wait
    finally:
        writable_again(path)


@pytest.mark.slow
async def test_the_browser_notifies_once_and_keeps_searching(state: StateDir) -> None:
    build(state)
    corrupt(state.db_path("broken"))
    app = app_for(state, poll_interval=0.05)
    async with app.run_test(size=(120, 35), notifications=True) as pilot:
        await until(pilot, lambda: app.status is not None)
        await type_query(pilot, app, "heron")
        assert {r.session_key.split(":")[1] for r in app.search_screen.results.results} == {"alpha", "zulu"}
        await pilot.pause(0.3)  # several polls and a search later
        notes = [n for n in app._notifications if str(state.db_path("broken")) in n.message]
        assert len(notes) == 1 and notes[0].severity == "error"


def test_a_caller_in_a_broken_database_is_told_why_not_that_it_does_not_exist(
        broken, capsys, monkeypatch) -> None:
    kind, state = broken
    path = str(state.db_path("broken"))
    code, out, err = cli(state, capsys, monkeypatch, "search", "heron", "--as", "agent:broken:main",
                         "--json")
    if kind == "read-only":  # readable: the caller searches as usual
        assert code == 0 and json.loads(out)["results"]
        return
    assert code == 1 and json.loads(out)["status"] == "error"
    assert path in err and len(err.splitlines()) == 1 and "does not exist" not in err


def test_warnings_for_people_are_one_line_each(broken, capsys, monkeypatch) -> None:
    kind, state = broken
    code, _, err = cli(state, capsys, monkeypatch, "search", "egret")
    assert code == 0
    indexing, problem = err.splitlines()  # not wrapped at 80 columns however long
    assert indexing == "indexing in progress: results may be incomplete; retry soon"
    assert str(state.db_path("broken")) in problem
    assert problem.startswith("skipped an unreadable database: ") == (kind != "read-only")
