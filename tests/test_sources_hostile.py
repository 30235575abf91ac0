"""``sync``, ``watch`` and the browser's follow against hostile files in a source folder
(issue 22, items 3-5): data that stops one file, files too big to hold, FIFOs. Each is one
sentence naming the file; the files sorted after it, in every source, are taken in."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

from backscroll.core import bounds
from backscroll.core.importers.claude_code import import_claude_code
from backscroll.core.importers.openclaw import read_store
from backscroll.core.reconcile import reconcile_all
from backscroll.core.sources import reading as reading_module
from backscroll.core.sources import sync as sync_module
from backscroll.core.sources import sync_sources
from backscroll.core.sources.detect import Source
from backscroll.core.sources.sync import SyncReport
from backscroll.core.sources.watch import follow_sources
from backscroll.core.state import StateDir
from backscroll.tui.cli import main

from .fakehome import append, claude_user, hits, stored
from .hostilehome import (
    CC_GOOD,
    WORDS,
    CountingHandle,
    claude_record,
    folders,
    good_files,
    no_hang,
    poison_files,
)


def _found(state: StateDir) -> dict[str, list[str]]:
    reconcile_all(state)
    return {kind: [key for key, _ in hits(state, word)] for kind, word in WORDS.items()}


def _all_good(found: dict[str, list[str]]) -> bool:
    return all(len(keys) == 1 for keys in found.values())


@pytest.mark.backends
def test_poison_files_are_one_sentence_each_and_every_other_file_syncs(
        state: StateDir, monkeypatch, capsys) -> None:
    home = Path.home()
    poison = poison_files(home)
    good = good_files(home)
    report = sync_sources(state)
    assert len(report.problems) == len(poison), report.problems
    for path, problem in zip(sorted(poison, key=str), sorted(report.problems)):
        assert problem.startswith(f"{path}: ") and "\n" not in problem
        assert problem.endswith("not taken in (read again when it changes)")
    assert any("TypeError" in p for p in report.problems)  # the leafUuid list
    assert _all_good(_found(state))
    again = sync_sources(state)  # said once: the position is kept
    assert (again.problems, again.read, again.events) == ([], 0, 0)
    append(good["claude-code"], claude_user(good["claude-code"], "cc-good-2", "the ibexmarble"))
    later = sync_sources(state)
    assert (later.problems, later.events) == ([], 1)
    assert len(hits(state, "ibexmarble")) == 1
    (poison[0]).write_text(poison[0].read_text() + "\n")  # changed: read (and said) again
    monkeypatch.setattr("backscroll.tui.cli.sources.start_background", lambda *a, **k: None)
    assert main(["sync", "--state-dir", str(state.path)]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(poison[0]) in err and "Traceback" not in err


def test_watch_and_the_browsers_follow_go_on_past_poison_files(state: StateDir) -> None:
    """``follow_sources`` (``watch`` and the browser's live follow): its first sync reports
    the poison files and takes in the good ones, and it keeps following."""
    poison = poison_files(Path.home())
    good_files(Path.home())
    reports: list[SyncReport] = []
    stop = threading.Event()

    def synced(report: SyncReport) -> None:
        reports.append(report)
        stop.set()

    follow_sources(state, synced, stop, polling=True)
    assert len(reports) == 1
    assert len(reports[0].problems) == len(poison) and reports[0].events > 0
    assert _all_good(_found(state))


def test_a_fifo_under_a_transcripts_name_is_named_and_never_waited_for(state: StateDir) -> None:
    good_files(Path.home())
    fifo = folders(Path.home())["claude-code"] / "a-fifo.jsonl"
    os.mkfifo(fifo)
    with no_hang():
        report = sync_sources(state)
    assert report.problems == [f"{fifo}: a FIFO, not a regular file; not read"]
    assert _all_good(_found(state))


@pytest.mark.parametrize("kind", ["claude-code", "codex", "openclaw"])
def test_a_fifo_swapped_in_after_the_scan_is_one_sentence_no_hang(state: StateDir, monkeypatch,
                                                                  kind: str) -> None:
    good = good_files(Path.home())
    swapped = good[kind]
    real_scan = sync_module.scan_source

    def scan_then_swap(source):  # the file is replaced between the walk and the read
        scan = real_scan(source)
        if source.kind == kind and not swapped.is_fifo():
            swapped.unlink()
            os.mkfifo(swapped)
        return scan

    monkeypatch.setattr(sync_module, "scan_source", scan_then_swap)
    with no_hang():
        report = sync_sources(state)
    assert report.problems == [f"{swapped}: cannot be read (a FIFO, not a regular file)"]
    found = _found(state)
    assert found[kind] == [] and all(found[k] for k in found if k != kind)


def test_import_and_sessions_json_never_wait_on_a_fifo(state: StateDir, tmp_path: Path,
                                                       monkeypatch) -> None:
    """``backscroll import`` opens its files the same way: a FIFO swapped in after the
    listing, or in place of ``sessions.json``, is one sentence."""
    good = good_files(tmp_path)["claude-code"]
    fifo = good.with_name("b-fifo.jsonl")
    os.mkfifo(fifo)
    monkeypatch.setattr("backscroll.core.importers.claude_code.importer.files_under",
                        lambda *args, **kwargs: [fifo, good])
    with no_hang():
        report = import_claude_code(state, good.parent)
    assert report.skipped == [f"{fifo}: cannot read (a FIFO, not a regular file)"]
    assert report.sessions == 1
    store = tmp_path / "sessions.json"
    os.mkfifo(store)
    monkeypatch.setattr(Path, "is_file", lambda self: True)  # as if swapped after the check
    with no_hang():
        found = read_store(store, report)
    assert found == {} and report.skipped[-1].startswith(
        f"{store}: unreadable session store (a FIFO, not a regular file)")


# ---------------------------------------------------------------- bounded reads (item 4)


def _count_reads(monkeypatch) -> list[int]:
    reads: list[int] = []
    real = reading_module.open_regular
    monkeypatch.setattr(reading_module, "open_regular",
                        lambda *a, **k: CountingHandle(real(*a, **k), reads))
    return reads


_HOSTILE_NAMES = {"claude-code": "a-{}.jsonl", "codex": "rollout-a-{}.jsonl",
                  "openclaw": "0a-{}.jsonl"}


def _hostile(kind: str, what: str) -> Path:
    good_files(Path.home())
    return folders(Path.home())[kind] / _HOSTILE_NAMES[kind].format(what)


@pytest.mark.parametrize("kind", ["claude-code", "codex", "openclaw"])
def test_a_sparse_64_gib_file_is_named_once_never_held_or_read_whole(
        state: StateDir, monkeypatch, kind: str) -> None:
    """Named as what it is (no data: a problem, not "not a transcript"), once."""
    sparse = _hostile(kind, "sparse")
    subprocess.run(["truncate", "-s", "64G", str(sparse)], check=True)
    monkeypatch.setattr(bounds, "MAX_LINE_BYTES", 1024 * 1024)  # the code path, cheaper
    reads = _count_reads(monkeypatch)
    report = sync_sources(state)
    assert report.problems == [f"{sparse}: holds no data, only NUL bytes (64.0 GB: a sparse or "
                               "zero-filled file); skipped"] and report.read == 4
    assert not any(str(sparse) in note for note in report.notes)
    assert max(reads) <= bounds.MAX_LINE_BYTES + 1  # nothing held beyond one line's bound
    assert sum(reads) < 64 * 1024 * 1024  # its holes were skipped, not read
    assert _all_good(_found(state))
    assert sync_sources(state).problems == []  # unchanged: not read, not said again
    reads.clear()
    with sparse.open("ab") as handle:
        handle.write(b"x")
    again = sync_sources(state)
    assert (again.problems, again.notes) == ([], [])  # not said again
    assert sum(reads) < 16 * 1024  # read on from where it stopped, not from the start


@pytest.mark.parametrize("kind", ["claude-code", "codex", "openclaw"])
@pytest.mark.parametrize("ended", [False, True])
def test_a_first_line_over_the_bound_is_named_as_such_once(state: StateDir, monkeypatch,
                                                          kind: str, ended: bool) -> None:
    """A file whose first line is over the bound, still being written or complete: one
    problem naming the line (not "not a transcript", not silence), not said again while it
    grows inside that line or does not change, and the line never read again."""
    big = _hostile(kind, "bigline")
    big.write_bytes(b'{"type":"user","message":{"content":"' + b"x" * (3 * 1024 * 1024)
                    + (b'"}}\n' if ended else b""))
    monkeypatch.setattr(bounds, "MAX_LINE_BYTES", 1024 * 1024)
    reads = _count_reads(monkeypatch)
    report = sync_sources(state)
    assert report.problems == [f"{big}:1: line is 3.0 MB; the limit is 32.0 MB"]
    assert not any(str(big) in note for note in report.notes)
    assert max(reads) <= bounds.MAX_LINE_BYTES + 1
    assert _all_good(_found(state))
    assert sync_sources(state).problems == []  # unchanged: not read, not said again
    if ended and kind == "codex":
        return  # (a rollout of no record keeps no carry: grown after it, it is read again)
    for grown in (b"y", b"z"):  # inside the line (or a new one being written after it)
        reads.clear()
        append(big, raw=grown)
        again = sync_sources(state)
        assert (again.problems, again.notes) == ([], [])
        assert sum(reads) < 16 * 1024  # read on from where it stopped


def test_a_first_line_still_being_written_waits_without_a_word(state: StateDir) -> None:
    """A Claude Code file with no complete line yet is not "not a transcript": it waits."""
    half = _hostile("claude-code", "half")
    half.write_bytes(b'{"parentUuid": null, "type": "us')
    report = sync_sources(state)
    assert (report.problems, report.notes) == ([], [])
    half.write_text(json.dumps(claude_record(CC_GOOD.replace("3", "4"), "cc-half-1",
                                             "the capybaraquill")) + "\n")
    later = sync_sources(state)
    assert (later.problems, later.notes, later.messages) == ([], [], 1)


def test_an_endless_line_is_named_once_and_its_position_kept(state: StateDir,
                                                             monkeypatch) -> None:
    """The 1.5 GB line without a line break, scaled down: named once, never held, not read
    again after one more byte, and the lines after its end are taken in."""
    good = good_files(Path.home())["claude-code"]
    sync_sources(state)
    monkeypatch.setattr(bounds, "MAX_LINE_BYTES", 1024 * 1024)
    with good.open("ab") as handle:
        handle.write(b'{"junk": "' + b"x" * (3 * 1024 * 1024))
    reads = _count_reads(monkeypatch)
    report = sync_sources(state)
    assert report.problems == [f"{good}:2: line is 3.0 MB; the limit is 32.0 MB"]
    assert max(reads) <= bounds.MAX_LINE_BYTES + 1
    reads.clear()
    append(good, raw=b"y")
    assert sync_sources(state).problems == []
    assert sum(reads) < 16 * 1024
    append(good, raw=b"\n")  # the line ends at last
    append(good, claude_record(CC_GOOD, "cc-after", "the wombatcompass", parentUuid="cc-good-1"))
    later = sync_sources(state)
    assert later.problems == [] and later.events == 1
    reconcile_all(state)
    assert [m for _, m in hits(state, "wombatcompass")] == ["cc-after"]


@pytest.mark.parametrize("body", [b"\0", b"{}\n"])
def test_a_zstd_bomb_is_streamed_and_cut(state: StateDir, monkeypatch, body: bytes) -> None:
    zstandard = pytest.importorskip("zstandard")
    good_files(Path.home())
    bomb = folders(Path.home())["codex"] / "rollout-a-bomb.jsonl.zst"
    with bomb.open("wb") as raw, zstandard.ZstdCompressor(level=19).stream_writer(raw) as out:
        block = (body * (1 << 20))[: 1 << 20]
        for _ in range(64):
            out.write(block)
    assert bomb.stat().st_size < 64 * 1024  # 64 MB once decompressed
    monkeypatch.setattr(bounds, "MAX_EXPANDED_BYTES", 4 * 1024 * 1024)
    monkeypatch.setattr(bounds, "MAX_EXPANDED_LINES", 1000)
    monkeypatch.setattr(bounds, "MAX_LINE_BYTES", 1024 * 1024)
    expanded: list[int] = []
    real_read = reading_module._Capped.readinto

    def counted(self, buffer):
        expanded.append(real_read(self, buffer))
        return expanded[-1]

    monkeypatch.setattr(reading_module._Capped, "readinto", counted)
    report = sync_sources(state)
    assert report.problems[0] == (f"{bomb}: expands to more than 4 MB or 1,000 lines "
                                  "decompressed; the rest of it is not read")
    # one sentence names it: a line over the bound inside what was read is not named again
    assert report.problems[1:] == []
    assert sum(expanded) <= 4 * 1024 * 1024  # decompressed as a stream, up to the cap
    assert _all_good(_found(state))


@pytest.mark.parametrize("kind", ["claude-code", "codex", "openclaw"])
def test_a_read_holds_a_bounded_number_of_lines_and_reads_on(
        kind: str, tmp_path: Path, data_dir: Path, monkeypatch) -> None:
    """A file of millions of tiny lines was held whole (a tuple per line): a read now stops at
    ``MAX_READ_LINES`` (7 here) and the sync reads on from there, the result the same as one
    import of the file."""
    from .test_sources_sync import GROWING

    files, into, importer = GROWING[kind]
    folder = tmp_path / "source"
    for name in files:
        target = folder / into / Path(name).name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((data_dir / name).read_bytes())
    monkeypatch.setattr(bounds, "MAX_READ_LINES", 7)
    held: list[int] = []
    real = reading_module._complete_lines

    def counted(*args):
        found = real(*args)
        held.append(len(found[0]))
        return found

    monkeypatch.setattr(reading_module, "_complete_lines", counted)
    live, once = StateDir(tmp_path / "live"), StateDir(tmp_path / "once")
    report = sync_sources(live, [Source(kind, folder)])
    assert report.problems == [] and held[0] == 7 and len(held) > len(files)
    if kind != "claude-code":  # (a Claude Code piece may ask for the whole file: it gets it)
        assert max(held) <= 7
    again = sync_sources(live, [Source(kind, folder)])
    assert (again.read, again.events) == (0, 0)  # all of it, in one sync
    importer(once, folder)
    reconcile_all(live)
    reconcile_all(once)
    assert stored(live) == stored(once)


def test_a_file_of_tiny_junk_lines_is_not_held_or_read_again(state: StateDir,
                                                             monkeypatch) -> None:
    good_files(Path.home())
    junk = folders(Path.home())["claude-code"] / "a-junk.jsonl"
    junk.write_bytes(b"{}\n" * 5000)
    monkeypatch.setattr(bounds, "MAX_READ_LINES", 100)
    reads = _count_reads(monkeypatch)
    report = sync_sources(state)
    assert report.problems == [] and f"{junk}: not a Claude Code transcript; skipped" in report.notes
    assert sum(reads) < 100 * 3 + 16 * 1024  # one read of at most 100 lines, and the hashes
    assert _all_good(_found(state))
    reads.clear()
    assert sync_sources(state).read == 0 and reads == []  # waits until it changes
