"""A big OpenClaw import reads its transcripts in a helper process (importers/readahead.py):
what it stores and reports is what reading them here gives, whatever happens to the helper."""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing
from functools import partial
from pathlib import Path

import pytest

from backscroll.core import helper_process
from backscroll.core.importers import openclaw, readahead
from backscroll.core.importers.openclaw import import_openclaw, read_transcript
from backscroll.core.state import StateDir

from .events import header, lines, msg


@pytest.fixture
def folder(tmp_path: Path, data_dir: Path) -> Path:
    """Real transcripts and their store, with the files an import must skip or report."""
    folder = tmp_path / "home" / "main" / "sessions"
    shutil.copytree(data_dir / "openclaw" / "chairong", folder)
    for file in folder.iterdir():
        file.chmod(0o644)
    real = sorted(folder.glob("*.jsonl"))[0]
    (folder / "broken.jsonl").write_text(
        "\n".join(lines(header("broken"), msg("b1", None, "user", "a broken otter")))
        + '\n{"type": "message", "id": \nnot json at all\n' + "x" * 10 + "\n"
    )
    (folder / "binary.jsonl").write_bytes(bytes(range(256)) * 40)
    (folder / "empty.jsonl").write_text("\n\n")
    (folder / "other-tool.jsonl").write_text(json.dumps({"type": "user", "uuid": "u1"}) + "\n")
    shutil.copy(real, folder / f"{real.stem}.jsonl.reset.2026-01-01T00-00-00.000Z")
    outside = tmp_path / "private.jsonl"
    outside.write_text("\n".join(lines(header("private"), msg("p1", None, "user", "diary"))))
    os.symlink(outside, folder / "private.jsonl")
    return folder


def stored(state: StateDir) -> dict[str, list]:
    events = {}
    for agent in state.agents():
        with state.open(agent) as db:
            events.update({s.key: db.events(s.pk) for s in db.sessions()})
    assert events
    return events


def imported(tmp_path: Path, name: str, folder: Path, read_ahead: bool = True
             ) -> tuple[dict, list, list, dict]:
    state = StateDir(tmp_path / name)
    report = import_openclaw(state, folder.parent.parent, read_ahead=read_ahead)
    return report.as_json(), report.keys, report.notes, stored(state)


