"""OpenClaw's SQLite transcript store as a live source (not a test).

Builds ``~/.openclaw`` with one store per agent (``--agents``), about ``--events`` events in
all: nodes with a current window and an older reset window each, every fifth window's events
zstd-compressed, one window moved to a cold archive on disk. The store is in WAL mode, its
writer connection held open as OpenClaw holds it. The same conversations are written as JSONL
transcripts (``agents/<id>/sessions/<sessionId>.jsonl`` and ``sessions.json``) in another
home. Then, in the same run:

- ``sync`` of the store (in-process) against ``import`` of the JSONL (in-process): messages
  stored per second for both (neither indexes: reconciliation follows, as for any sync);
- ``backscroll sync`` with nothing new, as a whole process, p50 / p95 over ``--runs``;
- the latency of ``backscroll watch``: an event written to the store (it lands in the
  ``-wal``) until ``search`` finds it, p50 / p95 over ``--appends``.

    .venv/bin/python benchmarks/bench_openclaw_store.py [--events 100000] [--runs 10] [--appends 10]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backscroll.core.importers.openclaw import import_openclaw  # noqa: E402
from backscroll.core.reconcile import reconcile_all  # noqa: E402
from backscroll.core.sources import sync_sources  # noqa: E402
from backscroll.core.state import StateDir  # noqa: E402
from benchmarks.measure import WORDS, fake_home, p50_p95, process_sync, watch_latency  # noqa: E402
from tests.test_openclaw_store import T0, Store, header, message  # noqa: E402

PER_WINDOW = 400  # events in a window


def build(root: Path, jsonl: Path, agents: int, events: int) -> tuple[list[Store], int]:
    """The stores under ``root`` and the same conversations as JSONL under ``jsonl``; the
    number of message events."""
    stores, made, messages, n = [], 0, 0, 0
    names = [f"agent{i}" for i in range(agents)]
    for name in names:
        stores.append(Store(root, name))
    entries: dict[str, dict[str, dict]] = {name: {} for name in names}
    while made < events:
        name = names[n % agents]
        store = stores[n % agents]
        key, old, now = f"agent:{name}:chat{n}", f"s{n}-old", f"s{n}-now"
        store.con.execute("BEGIN")
        store.node(key, now, label=f"chat {n}")
        for sid, reason, at in ((old, "initial", T0 - 1000), (now, "reset", T0)):
            store.window(sid, key, reason, at)
            lines = [header(sid)]
            parent = None
            for i in range(PER_WINDOW - 1):
                mid = f"{sid}-{i}"
                role = "user" if i % 2 == 0 else "assistant"
                lines.append(message(mid, parent, role, " ".join(random.choices(WORDS, k=50))))
                parent = mid
            store.events(sid, lines, compress=(n % 5 == 0))
            made += len(lines)
            messages += len(lines) - 1
            folder = jsonl / "agents" / name / "sessions"
            folder.mkdir(parents=True, exist_ok=True)
            file = f"{sid}.jsonl" if sid == now else f"{sid}.jsonl.reset.2026-06-01T10-00-00.000Z"
            (folder / file).write_text("".join(json.dumps(e) + "\n" for e in lines))
        store.con.execute("COMMIT")
        entries[name][key] = {"sessionId": now, "label": f"chat {n}"}
        n += 1
    for name in names:
        (jsonl / "agents" / name / "sessions" / "sessions.json").write_text(
            json.dumps(entries[name]))
    stores[1 % agents].make_cold("s1-old")  # one cold archive on disk (an uncompressed window)
    return stores, messages


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--appends", type=int, default=10)
    args = parser.parse_args()
    random.seed(7)
    rows: list[tuple[str, str]] = [("load (1, 5, 15 min) at start",
                                    " ".join(f"{x:.2f}" for x in os.getloadavg()))]
    with tempfile.TemporaryDirectory() as tmp:
        home, state, env = fake_home(Path(tmp), unset=["OPENCLAW_STATE_DIR"])
        other = StateDir(Path(tmp) / "state-jsonl", database_url="")
        start = time.perf_counter()
        stores, messages = build(home / ".openclaw", Path(tmp) / "jsonl", args.agents,
                                 args.events)
        rows.append(("built", f"{args.agents} stores, {messages:,} messages "
                              f"({time.perf_counter() - start:.0f} s)"))
        start = time.perf_counter()
        report = sync_sources(state)
        took = time.perf_counter() - start
        assert not report.problems, report.problems[:3]
        rows.append(("sync of the stores", f"{report.messages:,} messages in {took:.1f} s: "
                                           f"{report.messages / took:,.0f} messages/s"))
        start = time.perf_counter()
        imported = import_openclaw(other, Path(tmp) / "jsonl")
        took = time.perf_counter() - start
        rows.append(("import of the same as JSONL", f"{messages:,} messages in {took:.1f} s: "
                                                    f"{messages / took:,.0f} messages/s "
                                                    f"({imported.events:,} events)"))
        reconcile_all(state)
        quiet = [process_sync(env) for _ in range(args.runs)]
        rows.append(("no-change `backscroll sync` (process)", p50_p95(quiet)))
        store = stores[-1]
        sid = store.con.execute("SELECT current_session_id FROM session_nodes "
                                "ORDER BY session_key LIMIT 1").fetchone()[0]
        seq = store.con.execute("SELECT max(seq) FROM transcript_events WHERE session_id=?",
                                (sid,)).fetchone()[0]

        def write(word: str) -> None:
            nonlocal seq
            seq += 1
            store.con.execute("BEGIN")
            store.events(sid, [message(f"w{seq}", None, "user", f"look at {word}")], start=seq)
            store.con.execute("COMMIT")

        latency = watch_latency(env, state, write, args.appends)
        rows.append(("watch: event in the -wal until found", p50_p95(latency)))
        for one in stores:
            one.con.close()
    rows.append(("load (1, 5, 15 min) at end", " ".join(f"{x:.2f}" for x in os.getloadavg())))
    width = max(len(a) for a, _ in rows)
    for what, value in rows:
        print(f"{what:<{width}}  {value}")


if __name__ == "__main__":
    main()
