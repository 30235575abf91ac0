"""Pi and Oh My Pi sessions (``core/importers/pi``): the real samples of ``shared/data/agents``
imported and searchable, Pi's v1 -> v3 rewrite recognised, sync and watch, detection."""

from __future__ import annotations

import json
import random
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from backscroll.core import formats
from backscroll.core.catalog import (
    SOURCE_NAMES,
    SOURCES,
    list_sessions,
    project_list,
    resume_of,
    source_kind,
)
from backscroll.core.errors import ValidationError
from backscroll.core.importers.pi import content_id, cwd_of_folder, import_pi
from backscroll.core.indexer import expected_rows
from backscroll.core.reconcile import reconcile_all
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.sources import sync_sources
from backscroll.core.sources.detect import default_folders
from backscroll.core.sources.sync import SyncReport
from backscroll.core.sources.watch import follow_sources
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR

pytestmark = pytest.mark.backends  # storage behaviour: on both backends

AGENTS = Path("/work/shared/data/agents")
PROJECT = "--Users-badlogic-workspaces-pi-mono--"
PI_ID = "ffae836b-9420-4060-ac13-7745215f90ff"  # v1, two compactions, 1,003 lines
OMP_ID = "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"  # a large session, 1,019 lines
PI_FILE = AGENTS / "pi/home/.pi/agent/sessions" / PROJECT / f"2025-12-09T00-53-29-825Z_{PI_ID}.jsonl"
OMP_FILE = (AGENTS / "omp/home/.omp/agent/sessions" / PROJECT
            / f"2025-11-20T23-33-50-805Z_{OMP_ID}.jsonl")
PI_KEY = f"agent:pi:pi:{PI_ID}"
OMP_KEY = f"agent:omp:omp:{OMP_ID}"

if not PI_FILE.is_file() or not OMP_FILE.is_file():  # pragma: no cover
    pytest.skip("the shared Pi samples are not on this machine", allow_module_level=True)


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def migrate_v1(path: Path, seed: int) -> None:
    """Rewrite a v1 file as Pi does when it opens it (``migrateV1ToV2`` then ``V2ToV3`` in
    session-manager.ts): new random 8-hex ids, each entry's parent the one before, the
    compaction's index turned into the kept entry's id, ``version`` 3 in the header."""
    rng = random.Random(seed)
    entries = lines_of(path)
    prev = None
    for entry in entries:
        if entry["type"] == "session":
            entry["version"] = 3
            continue
        entry["id"] = f"{rng.getrandbits(32):08x}"
        entry["parentId"] = prev
        prev = entry["id"]
        if entry["type"] == "compaction" and isinstance(entry.get("firstKeptEntryIndex"), int):
            target = entries[entry.pop("firstKeptEntryIndex")]
            if target["type"] != "session":
                entry["firstKeptEntryId"] = target["id"]
    path.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in entries))


def session_events(state: StateDir, agent: str, key: str) -> tuple[list[dict[str, Any]], Any]:
    with state.open(agent) as db:
        session = db.session(key)
        assert session is not None, key
        return [e for _, e in db.events(session.pk)], session


def indexed(state: StateDir, agent: str, key: str) -> list[tuple[str, str, str]]:
    """(entry id, role, text) the index holds for the session's active branch."""
    events, session = session_events(state, agent, key)
    rows, branch = expected_rows([(i + 1, e) for i, e in enumerate(events)], session.created_at)
    assert branch.problems == []
    return [(row.entry_id, row.role, row.body) for row in rows]


def search(state: StateDir, query: str, source: str | None = None) -> list[tuple[str, str]]:
    response = sessions_search(state, SearchRequest(query=query, limit=25, source=source),
                               OPERATOR)
    assert not response.indexing
    return [(r.session_key, r.message_id) for r in response.results]


def pi_home(home: Path) -> dict[str, Path]:
    """``~/.pi/agent/sessions`` and ``~/.omp/agent/sessions`` under ``home``, one sample each."""
    pi = home / ".pi/agent/sessions" / PROJECT
    omp = home / ".omp/agent/sessions" / PROJECT
    pi.mkdir(parents=True)
    omp.mkdir(parents=True)
    shutil.copy(PI_FILE, pi / PI_FILE.name)
    shutil.copy(OMP_FILE, omp / OMP_FILE.name)
    return {"pi": pi / PI_FILE.name, "omp": omp / OMP_FILE.name}


