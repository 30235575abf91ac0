"""Write the demo corpus (``corpus.generate``) into a state dir, and cache it.

Live sessions are indexed as they would be by a runtime; the sessions the generator marks
``imported`` are stored unindexed, so the browser shows reconciliation progress on first
start. Big corpora (benchmarks) take the same path: a bulk import, then one reconciliation.

The demo only ever deletes a folder it made: ``ensure_demo`` writes its marker file before it
writes anything else, and replaces a folder only when that marker is there. Any other folder
that is not empty (a user's state dir, an agent runtime's home) is refused, untouched.

It is built in a folder of its own beside the target and renamed into place when whole, so
two first runs at once (the README's first command in two terminals) each build their own
and the second rename finds the first one's demo: neither deletes what the other writes.

Dates: ``build_demo`` dates the corpus to ``corpus.DEFAULT_NOW_MS`` (2026-11-30 noon UTC)
unless told otherwise, so tests, screenshots and benchmarks see the same data whenever they
run. ``ensure_demo`` (``backscroll demo``) dates it to the day it is built (``demo_now``: the
same corpus moved by whole days), and builds it again once it is ``STALE_DAYS`` old, so the
usage view's "last 30 days" always has most of a month in it.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .. import file_modes
from ..errors import StoreError, ValidationError
from ..indexer import INDEXER_VERSION
from ..keys import agent_of
from ..reconcile import reconcile_agent
from ..state import StateDir
from ..storage import AgentWriter, SessionMeta
from ..transcript import iso_to_ms
from .corpus import DemoSession, generate
from .parts import DAY_MS, DEFAULT_NOW_MS

DEMO_SEED = 7
DEMO_MESSAGES = 3000
# What the corpus holds, in the cache folder's name, so a cached demo of an older corpus is
# built anew: 2 added the session worth investigating (incident.py).
CORPUS_VERSION = 2
# A cached demo dated this many days before today is built again (its dates moved up).
STALE_DAYS = 7
# Either file says "the demo made this folder"; the second also says the demo in it is whole.
MARKER = ".backscroll-demo"  # written first
_COMPLETE = ".demo-complete"  # written last


def default_demo_dir(seed: int = DEMO_SEED, messages: int = DEMO_MESSAGES) -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "backscroll" / (
        f"demo-s{seed}-m{messages}-v{INDEXER_VERSION}-c{CORPUS_VERSION}")


def demo_now(now_s: float) -> int:
    """The moment a demo built at ``now_s`` (epoch seconds) is dated to: the latest noon UTC
    at or before it. Noon, as ``DEFAULT_NOW_MS``: the corpus is the default one moved by whole
    days (the same sessions, texts and times of day; keys that hold a time move with it), and
    nothing in it is later than the moment it was built."""
    return DEFAULT_NOW_MS + (int(now_s * 1000) - DEFAULT_NOW_MS) // DAY_MS * DAY_MS


def dated_to(path: Path) -> int | None:
    """The ``now`` a whole demo in ``path`` was dated to; None when it was built by a version
    that dated every demo to ``DEFAULT_NOW_MS`` without saying so, or the file is unreadable."""
    try:
        built = json.loads((path / _COMPLETE).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    now = built.get("now") if isinstance(built, dict) else None
    return now if isinstance(now, int) else None


def _stale(path: Path, today: int) -> bool:
    """A whole demo whose dates are ``STALE_DAYS`` or more behind ``today`` (a ``demo_now``)."""
    if not (path / _COMPLETE).is_file():
        return False
    dated = dated_to(path)
    return dated is None or today - dated >= STALE_DAYS * DAY_MS


def ensure_demo(
    path: Path | None = None,
    seed: int = DEMO_SEED,
    messages: int = DEMO_MESSAGES,
    rebuild: bool = False,
    clock: Callable[[], float] = time.time,
) -> StateDir:
    """The demo state dir, built once (a half-built one from an interrupted run is redone),
    dated to the day it is built, and built again when it is ``STALE_DAYS`` old."""
    path = Path(path) if path is not None else default_demo_dir(seed, messages)
    today = demo_now(clock())
    made_by_demo = (path / MARKER).is_file() or (path / _COMPLETE).is_file()
    if (path / _COMPLETE).is_file() and not rebuild and not _stale(path, today):
        return StateDir(path, database_url="")  # the demo never writes to a server
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise ValidationError(f"{path} is not a folder the demo made; choose another --state-dir")
    if path.is_dir() and any(path.iterdir()) and not made_by_demo:
        raise ValidationError(
            f"{path} is not empty and was not made by `backscroll demo`, so the demo will "
            "not touch it; choose an empty or new --state-dir"
        )
    if path == default_demo_dir(seed, messages):
        file_modes.make_dir(path.parent, tighten=True)  # the cache folder is backscroll's own
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    building = path.parent / f".{path.name}.building-{os.getpid()}-{threading.get_ident()}"
    try:
        file_modes.make_dir(building, tighten=True)
        file_modes.write_file(building / MARKER,
                           "made by `backscroll demo`; the demo may replace this folder\n")
        build_demo(StateDir(building, database_url=""), seed=seed, messages=messages,
                   now_ms=today)
        file_modes.write_file(building / _COMPLETE, json.dumps(
            {"seed": seed, "messages": messages, "now": today}) + "\n")
        # checked again now: a run beside this one may have put a fresh demo there meanwhile
        _move_into_place(building, path, replace=rebuild or _stale(path, today))
    finally:
        shutil.rmtree(building, ignore_errors=True)  # gone already, unless it failed or lost
    return StateDir(path, database_url="")


def _move_into_place(building: Path, path: Path, replace: bool) -> None:
    """Rename the whole demo onto ``path`` (an empty folder is replaced by the rename). A demo
    of the demo's own there, not whole (an interrupted older run) or with ``replace``, is
    deleted first; a whole one another run moved there meanwhile is kept, and this one dropped."""
    if path.is_dir() and ((path / MARKER).is_file() or (path / _COMPLETE).is_file()) and (
            replace or not (path / _COMPLETE).is_file()):
        shutil.rmtree(path, ignore_errors=True)
    try:
        os.rename(building, path)
    except OSError as err:
        if not (path / _COMPLETE).is_file():
            raise StoreError(f"cannot put the demo in {path}: {err.strerror or err}") from None


def build_demo(
    state: StateDir,
    seed: int = DEMO_SEED,
    messages: int = DEMO_MESSAGES,
    agents: int | None = None,
    sessions: int | None = None,
    leave_imported_pending: bool = True,
    now_ms: int | None = None,
) -> dict[str, int]:
    """Generate and store the corpus, dated to the 60 days before ``now_ms`` (default
    ``DEFAULT_NOW_MS``); returns counts (sessions, live, imported)."""
    dbs: dict[str, AgentWriter] = {}
    imported: list[DemoSession] = []
    counts = {"sessions": 0, "live": 0, "imported": 0}
    try:
        for session in generate(seed=seed, messages=messages, agents=agents, sessions=sessions,
                                now_ms=now_ms):
            counts["sessions"] += 1
            if session.imported and leave_imported_pending:
                imported.append(session)
                continue
            counts["live"] += 1
            _store(dbs, state, session)
        for agent_id in list(dbs):
            reconcile_agent(state, agent_id)  # the live sessions: indexed before first search
        for session in imported:
            counts["imported"] += 1
            _store(dbs, state, session)
    finally:
        for db in dbs.values():
            db.close()
    return counts


def _store(dbs: dict[str, AgentWriter], state: StateDir, session: DemoSession) -> None:
    agent_id = agent_of(session.key)
    if agent_id not in dbs:
        dbs[agent_id] = state.open(agent_id, write=True)
    meta = SessionMeta(
        key=session.key,
        session_id=session.session_id,
        spawned_by=session.spawned_by,
        parent_key=session.parent_key,
        label=session.label,
        created_at=session.created_at,
        updated_at=iso_to_ms(session.events[-1].get("timestamp"), session.created_at),
        source=session.source,
    )
    lines = [json.dumps(event, ensure_ascii=False, separators=(",", ":")) for event in session.events]
    dbs[agent_id].import_session(meta, lines)
