"""The smaller edges of ``sync``, ``sources`` and ``import`` (issue 22, low items): links out
of a source folder, a folder failing while it is listed, an empty import PATH, a reader's
sync, and the notes a re-keyed session gets."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from backscroll.core.errors import Forbidden, ValidationError
from backscroll.core.importers.claude_code import import_claude_code
from backscroll.core.reconcile import reconcile_all
from backscroll.core.sources import scan as scan_module
from backscroll.core.sources import sync_sources
from backscroll.core.sources.listing import sources_status
from backscroll.core.state import StateDir
from backscroll.tui.cli import main

from .fakehome import hits
from .hostilehome import WORDS, folders, good_files, openclaw_lines, write_lines

LINK_NOTE = "a symbolic link; links inside a source folder are not followed"


def test_links_out_of_a_source_folder_are_not_followed(state: StateDir, tmp_path: Path) -> None:
    """A link to ``/`` would walk the disk, a link to a transcript elsewhere would take in
    what is not in the folder: neither is followed (one note each), the rest syncs."""
    good_files(Path.home())
    project = folders(Path.home())["claude-code"]
    elsewhere = good_files(tmp_path / "elsewhere")["claude-code"]
    elsewhere.write_text(elsewhere.read_text().replace(WORDS["claude-code"], "gnuoutside"))
    (project / "root").symlink_to("/", target_is_directory=True)
    (project / "outside.jsonl").symlink_to(elsewhere)
    (project / "inside.jsonl").symlink_to(project / "z-good.jsonl")
    agents = folders(Path.home())["openclaw"].parent.parent
    (agents / "linked").mkdir()
    (agents / "linked" / "sessions").symlink_to(elsewhere.parent, target_is_directory=True)
    report = sync_sources(state)
    assert report.problems == []
    for link in ("root", "outside.jsonl", "inside.jsonl"):
        assert f"{project / link}: {LINK_NOTE}" in report.notes
    assert f"{agents / 'linked' / 'sessions'}: {LINK_NOTE}" in report.notes
    assert report.files == 3  # the three good files; nothing under / was walked
    reconcile_all(state)
    assert hits(state, "gnuoutside") == [] and len(hits(state, WORDS["claude-code"])) == 1


def test_a_folder_failing_while_listed_is_one_sentence(state: StateDir, monkeypatch) -> None:
    """``/proc/1/map_files`` lists, then fails part way: the entries before are kept."""
    good_files(Path.home())
    project = folders(Path.home())["claude-code"]
    write_lines(project / "sub" / "x.jsonl", [])
    real_scandir = os.scandir

    class Failing:
        def __init__(self, path: str) -> None:
            self.inner = real_scandir(path)

        def __enter__(self):
            return self

        def __exit__(self, *exc: object) -> None:
            self.inner.close()

        def close(self) -> None:
            self.inner.close()

        def __iter__(self):
            return self

        def __next__(self):
            raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(scan_module.os, "scandir",
                        lambda path: Failing(path) if str(path).endswith("sub") else real_scandir(path))
    report = sync_sources(state)
    assert report.problems == [f"{project / 'sub'}: cannot be listed (Permission denied)"]
    assert report.events > 0
    status = {s.source.kind: s for s in sources_status(state)}["claude-code"]
    assert f"{project / 'sub'}: cannot be listed (Permission denied)" in status.notes


def test_a_source_behind_a_folder_that_cannot_be_searched_is_one_sentence(
        state: StateDir, tmp_path: Path, monkeypatch) -> None:
    """``Path.exists()`` raises on EACCES (a parent folder of mode 700 owned by another
    user): as root the test denies it the way a user meets it."""
    good_files(Path.home())
    hidden = tmp_path / "private" / "codex"
    hidden.mkdir(parents=True)
    real_stat = os.stat

    def denied(path, *args, **kwargs):
        if str(path).startswith(str(hidden)):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)

    config = state.path / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[[sources]]\nkind = "codex"\npath = "{hidden}"\n')
    monkeypatch.setattr(os, "stat", denied)
    report = sync_sources(state)
    assert report.problems == [f"{hidden}: cannot be listed (Permission denied)"]
    assert report.events > 0
    status = {s.source.root: s for s in sources_status(state)}[str(hidden)]
    assert status.notes == [f"{hidden}: cannot be listed (Permission denied)"]


def test_a_file_name_that_is_not_utf8_is_one_sentence(state: StateDir) -> None:
    """Such a name reaches Python with lone surrogates, which no database stores: it stopped
    the sync with a UnicodeEncodeError."""
    good_files(Path.home())
    project = folders(Path.home())["claude-code"]
    with open(os.fsencode(project) + b"/a-\xff.jsonl", "wb") as handle:
        handle.write((project / "z-good.jsonl").read_bytes())
    report = sync_sources(state)
    assert report.problems == [f"{project}/a-\\xff.jsonl: a name that is not valid UTF-8 (no "
                               "database can store it); not read"]
    assert report.read == 3 and report.events > 0


def test_an_empty_import_path_is_refused(state: StateDir, tmp_path: Path, monkeypatch,
                                         capsys) -> None:
    good_files(tmp_path)
    monkeypatch.chdir(tmp_path / ".claude" / "projects")  # what "" used to import
    with pytest.raises(ValidationError, match="the path to import is empty"):
        import_claude_code(state, "")
    for kind in ("claude-code", "codex", "openclaw"):
        assert main(["import", kind, "", "--state-dir", str(state.path)]) == 2
        err = capsys.readouterr().err
        assert err == ("backscroll: the path to import is empty: give a folder or a transcript "
                       "file\n")
    assert state.agents() == []


def test_sync_says_what_reading_sessions_json_and_a_taken_key_say(state: StateDir) -> None:
    """The notes an import gives: keys of another agent re-keyed to this one, and a key that
    already names another transcript's session (kept apart as ``<key>:import-<id>``)."""
    folder = folders(Path.home())["openclaw"].parent.parent / "work" / "sessions"
    first, second = "1a1a1a1a-1111-4222-8333-444455556666", "2b2b2b2b-1111-4222-8333-444455556666"
    store = folder / "sessions.json"
    write_lines(folder / f"{first}.jsonl", openclaw_lines(first, "the first"))
    store.write_text(json.dumps({"agent:main:main": {"sessionId": first}}))
    report = sync_sources(state)
    assert f"{folder}: keys of agent main stored as agent work" in report.notes
    write_lines(folder / f"{second}.jsonl", openclaw_lines(second, "the second"))
    store.write_text(json.dumps({"agent:main:main": {"sessionId": second}}))  # a new session
    report = sync_sources(state)
    assert ("agent:work:main: that key already names another transcript's session; this one "
            f"is stored as agent:work:main:import-{second}") in report.notes
    with state.open("work") as db:
        assert db.session_key_of(second) == f"agent:work:main:import-{second}"


