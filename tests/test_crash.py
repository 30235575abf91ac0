"""Kill a process appending events with SIGKILL at random points; nothing is half-written."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from backscroll.core.state import StateDir
from backscroll.core.transcript import active_branch, indexable
from backscroll.core.verify import verify_state

WRITER = r"""
import json, sys
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
state = StateDir(sys.argv[1])
db = state.open("main", write=True)
keys = ["agent:main:main", "agent:main:telegram:group:7"]
i = 0
print("ready", flush=True)
while True:
    key = keys[i % 2]
    session = db.session(key)
    parent = session.leaf_id if session else None
    n = (session.last_seq if session else 0) + 1
    if i % 7 == 3:
        event = {"type": "message", "id": f"s{n}", "parentId": parent, "appendMode": "side",
                 "message": {"role": "assistant", "content": "side copy"}}
    elif i % 5 == 4:
        event = {"type": "message", "id": f"t{n}", "parentId": parent,
                 "message": {"role": "toolResult", "content": [{"type": "text", "text": "out"}]}}
    else:
        role = "user" if n % 2 else "assistant"
        event = {"type": "message", "id": f"m{n}", "parentId": parent,
                 "message": {"role": role, "timestamp": 1780000000000 + n,
                             "content": [{"type": "text", "text": f"message {n} about token=abc{n}xyz"},
                                         {"type": "thinking", "thinking": "private"}]}}
    db.append(SessionMeta(key), json.dumps(event))
    i += 1
"""


def test_sigkill_during_appends_never_leaves_half_written_state(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    rng = random.Random(20261202)
    for _round in range(25):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(state.path)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.005, 0.25))
        proc.send_signal(signal.SIGKILL)
        proc.wait()

        conn = sqlite3.connect(state.db_path("main"))
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()
        report = verify_state(state)
        assert report.ok, report.problems
        with state.open("main") as db:
            for session in db.sessions():
                assert session.searchable  # only extending appends: never dirty
                branch = active_branch(db.events(session.pk))
                wanted = {m.entry_id for _s, e in branch.path if (m := indexable(e))}
                indexed = {row.entry_id for _rowid, row in db.index_rows(session.pk)}
                assert wanted == indexed
    with state.open("main") as db:
        assert sum(s.last_seq for s in db.sessions()) > 50  # the writer really got going