# ------------------------------------------------------------------ the real samples


def test_real_samples_imported_labelled_and_searchable(state: StateDir) -> None:
    pi = import_pi(state, PI_FILE.parent.parent)
    omp = import_pi(state, OMP_FILE.parent.parent, source="omp")
    assert pi.skipped == [] and omp.skipped == []
    assert (pi.sessions, pi.events, pi.keys) == (1, 1003, [PI_KEY])
    assert (omp.sessions, omp.events, omp.keys) == (1, 1019, [OMP_KEY])
    assert state.agents() == ["omp", "pi"]
    for agent, key in (("pi", PI_KEY), ("omp", OMP_KEY)):
        with state.open(agent) as db:
            (session,) = db.sessions()
        assert (session.key, session.source, session.session_id) == (key, agent, key.split(":")[-1])
        assert session.label and session.label.startswith("pi-mono: ")
        assert source_kind(session.source) == agent
    reconcile_all(state)
    # the first thing the user typed in each, found under its own source only
    assert (PI_KEY, content_id(lines_of(PI_FILE)[1])) in search(state, "refactored", "pi")
    assert all(key == PI_KEY for key, _ in search(state, "refactored", "pi"))
    omp_hits = search(state, "\"tui-renderer.ts, read it in full\"", "omp")
    assert {key for key, _ in omp_hits} == {OMP_KEY}
    assert search(state, "\"tui-renderer.ts, read it in full\"", "pi") == []
    # the header's cwd is the session's project folder
    project = sessions_search(state, SearchRequest(
        query="refactored", project="/Users/badlogic/workspaces/pi-mono"), OPERATOR)
    assert {r.session_key for r in project.results} == {PI_KEY}


def test_history_keeps_what_came_before_each_compaction(state: StateDir) -> None:
    import_pi(state, PI_FILE)
    file = lines_of(PI_FILE)
    compactions = [i for i, e in enumerate(file) if e["type"] == "compaction"]
    assert compactions == [359, 628]
    rows = indexed(state, "pi", PI_KEY)
    users = [content_id(e) for e in file
             if e["type"] == "message" and e["message"]["role"] == "user"]
    assert len(users) == 55
    # every user message is on the active branch, the 1st (line 2) before both compactions
    assert [entry for entry, role, _ in rows if role == "user"] == users
    events, _ = session_events(state, "pi", PI_KEY)
    stored_compactions = [e for e in events if e["type"] == "compaction"]
    # the v1 index is turned into the id of the kept entry, as Pi's migration does
    assert [c["firstKeptEntryId"] for c in stored_compactions] == [
        content_id(file[293]), content_id(file[551])]
    assert all("firstKeptEntryIndex" not in c for c in stored_compactions)


def test_bash_execution_output_is_kept_not_indexed(state: StateDir) -> None:
    import_pi(state, PI_FILE)
    bash = [content_id(e) for e in lines_of(PI_FILE)
            if e["type"] == "message" and e["message"]["role"] == "bashExecution"]
    assert len(bash) == 3
    events, _ = session_events(state, "pi", PI_KEY)
    kept = {e["id"]: e for e in events if e.get("id") in bash}
    assert set(kept) == set(bash)
    assert "tsconfig.base.json" in kept[bash[0]]["message"]["output"]
    rows = indexed(state, "pi", PI_KEY)
    assert not {entry for entry, _, _ in rows} & set(bash)
    assert not any("pi-mono.code-workspace" in text for _, _, text in rows)


def test_resume_commands_and_project_folder(state: StateDir) -> None:
    import_pi(state, PI_FILE)
    import_pi(state, OMP_FILE, source="omp")
    summaries = {s.key: s for s in list_sessions(state)}
    assert summaries[PI_KEY].cwd == "/Users/badlogic/workspaces/pi-mono"
    # pi --session <path|id>; omp --resume <id> (oh-my-pi cli/flag-tables.ts)
    assert resume_of(summaries[PI_KEY]).command == (
        f"cd /Users/badlogic/workspaces/pi-mono && pi --session {PI_ID}")
    assert resume_of(summaries[OMP_KEY]).command == (
        f"cd /Users/badlogic/workspaces/pi-mono && omp --resume {OMP_ID}")
    assert dict(project_list(state, OPERATOR)) == {"/Users/badlogic/workspaces/pi-mono": 2}


