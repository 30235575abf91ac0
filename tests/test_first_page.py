"""The browser shows a keystroke's first rows, then the full page once typing pauses
(docs/browser.md, Search as you type): the first rows must be the full page's first rows, or
the list would jump under the person's eyes. The rank must not depend on the limit."""

from __future__ import annotations

import json

import pytest

from backscroll.core.grouped import conversations_search
from backscroll.core.search import LIMIT_MAX, SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.visibility import OPERATOR

from .events import header, msg

pytestmark = pytest.mark.backends

WORDS = ("deploy", "deployed", "deployment", "depot", "rollback", "staging", "migration")


def archive(state: StateDir) -> None:
    """40 conversations where the words recur a varying number of times (scores differ, and
    some tie: the same text in several sessions, at the same minute)."""
    with state.open("main", write=True) as db:
        for i in range(40):
            meta = SessionMeta(f"agent:main:s{i:03d}", session_id=f"sid-{i:03d}")
            db.append(meta, json.dumps(header(f"sid-{i:03d}")))
            parent = None
            for j in range(3):
                words = " ".join(WORDS[(i + j + k) % len(WORDS)] for k in range(1 + (i * j) % 4))
                body = f"{words} for a service {i % 7}" if i % 5 else "deploy a depot to staging"
                entry = f"m{i:03d}{j}"
                db.append(meta, json.dumps(msg(entry, parent, "user" if j % 2 else "assistant",
                                               body, ms=(i % 9) * 60_000 + j)))
                parent = entry


def rows(answer: object) -> list[tuple]:
    if hasattr(answer, "conversations"):
        return [(c.session.key, c.result.message_id, c.hits) for c in answer.conversations]
    return [(r.session_key, r.message_id, r.score) for r in answer.results]


@pytest.mark.parametrize("search", [conversations_search, sessions_search],
                         ids=["grouped", "per message"])
def test_a_first_page_is_the_full_pages_first_rows(state: StateDir, search: object) -> None:
    archive(state)
    for query in ("a", "de", "dep", "depl", "deploy", "deploy st", "ro", "migration"):
        for order in ("best", "recent"):
            full = rows(search(state, SearchRequest(query, LIMIT_MAX, "prefix", order), OPERATOR))
            assert full, query
            for limit in (1, 5, 10, 17):
                first = search(state, SearchRequest(query, limit, "prefix", order), OPERATOR)
                assert rows(first) == full[:limit], (query, order, limit)
