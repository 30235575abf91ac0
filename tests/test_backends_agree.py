"""The two backends give the same answers: the same rows, in the same order, with the same
bm25 scores, for any text and any query (hypothesis), and for rows too big for a tsvector's
positions (checked token by token on PostgreSQL)."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.storage.postgres.fts import (
    MAX_LEXEME_BYTES,
    MAX_POSITION,
    MAX_POSITIONS_PER_LEXEME,
    index_text,
)
from backscroll.core.visibility import OPERATOR, Caller, Policy

from .events import msg

WORDS = [
    "café", "Cafe", "CAFÉ", "résumé", "resume", "naïve", "Straße", "strasse", "İstanbul",
    "ǅemal", "ﬁle", "Ελλάδα", "ελλαδα", "Москва", "мир", "một", "mot", "đã", "pool", "Pool",
    "connection", "exhausted", "con", "co", "x", "a", "ab", "abc", "42", "4.2", "v1.2.3",
    "数据库", "数", "据", "部署", "データベース", "移行", "한국어", "안녕", "ไทย", "😀",
    "snake_case", "it's", "back\\slash", "quote'd", "a-b", "(paren)", "«guillemets»",
    "tab\there", "zero\u200bwidth", "e\u0301", "ﾃﾞｰﾀ",
]
SEPARATORS = [" ", " ", " ", "\n", ", ", "-", "", "。", "/"]


def pair(tmp_path: Path, url: str) -> tuple[StateDir, StateDir]:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM backscroll.agents")
    return (
        StateDir(tmp_path / "lite", database_url=""),
        StateDir(tmp_path / "pg", database_url=url),
    )


def store(states: tuple[StateDir, ...], key: str, entry: str, text: str, ms: int,
          parent: str | None = None, role: str = "user") -> None:
    for state in states:
        with state.open(key.split(":")[1], write=True) as db:
            # one session id on both: the same rowids (rank.py's estimates read them)
            meta = SessionMeta(key, session_id=key.replace(":", "-"))
            db.append(meta, json.dumps(msg(entry, parent, role, text, ms=ms)))


def answers(state: StateDir, request: SearchRequest, caller=OPERATOR) -> list[tuple[str, float]]:
    return [(r.message_id, r.score) for r in sessions_search(state, request, caller).results]


def assert_same(lite: StateDir, pg: StateDir, request: SearchRequest, caller=OPERATOR) -> None:
    want, got = answers(lite, request, caller), answers(pg, request, caller)
    assert [m for m, _ in got] == [m for m, _ in want], request
    assert all(abs(a - b) < 1e-9 for (_, a), (_, b) in zip(got, want)), (request, want, got)


texts = st.lists(
    st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), min_size=1, max_size=14
).map(lambda parts: "".join(w + s for w, s in parts))
queries = st.tuples(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    st.booleans(),  # quote the words as one phrase
    st.sampled_from(["exact", "prefix"]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(docs=st.lists(texts, min_size=1, max_size=12), asks=st.lists(queries, min_size=1, max_size=6))
@pytest.mark.slow
def test_any_text_and_query_give_the_same_rows_order_and_scores(
    tmp_path_factory, pg_url, docs, asks
) -> None:
    lite, pg = pair(tmp_path_factory.mktemp("agree"), pg_url)
    for n, text in enumerate(docs):
        key = f"agent:main:s{n % 3}"
        store((lite, pg), key, f"m{n}", text, ms=n)
    for words, quoted, match in asks:
        query = f'"{" ".join(words)}"' if quoted else " ".join(words)
        for order in ("best", "recent"):
            try:
                request = SearchRequest(query, limit=25, match=match, order=order)
                sessions_search(lite, request, OPERATOR)
            except Exception as err:  # a refused query is refused by both, with the same words
                with pytest.raises(type(err), match=None):
                    sessions_search(pg, request, OPERATOR)
                continue
            assert_same(lite, pg, request)
            caller = Caller("agent:main:s1", Policy("self"))
            if any(n % 3 == 1 for n in range(len(docs))):
                assert_same(lite, pg, request, caller)


def test_rows_beyond_tsvector_limits_are_matched_and_ranked_as_in_sqlite(
    tmp_path: Path, pg_url: str
) -> None:
    lite, pg = pair(tmp_path, pg_url)
    long_word = "ü" * (MAX_LEXEME_BYTES // 2 + 10)  # more bytes than a lexeme may hold
    huge = " ".join(f"w{i % 5000}" for i in range(MAX_POSITION + 50)) + " tail phrase here"
    docs = {
        "huge": huge,  # positions past 16,383: a phrase at the end
        "repeats": "echo " * (MAX_POSITIONS_PER_LEXEME + 20) + "and more echo",
        "longword": f"before {long_word} after",
        "longword2": f"before {long_word}x after",
        "small": "tail phrase here w12 echo before",
        "cjk": "数据库" * 6000,  # 18,000 one-character tokens
    }
    for n, (entry, text) in enumerate(docs.items()):
        store((lite, pg), "agent:main:main", entry, text, ms=n)
    assert not index_text(huge).exact and index_text(docs["small"]).exact
    for query, match in [
        ('"tail phrase here"', "exact"), ("tail", "exact"), ("w12", "exact"), ("w499", "prefix"),
        ("echo", "exact"), ('"echo and more"', "exact"), ("ec", "prefix"), (long_word, "exact"),
        (long_word[:40], "prefix"), (f'"before {long_word} after"', "exact"), ("数据", "exact"),
        ('"库数"', "exact"), ("before after", "exact"), ("here w12", "prefix"),
    ]:
        for order in ("best", "recent"):
            assert_same(lite, pg, SearchRequest(query, limit=25, match=match, order=order))


def test_a_rank_window_cuts_at_the_same_row(tmp_path: Path, pg_url: str, monkeypatch) -> None:
    """Also where PostgreSQL looks at slices of the newest rows first: words spread evenly,
    and words found only among the oldest rows (the first slices hold too few)."""
    import backscroll.core.search as search

    monkeypatch.setattr(search, "RANK_WINDOW", 7)
    lite, pg = pair(tmp_path, pg_url)
    for n in range(200):
        text = "otter " * (1 + n % 4) + ("rare " if n % 9 == 0 else "common ")
        text += "ancient" if n < 20 else "recent"
        store((lite, pg), f"agent:main:s{n % 4}", f"m{n}", text, ms=n)
    store((lite, pg), "agent:main:s0", "big", "otter " * 16400 + "common ancient", ms=201)
    caller = Caller("agent:main:s1", Policy("self"))
    for query in ("otter", "common", "otter rare", '"otter common"', "ancient", "ancient otter",
                  "rare ancient"):
        for order in ("best", "recent"):
            for who in (OPERATOR, caller):
                request = SearchRequest(query, limit=5, order=order)
                assert_same(lite, pg, request, who)
                assert sessions_search(pg, request, who).ranked_window == (
                    sessions_search(lite, request, who).ranked_window
                )


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(calls=st.lists(st.tuples(st.sampled_from(["exec", "read", "Edit"]), texts, texts,
                                st.booleans()), min_size=1, max_size=8),
       asks=st.lists(queries, min_size=1, max_size=4))
@pytest.mark.slow
def test_tool_search_gives_the_same_calls_order_and_scores(tmp_path_factory, pg_url, calls,
                                                           asks) -> None:
    """The tool-call index (issue 26): the same rows, order and scores on both backends."""
    from backscroll.core.tool_search import ToolSearchRequest, tools_search

    lite, pg = pair(tmp_path_factory.mktemp("agree-tools"), pg_url)
    last: dict[str, str] = {}
    for n, (tool, argument, output, failed) in enumerate(calls):
        key = f"agent:main:s{n % 3}"
        call = {"type": "toolCall", "id": f"c{n}", "name": tool, "arguments": {"a": argument}}
        store((lite, pg), key, f"a{n}", [call], ms=2 * n, parent=last.get(key), role="assistant")
        last[key] = f"r{n}"
        result = msg(f"r{n}", f"a{n}", "toolResult", [{"type": "text", "text": output}],
                     ms=2 * n + 1)
        result["message"].update(toolCallId=f"c{n}", toolName=tool, isError=failed)
        for state in (lite, pg):
            with state.open("main", write=True) as db:
                db.append(SessionMeta(key, session_id=key.replace(":", "-")), json.dumps(result))
    listing = ToolSearchRequest(SearchRequest("", limit=25), None, True)
    assert [h.message_id for h in tools_search(lite, listing, OPERATOR).results] == [
        h.message_id for h in tools_search(pg, listing, OPERATOR).results]
    every = ToolSearchRequest(SearchRequest("", limit=25, session_key="agent:main:s0"))
    assert len(tools_search(pg, every, OPERATOR).results) == len(calls[::3])
    for words, quoted, match in asks:
        query = f'"{" ".join(words)}"' if quoted else " ".join(words)
        for order, tool, failed in (("best", None, False), ("recent", None, False),
                                    ("best", "EXEC", False), ("recent", None, True)):
            request = ToolSearchRequest(SearchRequest(query, limit=25, match=match, order=order),
                                        tool, failed)
            try:
                want = tools_search(lite, request, OPERATOR).results
            except Exception as err:
                with pytest.raises(type(err)):
                    tools_search(pg, request, OPERATOR)
                continue
            got = tools_search(pg, request, OPERATOR).results
            assert [(h.message_id, h.status) for h in got] == [
                (h.message_id, h.status) for h in want], request
            assert all(abs(a.score - b.score) < 1e-9 for a, b in zip(got, want))