# ------------------------------------------------------------------ Pi's v1 -> v3 rewrite


def test_v1_file_rewritten_as_v3_with_new_ids_stores_nothing_twice(
        state: StateDir, tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / PROJECT
    folder.mkdir(parents=True)
    file = folder / PI_FILE.name
    shutil.copy(PI_FILE, file)
    first = import_pi(state, file)
    before, _ = session_events(state, "pi", PI_KEY)
    rows_before = indexed(state, "pi", PI_KEY)
    migrate_v1(file, seed=1)
    assert lines_of(file)[1]["id"] != lines_of(file)[2]["id"]  # Pi's own ids now
    again = import_pi(state, file)
    migrate_v1(file, seed=2)  # opened again by another Pi: other random ids
    third = import_pi(state, file)
    after, _ = session_events(state, "pi", PI_KEY)
    assert first.events == 1003 and again.events == 0 and third.events == 0
    assert after == before
    assert indexed(state, "pi", PI_KEY) == rows_before
    reconcile_all(state)
    assert len(search(state, "refactored", "pi")) == 1


def test_derived_ids_follow_pi_tree_and_ignore_its_own_ids() -> None:
    v1 = {"type": "message", "timestamp": "2025-01-01T00:00:01Z",
          "message": {"role": "hookMessage", "content": "hi", "timestamp": 1}}
    v3 = {**v1, "id": "a1b2c3d4", "parentId": "00000000",
          "message": {**v1["message"], "role": "custom"}}
    assert content_id(v1) == content_id(v3)
    assert content_id(v1) != content_id({**v1, "timestamp": "2025-01-01T00:00:02Z"})
    assert cwd_of_folder(Path("/x/--home-me-app--")) == "/home/me/app"
    assert cwd_of_folder(Path("/x/sessions")) is None


def test_branches_of_a_v3_file_keep_their_parents(state: StateDir, tmp_path: Path) -> None:
    folder = tmp_path / "--home-me-app--"
    folder.mkdir()
    file = folder / "2026-01-01T00-00-00-000Z_0b5e7d1e-0000-4000-8000-000000000001.jsonl"

    def msg(eid: str, parent: str | None, role: str, text: str, ts: str) -> dict[str, Any]:
        return {"type": "message", "id": eid, "parentId": parent, "timestamp": ts,
                "message": {"role": role, "content": [{"type": "text", "text": text}]}}

    entries = [
        {"type": "session", "version": 3, "id": "0b5e7d1e-0000-4000-8000-000000000001",
         "timestamp": "2026-01-01T00:00:00.000Z"},  # no cwd: from the folder name
        msg("aaaa0001", None, "user", "first question", "2026-01-01T00:00:01.000Z"),
        msg("aaaa0002", "aaaa0001", "assistant", "first answer", "2026-01-01T00:00:02.000Z"),
        msg("aaaa0003", "aaaa0001", "assistant", "second answer", "2026-01-01T00:00:03.000Z"),
    ]
    file.write_text("".join(json.dumps(e) + "\n" for e in entries))
    import_pi(state, file)
    events, _ = session_events(state, "pi", "agent:pi:pi:0b5e7d1e-0000-4000-8000-000000000001")
    assert events[0]["cwd"] == "/home/me/app" and "version" not in events[0]
    ids = [content_id(e) for e in entries[1:]]
    assert [(e["id"], e["parentId"]) for e in events[1:]] == [
        (ids[0], None), (ids[1], ids[0]), (ids[2], ids[0])]
    texts = [text for _, _, text in indexed(
        state, "pi", "agent:pi:pi:0b5e7d1e-0000-4000-8000-000000000001")]
    assert texts == ["first question", "second answer"]  # the last branch is the active one


# ------------------------------------------------------------------ sync and watch


def test_sync_takes_in_both_tools_then_only_an_appended_line(state: StateDir) -> None:
    files = pi_home(Path.home())
    report = sync_sources(state)
    assert report.problems == []
    assert report.sessions == {PI_KEY, OMP_KEY} and report.events == 1003 + 1019
    reconcile_all(state)
    with files["pi"].open("a") as handle:
        handle.write(json.dumps({"type": "message", "timestamp": "2025-12-09T03:00:00.000Z",
                                 "message": {"role": "user", "content": [
                                     {"type": "text", "text": "the zebrafish question"}]}}) + "\n")
    grown = sync_sources(state)
    assert (grown.read, grown.events, grown.messages, grown.sessions) == (1, 1, 1, {PI_KEY})
    assert sync_sources(state).events == 0
    reconcile_all(state)
    assert [key for key, _ in search(state, "zebrafish")] == [PI_KEY]
    events, _ = session_events(state, "pi", PI_KEY)
    assert events[-1]["parentId"] == events[-2]["id"]  # hangs from the line before it


def test_sync_after_pi_rewrote_the_file_stores_nothing_twice(state: StateDir) -> None:
    files = pi_home(Path.home())
    sync_sources(state)
    before, _ = session_events(state, "pi", PI_KEY)
    migrate_v1(files["pi"], seed=3)
    with files["pi"].open("a") as handle:  # and then Pi goes on writing, as v3
        last = lines_of(files["pi"])[-1]["id"]
        handle.write(json.dumps({"type": "message", "id": "feedf00d", "parentId": last,
                                 "timestamp": "2025-12-09T03:00:00.000Z",
                                 "message": {"role": "user", "content": "after the rewrite"}})
                     + "\n")
    report = sync_sources(state)
    assert report.problems == [] and (report.events, report.messages) == (1, 1)
    after, _ = session_events(state, "pi", PI_KEY)
    assert after[:-1] == before and after[-1]["parentId"] == before[-1]["id"]
    with files["pi"].open("a") as handle:  # v3 lines followed through Pi's ids
        handle.write(json.dumps({"type": "message", "id": "feedf00e", "parentId": "feedf00d",
                                 "timestamp": "2025-12-09T03:00:01.000Z",
                                 "message": {"role": "assistant", "content": "an answer"}})
                     + "\n")
    assert sync_sources(state).events == 1
    last, _ = session_events(state, "pi", PI_KEY)
    assert last[-1]["parentId"] == after[-1]["id"]


def test_watch_follows_pi_and_omp(state: StateDir) -> None:
    pi_home(Path.home())
    reports: list[SyncReport] = []
    stop = threading.Event()

    def on_sync(report: SyncReport) -> None:
        reports.append(report)
        stop.set()  # one pass is enough: it goes through the same doors as sync

    follow_sources(state, on_sync, stop, polling=True)
    assert reports[0].sessions == {PI_KEY, OMP_KEY}


# ------------------------------------------------------------------ detection, choices


def test_default_folders_under_a_fake_home_and_the_env_overrides(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = Path.home()
    found = {s.kind: s.path for s in default_folders()}
    assert found["pi"] == home / ".pi/agent/sessions"
    assert found["omp"] == home / ".omp/agent/sessions"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi-agent"))
    monkeypatch.setenv("OMP_CODING_AGENT_DIR", str(tmp_path / "omp-agent"))
    found = {s.kind: s.path for s in default_folders()}
    assert found["pi"] == tmp_path / "pi-agent/sessions"
    assert found["omp"] == tmp_path / "omp-agent/sessions"
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "elsewhere"))
    assert {s.kind: s.path for s in default_folders()}["pi"] == tmp_path / "elsewhere"


