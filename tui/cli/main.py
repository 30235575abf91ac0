"""The ``backscroll`` command line: JSON for scripts (``--json``), Rich for people.

Exit codes (SPEC 10): 0 success, 2 bad input, 3 forbidden, 1 anything else; every failure is
one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from pathlib import Path
from typing import Callable, NoReturn, Sequence

from backscroll.core import formats
from backscroll.core.errors import BackscrollError, ValidationError
from backscroll.core.state import StateDir

from .. import package_version
from ..plain import shown
from . import commands, sources_args
from .sources_args import JSON_HELP


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise ValidationError(f"{message} (see `{self.prog} --help`)")


KEY_HELP = "a session key, agent:<agent id>:<rest> (as search and the browser show it)"
QUERY_SYNTAX = """\
query syntax:
  words separated by spaces must all occur (AND), in any order: deploy canary
  "double quotes" make a phrase, its words next to each other: "disk full"
  nothing else is syntax: OR, NOT, *, -, : and parentheses are ordinary text
  case and accents are ignored (cafe finds Café); --prefix lets the last word match as a prefix
  a query that starts with - goes after --: backscroll search -- -v
  more: docs/query-language.md"""


EXPORT_NOTES = """\
what it writes:
  the active branch, oldest first, every text whole (up to 1,000,000 characters a field)
  and redacted as every output is; --as shows only what that session may see
  a file is refused if it is a folder, a device, a pipe or a socket, and if it exists
  (or is a symlink, even a dangling one) unless --force; it is written beside and renamed
  more: docs/export.md"""
USAGE_NOTES = """\
what it sums:
  the tokens (in, out, cache read, cache write) and cost every stored assistant message
  records, abandoned branches included, each message once; whole UTC days, both ends
  included; a number no message recorded is shown as - (unknown is not zero)
  sessions still waiting to be indexed are counted once reconciled (a warning says so)
  more: docs/usage.md"""


class _Version(argparse.Action):
    """``--version``; the installed version is looked up only when asked (a search as one
    types pays nothing for it)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> NoReturn:
        print(f"backscroll {package_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument(
        "--state-dir",
        type=Path,
        default=argparse.SUPPRESS,
        help="state dir (default: $BACKSCROLL_STATE_DIR or ~/.local/share/backscroll)",
    )
    common.add_argument(
        "--database",
        metavar="URL",
        default=argparse.SUPPRESS,
        help="a PostgreSQL server instead of the state dir's SQLite files "
        "(default: $BACKSCROLL_DATABASE_URL; config.toml stays in the state dir)",
    )
    parser = _Parser(
        prog="backscroll",
        description="Find things in past AI-agent conversations.",
        parents=[common],
    )
    parser.add_argument("--version", action=_Version, help="print backscroll's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def add(name: str, handler: Callable[..., int], help: str, epilog: str | None = None,
            ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help, description=help, epilog=epilog,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.set_defaults(handler=handler)
        return p

    p = add("demo", commands.cmd_demo, "build the demo state (once) and open the browser on it")
    p.add_argument("--messages", type=int, default=3000, help="messages: 10 to 2,000,000 (default 3000)")
    p.add_argument("--rebuild", action="store_true", help="build the demo again from scratch")
    p.add_argument("--no-browser", action="store_true", help="only build it, print where")

    p = add("search", commands.cmd_search, "search user and assistant text (or, with --tools, "
            "tool calls)", QUERY_SYNTAX)
    p.add_argument("query", nargs="?", default="",
                   help='words (all must occur) and "quoted phrases"; see below')
    _add_caller_args(p)
    p.add_argument("--limit", default="10", help="results, 1..25 (default 10)")
    p.add_argument("--prefix", action="store_true", help="the last word also matches as a prefix")
    p.add_argument("--recent", action="store_true", help="newest first instead of best match")
    p.add_argument("--agent", help="only this agent")
    p.add_argument("--session", help="only this session key")
    p.add_argument("--role", choices=["user", "assistant"], help="only this role")
    p.add_argument("--since", help="from this time: ISO date/time, epoch ms, or an age like 3h, 2d, 1w")
    p.add_argument("--until", help="up to this time (same forms as --since)")
    p.add_argument("--source", choices=formats.names(),
                   help="only sessions from this agent tool")
    p.add_argument("--project", metavar="DIR",
                   help="only sessions that ran in this folder (Claude Code, Codex) or below it")
    p.add_argument("--host", metavar="NAME",
                   help="only sessions from this host (a team server keeps each host's apart)")
    p.add_argument("--group", action="store_true",
                   help="one result per conversation holding each word somewhere (not "
                   "necessarily in one message): its best hit, its hits, each word's")
    p.add_argument("--tools", action="store_true",
                   help="search tool calls (name, arguments, result) instead of messages; "
                        "without words, list the newest calls passing --tool/--failed/--session")
    p.add_argument("--tool", metavar="NAME", help="only calls of this tool (implies --tools)")
    p.add_argument("--failed", action="store_true",
                   help="only failed calls: an error result or a non-zero exit (implies --tools)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    p = add("calls", commands.cmd_calls,
            "what an agent did: its tool calls across sessions, newest first")
    _add_caller_args(p, "list as this session would (needs toolCalls in config.toml)")
    p.add_argument("--agent", help="only this agent's sessions")
    p.add_argument("--session", metavar="KEY", help="only this session")
    p.add_argument("--since", help="from this time: ISO date/time, epoch ms, or an age like 3h, 2d, 1w")
    p.add_argument("--until", help="up to this time (same forms as --since)")
    p.add_argument("--tool", metavar="NAME", help="only calls of this tool (ignoring case)")
    p.add_argument("--failed", action="store_true", help="only failed calls")
    p.add_argument("--limit", default="50", help="calls, 1..1000 (default 50)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    p = add("history", commands.cmd_history, "show a session's conversation (active branch)")
    p.add_argument("key", help=KEY_HELP)
    p.add_argument("--message-id", help="center the window on this message")
    p.add_argument("--limit", default=None, help="at most this many messages")
    p.add_argument("--offset", default=None, help="skip this many newest messages (the "
                   "nextOffset of the previous page); not with --message-id")
    p.add_argument("--include-tools", action="store_true", help="include tool calls and results")
    p.add_argument("--full", action="store_true",
                   help="every text, tool call and result whole (not cut at 4,000 characters), "
                   "and no 80 KiB cap: with --limit or --message-id to choose the window")
    p.add_argument("--host", metavar="NAME", help="the session of this host (default: this "
                   "machine's, else the only host holding the key)")
    _add_caller_args(p, "show it only if this session may see it, as that session would")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    p = add("usage", commands.cmd_usage,
            "tokens and cost by day, agent, project or model, as the transcripts record them",
            USAGE_NOTES)
    p.add_argument("--since", default="30d",
                   help="from this day: ISO date/time, epoch ms, or an age like 2d, 1w "
                   "(default 30d)")
    p.add_argument("--until", help="through this day (same forms; default: today)")
    p.add_argument("--by", choices=["day", "agent", "project", "model"], default="day",
                   help="one row per day (default), agent, project (the session's folder) "
                   "or model")
    _add_caller_args(p, "count only the sessions this session may see")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    p = add("export", commands.cmd_export,
            "export a conversation, redacted: Markdown, JSON or a self-contained HTML page",
            EXPORT_NOTES)
    p.add_argument("key", help=KEY_HELP)
    p.add_argument("--format", choices=["markdown", "json", "html"], default="markdown",
                   help="markdown (default), json (as history --json, whole) or html (one "
                   "file, no network, tool calls folded)")
    p.add_argument("--include-tools", action="store_true",
                   help="include tool calls and their results")
    p.add_argument("-o", "--output", metavar="FILE", default="-",
                   help="write to this file (mode 0600); - or nothing: standard output")
    p.add_argument("--force", action="store_true",
                   help="replace FILE if it exists (a link is replaced, never followed)")
    p.add_argument("--host", metavar="NAME", help="the session of this host (default: this "
                   "machine's, else the only host holding the key)")
    _add_caller_args(p, "export it only if this session may see it, as that session would")

    p = add("mcp", commands.cmd_mcp,
            "serve sessions_search, conversations_search, sessions_history, sessions_list and "
            "tool_calls_search (for callers config.toml's toolCalls grants) to agents (MCP, stdio)")
    _add_caller_args(p, "answer as this session would (default: the operator, who sees everything)")

    p = add("import", commands.cmd_import, "import transcripts (stored now, indexed in background)")
    p.add_argument("kind", choices=formats.names(),
                   help="the agent tool that wrote the transcripts")
    # a string: the importer refuses an empty one (Path("") is ".")
    p.add_argument("path", help="a transcript file or a folder of them")
    p.add_argument("--agent", help="store under this agent id")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    p = add("append", commands.cmd_append, "append events (JSON lines on stdin) to a session")
    p.add_argument("key", help=KEY_HELP)
    p.add_argument("--spawned-by", help="key of the session that spawned this one")
    p.add_argument("--parent", help="parentSessionKey of this session")
    p.add_argument("--label", help="a label for a new session (lists show a long one cut)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    p = add("delete", commands.cmd_delete, "delete a session: events, index rows and state")
    p.add_argument("key", help=KEY_HELP)
    p.add_argument("--host", metavar="NAME", help="the session of this host (default: this machine's)")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    p = add("reindex", commands.cmd_reindex, "reconcile dirty sessions now, with progress")
    p.add_argument("--json", action="store_true", help="progress as JSON lines, then the summary")

    p = add("status", commands.cmd_status, "sessions, messages, indexed, dirty per agent")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    p = add("verify", commands.cmd_verify, "prove the index equals every clean active branch")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    sources_args.add_parsers(add, common)

    p = add("push", commands.cmd_push, "copy the local state into a PostgreSQL server, then index it there")
    p.add_argument("url", metavar="URL", help="the server (postgresql://USER@HOST/DATABASE)")
    p.add_argument("--no-index", action="store_true", help="copy only; the server indexes later")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    p = add("db", commands.cmd_db, "set up a PostgreSQL server for a team (docs/postgres.md)")
    db = p.add_subparsers(dest="db_command", metavar="ACTION", parser_class=_Parser, required=True)
    init = db.add_parser(
        "init", parents=[common],
        help="create or upgrade the schema and the writer and read-only roles",
        description="create or upgrade the schema and the writer and read-only roles",
    )
    init.add_argument("--url", help="the server (default: --database or $BACKSCROLL_DATABASE_URL)")
    init.add_argument("--print-sql", action="store_true", help="print the SQL, run nothing")
    init.add_argument("--json", action="store_true", help=JSON_HELP)
    return parser


def _add_caller_args(p: argparse.ArgumentParser, as_help: str = "search as this session would") -> None:
    p.add_argument("--as", dest="as_key", metavar="KEY", help=as_help)
    p.add_argument("--as-host", metavar="NAME", help="the host of the --as session (default: "
                   "this machine's label: config.toml's host, else the hostname)")
    p.add_argument("--sandboxed", action="store_true", default=None, help="apply the sandbox clamp")
    p.add_argument("--visibility", choices=["self", "tree", "agent", "all"],
                   help="which sessions the caller sees (default: config.toml's, else tree)")


def main(argv: Sequence[str] | None = None) -> int:
    args: argparse.Namespace | None = None
    try:
        args = _parse(list(sys.argv[1:] if argv is None else argv))
        state = StateDir(getattr(args, "state_dir", None), getattr(args, "database", None))
        handler = getattr(args, "handler", None)
        if handler is None:
            return commands.cmd_browse(state, args)
        return handler(state, args)
    except BackscrollError as err:
        return fail(err, bool(getattr(args, "json", False)))
    except KeyboardInterrupt:
        print("backscroll: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as err:  # the output went to a full disk (or /dev/full): not a bug
        if err.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):  # what only writes get
            return _internal(err)
        _silence_stdout()
        print(f"backscroll: cannot write the output: {err.strerror}", file=sys.stderr)
        return 1
    except Exception as err:
        return _internal(err)


def _silence_stdout() -> None:
    """Standard output to /dev/null, so the interpreter's last flush of what could not be
    written fails no more (without a file descriptor, as in-process, there is none)."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _internal(err: Exception) -> int:
    """A bug: still one line, with a way to see more."""
    if os.environ.get("BACKSCROLL_DEBUG"):
        raise err
    print(
        f"backscroll: internal error: {type(err).__name__}: {shown(str(err))} "
        "(set BACKSCROLL_DEBUG=1 to see where)",
        file=sys.stderr,
    )
    return 1


def _parse(argv: list[str]) -> argparse.Namespace:
    """The arguments; a query that starts with "-" (read as an option, so the query seems
    missing) is told how to give it."""
    try:
        return build_parser().parse_args(argv)
    except ValidationError as err:
        dashed = next((a for a in argv if a.startswith("-") and not a.startswith("--")
                       and len(a) > 2), None)
        # the query is optional (search --tools --failed): then the dashed word is left over
        if dashed is not None and ("required: query" in str(err)
                                   or f"unrecognized arguments: {dashed}" in str(err)):
            raise ValidationError(
                f"{dashed} was read as an option; to search for it, put -- before it: "
                f"`backscroll search -- {dashed}`"
            ) from None
        raise


def fail(err: BackscrollError, as_json: bool) -> int:
    """The error's JSON (with ``--json``) and its line on stderr; the exit code holds even
    when the reader of standard output has gone (``| head -1``)."""
    if as_json:
        try:
            print(json.dumps(err.as_json(), ensure_ascii=False), flush=True)
        except BrokenPipeError:
            _silence_stdout()
    print(f"backscroll: {shown(str(err))}", file=sys.stderr)
    return err.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
