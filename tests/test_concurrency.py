"""Writers, searchers and reconcilers in separate processes, one reconciler SIGKILLed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backscroll.core.indexer import expected_rows
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.verify import verify_state

from .events import header, lines, msg

pytestmark = [pytest.mark.backends, pytest.mark.slow]  # processes at full speed for seconds

SESSIONS = 80
MESSAGES = 250
LEASE_MS = 1500

WRITER = r"""
import json, sys, time
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
state, first, step, seconds = StateDir(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
db = state.open("main", write=True)
errors = written = 0
end = time.time() + seconds
n = first
while time.time() < end:
    key = f"agent:main:s{n % 80}"
    try:
        session = db.session(key)
        event = {"type": "message", "id": f"w{sys.argv[2]}-{written}", "parentId": session.leaf_id,
                 "message": {"role": "user", "content": f"live write {written} heron"}}
        db.append(SessionMeta(key), json.dumps(event))
        written += 1
    except Exception as err:
        errors += 1
        print("ERROR", type(err).__name__, err, file=sys.stderr)
    n += step
print(json.dumps({"written": written, "errors": errors}))
"""

SEARCHER = r"""
import json, sys, time
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR
state, seconds = StateDir(sys.argv[1]), float(sys.argv[2])
errors = queries = 0
end = time.time() + seconds
while time.time() < end:
    for q in ("heron", "otter", "message 7"):
        try:
            sessions_search(state, SearchRequest(query=q), OPERATOR)
            queries += 1
        except Exception as err:
            errors += 1
            print("ERROR", type(err).__name__, err, file=sys.stderr)
print(json.dumps({"queries": queries, "errors": errors}))
"""

RECONCILER = r"""
import sys
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.state import StateDir
print("start", flush=True)
stats = reconcile_agent(StateDir(sys.argv[1]), "main", lease_ms=int(sys.argv[2]), batch_events=200)
print("done", stats.sessions, flush=True)
"""


def _run(code: str, *args: object) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", code, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_writers_searchers_and_a_killed_reconciler(tmp_path: Path, backend: str) -> None:
    state = StateDir(tmp_path / "state")  # the backend's: processes inherit the environment
    with state.open("main", write=True) as db:
        for s in range(SESSIONS):
            events = [header(f"sid-{s}")] + [
                msg(
                    f"m{i}",
                    f"m{i - 1}" if i else None,
                    "user" if i % 2 else "assistant",
                    f"message {i} of session {s} otter",
                    ms=s * 100_000 + i,
                )
                for i in range(MESSAGES)
            ]
            db.import_session(
                SessionMeta(f"agent:main:s{s}", session_id=f"sid-{s}"), lines(*events)
            )

    writers = [_run(WRITER, state.path, w, 2, 4.0) for w in range(2)]
    searcher = _run(SEARCHER, state.path, 4.0)
    doomed = _run(RECONCILER, state.path, LEASE_MS)
    assert doomed.stdout.readline().strip() == "start"
    time.sleep(0.5)
    doomed.send_signal(signal.SIGKILL)
    doomed.wait()
    assert "done" not in doomed.stdout.read()  # it really died mid-run
    successor = _run(RECONCILER, state.path, LEASE_MS)  # gives way until the lease expires
    successor_out, successor_err = successor.communicate(timeout=120)
    results = [json.loads(p.communicate(timeout=60)[0]) for p in writers + [searcher]]

    assert all(r["errors"] == 0 for r in results), results
    assert sum(r["written"] for r in results[:2]) > 20
    assert results[2]["queries"] > 5
    assert successor.returncode == 0, successor_err
    # a retried pass finishes whatever the live writes re-dirtied after the successor's pass
    deadline = time.time() + 30
    while time.time() < deadline:
        stats = reconcile_agent(state, "main", lease_ms=LEASE_MS)
        with state.open("main") as db:
            if db.pending_count()[0] == 0:
                break
        if not stats.started:
            time.sleep(0.3)
    report = verify_state(state)
    assert report.ok, report.problems
    assert report.sessions_checked == SESSIONS
    with state.open("main") as db:
        total_rows = 0
        for session in db.sessions():
            rows, _ = expected_rows(db.events(session.pk), session.created_at)
            stored = db.index_rows(session.pk)
            assert len(stored) == len(rows) == len({r.entry_id for _rid, r in stored})
            total_rows += len(stored)
    written = sum(r["written"] for r in results[:2])
    assert total_rows == SESSIONS * MESSAGES + written  # nothing lost, nothing twice