def test_sync_detects_both_default_folders(state: StateDir) -> None:
    pi_home(Path.home())
    report = sync_sources(state)
    assert report.sources == 2 and report.files == 2


def test_source_choices_and_labels_include_pi_and_omp() -> None:
    from backscroll.tui.cli.main import build_parser

    assert {"pi", "omp"} <= set(formats.names())
    assert (SOURCE_NAMES["pi"], SOURCE_NAMES["omp"]) == ("Pi", "Oh My Pi")
    assert (SOURCES["pi"], SOURCES["omp"]) == (("pi",), ("omp",))
    args = build_parser().parse_args(["search", "x", "--source", "omp"])
    assert args.source == "omp"
    with pytest.raises(ValidationError, match="invalid choice: 'pie'"):
        build_parser().parse_args(["search", "x", "--source", "pie"])
    assert build_parser().parse_args(["import", "pi", "/tmp/x"]).kind == "pi"


# ------------------------------------------------------------------ odd input, copies


def test_bad_files_are_one_sentence_each_and_the_others_import(
        state: StateDir, tmp_path: Path) -> None:
    folder = tmp_path / "sessions" / PROJECT
    folder.mkdir(parents=True)
    shutil.copy(PI_FILE, folder / PI_FILE.name)
    (folder / "2026-01-01T00-00-00-000Z_empty.jsonl").write_text("")
    (folder / "2026-01-01T00-00-00-000Z_noheader.jsonl").write_text(
        json.dumps({"type": "message", "message": {"role": "user", "content": "x"}}) + "\n")
    (folder / "2026-01-01T00-00-00-000Z_binary.jsonl").write_bytes(b"\x00\x01\x02" * 100)
    with (folder / PI_FILE.name).open("a") as handle:
        handle.write("{not json\n")
    report = import_pi(state, tmp_path / "sessions")
    assert report.keys == [PI_KEY] and report.events == 1003
    said = report.notes + report.skipped
    assert any("empty.jsonl: no events in it" in s for s in said)
    assert any("noheader.jsonl: no session header; not a Pi session" in s for s in said)
    assert any("binary.jsonl" in s and "binary" in s for s in said)
    assert any(f"{PI_FILE.name}:1004" in s for s in said)  # the broken line, named
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    with pytest.raises(ValidationError, match="holds no Oh My Pi sessions"):
        import_pi(state, empty, source="omp")


