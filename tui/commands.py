"""One function per CLI verb: parse nothing, call the core, print for people or as JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from backscroll.core.errors import ValidationError
from backscroll.core.importers import ImportReport
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.keys import agent_of, normalize_key
from backscroll.core.store import SessionMeta, StateDir
from backscroll.core.verify import verify_state

from . import render


def emit_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False))


def cmd_append(state: StateDir, args: argparse.Namespace) -> int:
    """Each stdin line is one event, stored (and indexed) in its own transaction."""
    meta = SessionMeta(
        key=args.key, spawned_by=args.spawned_by, parent_key=args.parent, label=args.label
    )
    normalize_key(args.key)  # refuse a bad key before reading anything
    db = state.open(agent_of(args.key), create=True)
    counts = {"stored": 0, "indexed": 0, "dirty": 0}
    refused: list[str] = []
    try:
        for lineno, line in enumerate(sys.stdin, start=1):
            if not line.strip():
                continue
            try:
                result = db.append(meta, line)
            except ValidationError as err:
                refused.append(f"stdin:{lineno}: {err}")
                print(f"backscroll: stdin:{lineno}: {err}; event not stored", file=sys.stderr)
                continue
            counts["stored"] += 1
            if result.outcome in ("indexed", "dirty"):
                counts[result.outcome] += 1
    finally:
        db.close()
    if args.json:
        emit_json({**counts, "refused": refused})
    else:
        render.append_summary(args.key.lower(), counts, len(refused))
    return 2 if refused else 0


def cmd_delete(state: StateDir, args: argparse.Namespace) -> int:
    key = normalize_key(args.key)
    state.require()
    agent = agent_of(key)
    if agent not in state.agents():
        raise ValidationError(f"no session {key} in {state.path}")
    with state.open(agent) as db:
        if not db.delete_session(key):
            raise ValidationError(f"no session {key} in {state.path}")
    if args.json:
        emit_json({"deleted": key})
    else:
        render.info(f"deleted {key}: its events, index rows and index state are gone")
    return 0


def cmd_import(state: StateDir, args: argparse.Namespace) -> int:
    importers = {"openclaw": import_openclaw}
    importer = importers.get(args.kind)
    if importer is None:
        raise ValidationError(f"importing {args.kind} transcripts is not supported yet")
    report: ImportReport = importer(state, args.path, agent=args.agent)
    for line in report.skipped:
        print(f"backscroll: skipped {line}", file=sys.stderr)
    if args.json:
        emit_json(report.as_json())
    else:
        render.import_summary(args.kind, args.path, report)
    return 0


def cmd_status(state: StateDir, args: argparse.Namespace) -> int:
    state.require()
    agents = []
    for agent_id in state.agents():
        with state.open(agent_id) as db:
            agents.append({"agent": agent_id, **db.counts()})
    if args.json:
        emit_json({"stateDir": str(state.path), "agents": agents})
    else:
        render.status(state.path, agents)
    return 0


def cmd_verify(state: StateDir, args: argparse.Namespace) -> int:
    state.require()
    report = verify_state(state)
    if args.json:
        emit_json(report.as_json())
    else:
        render.verify(report)
    return 0 if report.ok else 1


def _not_yet(name: str) -> int:
    raise ValidationError(f"`backscroll {name}` is not built yet")


def cmd_search(state: StateDir, args: argparse.Namespace) -> int:
    return _not_yet("search")


def cmd_history(state: StateDir, args: argparse.Namespace) -> int:
    return _not_yet("history")


def cmd_reindex(state: StateDir, args: argparse.Namespace) -> int:
    return _not_yet("reindex")


def cmd_demo(state: StateDir, args: argparse.Namespace) -> int:
    return _not_yet("demo")


def cmd_browse(state: StateDir, args: argparse.Namespace) -> int:
    return _not_yet("(browser)")
