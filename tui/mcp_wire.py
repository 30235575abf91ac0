"""The stdio wire of ``backscroll mcp``: the SDK's transport, plus an answer to broken lines.

The SDK's ``stdio_server`` reads one JSON-RPC message per line, and while it serves points
file descriptor 1 at stderr (only its own writer reaches the real stdout) and 0 at the null
device. A line that is not a JSON-RPC message reaches the server as an exception, which the
SDK drops without a word; here it gets the JSON-RPC answer for it (``-32700`` parse error,
or ``-32600`` invalid request, ``id`` null) with one sentence, and serving goes on.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

NOT_JSON = "Parse error: each line on stdin must be one JSON-RPC message, and this one is not JSON."
NOT_JSONRPC = "Invalid request: this line is JSON but not a JSON-RPC 2.0 request, notification or response."


def refusal(problem: Exception) -> SessionMessage:
    """The JSON-RPC error answering a line that could not be read as a message."""
    not_json = isinstance(problem, ValidationError) and any(
        e["type"] == "json_invalid" for e in problem.errors(include_url=False)
    )
    error = ErrorData(code=PARSE_ERROR, message=NOT_JSON) if not_json else ErrorData(
        code=INVALID_REQUEST, message=NOT_JSONRPC
    )
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error))


class _Answering:
    """A read stream that answers unreadable lines itself and passes every message on."""

    def __init__(self, inner: Any, write_stream: Any) -> None:
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self) -> Any:  # the sender's context, as the SDK's own stream keeps it
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._write.send(refusal(item))

    def __aiter__(self) -> "_Answering":
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> "_Answering":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def serve_stdio(server: Server) -> None:
    """Serve ``server`` (the SDK's low-level server) on stdin/stdout until stdin closes."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(
            _Answering(read_stream, write_stream),
            write_stream,
            server.create_initialization_options(),
        )
