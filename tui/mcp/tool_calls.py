"""The MCP server's ``tool_calls_search`` (issue 26, SPEC 18): the tool-call index for callers
``config.toml`` grants it (``[tools.sessions] toolCalls``); any other caller gets the answer
of a search that matches nothing, with no error and no hint (core/tool_search.py)."""

from __future__ import annotations

from typing import Annotated, Any, Awaitable, Callable, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field, StrictBool, StrictInt, StrictStr
from typing_extensions import NotRequired, TypedDict

from backscroll.core.query import MAX_QUERY_CHARS
from backscroll.core.search import LIMIT_DEFAULT, LIMIT_MAX, SearchRequest
from backscroll.core.state import StateDir
from backscroll.core.timeparse import parse_time
from backscroll.core.tool_search import ToolSearchRequest, tools_search
from backscroll.core.visibility import Caller


class ToolHit(TypedDict):
    sessionKey: str
    sessionId: str
    agent: str
    messageId: str
    callId: str | None
    tool: str
    arguments: str
    status: Literal["ok", "failed", "none"]
    durationMs: int | None
    timestamp: int
    excerpt: str
    score: float
    resultId: str | None
    source: str
    host: NotRequired[str | None]


class ToolAnswer(TypedDict):
    results: list[ToolHit]
    indexing: NotRequired[bool]
    warning: NotRequired[str]
    truncated: NotRequired[bool]
    rankedNewest: NotRequired[int]


def description(data_note: str) -> str:
    return """\
Search the tool calls of past conversations (each call's tool name, its arguments, and the \
start and end of its result), if this server's policy lets you (else the answer is always \
empty). Returns the best matches first: sessionKey, messageId (the assistant message that \
made the call), callId, tool, arguments (on one line), status (ok, failed, or none when no \
result came), durationMs, time, excerpt and score.

The query language is sessions_search's; query may be empty when tool or failed is given: \
then the newest calls passing them. failed: only calls whose result was an error or a \
non-zero exit. To read the conversation at a call, call sessions_history with its \
sessionKey, its messageId and includeTools true. Text is redacted (secrets masked).

""" + data_note


Query = Annotated[str, Field(
    description='words (all must occur) and "quoted phrases"; may be empty with tool or failed',
    json_schema_extra={"maxLength": MAX_QUERY_CHARS})]
Limit = Annotated[StrictInt, Field(description="calls to return",
                                   json_schema_extra={"minimum": 1, "maximum": LIMIT_MAX})]
Order = Annotated[Literal["best", "recent"], Field(
    description="best: best match first; recent: newest first")]
Tool = Annotated[str | None, Field(description="only calls of this tool (ignoring case)")]
Failed = Annotated[StrictBool, Field(description="only failed calls")]
Agent = Annotated[str | None, Field(description="only this agent id")]
OnlySession = Annotated[str | None, Field(description="only this session key")]
Time = Annotated[StrictStr | StrictInt | None, Field(
    description="an ISO date or date-time, epoch milliseconds, or an age like 3h, 2d, 1w")]


def register(server: MCPServer, state: StateDir, caller: Caller,
             on_pending: Callable[[str], None], annotations: ToolAnnotations, data_note: str,
             off_loop: Callable[[Context, Callable[[], dict[str, Any]]], Awaitable[CallToolResult]]
             ) -> None:
    @server.tool(name="tool_calls_search", description=description(data_note),
                 annotations=annotations)
    async def tool_calls_tool(
        ctx: Context,
        query: Query = "",
        tool: Tool = None,
        failed: Failed = False,
        limit: Limit = LIMIT_DEFAULT,
        order: Order = "best",
        agent: Agent = None,
        sessionKey: OnlySession = None,
        since: Time = None,
        until: Time = None,
    ) -> Annotated[CallToolResult, ToolAnswer]:
        def search() -> dict[str, Any]:
            request = SearchRequest(query=query, limit=limit, order=order, agent=agent,
                                    session_key=sessionKey, since_ms=parse_time(since),
                                    until_ms=parse_time(until))
            return tools_search(state, ToolSearchRequest(request, tool, failed), caller,
                                on_pending=on_pending).as_json()

        return await off_loop(ctx, search)
