"""What `backscroll delete` leaves of a session's text in a PostgreSQL cluster's files (not a
test): copies of a secret in the data files (``base/``) and the WAL (``pg_wal/``) before the
delete, after it (the delete runs a plain VACUUM of the touched tables as their owner), after
a CHECKPOINT, and after what docs/postgres.md tells the operator to run (VACUUM FULL of the
tables, CHECKPOINT, WAL segments switched and recycled).

    .venv/bin/python benchmarks/bench_pg_delete_residue.py [--sessions 20] [--secret-messages 30]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.pgcluster

from backscroll.core.reconcile import reconcile_all  # noqa: E402
from backscroll.core.state import StateDir  # noqa: E402
from backscroll.core.storage import SessionMeta  # noqa: E402
from backscroll.tui.cli import main as cli  # noqa: E402

SECRET = b"zq7-hunter2-quetzalcoatlus"
TABLES = "backscroll.events, backscroll.message_index, backscroll.message_text, " \
         "backscroll.branch_messages, backscroll.sessions"


def event(eid: str, parent: str | None, text: str) -> str:
    return json.dumps({"type": "message", "id": eid, "parentId": parent,
                       "timestamp": "2026-01-01T00:00:00Z",
                       "message": {"role": "user", "content": [{"type": "text", "text": text}]}})


def copies(data: Path) -> dict[str, int]:
    found = {"base": 0, "pg_wal": 0}
    for folder in found:
        for file in (data / folder).rglob("*"):
            if file.is_file():
                found[folder] += file.read_bytes().count(SECRET)
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--secret-messages", type=int, default=30)
    args = parser.parse_args()
    from tests.pgcluster import Cluster, missing_binaries

    reason = missing_binaries()
    if reason:
        raise SystemExit(reason)
    cluster = Cluster.create()
    try:
        database = cluster.new_database()
        url = cluster.url(database)
        state = StateDir(tempfile.mkdtemp(), database_url=url, host="bench")
        with state.open("main", write=True) as db:
            for s in range(args.sessions):
                for i in range(20):
                    db.append(SessionMeta(f"agent:main:s{s}"),
                              event(f"m{i}", f"m{i - 1}" if i else None, f"ordinary {i} {s}"))
            for i in range(args.secret_messages):
                db.append(SessionMeta("agent:main:doomed"), event(
                    f"d{i}", f"d{i - 1}" if i else None, f"the secret is {SECRET.decode()}"))
        reconcile_all(state)
        cluster.sql("CHECKPOINT", database)
        data = cluster.root / "data"
        print("before delete", copies(data))
        cli(["--state-dir", str(state.path), "--database", url, "delete", "agent:main:doomed",
             "--host", "bench", "--json"])
        print("after delete (its plain VACUUM)", copies(data))
        cluster.sql("CHECKPOINT", database)
        print("after CHECKPOINT", copies(data))
        cluster.sql(f"VACUUM FULL {TABLES}", database)
        for _ in range(3):
            cluster.sql("SELECT pg_switch_wal()", database)
            cluster.sql("CHECKPOINT", database)
        print("after VACUUM FULL, CHECKPOINT and 3 WAL switches", copies(data))
    finally:
        cluster.destroy()


if __name__ == "__main__":
    main()
