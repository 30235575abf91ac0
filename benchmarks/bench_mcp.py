"""The MCP server's search round trip over stdio, beside the library call (not a test).

Builds the demo state (``backscroll demo --no-browser``) and reconciles it, starts
``backscroll mcp`` as a subprocess, and times ``sessions_search`` through the SDK's own stdio
client, one call after another, on a fixed list of queries. In the same run it times the
library call ``sessions_search`` in process on the same queries (reader connections kept warm
per thread, as in the server), which is the work the server itself does per call. The
difference to that is the price of MCP: JSON-RPC framing, two pipes, the SDK, thread hops.
A last row drives the same server with a minimal JSON-RPC client (a line out, a line in), to
tell the server's share from the SDK client's (which validates every result against the
tool's output schema).

    .venv/bin/python benchmarks/bench_mcp.py [--calls 100] [--state-dir DIR] [--as KEY]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from mcp import Client, StdioServerParameters

from backscroll.core.config import load_config, make_caller
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir

QUERIES = [
    "deploy", "rollback", '"connection pool"', "café", "migration staging", "部署", "token",
    "backup", "redis", "dep",
]
WARMUP = 10


def backscroll(*argv: str) -> None:
    command = [sys.executable, "-m", "backscroll.tui.cli", *argv]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def queries(calls: int) -> list[str]:
    return [QUERIES[i % len(QUERIES)] for i in range(calls)]


def time_library(state: StateDir, as_key: str | None, calls: int) -> list[float]:
    caller = make_caller(load_config(state.path), as_key)
    samples = []
    for n, query in enumerate(queries(WARMUP + calls)):
        start = time.perf_counter()
        sessions_search(state, SearchRequest(query), caller)
        if n >= WARMUP:
            samples.append((time.perf_counter() - start) * 1000)
    return samples


async def time_stdio(state: Path, as_key: str | None, calls: int) -> list[float]:
    argv = ["-m", "backscroll.tui.cli", "mcp", "--state-dir", str(state)]
    argv += ["--as", as_key] if as_key else []
    server = StdioServerParameters(command=sys.executable, args=argv, env=dict(os.environ))
    samples = []
    async with Client(server) as client:  # the server's startup line goes to our stderr
        for n, query in enumerate(queries(WARMUP + calls)):
            start = time.perf_counter()
            result = await client.call_tool("sessions_search", {"query": query})
            if n >= WARMUP:
                samples.append((time.perf_counter() - start) * 1000)
            if result.is_error:
                raise SystemExit(f"the server refused {query!r}: {result.content[0].text}")
    return samples


def time_raw_stdio(state: Path, as_key: str | None, calls: int) -> list[float]:
    argv = [sys.executable, "-m", "backscroll.tui.cli", "mcp", "--state-dir", str(state)]
    argv += ["--as", as_key] if as_key else []
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, encoding="utf-8")

    def send(message: dict) -> None:
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()

    def request(request_id: int, method: str, params: dict) -> dict:
        send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return json.loads(server.stdout.readline())

    request(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "0"}})
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    samples = []
    for n, query in enumerate(queries(WARMUP + calls), 1):
        start = time.perf_counter()
        answer = request(n, "tools/call", {"name": "sessions_search", "arguments": {"query": query}})
        if n > WARMUP:
            samples.append((time.perf_counter() - start) * 1000)
        if "error" in answer or answer["result"].get("isError"):
            raise SystemExit(f"the server refused {query!r}: {answer}")
    server.stdin.close()
    server.wait()
    return samples


def row(name: str, samples: list[float], reference: float) -> str:
    p50, p95 = percentile(samples, 0.5), percentile(samples, 0.95)
    return (f"| {name:<42} | {p50:7.2f} | {p95:7.2f} | {statistics.mean(samples):7.2f} "
            f"| {p50 / reference:5.2f}x | {p50 - reference:+7.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--state-dir", type=Path, help="a demo state to build or reuse")
    parser.add_argument("--as", dest="as_key", help="search as this session (default: operator)")
    args = parser.parse_args()
    path = args.state_dir or Path(tempfile.gettempdir()) / "backscroll-bench-mcp"
    backscroll("demo", "--no-browser", "--state-dir", str(path))
    backscroll("reindex", "--state-dir", str(path))  # no reconciliation runs while timing

    measured: list[tuple[str, Callable[[], list[float]]]] = [
        ("library call (the server's work)",
         lambda: time_library(StateDir(path), args.as_key, args.calls)),
        ("MCP over stdio (SDK client, round trip)",
         lambda: asyncio.run(time_stdio(path, args.as_key, args.calls))),
        ("MCP over stdio (minimal JSON-RPC client)",
         lambda: time_raw_stdio(path, args.as_key, args.calls)),
    ]
    results = [(name, run()) for name, run in measured]
    reference = percentile(results[0][1], 0.5)
    print(f"sessions_search, {args.calls} calls after {WARMUP} warm-up calls, demo state {path}, "
          f"caller {args.as_key or 'operator'}, load {os.getloadavg()[0]:.2f}")
    print(f"| {'ms per call':<42} | {'p50':>7} | {'p95':>7} | {'mean':>7} | ratio  | {'+p50':>7} |")
    print(f"|{'-' * 44}|{'-' * 9}|{'-' * 9}|{'-' * 9}|{'-' * 8}|{'-' * 9}|")
    for name, samples in results:
        print(row(name, samples, reference))
    print("ratio and +p50: against the first row's p50")


if __name__ == "__main__":
    main()
