"""The middle band of match counts (issue 27): words with accents and CJK words in a share of
the messages, where every match up to the rank window is a candidate scored in Python. The
answer is BM25 over exactly the caller's visible messages, computed here from their stored
text alone, on both backends; and a query whose rarest token is rare is not bounded by the
work budget (the SQLite planner stops counting tokens once one is rare enough)."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core import rank
from backscroll.core.query import parse_query
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.storage.sqlite import matching
from backscroll.core.visibility import OPERATOR, Caller, Policy
from backscroll.core.visible_sessions import visible_sessions

from .test_rank import CALLER, OTHERS, TREE, add, answer, brute_counts, build

# Folded forms of one accented word, a CJK word and its characters apart, and fillers.
PIECES = ["fiabilité", "Fiabilite", "FIABILITÉ", "la fiabilité du service", "fiabilités",
          "缓存区", "检查缓存区的状态", "缓存", "区", "存", "the", "kestrel", "café", "—", "数据库"]
QUERIES = ["fiabilité", "FIABILITE", "缓存区", "fiabilite 缓存区", '"la fiabilite"', "缓存 区",
           "kestrel fiabilité"]

texts = st.lists(st.tuples(st.integers(0, 5), st.lists(st.sampled_from(PIECES), min_size=1,
                                                       max_size=5).map(" ".join)), max_size=14)


def fill(state: StateDir, visible_texts, hidden_texts) -> StateDir:
    """test_rank.build's sessions and messages, in a state of the test's backend."""
    clock = 0
    with state.open("a", write=True) as db:
        add(db, "agent:a:main", "m0", "kiwi", 1)
        for key, spawner in TREE + [("agent:a:subagent:o1", "agent:a:main")]:
            db.import_session(SessionMeta(key, spawned_by=spawner, parent_key=spawner), [])
        for n, (which, text) in enumerate(visible_texts):
            clock += 1
            add(db, TREE[which % len(TREE)][0], f"v{n}", text, 10 * clock)
        for n, (which, text) in enumerate(hidden_texts):
            clock += 1
            add(db, OTHERS[which % len(OTHERS)], f"h{n}", text, 10 * clock + 5)
    return state


def oracle(state, query: str, keys: list[str]) -> list[tuple[str, float]]:
    """Message ids and scores, best first, from the visible rows' stored text alone."""
    parsed = parse_query(query)
    with state.open("a") as db:
        bodies, rowids = {}, {}
        for key in keys:
            session = db.session(key)
            for rowid, row in db.index_rows(session.pk) if session is not None else ():
                bodies[row.entry_id], rowids[row.entry_id] = row.body, rowid
    counts = {e: brute_counts(b, parsed.phrases, parsed.prefix) for e, b in bodies.items()}
    n = len(bodies)
    average = sum(len(b) for b in bodies.values()) / n
    holding = [sum(1 for c in counts.values() if c[i]) for i in range(len(parsed.phrases))]

    def score(entry: str) -> float:
        norm = rank.K1 * (1 - rank.B + rank.B * len(bodies[entry]) / average)
        return sum(rank.idf(n, holding[i]) * tf * (rank.K1 + 1) / (tf + norm)
                   for i, tf in enumerate(counts[entry]))

    matching_ids = [e for e, c in counts.items() if all(c)]
    ranked = sorted(matching_ids, key=lambda e: (-score(e), -rowids[e]))
    return [(e, round(score(e), 6)) for e in ranked]


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(visible=texts.filter(bool), hidden=texts, query=st.sampled_from(QUERIES),
       operator=st.booleans())
@pytest.mark.slow
@pytest.mark.backends
def test_the_middle_band_ranks_as_bm25_over_the_visible_messages(
    fresh_state, visible, hidden, query, operator
) -> None:
    """Accented and CJK words in any share of the messages: the answer's ids and scores are
    those computed from the visible messages' text (no window: every match a candidate; on
    SQLite the budget's token counts stop at the first rare token)."""
    state = fill(fresh_state(), visible, hidden)
    caller = OPERATOR if operator else Caller(CALLER, Policy("tree"))
    keys = [key for key, _ in TREE] + (OTHERS if operator else [])
    got = answer(state, query, "best", caller)
    assert "searchedSince" not in got
    assert [(r["messageId"], r["score"]) for r in got["results"]] == oracle(state, query, keys)[:25]


def test_a_rare_token_spares_counting_the_others(tmp_path: Path) -> None:
    """A query of several tokens whose first is rare counts only that one for the budget:
    the rest are counted only where a part needs them (the SQLite planner)."""
    state = build(tmp_path / "a", [(0, "缓存区 the"), (1, "the the"), (2, "the 区")], [])
    parsed = parse_query("缓存区")
    seen: list[str] = []
    real = matching.Matching._newest

    def spy(self, plan, body, n, filters, since=None, ix=matching.MESSAGES):
        seen.append(body)
        return real(self, plan, body, n, filters, since, ix)

    with state.open("a") as db, db.snapshot(), \
            patch.object(matching.Matching, "_newest", spy):
        scope = visible_sessions(db, OPERATOR).scope
        found = db.match(parsed, scope, window=10, limit=11)
    assert [row.body for row in found.rows] == ["缓\u200b存\u200b区 the"]
    assert len(seen) == 2  # the first character's count, then the word's matches
    assert found.searched_since is None
