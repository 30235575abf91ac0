"""Private by default: every folder backscroll makes is 0700 and every file 0600, whatever the
umask; a looser folder or database is tightened (when it is backscroll's) or warned about, once."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from backscroll.core import file_modes
from backscroll.core.errors import StoreError, ValidationError
from backscroll.core.export import write_export
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.visibility import OPERATOR

from .events import header, lines, msg

# Every verb that creates something, in one process under the umask given.
EVERYTHING = r"""
import io, json, os, sys
from pathlib import Path
os.umask(int(sys.argv[1], 8))
root = Path(sys.argv[2])
from backscroll.core.demo import ensure_demo
from backscroll.core.export import write_export
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.ingest import append_events, delete_session
from backscroll.core.reconcile import reconcile_all
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.visibility import OPERATOR
state = StateDir(root / "state")
append_events(state, SessionMeta("agent:main:main"), sys.argv[3].splitlines())
append_events(state, SessionMeta("agent:main:gone"), sys.argv[3].splitlines()[:1])
import_openclaw(state, Path(sys.argv[4]), agent="imported")
reconcile_all(state)
delete_session(state, "agent:main:gone")
write_export(state, "agent:main:main", OPERATOR, root / "exports" / "main.md")
write_export(state, "agent:main:main", OPERATOR, root / "exports" / "main.json", "json")
ensure_demo(None, messages=40)
print("done")
"""


def modes(root: Path) -> dict[str, tuple[str, bool]]:
    """``relative path -> (mode, is a folder)`` of ``root`` and everything under it."""
    return {
        str(p.relative_to(root.parent)): (f"{stat.S_IMODE(p.lstat().st_mode):04o}", p.is_dir())
        for p in [root, *sorted(root.rglob("*"))]
    }


@pytest.mark.parametrize("umask", ["000", "022", "077", "277"])
def test_every_file_backscroll_creates_is_private_whatever_the_umask(
    umask: str, tmp_path: Path, data_dir: Path
) -> None:
    (tmp_path / "exports").mkdir()
    events = "\n".join(lines(header("s1"), msg("a", None, "user", "hello heron"),
                             msg("b", "a", "assistant", "hi")))
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    run = subprocess.run(
        [sys.executable, "-c", EVERYTHING, umask, str(tmp_path), events,
         str(data_dir / "openclaw" / "chairong")],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert run.returncode == 0 and run.stdout.strip() == "done", run.stderr
    assert "warning" not in run.stderr  # nothing was loose: nothing to say
    created = {**modes(tmp_path / "state"), **modes(tmp_path / "cache" / "backscroll")}
    created.update({k: v for k, v in modes(tmp_path / "exports").items() if k != "exports"})
    files = {k for k, (_mode, folder) in created.items() if not folder}
    assert {"state/agents/main/sessions.sqlite", "state/agents/main/sessions.sqlite-wal",
            "state/agents/main/sessions.sqlite-shm", "state/agents/imported/sessions.sqlite",
            "exports/main.md", "exports/main.json"} <= files
    assert any(k.startswith("backscroll/demo-") and k.endswith("sessions.sqlite") for k in files)
    assert any(k.endswith(".demo-complete") for k in files)
    wrong = {k: m for k, (m, folder) in created.items() if m != ("0700" if folder else "0600")}
    assert wrong == {}

@pytest.fixture
def warnings() -> list[str]:
    said: list[str] = []
    file_modes.set_warning_sink(said.append)
    file_modes._checked.clear()
    yield said
    file_modes.set_warning_sink(None)
    file_modes._checked.clear()


def test_loose_folders_and_files_are_warned_about_once_and_tightened_by_writers(
    state: StateDir, warnings: list[str]
) -> None:
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main"), json.dumps(msg("a", None, "user", "heron")))
    db_file = state.db_path("main")
    keep = sqlite3.connect(db_file)  # keeps the WAL file there
    keep.execute("SELECT count(*) FROM sessions").fetchone()
    loose = {state.path: 0o755, state.path / "agents": 0o755, db_file.parent: 0o750,
             db_file: 0o644, db_file.with_name("sessions.sqlite-wal"): 0o644}  # SQLite copies the db mode
    for path, mode in loose.items():
        os.chmod(path, mode)
    file_modes._checked.clear()

    for _ in range(3):  # a reader: says so once per path, changes nothing
        assert len(sessions_search(state, SearchRequest("heron"), OPERATOR).results) == 1
    assert len(warnings) == len(loose)
    assert all(len([w for w in warnings if w.startswith(f"{p} ")]) == 1 for p in loose)
    assert f"chmod 700 {state.path}" in " ".join(warnings)
    assert {p: stat.S_IMODE(p.stat().st_mode) for p in loose} == loose

    warnings.clear()
    with state.open("main", write=True):  # a writer tightens its own, never the state dir
        pass
    assert stat.S_IMODE(state.path.stat().st_mode) == 0o755
    assert all(stat.S_IMODE(p.stat().st_mode) in (0o700, 0o600) for p in list(loose)[1:])
    assert len([w for w in warnings if "now" in w]) == len(loose) - 1
    with state.open("main", write=True):
        pass
    assert len(warnings) == len(loose) - 1  # once
    keep.close()


def test_an_export_never_replaces_a_device_or_a_pipe(state: StateDir, tmp_path: Path) -> None:
    """With "overwrite", writing beside the target and renaming over it would turn /dev/null
    (for root) or a named pipe into a file holding the conversation."""
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main"), json.dumps(msg("a", None, "user", "heron")))
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(ValidationError, match="is not a regular file"):
        write_export(state, "agent:main:main", OPERATOR, pipe, overwrite=True)
    assert stat.S_ISFIFO(pipe.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".pipe")) == []


def test_a_reader_never_creates_a_folder(tmp_path: Path, warnings: list[str]) -> None:
    state = StateDir(tmp_path / "nothing-here")
    with pytest.raises(Exception):
        state.open("main")
    assert not state.path.exists() and warnings == []


def test_exports_never_follow_links_never_overwrite_unasked_and_are_0600(state: StateDir,
                                                                           tmp_path: Path) -> None:
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main"), json.dumps(msg("a", None, "user", "heron")))
    out = tmp_path / "out"
    out.mkdir()
    existing = out / "old.md"
    existing.write_text("keep me")
    os.chmod(existing, 0o644)
    with pytest.raises(ValidationError, match="already exists"):
        write_export(state, "agent:main:main", OPERATOR, existing)
    assert existing.read_text() == "keep me"
    path, size = write_export(state, "agent:main:main", OPERATOR, existing, overwrite=True)
    assert "heron" in existing.read_text() and size == existing.stat().st_size
    assert stat.S_IMODE(existing.stat().st_mode) == 0o600  # the loose mode is not kept

    target = tmp_path / "elsewhere.txt"
    target.write_text("not yours")
    link = out / "link.md"
    os.symlink(target, link)
    with pytest.raises(ValidationError, match="already exists"):
        write_export(state, "agent:main:main", OPERATOR, link)
    os.symlink(tmp_path / "missing", out / "dangling.md")
    with pytest.raises(ValidationError, match="already exists"):
        write_export(state, "agent:main:main", OPERATOR, out / "dangling.md")
    assert not (tmp_path / "missing").exists()
    write_export(state, "agent:main:main", OPERATOR, link, overwrite=True)
    assert target.read_text() == "not yours" and not link.is_symlink()  # the link was replaced
    with pytest.raises(ValidationError, match="is a folder"):
        write_export(state, "agent:main:main", OPERATOR, out)
    with pytest.raises(StoreError, match="cannot write"):
        write_export(state, "agent:main:main", OPERATOR, tmp_path / "no" / "such" / "dir.md")
    assert sorted(p.name for p in out.iterdir()) == ["dangling.md", "link.md", "old.md"]
