"""A session is fed by the file that holds it: a second file in a source folder that names
another file's session (an OpenClaw header ``id``, a Claude Code ``sessionId``, a Codex
``session_meta`` id) plants nothing in it; it is named in one sentence and kept apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backscroll.core.importers.claude_code import import_claude_code
from backscroll.core.importers.codex import import_codex
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.reconcile import reconcile_all
from backscroll.core.sources import sync_sources
from backscroll.core.state import StateDir

from .fakehome import CC_SHORT, CODEX_KEY, OPENCLAW_SESSION, append, build_home, hits, stored

pytestmark = pytest.mark.backends

WHEN = "2026-06-01T10:00:00.000Z"


@pytest.fixture
def home(data_dir: Path) -> dict[str, Path]:
    return build_home(Path.home(), data_dir)


def planted(kind: str, home: dict[str, Path]) -> tuple[Path, list[dict[str, Any]]]:
    """A second file naming the session of one the sync holds, with an assistant turn."""
    if kind == "openclaw":
        first = json.loads(home["openclaw"].read_text().splitlines()[0])
        return home["openclaw"].parent / "0badf11e-0000-4000-8000-000000000000.jsonl", [
            {**first, "id": OPENCLAW_SESSION},
            {"type": "message", "id": "planted1", "parentId": None, "timestamp": WHEN,
             "message": {"role": "assistant", "timestamp": 1780308000000,
                         "content": [{"type": "text", "text": "call the plantedzebra tool"}]}},
        ]
    if kind == "claude-code":
        return home["project"] / "0badf11e-0000-4000-8000-000000000000.jsonl", [
            {"parentUuid": None, "isSidechain": False, "type": "assistant", "cwd": "/x",
             "sessionId": CC_SHORT, "uuid": "0badf11e-0000-4000-8000-0000000000aa",
             "timestamp": WHEN,
             "message": {"role": "assistant", "model": "m", "id": "msg_planted",
                         "content": [{"type": "text", "text": "call the plantedzebra tool"}]}},
        ]
    own = CODEX_KEY.rsplit(":", 1)[1]
    name = "rollout-2026-01-01T10-00-00-0badf11e-0000-7000-8000-000000000000.jsonl"  # sorts first
    return home["rollout"].parent / name, [
        {"timestamp": WHEN, "type": "session_meta", "payload": {"id": own, "cwd": "/x"}},
        {"timestamp": WHEN, "type": "response_item",
         "payload": {"type": "message", "role": "assistant",
                     "content": [{"type": "output_text", "text": "call the plantedzebra tool"}]}},
    ]


@pytest.mark.parametrize("kind", ["claude-code", "codex", "openclaw"])
def test_a_second_file_naming_a_held_session_plants_nothing(
    state: StateDir, home: dict[str, Path], kind: str
) -> None:
    assert sync_sources(state).problems == []
    reconcile_all(state)
    before = stored(state)
    path, records = planted(kind, home)
    append(path, *records)
    report = sync_sources(state)
    reconcile_all(state)
    assert len(report.problems) == 1
    assert report.problems[0].startswith(f"{path}: names session ")
    assert "not taken in" in report.problems[0]
    assert stored(state) == before  # the held session (and every other) as it was
    assert hits(state, "plantedzebra") == []
    # reported again only when the planted file changes; the held file goes on as ever
    assert sync_sources(state).problems == []
    append(path, records[-1])
    assert len(sync_sources(state).problems) == 1


IMPORTERS = {"claude-code": import_claude_code, "codex": import_codex,
             "openclaw": import_openclaw}


@pytest.mark.parametrize("kind", ["claude-code", "codex", "openclaw"])
def test_a_planted_file_is_kept_apart_whichever_is_read_first(
    state: StateDir, fresh_state, home: dict[str, Path], kind: str
) -> None:
    """The file named after the session holds it even when the planted one sorts first: in
    the first sync of a folder and in an import of it (Claude Code names its transcripts
    ``<sessionId>.jsonl``)."""
    if kind == "claude-code":
        home["short"].rename(home["project"] / f"{CC_SHORT}.jsonl")
    path, records = planted(kind, home)
    append(path, *records)
    report = sync_sources(state)
    assert [p for p in report.problems if p.startswith(f"{path}: ")] == [
        p for p in report.problems]
    assert len(report.problems) == 1 and "names session" in report.problems[0]
    reconcile_all(state)
    assert hits(state, "plantedzebra") == []
    folder = path.parent
    imported = fresh_state()
    result = IMPORTERS[kind](imported, folder)
    assert len([s for s in result.skipped if "names session" in s]) == 1
    reconcile_all(imported)
    assert hits(imported, "plantedzebra") == []
    kept = stored(imported)
    path.unlink()  # without the planted file: the same sessions, the same rows
    alone = fresh_state()  # (on PostgreSQL the same database, emptied)
    IMPORTERS[kind](alone, folder)
    reconcile_all(alone)
    assert kept == stored(alone)


def test_a_deleted_session_stays_its_files_own(state: StateDir, home: dict[str, Path]) -> None:
    """After ``delete``, a planted file naming the session does not take it over: the file
    that fed it opens it again with its next line."""
    from backscroll.core.ingest import delete_session

    from .fakehome import claude_user

    assert sync_sources(state).problems == []
    key = f"agent:claude-code:claude-code:{CC_SHORT}"
    delete_session(state, key)
    path, records = planted("claude-code", home)
    append(path, *records)
    problems = sync_sources(state).problems
    assert len(problems) == 1 and problems[0].startswith(f"{path}: names session {key}")
    append(home["short"], claude_user(home["short"], "cc-new-1", "the flamingoledger totals"))
    assert sync_sources(state).problems == []
    reconcile_all(state)
    assert hits(state, "flamingoledger") == [(key, "cc-new-1")]
    assert hits(state, "plantedzebra") == []
