"""The stdio wire of ``backscroll mcp``: the SDK's transport, plus an answer to broken lines.

The SDK's ``stdio_server`` reads one JSON-RPC message per line, and while it serves points
file descriptor 1 at stderr (only its own writer reaches the real stdout); stdin is read
here (``_claimed_stdin``: descriptor 0 points at the null device meanwhile), each line
passing ``screened`` on its way to the SDK. A line that is not a JSON-RPC message reaches
the server as an exception, which the SDK drops without a word; here it gets the JSON-RPC
answer for it (``-32700`` parse error, or ``-32600`` invalid request, ``id`` null) with one
sentence, and serving goes on. A request whose id is neither a string nor an integer (an
object, a list, 1.5, true, null) would be read by the SDK as a notification and never
answered: it gets ``-32600`` with ``id`` null.
"""

from __future__ import annotations

import io
import json
import os
from contextlib import contextmanager
from typing import IO, Any, Iterator

import anyio
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

NOT_JSON = "Parse error: each line on stdin must be one JSON-RPC message, and this one is not JSON."
NOT_JSONRPC = "Invalid request: this line is JSON but not a JSON-RPC 2.0 request, notification or response."
NO_VALID_ID = ("Invalid request: its id must be a string or an integer; a request whose id is "
               "not one cannot be answered under it.")
# What a request without a valid id is replaced by before the SDK reads it (a JSON object that
# is no JSON-RPC message: refused, then answered with NO_VALID_ID).
_NO_VALID_ID_MARK = {"jsonrpc": "2.0", "backscroll": "a request without a valid id"}
LONE_SURROGATE = ("Invalid request: a string in it holds a lone surrogate (a \\ud800-\\udfff escape), "
                  "which is not valid Unicode.")


def refusal(problem: Exception) -> SessionMessage:
    """The JSON-RPC error answering a line that could not be read as a message."""
    invalid_json = [e for e in problem.errors(include_url=False) if e["type"] == "json_invalid"
                    ] if isinstance(problem, ValidationError) else []
    if not invalid_json:
        marked = isinstance(problem, ValidationError) and any(
            e.get("input") == _NO_VALID_ID_MARK for e in problem.errors(include_url=False))
        return _error(None, INVALID_REQUEST, NO_VALID_ID if marked else NOT_JSONRPC)
    request_id = _id_despite_surrogates(invalid_json[0].get("input"))
    if request_id is None:
        return _error(None, PARSE_ERROR, NOT_JSON)
    return _error(request_id, INVALID_REQUEST, LONE_SURROGATE)


def _id_despite_surrogates(line: Any) -> int | str | None:
    """The id of a request the SDK's parser refused only for a lone surrogate escape (a model
    cutting an emoji in half writes one): the standard library reads it, so the answer can
    carry the id its client waits for, instead of a parse error it would never match."""
    try:
        message = json.loads(line)
    except (TypeError, ValueError, RecursionError):
        return None
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, (int, str)):
        return None
    return request_id


def screened(line: str) -> str:
    """``line``, or the mark of a request without a valid id: one with a ``method`` and an
    ``id`` that is not a string or an integer (the SDK's own rule for an id)."""
    if '"id"' not in line:
        return line
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return line  # the SDK refuses it too, and says why
    if not isinstance(message, dict) or "id" not in message or "method" not in message:
        return line
    request_id = message["id"]
    if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
        return line
    return json.dumps(_NO_VALID_ID_MARK) + "\n"


class _ScreenedLines:
    """A text file whose lines pass through ``screened`` (what ``anyio.wrap_file`` reads)."""

    def __init__(self, inner: IO[str]) -> None:
        self._inner = inner

    def readline(self) -> str:
        line = self._inner.readline()
        return screened(line) if line else line


@contextmanager
def _claimed_stdin() -> Iterator[IO[str]]:
    """Standard input for the wire alone, as the SDK claims it: a private copy of descriptor
    0, which meanwhile points at the null device (a child process or a stray read gets end of
    file), restored at the end. The copy is never closed: a reading thread may still block on
    it after serving ends."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        raw = os.fdopen(private, "rb", closefd=False)
        yield io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
    finally:
        os.dup2(private, 0)


def _error(request_id: int | str | None, code: int, message: str) -> SessionMessage:
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id,
                                       error=ErrorData(code=code, message=message)))


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
    with _claimed_stdin() as stdin:
        async with stdio_server(stdin=anyio.wrap_file(_ScreenedLines(stdin))) as (read_stream,
                                                                                 write_stream):
            await server.run(
                _Answering(read_stream, write_stream),
                write_stream,
                server.create_initialization_options(),
            )
