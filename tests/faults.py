"""The fault campaign: run an operation in a child process, SIGKILL it at a random point, then
prove nothing was half-written, lost or doubled. Used by ``tests/test_crash.py`` (a few kills,
in CI) and ``scripts/fault_campaign.py`` (hundreds, with counts).

Each operation is one entry of ``OPERATIONS``: how to prepare its input once, the child's
script (it prints ``ready``, then one line per committed step, then ``done``), and the check
of what a kill may leave. Adding an operation (``sync``, say) is adding one entry.

Checks after every kill, for every operation (``check_files``, then the operation's check):
- ``PRAGMA integrity_check`` is ok for every agent database;
- ``verify`` passes (every clean session's index rows are its active branch, no orphans);
- no entry is stored twice in a session;
- the operation's own promise (a committed step is there; a session is all or nothing);
- after the leases of the killed process expire, reconciliation leaves nothing pending, and
  every message of every active branch is indexed exactly once (``verify`` again).
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.reconcile import reconcile_all
from backscroll.core.sources.detect import Source as SyncSource
from backscroll.core.sources.sync import sync_sources
from backscroll.core.state import StateDir
from backscroll.core.verify import verify_state

LEASE_MS = 300  # the killed child's leases: short, so the check can take over soon
SOURCE_SESSIONS = 40
SOURCE_MESSAGES = 40

_PRELUDE = """
import json, sys
from pathlib import Path
from backscroll.core.state import StateDir
state, work = StateDir(sys.argv[1]), Path(sys.argv[2])
"""

APPEND = _PRELUDE + r"""
import random
rng = random.Random(int(sys.argv[3]))
db = state.open("main", write=True)
keys = ["agent:main:main", "agent:main:telegram:group:7", "agent:main:subagent:x"]
print("ready", flush=True)
i = 0
while True:
    key = keys[i % 3]
    session = db.session(key)
    parent = session.leaf_id if session else None
    n = (session.last_seq if session else 0) + 1
    eid = f"{sys.argv[3]}-{i}"
    roll = rng.random()
    if roll < 0.05 and parent:
        event = {"type": "leaf", "targetId": parent}  # a rewind to the same leaf: dirty
    elif roll < 0.15:
        event = {"type": "message", "id": eid, "parentId": parent,
                 "message": {"role": "toolResult", "content": [{"type": "text", "text": "out"}]}}
    else:
        event = {"type": "message", "id": eid, "parentId": parent,
                 "message": {"role": "user" if n % 2 else "assistant", "timestamp": 1780000000000 + i,
                             "content": f"message {n} about heron token=abc{i}xyz0123456789"}}
    db.append(SessionMeta(key), json.dumps(event))
    print("committed", key, event.get("id", "-"), flush=True)
    i += 1
"""

IMPORT = _PRELUDE + r"""
from backscroll.core.importers.openclaw import import_openclaw
print("ready", flush=True)
import_openclaw(state, work / "source")
print("done", flush=True)
"""

SYNC = _PRELUDE + r"""
from backscroll.core.sources.detect import Source
from backscroll.core.sources.sync import sync_sources
print("ready", flush=True)
sync_sources(state, [Source("openclaw", work / "source")])
print("done", flush=True)
"""

RECONCILE = _PRELUDE + r"""
from backscroll.core.reconcile import reconcile_agent
print("ready", flush=True)
reconcile_agent(state, "main", lease_ms=int(sys.argv[4]), batch_events=150)
print("done", flush=True)
"""

DELETE = _PRELUDE + r"""
from backscroll.core.ingest import delete_session
keys = sys.argv[4].split(",")
print("ready", flush=True)
for key in keys:
    delete_session(state, key)
    print("committed", key, flush=True)