def test_the_helper_reads_what_reading_here_reads(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = imported(tmp_path, "here", folder, read_ahead=False)
    assert here[0]["skipped"] and here[2], "the fixture has lines to skip and files to note"
    assert any("private.jsonl: a link to" in note for note in here[2])

    monkeypatch.setattr(readahead, "READ_AHEAD_MIN_BYTES", 0)
    monkeypatch.setattr(readahead, "CHUNK_BYTES", 1)  # a chunk per file: many in flight
    monkeypatch.setattr(helper_process, "_usable_cpus", lambda: 2)

    def not_here(*args, **kwargs):
        raise AssertionError("read in the writer's process")

    monkeypatch.setattr(openclaw, "read_events", not_here)  # the spawned helper has its own
    assert imported(tmp_path, "helper", folder) == here
    with pytest.raises(AssertionError, match="writer's process"):  # a library call's default
        import_openclaw(StateDir(tmp_path / "library"), folder.parent.parent)


class FakePool:
    """A helper that fails the way a real one can: refuses work, or dies with work queued."""

    def __init__(self, refuse_after: int | None = None, die_at: int | None = None) -> None:
        self.submitted = 0
        self.refuse_after, self.die_at = refuse_after, die_at
        self.shut = False

    def submit(self, fn, *args) -> Future:
        if self.refuse_after is not None and self.submitted >= self.refuse_after:
            raise RuntimeError("cannot schedule new futures after shutdown")
        self.submitted += 1
        future: Future = Future()
        if self.die_at is not None and self.submitted >= self.die_at:
            future.set_exception(BrokenProcessPool("a child process terminated abruptly"))
        else:
            future.set_result(fn(*args))
        return future

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        self.shut = True


@pytest.mark.parametrize("make", [lambda: FakePool(refuse_after=0), lambda: FakePool(refuse_after=2),
                                  lambda: FakePool(die_at=1), lambda: FakePool(die_at=3)],
                         ids=["cannot-start", "refuses-later", "dies-at-once", "dies-later"])
def test_a_helper_that_fails_leaves_the_reads_to_this_process(
    make, folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = imported(tmp_path, "here", folder, read_ahead=False)
    pool = make()
    monkeypatch.setattr(readahead, "READ_AHEAD_MIN_BYTES", 0)
    monkeypatch.setattr(readahead, "CHUNK_BYTES", 1)
    monkeypatch.setattr(readahead, "start_helper", lambda: pool)
    assert imported(tmp_path, "failing", folder) == here
    assert pool.shut


def test_a_big_file_is_read_here_in_its_turn(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = imported(tmp_path, "here", folder, read_ahead=False)
    pool = FakePool()
    sent: list[list[Path]] = []
    submit = pool.submit
    pool.submit = lambda fn, read, chunk: sent.append(chunk) or submit(fn, read, chunk)
    files = sorted(f for f in folder.iterdir() if f.name != "sessions.json")
    big = max(files, key=lambda f: f.stat().st_size)
    monkeypatch.setattr(readahead, "READ_AHEAD_MIN_BYTES", 0)
    monkeypatch.setattr(readahead, "READ_HERE_BYTES", big.stat().st_size)
    monkeypatch.setattr(readahead, "start_helper", lambda: pool)
    assert imported(tmp_path, "big", folder) == here
    assert sent and big.name not in {f.name for chunk in sent for f in chunk}


def test_stopping_early_stops_the_helper(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pool = FakePool()
    monkeypatch.setattr(readahead, "READ_AHEAD_MIN_BYTES", 0)
    monkeypatch.setattr(readahead, "CHUNK_BYTES", 1)
    monkeypatch.setattr(readahead, "start_helper", lambda: pool)
    files = sorted(folder.glob("*.jsonl"))
    with closing(readahead.read_ahead(files, partial(read_transcript, folder))) as reads:
        file, read = next(reads)
        assert file == files[0] and read.lines
        assert pool.submitted == readahead.CHUNKS_AHEAD  # read ahead, but no further
    assert pool.shut


def test_small_folders_are_read_here(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readahead, "start_helper", lambda: pytest.fail("a helper for a small folder"))
    files = sorted(folder.glob("*.jsonl"))
    reads = list(readahead.read_ahead(files, partial(read_transcript, folder)))
    assert [file for file, _ in reads] == files
    assert sum(read.lines is not None for _, read in reads) == len(files) - 1  # not the link


def test_chunks_keep_the_order_and_hold_about_chunk_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [tmp_path / f"{n}.jsonl" for n in range(9)]
    monkeypatch.setattr(readahead, "CHUNK_BYTES", 3)
    monkeypatch.setattr(readahead, "READ_HERE_BYTES", 8)
    chunks = readahead._chunks(files, [5, 1, 1, 1, 9, 0, 2, 2, 8])
    assert [([files.index(f) for f in chunk], here) for chunk, here in chunks] == [
        ([0], False), ([1, 2, 3], False), ([4], True), ([5, 6], False), ([7], False), ([8], True)]


def test_an_entry_without_a_session_id_is_kept_beside_an_empty_transcript(
    folder: Path, tmp_path: Path
) -> None:
    store = json.loads((folder / "sessions.json").read_text())
    agent = next(iter(store)).split(":")[1]
    store[f"agent:{agent}:nosid"] = {"label": "no transcript named"}
    (folder / "sessions.json").write_text(json.dumps(store))
    state = StateDir(tmp_path / "state")
    report = import_openclaw(state, folder.parent.parent)
    assert any("empty.jsonl: no events in it" in note for note in report.notes)
    assert f"agent:{agent}:nosid" in stored(state)
    assert f"agent:{agent}:nosid: no sessionId, so no transcript; kept without messages" in report.notes


@pytest.mark.backends
def test_import_session_reads_no_more_of_an_event_than_as_imported_keeps(
    state: StateDir, data_dir: Path
) -> None:
    """Both backends: what the helper sends back (``as_imported``) stores what whole events
    store, the header's cwd included; nothing downstream of the import reads more."""
    from backscroll.core.importers.common import ImportReport
    from backscroll.core.reconcile import reconcile_all
    from backscroll.core.storage import SessionFilter, SessionMeta
    from backscroll.core.storage.stored import as_imported

    file = max((data_dir / "openclaw" / "chairong").glob("*.jsonl"), key=lambda f: f.stat().st_size)
    lines, events, _header = openclaw.read_events(file, ImportReport())
    header = dict(events[0], cwd="/home/someone/project")
    lines[0], events[0] = json.dumps(header), header
    assert events[0]["type"] == "session" and len(events) > 10
    for agent, parsed in (("whole", events), ("slim", [as_imported(e) for e in events])):
        with state.open(agent, write=True) as db:
            meta = SessionMeta(f"agent:{agent}:main", session_id=agent, created_at=1, updated_at=2)
            db.import_session(meta, lines, parsed)
    reconcile_all(state)
    rows = {}
    for agent in ("whole", "slim"):
        with state.open(agent) as db:
            [session] = db.session_cards(SessionFilter([], exclude=True))
            rows[agent] = (session._replace(pk=0, key="", session_id=""), db.events(session.pk))
    assert rows["whole"][0].cwd == "/home/someone/project" and rows["whole"][0].title
    assert rows["slim"] == rows["whole"]