@pytest.fixture
def bare_db(pg_cluster):
    """A database with no backscroll schema (``db init`` grants the roles on it)."""
    from backscroll.core.storage.postgres import driver

    name = pg_cluster.new_database()
    yield pg_cluster.url(name)
    driver.close_pools(pg_cluster.url(name))
    pg_cluster.drop_database(name)


def test_a_readers_sync_is_refused_with_exit_3(pg_cluster, bare_db: str, tmp_path: Path,
                                               capsys) -> None:
    """docs/postgres.md: a read-only role that runs ``sync`` gets one sentence, exit 3 (it
    was one problem per agent and exit 0 when its agents were not on the server yet)."""
    from backscroll.core.storage.postgres import schema

    from .test_postgres import login_role, one_sentence

    empty_db = bare_db
    assert main(["db", "init", "--url", empty_db]) == 0
    good_files(Path.home())
    database = empty_db.split("@/")[1].split("?")[0]
    reader, password = login_role(pg_cluster, schema.READER_ROLE)
    reader_url = pg_cluster.url(database, reader, password)
    capsys.readouterr()
    with pytest.raises(Forbidden):
        sync_sources(StateDir(tmp_path / "state", database_url=reader_url))
    code = main(["sync", "--state-dir", str(tmp_path / "state"), "--database", reader_url])
    err = capsys.readouterr().err
    assert code == Forbidden.exit_code and one_sentence(err) and password not in err
    assert "may not do this" in err
    assert sync_sources(StateDir(tmp_path / "state", database_url=empty_db)).events > 0
