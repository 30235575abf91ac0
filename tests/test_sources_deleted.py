"""``delete`` is not undone by ``sync``: the files that fed a deleted session remember it, so
a line appended afterwards opens the session on that line alone, and a read of the file from
the start (rewritten, or an OpenClaw follow that restarts) leaves the deleted lines out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backscroll.core.ingest import delete_session
from backscroll.core.reconcile import reconcile_all
from backscroll.core.sources import sync_sources
from backscroll.core.state import StateDir

from .fakehome import append, build_home, claude_user, codex_user, hits, openclaw_user

pytestmark = pytest.mark.backends

FILES = {"openclaw": "openclaw", "claude-code": "short", "codex": "rollout"}


@pytest.fixture
def home(data_dir: Path) -> dict[str, Path]:
    return build_home(Path.home(), data_dir)


def user_line(kind: str, path: Path, entry_id: str, text: str) -> dict[str, Any]:
    if kind == "openclaw":
        return openclaw_user(path, entry_id, text)
    if kind == "claude-code":
        return claude_user(path, entry_id, text)
    return codex_user(text)


def sync(state: StateDir) -> list[str]:
    report = sync_sources(state)
    assert report.problems == []
    reconcile_all(state)
    return report.notes


def texts_of(state: StateDir, key: str) -> list[str]:
    agent = key.split(":")[1]
    with state.open(agent) as db:
        session = db.session(key)
        assert session is not None
        return [json.dumps(event) for _, event in db.events(session.pk)]


@pytest.mark.parametrize("kind", sorted(FILES))
def test_a_deleted_session_is_not_taken_in_again(state: StateDir, home: dict[str, Path],
                                                 kind: str) -> None:
    path = home[FILES[kind]]
    append(path, user_line(kind, path, "secret-1", "the quetzalsecret password is hunter2"))
    sync(state)
    ((key, _),) = hits(state, "quetzalsecret")
    before = len(texts_of(state, key))
    assert before > 3
    delete_session(state, key)

    append(path, user_line(kind, path, "later-1", "a later wombatnote"))
    sync(state)
    assert hits(state, "quetzalsecret") == []
    assert [k for k, _ in hits(state, "wombatnote")] == [key]
    kept = texts_of(state, key)
    assert len(kept) < 4 and not any("quetzalsecret" in text for text in kept)

    # read again from the start (its first bytes changed): the deleted lines stay out
    path.write_bytes(b" " + path.read_bytes())
    notes = sync(state)
    assert any("held a deleted conversation" in note for note in notes)
    assert hits(state, "quetzalsecret") == []
    assert [k for k, _ in hits(state, "wombatnote")] == [key]
    assert not any("quetzalsecret" in text for text in texts_of(state, key))

    # what comes after is taken in as ever
    append(path, user_line(kind, path, "later-2", "then a numbatquote"))
    sync(state)
    assert [k for k, _ in hits(state, "numbatquote")] == [key]


def test_a_session_store_does_not_bring_a_deleted_session_back(
    state: StateDir, home: dict[str, Path]
) -> None:
    sync(state)
    path = home["openclaw"]
    append(path, openclaw_user(path, "secret-1", "the quetzalsecret password"))
    sync(state)
    ((key, _),) = hits(state, "quetzalsecret")
    delete_session(state, key)
    store = home["store"]
    store.write_text(store.read_text() + "\n")  # OpenClaw rewrites it on every turn
    sync(state)
    with state.open(key.split(":")[1]) as db:
        assert db.session(key) is None
    append(path, openclaw_user(path, "later-1", "a later wombatnote"))
    sync(state)
    assert [k for k, _ in hits(state, "wombatnote")] == [key]
    assert hits(state, "quetzalsecret") == []