def test_a_branched_copy_is_its_own_session_with_every_entry(
        state: StateDir, tmp_path: Path) -> None:
    """Pi's branch writes a new session file holding copies of the entries before the branch
    point: the same derived ids in another session, each session keeping all of its own."""
    folder = tmp_path / PROJECT
    folder.mkdir()
    shutil.copy(OMP_FILE, folder / OMP_FILE.name)
    entries = lines_of(OMP_FILE)[:40]
    branch_id = "0b5e7d1e-0000-4000-8000-0000000000b2"
    entries[0] = {**entries[0], "id": branch_id, "branchedFrom": str(OMP_FILE)}
    (folder / f"2026-01-01T00-00-00-000Z_{branch_id}.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in entries))
    report = import_pi(state, tmp_path, source="omp")
    assert report.events == 1019 + 40
    copy, _ = session_events(state, "omp", f"agent:omp:omp:{branch_id}")
    whole, _ = session_events(state, "omp", OMP_KEY)
    assert [e.get("id") for e in copy[1:]] == [e.get("id") for e in whole[1:40]]


def test_a_line_hanging_from_far_back_reads_the_file_again(
        state: StateDir, monkeypatch: pytest.MonkeyPatch) -> None:
    import backscroll.core.importers.pi as pi_package

    monkeypatch.setattr(pi_package, "KEPT_IDS", 2)  # the carry remembers 2 of Pi's ids
    files = pi_home(Path.home())
    migrate_v1(files["pi"], seed=4)
    sync_sources(state)
    first_user = next(e for e in lines_of(files["pi"])
                      if e["type"] == "message" and e["message"]["role"] == "user")
    with files["pi"].open("a") as handle:  # a branch from the first prompt (/tree in Pi)
        handle.write(json.dumps({"type": "message", "id": "b0b0b0b0", "parentId": first_user["id"],
                                 "timestamp": "2025-12-09T03:00:00.000Z",
                                 "message": {"role": "assistant", "content": "a new branch"}})
                     + "\n")
    report = sync_sources(state)
    assert report.problems == [] and (report.events, report.messages) == (1, 1)
    events, _ = session_events(state, "pi", PI_KEY)
    assert events[-1]["parentId"] == content_id(first_user)
    assert len(events) == 1003 + 1
