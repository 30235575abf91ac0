"""``recent`` order is one total order on both backends: newest first, then session key,
then message id. Rows of one millisecond get rowid slots from their session's id, which two
stores of the same transcripts need not share (here each store draws its own), so an order
by rowid differed between SQLite and PostgreSQL (46 of 2,160 answers in a red-team run)."""

from __future__ import annotations

import pytest

from backscroll.core.grouped import conversations_search
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.visibility import OPERATOR

from .test_search import add

pytestmark = pytest.mark.backends

# (key, message id, ms): most at one millisecond, across sessions and agents
ROWS = [
    ("agent:main:c", "c2", 5_000), ("agent:main:a", "a9", 5_000), ("agent:ops:b", "b1", 5_000),
    ("agent:main:c", "c1", 5_000), ("agent:main:b", "b3", 5_000), ("agent:main:a", "a1", 5_000),
    ("agent:main:b", "b2", 9_000), ("agent:ops:a", "x1", 5_000), ("agent:main:d", "d1", 1_000),
]
EXPECTED = ["b2", "a1", "a9", "b3", "c1", "c2", "x1", "b1", "d1"]  # time, key, id


@pytest.mark.parametrize("limit", [1, 2, 3, 5, 8, 9, 10])
def test_equal_times_come_in_one_order_on_every_backend(state, limit) -> None:
    for key, entry, ms in ROWS:
        add(state, key, entry, f"the tie {entry}", ms)
    answer = sessions_search(state, SearchRequest("tie", limit=limit, order="recent"), OPERATOR)
    assert [r.message_id for r in answer.results] == EXPECTED[:limit]
    assert bool(answer.truncated) == (limit < len(EXPECTED))
    mains = sessions_search(state, SearchRequest("tie", limit=limit, order="recent", agent="main"),
                            OPERATOR)
    assert [r.message_id for r in mains.results] == [
        e for e in EXPECTED if e not in ("x1", "b1")][:limit]


def test_grouped_recent_takes_each_conversations_newest_in_the_same_order(state) -> None:
    for key, entry, ms in ROWS:
        add(state, key, entry, f"the tie {entry}", ms)
    grouped = conversations_search(state, SearchRequest("tie", limit=25, order="recent"), OPERATOR)
    assert [(c.session.key, c.result.message_id) for c in grouped.conversations] == [
        ("agent:main:b", "b2"), ("agent:main:a", "a1"), ("agent:main:c", "c1"),
        ("agent:ops:a", "x1"), ("agent:ops:b", "b1"), ("agent:main:d", "d1"),
    ]
