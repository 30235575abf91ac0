"""One function per CLI verb: parse nothing, call the core, print for people or as JSON.

Each verb imports what it uses, when it runs: a ``search --json`` loads the search path and
nothing else (no Rich, no importers, no Textual), so scripts and agents calling it as they
type get their answer quickly (docs/performance.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from backscroll.core.bounds import read_lines
from backscroll.core.errors import BackscrollError, ValidationError
from backscroll.core.redact import redact

from ..plain import shown

if TYPE_CHECKING:
    from backscroll.core.state import StateDir
    from backscroll.core.visibility import Caller


def _render():  # noqa: ANN202 - the module: Rich loads only when people read the output
    from . import render

    return render


def _reconcile(state: StateDir, agent_id: str) -> None:
    from backscroll.core.reconcile import start_background

    start_background(state, agent_id, "process")


def emit_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False))


def cmd_append(state: StateDir, args: argparse.Namespace) -> int:
    """Each stdin line is one event, stored (and indexed) in its own transaction."""
    from backscroll.core.ingest import append_events
    from backscroll.core.storage import SessionMeta

    meta = SessionMeta(
        key=args.key, spawned_by=args.spawned_by, parent_key=args.parent, label=args.label
    )
    stdin = getattr(sys.stdin, "buffer", None)
    report = append_events(
        state,
        meta,
        # bytes, each line read with a bounded buffer: a bad byte or a huge line refuses
        # that line only
        read_lines(stdin) if stdin is not None else sys.stdin,
        on_refused=lambda problem: print(
            f"backscroll: {shown(problem)}; event not stored", file=sys.stderr
        ),
    )
    if args.json:
        emit_json(report.as_json())
    else:
        _render().append_summary(report)
    return 2 if report.refused else 0


def cmd_delete(state: StateDir, args: argparse.Namespace) -> int:
    from backscroll.core.ingest import delete_session

    deletion = delete_session(state, args.key, args.host)
    if args.json:
        emit_json({"deleted": redact(deletion.key), **deletion.as_json()})
    else:
        _render().info(f"deleted {deletion.key}: its events, index rows and index state are "
                       "gone from every answer")
        for note in deletion.remains:
            _render().info(note)
    return 0


def cmd_import(state: StateDir, args: argparse.Namespace) -> int:
    from backscroll.core import formats

    fmt = formats.get(args.kind)
    assert fmt is not None  # the parser's choices
    report = fmt.doors.import_into(state, args.path, args.agent)
    for line in report.skipped:
        print(f"backscroll: skipped {shown(line)}", file=sys.stderr)
    if args.json:
        emit_json(report.as_json())
    else:
        _render().import_summary(args.kind, args.path, report)
    return 0


def cmd_status(state: StateDir, args: argparse.Namespace) -> int:
    from backscroll.core.status import state_status

    state.require()
    status = state_status(state)
    if args.json:
        emit_json(status.as_json())
    else:
        _render().status(status)
    return 1 if status.broken else 0  # a read-only or unreadable database (docs/architecture.md)


def cmd_verify(state: StateDir, args: argparse.Namespace) -> int:
    from backscroll.core.verify import verify_state

    state.require()
    report = verify_state(state)
    if args.json:
        emit_json(report.as_json())
    else:
        _render().verify(report)
    return 0 if report.ok else 1


def cmd_usage(state: StateDir, args: argparse.Namespace) -> int:
    from backscroll.core.usage import usage_report

    report = usage_report(state, caller_from_args(state, args), args.since, args.until, args.by)
    if args.json:
        emit_json(report.as_json())
    else:
        _render().usage(report)
    return 0


def caller_from_args(state: StateDir, args: argparse.Namespace) -> Caller:
    from backscroll.core.config import load_config, make_caller, report_warnings

    config = load_config(state.path)
    if args.as_key is not None:  # the file's policy is used: say what in it fell back
        report_warnings(config, lambda line: print(line, file=sys.stderr))
    return make_caller(config, args.as_key, args.visibility, args.sandboxed,
                       getattr(args, "as_host", None))


def cmd_search(state: StateDir, args: argparse.Namespace) -> int:
    from backscroll.core.checks import validate_limit
    from backscroll.core.search import LIMIT_MAX, SearchRequest, sessions_search
    from backscroll.core.timeparse import parse_time

    request = SearchRequest(
        query=args.query,
        limit=validate_limit(args.limit, LIMIT_MAX),
        match="prefix" if args.prefix else "exact",
        order="recent" if args.recent else "best",
        agent=args.agent,
        session_key=args.session,
        role=args.role,
        since_ms=parse_time(args.since),
        until_ms=parse_time(args.until),
        source=args.source,
        project=args.project,
        host=args.host,
    )
    caller = caller_from_args(state, args)
    if args.tools or args.tool is not None or args.failed:
        return _search_tools(state, args, request, caller)
    if args.group:
        from backscroll.core.grouped import conversations_search

        grouped = conversations_search(state, request, caller,
                                       on_pending=lambda agent: _reconcile(state, agent))
        if args.json:
            emit_json(grouped.as_json())
        else:
            _render().conversations(request, grouped, caller)
        return 0
    response = sessions_search(state, request, caller, on_pending=lambda agent: _reconcile(state, agent))
    if args.json:
        emit_json(response.as_json())
    else:
        _render().search(request, response, caller)
    return 0


def _search_tools(state: StateDir, args: argparse.Namespace, request: Any, caller: Caller
                  ) -> int:
    """``search --tools`` (``--tool`` and ``--failed`` imply it): the tool-call index."""
    from backscroll.core.tool_search import ToolSearchRequest, tools_search

    if args.group:
        raise ValidationError("--group lists conversations; a tool search lists calls: "
                              "leave one of --group and --tools out")
    response = tools_search(state, ToolSearchRequest(request, args.tool, args.failed), caller,
                            on_pending=lambda agent: _reconcile(state, agent))
    if args.json:
        emit_json(response.as_json())
    else:
        from . import render_tools

        render_tools.tool_hits(request.query, response, caller)
    return 0


def cmd_calls(state: StateDir, args: argparse.Namespace) -> int:
    """What an agent (or a session) did: its tool calls, newest first."""
    from backscroll.core.checks import validate_limit
    from backscroll.core.timeparse import parse_time
    from backscroll.core.tool_search import CALLS_LIMIT_MAX, tool_calls

    if args.agent is not None and args.session is not None:
        raise ValidationError("give --agent or --session, not both (a session is one agent's)")
    caller = caller_from_args(state, args)
    response = tool_calls(
        state, caller, agent=args.agent, session_key=args.session,
        since_ms=parse_time(args.since), until_ms=parse_time(args.until), tool=args.tool,
        failed=args.failed, limit=validate_limit(args.limit, CALLS_LIMIT_MAX))
    if args.json:
        emit_json(response.as_json())
    else:
        from . import render_tools

        render_tools.tool_hits("", response, caller, "call")
    return 0


CUT_NOTE = "… [cut: {more:,} more characters; --full to show]"


def cmd_history(state: StateDir, args: argparse.Namespace) -> int:
    from backscroll.core.history import HistoryRequest, sessions_history

    request = HistoryRequest(
        session_key=args.key,
        message_id=args.message_id,
        limit=args.limit,
        offset=args.offset,
        include_tools=args.include_tools,
        host=args.host,
        cut_note="…" if args.json else CUT_NOTE,
    )
    if args.full:  # as an export reads it: whole fields, no cap on the answer
        from dataclasses import replace  # not on the search path (tests/test_cli_start.py)

        from backscroll.core.export import EXPORT_FIELD_CHARS, EXPORT_MAX_BYTES

        request = replace(request, field_max_chars=EXPORT_FIELD_CHARS,
                          max_bytes=EXPORT_MAX_BYTES)
    response = sessions_history(state, request, caller_from_args(state, args))
    if args.json:
        emit_json(response.as_json())
    else:
        _render().history(response, anchor=args.message_id, full=args.full)
    return 0


FORCE = "replace it with --force"


def cmd_export(state: StateDir, args: argparse.Namespace) -> int:
    """The conversation to standard output, or to a file by the rule the browser's export
    follows (``core.export.check_target``), checked before the conversation is read."""
    from backscroll.core.export import check_format, check_target, export_conversation, write_file

    check_format(args.format)
    to_file = args.output not in ("-", "")
    if to_file:
        check_target(args.output, args.force, FORCE)
    caller = caller_from_args(state, args)
    text = export_conversation(state, args.key, caller, args.format, args.host,
                               args.include_tools)
    if not to_file:
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    path, size = write_file(args.output, text.encode("utf-8"), args.force, FORCE)
    print(f"exported {shown(args.key)} ({size:,} bytes, redacted) to {shown(path)}")
    return 0


def cmd_mcp(state: StateDir, args: argparse.Namespace) -> int:
    """Serve MCP on stdio as the caller fixed here; the SDK is loaded only now."""
    caller = caller_from_args(state, args)
    try:
        from ..mcp import serve
    except ModuleNotFoundError as err:
        missing = (err.name or "mcp").split(".")[0]
        raise BackscrollError(
            f"backscroll mcp needs the optional MCP support ({missing} is not installed): "
            "install it with pip install 'backscroll[mcp]'"
        ) from None
    return serve(state, caller)


def cmd_reindex(state: StateDir, args: argparse.Namespace) -> int:
    """Reconcile every agent in the foreground: a progress bar, or JSON lines."""
    from backscroll.core.reconcile import reconcile_all

    state.require()
    if args.json:
        results = reconcile_all(
            state, on_progress=lambda agent, p: emit_json({"agent": agent, **p.as_json()})
        )
    else:
        results = _render().reindex_with_progress(state, reconcile_all)
    for stats in results:
        for problem in stats.problems:
            print(f"backscroll: {shown(problem)}", file=sys.stderr)
        if stats.error:
            print(f"backscroll: {shown(stats.error)}", file=sys.stderr)
    summary = {
        "sessions": sum(r.sessions for r in results),
        "messages": sum(r.messages for r in results),
        "abandoned": sum(r.abandoned for r in results),
        "busy": [r.agent for r in results if not r.started and not r.error],
        "failed": [{"agent": r.agent, "error": redact(r.error)} for r in results if r.error],
    }
    if args.json:
        emit_json({"done": True, **summary})
    else:
        _render().reindex_summary(summary)
    return 1 if summary["failed"] else 0


def cmd_push(state: StateDir, args: argparse.Namespace) -> int:
    """Copy the local SQLite state into a server (idempotent), then reconcile it there."""
    from backscroll.core.push import push_state
    from backscroll.core.reconcile import reconcile_all
    from backscroll.core.state import StateDir

    source = StateDir(state.path, database_url="")  # the local files, whatever --database says
    target = StateDir(state.path, database_url=args.url)
    if args.json:
        report = push_state(source, target)
    else:
        report = _render().push_with_progress(source, target, push_state)
    summary: dict[str, Any] = {"pushed": report.as_json(), "backend": target.describe()}
    if not args.no_index and report.agents:
        if args.json:
            results = reconcile_all(target, agents=report.agents)
        else:
            results = _render().reindex_with_progress(
                target, lambda state, on_progress: reconcile_all(state, on_progress, agents=report.agents)
            )
        summary["indexed"] = {
            "sessions": sum(r.sessions for r in results),
            "messages": sum(r.messages for r in results),
            "busy": [r.agent for r in results if not r.started and not r.error],
        }
    if args.json:
        emit_json(summary)
    else:
        _render().push_summary(summary)
    return 0


def cmd_db(state: StateDir, args: argparse.Namespace) -> int:
    """``db init``: the server's schema and roles, run or printed."""
    from backscroll.core.state import default_database_url
    from backscroll.core.storage import database_init_sql, init_database
    from backscroll.core.storage.dburl import mask_url

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
        _render().info(
            f"{what} the backscroll schema (version {now}) in {done['url']}; roles "
            "backscroll_writer (agent hosts) and backscroll_reader (support staff) are granted"
        )
    return 0


DEMO_MAX_MESSAGES = 2_000_000  # the largest corpus the benchmarks measure


def cmd_demo(state: StateDir, args: argparse.Namespace) -> int:
    """Build the demo once (into the cache, or --state-dir) and open the browser on it."""
    from backscroll.core.demo import ensure_demo

    explicit = getattr(args, "state_dir", None)
    if not 10 <= args.messages <= DEMO_MAX_MESSAGES:  # a typo must not build for days
        raise ValidationError(
            f"--messages must be from 10 to {DEMO_MAX_MESSAGES:,}, not {args.messages}"
        )
    _render().info("preparing the demo (built once, then reused)…")
    demo = ensure_demo(explicit, messages=args.messages, rebuild=args.rebuild)
    if args.no_browser:
        _render().info(f"demo state dir: {demo.path}")
        return 0
    return _browse(demo, sources=False)  # made-up conversations: never mixed with real ones


def cmd_browse(state: StateDir, args: argparse.Namespace) -> int:
    return _browse(state)


def _browse(state: StateDir, sources: bool = True) -> int:
    from backscroll.core.file_modes import require_state_folder

    from ..app import run_browser

    require_state_folder(state.path)  # a file: the CLI's sentence, not an empty browser
    return run_browser(state, sources=sources)
