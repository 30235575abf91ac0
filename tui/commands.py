"""One function per CLI verb: parse nothing, call the core, print for people or as JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from backscroll.core.config import load_config, make_caller
from backscroll.core.errors import ValidationError
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.importers import ImportReport
from backscroll.core.importers.claude_code import import_claude_code
from backscroll.core.importers.codex import import_codex
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.ingest import append_events, delete_session
from backscroll.core.push import push_state
from backscroll.core.reconcile import reconcile_all, start_background
from backscroll.core.search import SearchRequest, sessions_search, validate_limit
from backscroll.core.state import StateDir, default_database_url
from backscroll.core.status import state_status
from backscroll.core.storage import SessionMeta, database_init_sql, init_database
from backscroll.core.storage.dburl import mask_url
from backscroll.core.timeparse import parse_time
from backscroll.core.verify import verify_state
from backscroll.core.visibility import Caller

from . import render


def emit_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False))


def cmd_append(state: StateDir, args: argparse.Namespace) -> int:
    """Each stdin line is one event, stored (and indexed) in its own transaction."""
    meta = SessionMeta(
        key=args.key, spawned_by=args.spawned_by, parent_key=args.parent, label=args.label
    )
    report = append_events(
        state,
        meta,
        getattr(sys.stdin, "buffer", sys.stdin),  # bytes: a bad byte refuses one line only
        on_refused=lambda problem: print(
            f"backscroll: {problem}; event not stored", file=sys.stderr
        ),
    )
    if args.json:
        emit_json(report.as_json())
    else:
        render.append_summary(report)
    return 2 if report.refused else 0


def cmd_delete(state: StateDir, args: argparse.Namespace) -> int:
    key = delete_session(state, args.key)
    if args.json:
        emit_json({"deleted": key})
    else:
        render.info(f"deleted {key}: its events, index rows and index state are gone")
    return 0


def cmd_import(state: StateDir, args: argparse.Namespace) -> int:
    importers = {
        "openclaw": import_openclaw,
        "claude-code": import_claude_code,
        "codex": import_codex,
    }
    report: ImportReport = importers[args.kind](state, args.path, agent=args.agent)
    for line in report.skipped:
        print(f"backscroll: skipped {line}", file=sys.stderr)
    if args.json:
        emit_json(report.as_json())
    else:
        render.import_summary(args.kind, args.path, report)
    return 0


def cmd_status(state: StateDir, args: argparse.Namespace) -> int:
    state.require()
    status = state_status(state)
    if args.json:
        emit_json(status.as_json())
    else:
        render.status(status)
    return 0


def cmd_verify(state: StateDir, args: argparse.Namespace) -> int:
    state.require()
    report = verify_state(state)
    if args.json:
        emit_json(report.as_json())
    else:
        render.verify(report)
    return 0 if report.ok else 1


def caller_from_args(state: StateDir, args: argparse.Namespace) -> Caller:
    return make_caller(load_config(state.path), args.as_key, args.visibility, args.sandboxed)


def cmd_search(state: StateDir, args: argparse.Namespace) -> int:
    request = SearchRequest(
        query=args.query,
        limit=validate_limit(args.limit),
        match="prefix" if args.prefix else "exact",
        order="recent" if args.recent else "best",
        agent=args.agent,
        session_key=args.session,
        role=args.role,
        since_ms=parse_time(args.since),
        until_ms=parse_time(args.until),
    )
    caller = caller_from_args(state, args)
    response = sessions_search(
        state, request, caller, on_pending=lambda agent: start_background(state, agent, "process")
    )
    if args.json:
        emit_json(response.as_json())
    else:
        render.search(request, response, caller)
    return 0


def cmd_history(state: StateDir, args: argparse.Namespace) -> int:
    request = HistoryRequest(
        session_key=args.key,
        message_id=args.message_id,
        limit=args.limit,
        include_tools=args.include_tools,
    )
    response = sessions_history(state, request, caller_from_args(state, args))
    if args.json:
        emit_json(response.as_json())
    else:
        render.history(response, anchor=args.message_id)
    return 0


def cmd_reindex(state: StateDir, args: argparse.Namespace) -> int:
    """Reconcile every agent in the foreground: a progress bar, or JSON lines."""
    state.require()
    if args.json:
        results = reconcile_all(
            state, on_progress=lambda agent, p: emit_json({"agent": agent, **p.as_json()})
        )
    else:
        results = render.reindex_with_progress(state, reconcile_all)
    for stats in results:
        for problem in stats.problems:
            print(f"backscroll: {problem}", file=sys.stderr)
    summary = {
        "sessions": sum(r.sessions for r in results),
        "messages": sum(r.messages for r in results),
        "abandoned": sum(r.abandoned for r in results),
        "busy": [r.agent for r in results if not r.started],
    }
    if args.json:
        emit_json({"done": True, **summary})
    else:
        render.reindex_summary(summary)
    return 0


def cmd_push(state: StateDir, args: argparse.Namespace) -> int:
    """Copy the local SQLite state into a server (idempotent), then reconcile it there."""
    source = StateDir(state.path, database_url="")  # the local files, whatever --database says
    target = StateDir(state.path, database_url=args.url)
    if args.json:
        report = push_state(source, target)
    else:
        report = render.push_with_progress(source, target, push_state)
    summary = {"pushed": report.as_json(), "backend": target.describe()}
    if not args.no_index and report.agents:
        if args.json:
            results = reconcile_all(target, agents=report.agents)
        else:
            results = render.reindex_with_progress(
                target, lambda state, on_progress: reconcile_all(state, on_progress, agents=report.agents)
            )
        summary["indexed"] = {
            "sessions": sum(r.sessions for r in results),
            "messages": sum(r.messages for r in results),
            "busy": [r.agent for r in results if not r.started],
        }
    if args.json:
        emit_json(summary)
    else:
        render.push_summary(summary)
    return 0


def cmd_db(state: StateDir, args: argparse.Namespace) -> int:
    """``db init``: the server's schema and roles, run or printed."""
    if args.print_sql:
        sys.stdout.write(database_init_sql())
        return 0
    url = args.url or getattr(args, "database", None) or default_database_url()
    if not url:
        raise ValidationError("db init needs the server: --url postgresql://USER@HOST/DATABASE")
    before, now = init_database(url)
    done = {"url": mask_url(url), "schemaBefore": before, "schema": now}
    if args.json:
        emit_json(done)
    else:
        what = "created" if before == 0 else "upgraded" if before < now else "checked"
        render.info(
            f"{what} the backscroll schema (version {now}) in {done['url']}; roles "
            "backscroll_writer (agent hosts) and backscroll_reader (support staff) are granted"
        )
    return 0


def cmd_demo(state: StateDir, args: argparse.Namespace) -> int:
    """Build the demo once (into the cache, or --state-dir) and open the browser on it."""
    from backscroll.core.demo import ensure_demo

    explicit = getattr(args, "state_dir", None)
    if args.messages < 10:
        raise ValidationError("--messages must be at least 10")
    render.info("preparing the demo (built once, then reused)…")
    demo = ensure_demo(explicit, messages=args.messages, rebuild=args.rebuild)
    if args.no_browser:
        render.info(f"demo state dir: {demo.path}")
        return 0
    return _browse(demo)


def cmd_browse(state: StateDir, args: argparse.Namespace) -> int:
    return _browse(state)


def _browse(state: StateDir) -> int:
    from .app import run_browser

    return run_browser(state)
