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


def imported(tmp_path: Path, name: str, folder: Path) -> tuple[dict, list, list, dict]:
    state = StateDir(tmp_path / name)
    report = import_openclaw(state, folder.parent.parent)
    return report.as_json(), report.keys, report.notes, stored(state)


def test_the_helper_reads_what_reading_here_reads(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = imported(tmp_path, "here", folder)
    assert here[0]["skipped"] and here[2], "the fixture has lines to skip and files to note"
    assert any("private.jsonl: a link to" in note for note in here[2])

    monkeypatch.setattr(readahead, "READ_AHEAD_MIN_BYTES", 0)
    monkeypatch.setattr(readahead, "CHUNK_BYTES", 1)  # a chunk per file: many in flight
    monkeypatch.setattr(readahead.os, "cpu_count", lambda: 2)

    def not_here(*args, **kwargs):
        raise AssertionError("read in the writer's process")

    monkeypatch.setattr(openclaw, "read_events", not_here)  # the spawned helper has its own
    assert imported(tmp_path, "helper", folder) == here


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


@pytest.mark.parametrize("pool", [FakePool(refuse_after=0), FakePool(refuse_after=2),
                                  FakePool(die_at=1), FakePool(die_at=3)],
                         ids=["cannot-start", "refuses-later", "dies-at-once", "dies-later"])
def test_a_helper_that_fails_leaves_the_reads_to_this_process(
    pool: FakePool, folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = imported(tmp_path, "here", folder)
    monkeypatch.setattr(readahead, "READ_AHEAD_MIN_BYTES", 0)
    monkeypatch.setattr(readahead, "CHUNK_BYTES", 1)
    monkeypatch.setattr(readahead, "_helper", lambda: pool)
    assert imported(tmp_path, "failing", folder) == here
    assert pool.shut


def test_stopping_early_stops_the_helper(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pool = FakePool()
    monkeypatch.setattr(readahead, "READ_AHEAD_MIN_BYTES", 0)
    monkeypatch.setattr(readahead, "CHUNK_BYTES", 1)
    monkeypatch.setattr(readahead, "_helper", lambda: pool)
    files = sorted(folder.glob("*.jsonl"))
    with closing(readahead.read_ahead(files, partial(read_transcript, folder))) as reads:
        file, read = next(reads)
        assert file == files[0] and read.lines
        assert pool.submitted == readahead.CHUNKS_AHEAD  # read ahead, but no further
    assert pool.shut


def test_small_folders_are_read_here(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readahead, "_helper", lambda: pytest.fail("a helper for a small folder"))
    files = sorted(folder.glob("*.jsonl"))
    reads = list(readahead.read_ahead(files, partial(read_transcript, folder)))
    assert [file for file, _ in reads] == files
    assert [read for _, read in reads] == [read_transcript(folder, file) for file in files]


def test_chunks_keep_the_order_and_hold_about_chunk_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [tmp_path / f"{n}.jsonl" for n in range(7)]
    monkeypatch.setattr(readahead, "CHUNK_BYTES", 3)
    chunks = readahead._chunks(files, [5, 1, 1, 1, 9, 0, 2])
    assert [[files.index(f) for f in chunk] for chunk in chunks] == [[0], [1, 2, 3], [4], [5, 6]]
