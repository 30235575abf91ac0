"""``sync``: a fake home with the three layouts (real transcripts from ``shared/data``), taken
in once, then grown, rewritten, replaced, removed and broken in the ways the issue lists."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core.importers.claude_code import import_claude_code
from backscroll.core.importers.codex import import_codex
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.reconcile import reconcile_all
from backscroll.core.sources import reading as reading_module
from backscroll.core.sources import sync_sources
from backscroll.core.sources.detect import Source
from backscroll.core.state import StateDir
from backscroll.core.verify import verify_state

from .fakehome import (
    CC_SHORT,
    CODEX_KEY,
    OPENCLAW_SESSION,
    ROLLOUT,
    append,
    build_home,
    claude_user,
    codex_user,
    hits,
    openclaw_user,
    stored,
    sync,
)

pytestmark = pytest.mark.backends  # storage behaviour: on both backends

CC_SHORT_KEY = f"agent:claude-code:claude-code:{CC_SHORT}"


@pytest.fixture
def home(data_dir: Path) -> dict[str, Path]:
    return build_home(Path.home(), data_dir)


@pytest.fixture
def synced(state: StateDir, home: dict[str, Path]) -> StateDir:
    report = sync_sources(state)
    assert report.problems == []
    reconcile_all(state)
    return state



def test_first_sync_takes_in_all_three_layouts(state: StateDir, home: dict[str, Path]) -> None:
    report = sync_sources(state)
    assert report.sources == 3 and report.files == 9 and report.read == 9
    assert report.problems == []
    assert state.agents() == ["chairong", "claude-code", "codex", "main"]
    assert report.pending == {"chairong", "claude-code", "codex", "main"}  # imported: indexed later
    keys = stored(state)
    assert CC_SHORT_KEY in keys and CODEX_KEY in keys
    assert any(k.startswith("agent:chairong:") for k in keys)
    reconcile_all(state)
    assert verify_state(state).ok
    again = sync_sources(state)
    assert (again.read, again.events, again.pending) == (0, 0, set())


def test_a_sync_that_finds_nothing_new_reads_nothing(synced: StateDir, monkeypatch) -> None:
    def no_reading(*args, **kwargs):
        raise AssertionError("an unchanged file was read")

    monkeypatch.setattr("backscroll.core.sources.sync.read_new", no_reading)
    report = sync_sources(synced)
    assert (report.files, report.read, report.events) == (9, 0, 0)


def test_appended_lines_are_found_exactly_once(synced: StateDir, home: dict[str, Path]) -> None:
    append(home["short"], claude_user(home["short"], "cc-new-1", "the flamingoledger totals"))
    append(home["rollout"], codex_user("where is the pelicanregister"))
    append(home["openclaw"], openclaw_user(home["openclaw"], "oc-new-1", "a quokkapinwheel"))
    report = sync_sources(synced)  # no reconciliation: appended lines are indexed at once
    assert (report.read, report.events, report.messages) == (3, 3, 3)
    assert report.pending == set()
    assert hits(synced, "flamingoledger") == [(CC_SHORT_KEY, "cc-new-1")]
    assert [k for k, _ in hits(synced, "pelicanregister")] == [CODEX_KEY]
    assert [m for _, m in hits(synced, "quokkapinwheel")] == ["oc-new-1"]
    for _ in range(2):
        assert sync_sources(synced).events == 0
    assert len(hits(synced, "flamingoledger")) == 1
    assert verify_state(synced).ok


def test_a_half_written_line_is_stored_once_completed(synced: StateDir,
                                                      home: dict[str, Path]) -> None:
    line = json.dumps(claude_user(home["short"], "cc-half", "a walrusanthem line")).encode()
    append(home["short"], raw=line[:37])
    report = sync_sources(synced)
    assert (report.read, report.events, report.problems) == (1, 0, [])
    assert hits(synced, "walrusanthem") == []
    append(home["short"], raw=line[37:] + b"\n")
    assert sync_sources(synced).events == 1
    assert hits(synced, "walrusanthem") == [(CC_SHORT_KEY, "cc-half")]
    assert sync_sources(synced).events == 0


def test_an_identical_copy_under_a_new_inode_adds_nothing(synced: StateDir,
                                                          home: dict[str, Path]) -> None:
    before = stored(synced)
    for name in ("short", "rollout", "openclaw"):
        path = home[name]
        copy = path.with_name(path.name + ".tmp")
        shutil.copy2(path, copy)
        os.replace(copy, path)  # how editors and sync tools replace a file
    report = sync(synced)
    assert report.read == 3 and report.events == 0 and report.problems == []
    assert stored(synced) == before
    assert verify_state(synced).ok


def test_a_transcript_rewritten_shorter_is_read_again_without_duplicates(
        synced: StateDir, home: dict[str, Path]) -> None:
    before = stored(synced)
    for name in ("short", "rollout", "openclaw"):
        lines = home[name].read_bytes().splitlines(keepends=True)
        home[name].write_bytes(b"".join(lines[: len(lines) // 2]))
    report = sync(synced)
    assert report.read == 3 and report.events == 0
    assert stored(synced) == before  # what the agent dropped stays
    append(home["short"], claude_user(home["short"], "cc-after", "the narwhalbudget"))
    assert sync(synced).events == 1
    assert hits(synced, "narwhalbudget") == [(CC_SHORT_KEY, "cc-after")]
    assert verify_state(synced).ok


def test_a_file_that_vanished_keeps_its_sessions(synced: StateDir, home: dict[str, Path]) -> None:
    before = stored(synced)
    home["rollout"].unlink()
    report = sync_sources(synced)
    assert report.gone == 1 and report.files == 8
    assert stored(synced) == before
    assert sync_sources(synced).gone == 0  # said once


def test_a_file_renamed_in_place_keeps_feeding_its_session(synced: StateDir,
                                                           home: dict[str, Path]) -> None:
    archive = home["openclaw"].with_name(f"{OPENCLAW_SESSION}.jsonl.reset.2026-06-01T10-00-00Z")
    home["openclaw"].rename(archive)  # what an OpenClaw /reset does
    append(archive, openclaw_user(archive, "oc-late", "an ibexcarousel"))
    report = sync_sources(synced)
    assert (report.read, report.events, report.gone) == (1, 1, 0)
    assert [m for _, m in hits(synced, "ibexcarousel")] == ["oc-late"]


def test_a_file_that_cannot_be_read_is_named_and_the_others_sync(
        synced: StateDir, home: dict[str, Path], monkeypatch) -> None:
    locked = home["rollout"]
    append(locked, codex_user("a lockedaway line"))
    append(home["short"], claude_user(home["short"], "cc-open", "an openfield line"))
    locked.chmod(0)
    real_open = reading_module.open_regular

    def denied(path: Path, *args, **kwargs):
        if path == locked:  # root reads a mode-0 file anyway: deny it the way a user meets it
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(reading_module, "open_regular", denied)
    report = sync_sources(synced)
    assert report.problems == [f"{locked}: cannot be read (Permission denied)"]
    assert report.events == 1 and hits(synced, "openfield")
    monkeypatch.setattr(reading_module, "open_regular", real_open)
    locked.chmod(0o644)
    recovered = sync_sources(synced)
    assert recovered.problems == [] and recovered.events == 1
    assert [k for k, _ in hits(synced, "lockedaway")] == [CODEX_KEY]


@pytest.mark.sqlite_only  # a broken file
def test_a_database_that_cannot_be_used_is_named_and_the_others_sync(
        state: StateDir, home: dict[str, Path]) -> None:
    broken = state.path / "agents" / "codex" / "sessions.sqlite"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"not a database at all" * 100)
    report = sync_sources(state)
    assert len(report.problems) == 1 and str(broken) in report.problems[0]
    assert "\n" not in report.problems[0]
    assert ", 1 problem: " in report.summary()  # not a plain "nothing new" when nothing was
    assert ", 1 problem" in sync_sources(state).summary()  # ... taken in this time either
    with state.open("claude-code") as db:
        assert db.session(CC_SHORT_KEY) is not None
    broken.unlink()
    assert sync_sources(state).problems == []
    assert CODEX_KEY in stored(state)


def test_binary_junk_appended_is_named_and_loses_nothing(synced: StateDir,
                                                         home: dict[str, Path]) -> None:
    record = json.dumps(claude_user(home["short"], "cc-junk", "after the yakgarland")).encode()
    append(home["short"], raw=b"\x00\x9f\xffjunk\n\x01\x02" + record + b"\n")
    report = sync_sources(synced)
    assert len(report.problems) == 2
    assert all(p.startswith(f"{home['short']}:") for p in report.problems)
    assert "not valid UTF-8" in report.problems[0]
    assert "junk before the record dropped" in report.problems[1]
    assert hits(synced, "yakgarland") == [(CC_SHORT_KEY, "cc-junk")]
    assert sync_sources(synced).problems == []


def test_a_file_truncated_while_it_is_read_is_read_again(synced: StateDir, home: dict[str, Path],
                                                         monkeypatch) -> None:
    append(home["rollout"], codex_user("the shrinkingviolet"))
    real_fstat = os.fstat

    def grown(fd: int) -> os.stat_result:  # the size seen, then the file is cut before the read
        st = real_fstat(fd)
        values = list(st)
        values[6] = st.st_size + 4096
        return os.stat_result(values)

    monkeypatch.setattr(reading_module.os, "fstat", grown)
    report = sync_sources(synced)
    assert report.problems == [f"{home['rollout']}: changed while being read; read again next sync"]
    assert report.events == 0
    monkeypatch.setattr(reading_module.os, "fstat", real_fstat)
    assert sync_sources(synced).events == 1
    assert [k for k, _ in hits(synced, "shrinkingviolet")] == [CODEX_KEY]


def test_a_crash_before_the_state_is_saved_stores_nothing(synced: StateDir, home: dict[str, Path],
                                                          monkeypatch) -> None:
    """The events and the file's new state are one transaction: if saving the state fails,
    the events are gone too, and the next sync stores them exactly once."""
    append(home["short"], claude_user(home["short"], "cc-crash", "the lemurtheorem"))

    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    with synced.open("claude-code", write=True) as db:
        writer = type(db)  # the backend's writer class
    with monkeypatch.context() as patched:
        patched.setattr(writer, "save_file_state", crash)
        with pytest.raises(KeyboardInterrupt):
            sync_sources(synced)
    assert hits(synced, "lemurtheorem") == []
    assert sync_sources(synced).events == 1
    assert hits(synced, "lemurtheorem") == [(CC_SHORT_KEY, "cc-crash")]


def test_not_a_transcript_and_bad_folders_are_one_line_each(state: StateDir,
                                                            home: dict[str, Path]) -> None:
    (home["project"] / "notes.jsonl").write_text('{"hello": "world"}\n')
    loop = home["project"] / "loop"
    loop.symlink_to(home["project"], target_is_directory=True)
    missing = Source("codex", Path.home() / "nowhere")
    a_file = Source("claude-code", home["short"])
    report = sync_sources(state, [*_defaults(), missing, a_file])
    assert f"{missing.path}: source folder does not exist" in report.problems
    assert f"{a_file.path}: source is not a folder" in report.problems
    assert f"{loop}: a symbolic link; links inside a source folder are not followed" in \
        report.notes
    assert f"{home['project'] / 'notes.jsonl'}: not a Claude Code transcript; skipped" in report.notes
    assert report.events > 0  # everything else was taken in


def test_a_source_inside_another_is_read_once(synced: StateDir, home: dict[str, Path]) -> None:
    inner = Source("claude-code", home["project"], origin="config")
    report = sync_sources(synced, [*_defaults(), inner])
    assert (report.files, report.read, report.events) == (9, 0, 0)
    assert sync_sources(synced, [inner, *_defaults()]).read == 0  # known whoever finds it
    append(home["short"], claude_user(home["short"], "cc-inner", "the okapiledger"))
    assert sync_sources(synced, [inner, *_defaults()]).events == 1
    append(home["short"], claude_user(home["short"], "cc-outer", "the okapiledger again"))
    assert sync_sources(synced).events == 1
    assert sorted(m for _, m in hits(synced, "okapiledger")) == ["cc-inner", "cc-outer"]


def test_new_sessions_and_links_are_picked_up(synced: StateDir, home: dict[str, Path]) -> None:
    """A new OpenClaw subagent (in sessions.json and its own file), a new Claude Code
    sub-agent file under subagents/."""
    store = json.loads(home["store"].read_text())
    child_id = "0f0f0f0f-1111-4222-8333-444455556666"
    store["agent:chairong:subagent:newkid"] = {"sessionId": child_id, "label": "new kid",
                                               "spawnedBy": "agent:chairong:main"}
    home["store"].write_text(json.dumps(store))
    child = home["store"].with_name(f"{child_id}.jsonl")
    append(child, {"type": "session", "version": 3, "id": child_id,
                   "timestamp": "2026-06-01T10:00:00.000Z"},
           {"type": "message", "id": "kid-1", "parentId": None,
            "timestamp": "2026-06-01T10:00:01.000Z",
            "message": {"role": "user", "content": "the kid asks about the gnuharbor"}})
    sub = home["project"] / CC_SHORT / "subagents" / "agent-a1b2c3.jsonl"
    sub.parent.mkdir(parents=True)
    record = claude_user(home["short"], "sub-1", "the subagent reads the tapirlog")
    append(sub, {**record, "isSidechain": True, "agentId": "a1b2c3", "parentUuid": None})
    report = sync(synced)
    assert report.problems == []
    assert hits(synced, "gnuharbor") == [("agent:chairong:subagent:newkid", "kid-1")]
    assert hits(synced, "tapirlog") == [("agent:claude-code:subagent:a1b2c3", "sub-1")]
    with synced.open("chairong") as db:
        assert db.session("agent:chairong:subagent:newkid").spawned_by == "agent:chairong:main"
    with synced.open("claude-code") as db:
        assert db.session("agent:claude-code:subagent:a1b2c3").spawned_by == CC_SHORT_KEY


def test_a_compressed_rollout_is_read_or_named(state: StateDir, home: dict[str, Path],
                                               monkeypatch) -> None:
    zstandard = pytest.importorskip("zstandard")
    rollout = home["rollout"]
    packed = rollout.with_name(ROLLOUT + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(rollout.read_bytes()))
    rollout.unlink()
    with monkeypatch.context() as patched:
        patched.setitem(sys.modules, "zstandard", None)  # as if it were not installed
        report = sync_sources(state, _defaults("codex"))
    assert report.problems == [
        f"{packed}: a zstd-compressed transcript; install backscroll[zstd] to read it"]
    report = sync(state)
    assert report.problems == [] and CODEX_KEY in stored(state)
    assert verify_state(state).ok


def _defaults(*kinds: str) -> list[Source]:
    from backscroll.core.sources import default_folders

    return [s for s in default_folders() if not kinds or s.kind in kinds]


# ---------------------------------------------------------------- growing, line by line

GROWING = {  # (source kind, files relative to the data dir, where they go, one-shot importer)
    "claude-code": (["claude-code/subagent.jsonl", "claude-code/tool_heavy.jsonl"], "p/",
                    import_claude_code),
    "codex": ([f"codex/{ROLLOUT}"], "2026/05/11/", import_codex),
    "openclaw": (["openclaw/chairong/sessions.json",
                  f"openclaw/chairong/{OPENCLAW_SESSION}.jsonl",
                  "openclaw/chairong/d91a5182-335e-426a-8fdf-36fa399fd52b.jsonl"],
                 "agents/chairong/sessions/", import_openclaw),
}


@pytest.mark.parametrize("kind", sorted(GROWING))
@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.floats(0, 1), min_size=1, max_size=5))
@pytest.mark.slow
def test_a_file_grown_in_any_pieces_equals_one_import(kind: str, cuts: list[float],
                                                      tmp_path_factory, data_dir: Path) -> None:
    """Written in pieces cut anywhere (mid-line too) and synced after each, a transcript ends
    up stored exactly as one import of the whole file stores it: the same entries (no
    repeats) and the same index rows."""
    files, into, importer = GROWING[kind]
    base = tmp_path_factory.mktemp(kind)
    folder = base / "source"
    texts = {}
    for name in files:
        target = folder / into / Path(name).name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"")
        texts[target] = (data_dir / name).read_bytes()
    live, once = StateDir(base / "live"), StateDir(base / "once")
    source = Source(kind, folder)
    for cut in [*sorted(cuts), 1.0]:
        for target, text in texts.items():
            if target.name == "sessions.json":
                target.write_bytes(text)
                continue
            end = int(len(text) * cut)
            with target.open("r+b") as handle:
                handle.seek(0, os.SEEK_END)
                handle.write(text[handle.tell():end])
        assert sync_sources(live, [source]).problems == []
    importer(once, folder)
    reconcile_all(live)
    reconcile_all(once)
    assert stored(live) == stored(once)
    assert verify_state(live).ok
