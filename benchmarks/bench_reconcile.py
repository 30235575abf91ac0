"""Import + reconciliation throughput on a large generated archive (not a test).

Writes the demo generator's corpus as an OpenClaw state dir of JSONL files, then measures
``import_openclaw`` and ``reconcile_all`` on it. The baseline, run in the same process on a
slice of the same data, is the naive plan: every message appended through the live write
path, one transaction each.

    .venv/bin/python benchmarks/bench_reconcile.py [--messages 200000] [--sessions 2000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from backscroll.core.demo.corpus import generate
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.keys import agent_of
from backscroll.core.reconcile import reconcile_all
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.verify import verify_state


def write_archive(root: Path, messages: int, sessions: int, seed: int) -> tuple[int, int]:
    """An OpenClaw state dir: agents/<id>/sessions/{sessions.json, <sessionId>.jsonl}."""
    stores: dict[str, dict] = {}
    count_sessions = count_messages = 0
    for session in generate(seed=seed, messages=messages, sessions=sessions):
        agent = agent_of(session.key)
        folder = root / "agents" / agent / "sessions"
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f"{session.session_id}.jsonl", "w", encoding="utf-8") as out:
            for event in session.events:
                out.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
                if event.get("type") == "message" and event["message"].get("role") in (
                    "user", "assistant"
                ):
                    count_messages += 1
        entry = {"sessionId": session.session_id, "updatedAt": session.created_at}
        if session.spawned_by:
            entry["spawnedBy"] = session.spawned_by
        if session.label:
            entry["label"] = session.label
        stores.setdefault(agent, {})[session.key] = entry
        count_sessions += 1
    for agent, store in stores.items():
        (root / "agents" / agent / "sessions" / "sessions.json").write_text(json.dumps(store))
    return count_sessions, count_messages


def baseline_appends(archive: Path, state: StateDir, limit: int) -> tuple[int, float]:
    """The naive plan on the first ``limit`` messages: the live path, one commit per event."""
    done = 0
    start = time.perf_counter()
    for folder in sorted((archive / "agents").glob("*/sessions")):
        store = json.loads((folder / "sessions.json").read_text())
        by_id = {v["sessionId"]: k for k, v in store.items()}
        with state.open(folder.parent.name, write=True) as db:
            for file in sorted(folder.glob("*.jsonl")):
                meta = SessionMeta(by_id[file.stem], session_id=file.stem)
                for line in file.read_text(encoding="utf-8").splitlines():
                    db.append(meta, line)
                    done += '"role":"user"' in line or '"role":"assistant"' in line
                if done >= limit:
                    return done, time.perf_counter() - start
    return done, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--sessions", type=int, default=2_000)
    parser.add_argument("--baseline", type=int, default=20_000, help="messages for the baseline")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "openclaw"
        t0 = time.perf_counter()
        sessions, messages = write_archive(archive, args.messages, args.sessions, args.seed)
        generated = time.perf_counter() - t0
        print(f"generated {sessions:,} sessions, {messages:,} user/assistant messages "
              f"in {generated:.1f} s (not timed below)")

        state = StateDir(Path(tmp) / "state")
        t0 = time.perf_counter()
        report = import_openclaw(state, archive, read_ahead=True)
        imported = time.perf_counter() - t0
        t0 = time.perf_counter()
        results = reconcile_all(state)
        reconciled = time.perf_counter() - t0
        indexed = sum(r.messages for r in results)
        ok = verify_state(state).ok

        base_state = StateDir(Path(tmp) / "baseline")
        base_messages, base_seconds = baseline_appends(archive, base_state, args.baseline)

    total = imported + reconciled
    rate = messages / total
    base_rate = base_messages / base_seconds
    rows = [
        ("import (events stored, unindexed)", f"{imported:.2f} s", f"{messages / imported:,.0f}/s", ""),
        ("reconcile (index rows built)", f"{reconciled:.2f} s", f"{indexed / reconciled:,.0f}/s", ""),
        ("import + reconcile", f"{total:.2f} s", f"{rate:,.0f}/s", f"{rate / base_rate:.1f}x"),
        (f"baseline: live append, {base_messages:,} msgs", f"{base_seconds:.2f} s",
         f"{base_rate:,.0f}/s", "1.0x"),
    ]
    print(f"\n{report.events:,} events in {report.sessions:,} sessions; "
          f"{indexed:,} index rows; verify {'ok' if ok else 'FAILED'}\n")
    width = max(len(r[0]) for r in rows)
    print(f"{'step':<{width}}  {'time':>9}  {'messages/s':>11}  {'vs baseline':>11}")
    for name, seconds, per_second, ratio in rows:
        print(f"{name:<{width}}  {seconds:>9}  {per_second:>11}  {ratio:>11}")
    print(f"\ngoal (SPEC 12, at 1M): >= 30,000 messages/s for import + reconcile -> "
          f"{'met' if rate >= 30_000 else 'NOT met'}")


if __name__ == "__main__":
    main()
