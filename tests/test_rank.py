"""Ranking (core/rank.py): term counts agree with the index's tokens, scores are BM25 over
exactly the caller's visible messages, and nothing in a hidden session moves them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core import rank
from backscroll.core.query import parse_query, tokens
from backscroll.core.reconcile import reconcile_all
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import CorpusStats, PartCount, SessionMeta
from backscroll.core.textseg import segment
from backscroll.core.visibility import OPERATOR, Caller, Policy

from .events import leaf, msg

# ------------------------------------------------------------------ term counts


def brute_counts(body: str, phrases, prefix_last: bool) -> list[int]:
    toks = [tok for _, _, tok in tokens(body)]
    out = []
    for k, phrase in enumerate(phrases):
        prefix = prefix_last and k == len(phrases) - 1
        n = len(phrase)
        out.append(sum(
            all((toks[i + j].startswith(w) if prefix and j == n - 1 else toks[i + j] == w)
                for j, w in enumerate(phrase))
            for i in range(len(toks) - n + 1)
        ))
    return out


pieces = st.sampled_from(["deploy", "Deploy", "deployed", "café", "CAFE", "cafés", "cafe\u0301",
                          "数据", "库", "a", "a a", "x_y", "don't", "v2.1", "ß", "ΣΟΦΟΣ", "σοφος",
                          "กิน", "한국어", "İ", "\ue000x", " ", "\n", "-", "...", "\u200b",
                          "—", "→", "😀", "👍🏽", "a\u0301b", "ſ"])


@settings(max_examples=300, deadline=None)
@given(
    body=st.lists(pieces, max_size=12).map(" ".join),
    query=st.lists(st.sampled_from(["deploy", "cafe", "数据", "a a", "a", "v2", "1", "de",
                                    "σοφοσ", "กิน", "국", "i", "\ue000x"]),
                   min_size=1, max_size=3).map(" ".join),
    phrase=st.booleans(),
    prefix=st.booleans(),
)
def test_term_counts_agree_with_the_index_tokens(body, query, phrase, prefix) -> None:
    parsed = parse_query(f'"{query}"' if phrase else query, "prefix" if prefix else "exact")
    stored = segment(body)  # what the index holds (CJK characters split)
    expected = brute_counts(stored, parsed.phrases, parsed.prefix)
    assert rank.TermCounter(parsed).counts(stored) == expected


def test_bm25_arithmetic() -> None:
    stats = CorpusStats(rows=100, chars=5000, parts=(PartCount(10), PartCount(2000, 400)))
    assert rank.df(stats, 0) == 10
    assert rank.df(stats, 1) == 100  # 2000 * 100 / 400, capped at every message
    assert rank.idf(100, 10) == math.log(1 + 90.5 / 10.5)
    scorer = rank.Scorer(parse_query("deploy rollback"), stats)
    body = "deploy deploy rollback"
    norm = rank.K1 * (1 - rank.B + rank.B * len(body) / 50)
    want = (rank.idf(100, 10) * 2 * (rank.K1 + 1) / (2 + norm)
            + rank.idf(100, 100) * 1 * (rank.K1 + 1) / (1 + norm))
    assert math.isclose(scorer.score(body), want)


# ------------------------------------------------------------------ scores over visible rows


def add(db, key: str, entry: str, text: str, ms: int, spawned_by: str | None = None) -> None:
    session = db.session(key)
    parent = session.leaf_id if session else None
    db.append(SessionMeta(key, spawned_by=spawned_by, parent_key=spawned_by),
              json.dumps(msg(entry, parent, "user", text, ms=ms)))


CALLER = "agent:a:subagent:c"
TREE = [  # the caller's tree: itself and what it spawned
    (CALLER, "agent:a:main"),
    ("agent:a:subagent:c1", CALLER),
    ("agent:a:subagent:c2", "agent:a:subagent:c1"),
]
OTHERS = ["agent:a:main", "agent:a:subagent:o1", "agent:a:telegram:group:1"]
WORDS = ["kiwi", "kiwi", "kiwi", "mango", "mango", "lime", "kiwi lime", "fig"]


def build(root: Path, visible_texts, hidden_texts) -> StateDir:
    state = StateDir(root)
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


def answer(state: StateDir, query: str, order: str, caller: Caller) -> dict:
    return sessions_search(state, SearchRequest(query, limit=25, order=order), caller).as_json()


texts = st.lists(st.tuples(st.integers(0, 5), st.lists(st.sampled_from(WORDS), min_size=1,
                                                       max_size=4).map(" ".join)), max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    visible=texts.filter(bool),
    hidden=texts,
    change=texts.filter(bool),
    rewind=st.booleans(),
    delete=st.booleans(),
    query=st.sampled_from(["kiwi", "kiwi lime", '"kiwi lime"', "mango fig", "ki"]),
    order=st.sampled_from(["best", "recent"]),
    policy=st.sampled_from([Policy("tree"), Policy("self"), Policy("tree", sandboxed=True)]),
)
@pytest.mark.slow
def test_nothing_in_a_hidden_session_changes_a_callers_answer(
    tmp_path_factory, visible, hidden, change, rewind, delete, query, order, policy
) -> None:
    """Adding or removing words, rows and sessions the caller cannot see never changes its
    answer: the same results, in the same order, with the same scores."""
    root = Path(tmp_path_factory.mktemp("privacy"))
    caller = Caller(CALLER, policy)
    state = build(root / "a", visible, hidden)
    before = answer(state, query, order, caller)
    with state.open("a", write=True) as db:
        for n, (which, text) in enumerate(change):
            key = OTHERS[which % len(OTHERS)]
            add(db, key, f"x{n}", text, 10_000 + n)
        if rewind:  # a hidden session's branch switch: its rows go at the next rebuild
            db.append(SessionMeta("agent:a:main"), json.dumps(leaf("lf", "m0")))
        if delete:
            db.delete_session("agent:a:subagent:o1")
    reconcile_all(state)
    assert answer(state, query, order, caller) == before


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(visible=texts.filter(bool), hidden=texts,
       query=st.sampled_from(["kiwi", "kiwi lime", '"kiwi lime"', "mango", "lime fig"]))
@pytest.mark.slow
def test_scores_are_bm25_over_exactly_the_visible_messages(
    tmp_path_factory, visible, hidden, query
) -> None:
    """Computed here from the visible messages' text alone (no windowing: every count is
    exact), the scores and order agree with the answer's."""
    state = build(Path(tmp_path_factory.mktemp("oracle")) / "a", visible, hidden)
    caller = Caller(CALLER, Policy("tree"))
    got = answer(state, query, "best", caller)["results"]
    parsed = parse_query(query)
    with state.open("a") as db:
        bodies = {}
        for key, _ in TREE:
            session = db.session(key)
            bodies.update({row.entry_id: row.body for _, row in db.index_rows(session.pk)})
    counts = {e: brute_counts(b, parsed.phrases, parsed.prefix) for e, b in bodies.items()}
    n = len(bodies)
    average = sum(len(b) for b in bodies.values()) / n
    holding = [sum(1 for c in counts.values() if c[i]) for i in range(len(parsed.phrases))]

    def score(entry: str) -> float:
        norm = rank.K1 * (1 - rank.B + rank.B * len(bodies[entry]) / average)
        return sum(rank.idf(n, holding[i]) * tf * (rank.K1 + 1) / (tf + norm)
                   for i, tf in enumerate(counts[entry]))

    matching = [e for e, c in counts.items() if all(c)]
    want = sorted(matching, key=lambda e: (-score(e), -int(e[1:])))
    assert [r["messageId"] for r in got] == want
    assert [r["score"] for r in got] == [round(score(e), 6) for e in want]