print("done", flush=True)
"""


@dataclass
class Round:
    """One kill: what the child said it committed before it died."""

    state: StateDir
    work: Path
    committed: list[list[str]]
    finished: bool  # the child was done before the kill came


@dataclass(frozen=True)
class Operation:
    name: str
    script: str
    check: Callable[[Round, "Source"], list[str]]  # problems found
    start_from: str | None = None  # the prepared state a round starts from: imported, indexed
    fresh_state: bool = True  # start each round from the prepared state (else keep going)
    runs_forever: bool = False
    extra_args: Callable[["Source"], list[str]] = lambda source: []


@dataclass
class Source:
    """The prepared input: an OpenClaw folder of transcripts, and a state dir holding it
    imported (pending) and another holding it indexed."""

    root: Path
    lines: dict[str, int] = field(default_factory=dict)  # session key -> events in its file
    messages: int = 0  # user/assistant messages in the source

    @property
    def folder(self) -> Path:
        return self.root / "source"

    @property
    def imported(self) -> Path:
        return self.root / "imported-state"

    @property
    def indexed(self) -> Path:
        return self.root / "indexed-state"


def prepare(root: Path, seed: int = 5) -> Source:
    source = Source(root)
    folder = source.folder / "agents" / "main" / "sessions"
    folder.mkdir(parents=True)
    rng = random.Random(seed)
    store = {}
    for s in range(SOURCE_SESSIONS):
        sid = f"sid-{s}"
        key = f"agent:main:s{s}"
        events = [{"type": "session", "version": 3, "id": sid, "timestamp": "2026-05-01T00:00:00Z"}]
        for i in range(SOURCE_MESSAGES):
            role = "user" if i % 2 == 0 else "assistant"
            words = " ".join(rng.choice(["heron", "otter", "pool", "deploy", "café", "数据"])
                             for _ in range(12))
            events.append({"type": "message", "id": f"{sid}-m{i}",
                           "parentId": f"{sid}-m{i - 1}" if i else None,
                           "timestamp": f"2026-05-01T00:{i // 60:02d}:{i % 60:02d}Z",
                           "message": {"role": role, "content": f"{words} number {i}"}})
        (folder / f"{sid}.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n")
        store[key] = {"sessionId": sid}
        source.lines[key] = len(events)
        source.messages += SOURCE_MESSAGES
    (folder / "sessions.json").write_text(json.dumps(store))
    import_openclaw(StateDir(source.imported), source.folder)
    shutil.copytree(source.imported, source.indexed)
    reconcile_all(StateDir(source.indexed))
    return source


# ----------------------------------------------------------------------------- checks


def check_files(state: StateDir) -> list[str]:
    """What every kill must leave: sound files, a true index, no entry twice."""
    problems = []
    for agent in state.agents():
        conn = sqlite3.connect(state.db_path(agent))
        try:
            result = conn.execute("PRAGMA integrity_check").fetchone()[0]
            if result != "ok":
                problems.append(f"{agent}: integrity_check: {result}")
            doubled = conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM events WHERE entry_id IS NOT NULL "
                "GROUP BY session_pk, entry_id HAVING count(*) > 1)"
            ).fetchone()[0]
            if doubled:
                problems.append(f"{agent}: {doubled} entries stored twice")
        finally:
            conn.close()
    report = verify_state(state)
    problems += [f"verify: {p}" for p in report.problems]
    return problems


def settle(state: StateDir) -> list[str]:
    """Reconcile once the killed child's leases expired; then nothing may be pending and
    every active branch must be indexed exactly once."""
    deadline = time.monotonic() + 10 + LEASE_MS / 1000
    while True:
        results = reconcile_all(state)
        pending = 0
        for agent in state.agents():
            with state.open(agent) as db:
                pending += db.pending_count()[0]
        if not pending:
            break
        if time.monotonic() > deadline:
            return [f"{pending} sessions still pending after reconciliation: {results}"]
        time.sleep(LEASE_MS / 1000)
    return check_files(state)


def stored(state: StateDir) -> dict[str, list[str | None]]:
    """Entry ids (None for id-less events) of every session, by key."""
    found: dict[str, list[str | None]] = {}
    for agent in state.agents():
        with state.open(agent) as db:
            for session in db.sessions():
                found[session.key] = [e.get("id") for _s, e in db.events(session.pk)]
    return found


def check_append(round: Round, source: Source) -> list[str]:
    have = stored(round.state)
    problems = [
        f"committed {key} {eid} is missing"
        for _word, key, eid in round.committed
        if eid != "-" and eid not in have.get(key, [])
    ]
    return problems + settle(round.state)


def check_import(round: Round, source: Source) -> list[str]:
    problems = [
        f"{key}: {len(ids)} of {source.lines[key]} events: half imported"
        for key, ids in stored(round.state).items()
        if len(ids) not in (0, source.lines[key])
    ]
    import_openclaw(round.state, source.folder)  # again, to the end: adds only what is missing
    have = stored(round.state)
    problems += [
        f"{key}: {len(have.get(key, []))} events after a second import, not {n}"
        for key, n in source.lines.items()
        if len(have.get(key, [])) != n
    ]
    problems += settle(round.state)
    return problems + _all_indexed(round.state, source)


def check_sync(round: Round, source: Source) -> list[str]:
    """Like an import, a file is taken in whole or not at all; the next sync finishes."""
    problems = [
        f"{key}: {len(ids)} of {source.lines[key]} events: half synced"
        for key, ids in stored(round.state).items()
        if len(ids) not in (0, source.lines[key])
    ]
    sync_sources(round.state, [SyncSource("openclaw", source.folder)])
    have = stored(round.state)
    problems += [
        f"{key}: {len(have.get(key, []))} events after a second sync, not {n}"
        for key, n in source.lines.items()
        if len(have.get(key, [])) != n
    ]
    problems += settle(round.state)
    return problems + _all_indexed(round.state, source)


def check_reconcile(round: Round, source: Source) -> list[str]:
    return settle(round.state) + _all_indexed(round.state, source)


def check_delete(round: Round, source: Source) -> list[str]:
    have = stored(round.state)
    deleted = {key for _word, key in round.committed}
    problems = [f"{key} was deleted but is still there" for key in deleted if key in have]
    problems += [
        f"{key}: {len(ids)} of {source.lines[key]} events: half deleted"
        for key, ids in have.items()
        if len(ids) != source.lines[key]
    ]
    return problems + settle(round.state)


def _all_indexed(state: StateDir, source: Source) -> list[str]:
    with state.open("main") as db:
        rows = db.counts()["indexed"]
    return [] if rows == source.messages else [f"{rows} rows indexed, not {source.messages}"]


def _delete_keys(source: Source) -> list[str]:
    return [",".join(sorted(source.lines)[: SOURCE_SESSIONS // 2])]


# Adding an operation (the ``sync`` verb, once it exists) is one entry here: its script, and
# the check of what a kill in the middle of it may leave.
OPERATIONS = {
    "append": Operation("append", APPEND, check_append, fresh_state=False, runs_forever=True),
    "import": Operation("import", IMPORT, check_import),
    "sync": Operation("sync", SYNC, check_sync),
    "reconcile": Operation("reconcile", RECONCILE, check_reconcile, start_from="imported",
                           extra_args=lambda source: [str(LEASE_MS)]),
    "delete": Operation("delete", DELETE, check_delete, start_from="indexed",
                        extra_args=_delete_keys),
}


# ----------------------------------------------------------------------------- the campaign


@dataclass
class Tally:
    kills: Counter = field(default_factory=Counter)
    finished_first: Counter = field(default_factory=Counter)
    failed_rounds: Counter = field(default_factory=Counter)
    failures: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0


def _child(op: Operation, state: Path, source: Source, seed: int) -> subprocess.Popen:
    args = [sys.executable, "-c", op.script, str(state), str(source.root), str(seed)]
    args += op.extra_args(source)
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def calibrate(op: Operation, source: Source, work: Path) -> float:
    """Seconds from ``ready`` to ``done`` when nobody kills it (the window kills fall in)."""
    if op.runs_forever:
        return 0.4
    state = _fresh(op, source, work / f"calibrate-{op.name}")
    child = _child(op, state, source, 0)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready", child.stderr.read() if child.stderr else ""
    start = time.monotonic()
    for line in child.stdout:  # until "done", not until the interpreter has exited
        if line.strip() == "done":
            break
    elapsed = time.monotonic() - start
    _out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    return max(elapsed, 0.05)


def _fresh(op: Operation, source: Source, state: Path) -> Path:
    shutil.rmtree(state, ignore_errors=True)
    if op.start_from is not None:
        shutil.copytree(getattr(source, op.start_from), state)
    return state


def kill_once(op: Operation, source: Source, state: Path, window: float, rng: random.Random,
              seed: int) -> Round:
    child = _child(op, state, source, seed)
    assert child.stdout is not None
    ready = child.stdout.readline().strip()
    if ready != "ready":
        raise AssertionError(f"{op.name} child did not start: {child.communicate()[1]}")
    time.sleep(rng.uniform(0, window))
    child.send_signal(signal.SIGKILL)
    out, _err = child.communicate()
    lines = [line.split() for line in out.splitlines()]
    committed = [words for words in lines if words and words[0] == "committed"]
    finished = any(words == ["done"] for words in lines)
    return Round(StateDir(state), source.root, committed, finished)


def run_campaign(root: Path, kills: int, operations: list[str] | None = None, seed: int = 1,
                 on_round: Callable[[str, int, list[str]], None] | None = None) -> Tally:
    """``kills`` SIGKILLs per operation; returns what happened (failures by operation)."""
    started = time.monotonic()
    rng = random.Random(seed)
    source = prepare(root / "prepared")
    tally = Tally()
    for name in operations or list(OPERATIONS):
        op = OPERATIONS[name]
        window = calibrate(op, source, root)
        state = _fresh(op, source, root / f"state-{name}")
        for n in range(kills):
            if op.fresh_state:
                state = _fresh(op, source, root / f"state-{name}")
            round = kill_once(op, source, state, window, rng, seed * 100_000 + n)
            problems = check_files(round.state) + op.check(round, source)
            tally.kills[name] += 1
            tally.finished_first[name] += round.finished
            if problems:
                tally.failed_rounds[name] += 1
                tally.failures.setdefault(name, []).extend(problems)
            if on_round is not None:
                on_round(name, n, problems)
    tally.seconds = time.monotonic() - started
    return tally
