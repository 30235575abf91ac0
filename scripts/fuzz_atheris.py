"""Coverage-guided fuzzing with atheris (not run in CI; ``pip install -e '.[fuzz]'``).

Targets, each fed raw bytes: ``line`` (event decoding and validation), ``query`` (the query
parser, then the expression run against a real FTS5 index), ``time`` (the time parser),
``append`` (bytes split into lines, appended to a state dir, then verify), and ``openclaw``,
``claude-code``, ``codex`` (bytes written as a transcript file, imported, reconciled,
verified). Anything but a ``ValidationError`` (or a skip with a reason) is a finding: atheris
stops and prints the input.

    .venv/bin/python scripts/fuzz_atheris.py TARGET [atheris/libFuzzer options, e.g. -runs=20000]
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from backscroll.core.errors import ValidationError
    from backscroll.core.importers.claude_code import import_claude_code
    from backscroll.core.importers.codex import import_codex
    from backscroll.core.importers.openclaw import import_openclaw
    from backscroll.core.ingest import append_events
    from backscroll.core.query import parse_query
    from backscroll.core.reconcile import reconcile_all
    from backscroll.core.state import StateDir
    from backscroll.core.storage import SessionMeta
    from backscroll.core.timeparse import parse_time
    from backscroll.core.transcript import parse_event
    from backscroll.core.verify import verify_state

_FTS = sqlite3.connect(":memory:")
_FTS.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61 remove_diacritics 2')")
_FTS.execute("INSERT INTO t VALUES ('the quick café 数据库 fox')")


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape").encode("utf-8", "surrogatepass").decode(
        "utf-8", "replace")


def line(data: bytes) -> None:
    try:
        parse_event(data)
    except ValidationError:
        pass


def query(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    mode = "prefix" if fdp.ConsumeBool() else "exact"
    try:
        parsed = parse_query(fdp.ConsumeUnicodeNoSurrogates(5000), mode)
    except ValidationError:
        return
    _FTS.execute("SELECT rowid FROM t WHERE t MATCH ?", (parsed.fts,)).fetchall()


def time_text(data: bytes) -> None:
    try:
        parse_time(_text(data), now_ms=1_780_000_000_000)
    except ValidationError:
        pass


def _check(state: StateDir) -> None:
    reconcile_all(state)
    report = verify_state(state)
    if not report.ok:
        raise AssertionError(report.problems)


def append(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        state = StateDir(Path(tmp) / "state")
        lines = data.split(b"\n")
        report = append_events(state, SessionMeta("agent:main:main"), lines)
        if report.stored + len(report.refused) != len([x for x in lines if x.strip()]):
            raise AssertionError(report)
        _check(state)


def _target(importer, relative: str, give: str):  # noqa: ANN001, ANN202
    """Write the bytes as a transcript at ``relative`` and import its folder (``give``:
    ``folder``) or the root (``root``); then reconcile and verify."""

    def run(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "in"
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            state = StateDir(Path(tmp) / "state")
            try:
                report = importer(state, root if give == "root" else path.parent)
            except ValidationError:
                return
            if any("unexpected data" in s for s in report.skipped):
                raise AssertionError(report.skipped)
            _check(state)

    return run


TARGETS = {
    "line": line,
    "query": query,
    "time": time_text,
    "append": append,
    "openclaw": _target(import_openclaw, "main/sessions/s-1.jsonl", "folder"),
    "claude-code": _target(import_claude_code, "-p/s-1.jsonl", "root"),
    "codex": _target(import_codex, "2026/05/01/rollout-2026-05-01T00-00-00-c.jsonl", "root"),
}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(TARGETS)}}} [libFuzzer options]")
    target = TARGETS[sys.argv.pop(1)]
    atheris.Setup(sys.argv, target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