def test_the_operator_ranks_over_every_searchable_message(tmp_path: Path) -> None:
    state = build(tmp_path / "a", [(0, "kiwi lime"), (1, "kiwi")], [(0, "kiwi kiwi")])
    results = answer(state, "kiwi", "best", OPERATOR)["results"]
    assert [r["messageId"] for r in results][0] == "h0"  # two occurrences, short text
    assert len(results) == 4


# ------------------------------------------------------------------ windows, and costly queries


def test_a_window_ranks_only_the_newest_matches_and_says_so(tmp_path: Path, monkeypatch) -> None:
    from backscroll.core import search

    monkeypatch.setattr(search, "RANK_WINDOW", 3)
    # the oldest message is the best match, but outside the newest three
    state = build(tmp_path / "a", [(0, "kiwi kiwi kiwi")] + [(0, f"kiwi and words {n}")
                                                            for n in range(4)], [])
    caller = Caller(CALLER, Policy("tree"))
    answer = sessions_search(state, SearchRequest("kiwi", limit=10), caller).as_json()
    assert answer["rankedNewest"] == 3
    assert sorted(r["messageId"] for r in answer["results"]) == ["v2", "v3", "v4"]
    assert answer["truncated"] is True
    monkeypatch.setattr(search, "RANK_WINDOW", 1000)
    answer = sessions_search(state, SearchRequest("kiwi", limit=10), caller).as_json()
    assert "rankedNewest" not in answer and answer["results"][0]["messageId"] == "v0"
    # more parts, a smaller window: scoring costs what three parts cost
    assert search.rank_window(parse_query("a b c")) == 1000
    assert search.rank_window(parse_query("a b c d e f")) == 500


def test_a_costly_query_searches_the_newest_messages_and_says_where_it_stopped(
    tmp_path: Path, monkeypatch
) -> None:
    from backscroll.core.storage.sqlite import matching

    # Both words in every message, the phrase only in the oldest one.
    state = build(tmp_path / "a", [(0, "mango kiwi")] + [(0, "kiwi and mango") for _ in range(30)],
                  [])
    caller = Caller(CALLER, Policy("tree"))
    full = sessions_search(state, SearchRequest('"mango kiwi"'), caller).as_json()
    assert [r["messageId"] for r in full["results"]] == ["v0"] and "searchedSince" not in full
    monkeypatch.setattr(matching, "WORK_BUDGET", 10)  # 2 tokens x 31 messages is more
    cut = sessions_search(state, SearchRequest('"mango kiwi"'), caller).as_json()
    assert cut["results"] == [] and cut["searchedSince"] > 0
    # a rare word keeps the work small: never cut
    assert "searchedSince" not in sessions_search(state, SearchRequest("kiwi zzz"), caller
                                                  ).as_json()
    # When the newest messages it affords hold a whole window of matches, nothing older could
    # enter the answer: it is the one an unlimited search gives.
    from backscroll.core import search

    monkeypatch.setattr(search, "RANK_WINDOW", 3)
    dense = sessions_search(state, SearchRequest("kiwi mango", limit=2), caller).as_json()
    assert dense["rankedNewest"] == 3 and "searchedSince" not in dense
    monkeypatch.setattr(matching, "WORK_BUDGET", 60_000)
    assert sessions_search(state, SearchRequest("kiwi mango", limit=2), caller).as_json() == dense
