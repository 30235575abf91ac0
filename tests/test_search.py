from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core.errors import Forbidden, ValidationError
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.keys import is_incognito
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.visibility import OPERATOR, Caller, Policy, SessionLink, visible_keys

from .events import msg

pytestmark = pytest.mark.backends


def add(
    state: StateDir,
    key: str,
    entry_id: str,
    text: str,
    ms: int,
    parent: str | None = None,
    spawned_by: str | None = None,
    role: str = "user",
) -> None:
    with state.open(key.split(":")[1], write=True) as db:
        meta = SessionMeta(key, spawned_by=spawned_by, parent_key=spawned_by)
        session = db.session(key)
        parent = parent if parent is not None else (session.leaf_id if session else None)
        db.append(meta, json.dumps(msg(entry_id, parent, role, text, ms=ms)))


def ids(response) -> list[str]:
    return [r.message_id for r in response.results]


# ------------------------------------------------------------------ the property: filter first


@st.composite
def forests(draw):
    """Sessions over two agents with spawn links, some incognito, one main each."""
    count = draw(st.integers(2, 9))
    sessions: list[tuple[str, str | None]] = []
    for i in range(count):
        agent = draw(st.sampled_from(["a", "b"]))
        kind = draw(st.sampled_from(["main", "sub", "sub", "group", "incognito"]))
        key = {
            "main": f"agent:{agent}:main",
            "sub": f"agent:{agent}:subagent:s{i}",
            "group": f"agent:{agent}:telegram:group:{i}",
            "incognito": f"agent:{agent}:subagent:incognito-{i}",
        }[kind]
        if any(k == key for k, _ in sessions):
            continue
        parents = [k for k, _ in sessions]
        spawned_by = draw(st.sampled_from(parents)) if parents and draw(st.booleans()) else None
        sessions.append((key, spawned_by))
    messages = [(key, n) for key, _ in sessions for n in range(draw(st.integers(0, 3)))]
    return sessions, messages


policies = st.builds(
    Policy,
    visibility=st.sampled_from(["self", "tree", "agent", "all"]),
    a2a_enabled=st.booleans(),
    a2a_allow=st.sampled_from([(), ("a",), ("b",), ("*",), ("A", "b")]),
    sandboxed=st.booleans(),
    sandbox_visibility=st.sampled_from(["spawned", "all"]),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    forest=forests(),
    policy=policies,
    limit=st.integers(1, 5),
    pick=st.integers(0, 100),
    order=st.sampled_from(["best", "recent"]),
)
@pytest.mark.slow
def test_results_are_exactly_the_top_k_of_visible_matches(
    fresh_state, forest, policy, limit, pick, order
) -> None:
    sessions, messages = forest
    state = fresh_state()
    clock = 0
    for key, spawned_by in sessions:  # every session exists, even without messages
        with state.open(key.split(":")[1], write=True) as db:
            db.import_session(
                SessionMeta(key, session_id=key, spawned_by=spawned_by, parent_key=spawned_by), []
            )
    expected_pool = []
    for key, n in messages:
        clock += 1
        entry = f"{key.split(':')[1]}-{clock}"
        # identical shapes give identical bm25, so best-match order is newest first too
        add(state, key, entry, f"needle pad{clock:04d}", ms=clock)
        add(state, key, entry + "x", f"other pad{clock:04d}", ms=clock)
        expected_pool.append((clock, entry, key))
    callers = [OPERATOR] + [Caller(k, policy) for k, _ in sessions if not is_incognito(k)]
    caller = callers[pick % len(callers)]

    allowed: set[str] = set()
    for agent in ("a", "b"):
        links = [SessionLink(k, s, s) for k, s in sessions if k.split(":")[1] == agent]
        from backscroll.core.visibility import may_see_agent

        if links and may_see_agent(caller, agent):
            allowed |= visible_keys(caller, agent, links)
    assert not any(is_incognito(k) for k in allowed)
    expected = [e for _c, e, k in sorted(expected_pool, reverse=True) if k in allowed][:limit]

    response = sessions_search(state, SearchRequest("needle", limit=limit, order=order), caller)
    assert ids(response) == expected
    assert all(
        not is_incognito(r.session_key) and r.session_key in allowed for r in response.results
    )
    visible_total = sum(1 for _c, _e, k in expected_pool if k in allowed)
    assert response.truncated == (visible_total > limit)


# ------------------------------------------------------------------ modes, through search


@pytest.fixture
def tree(state: StateDir) -> StateDir:
    """main spawns s1, s1 spawns s2 (two levels); a group chat; another agent; incognito."""
    add(state, "agent:main:main", "m1", "kestrel in main", 1)
    add(state, "agent:main:subagent:s1", "s1", "kestrel in s1", 2, spawned_by="agent:main:main")
    add(
        state,
        "agent:main:subagent:s2",
        "s2",
        "kestrel in s2",
        3,
        spawned_by="agent:main:subagent:s1",
    )
    add(state, "agent:main:telegram:group:9", "g1", "kestrel in group", 4)
    add(state, "agent:ops:main", "o1", "kestrel in ops", 5)
    add(state, "agent:main:dashboard:incognito-x", "i1", "kestrel incognito", 6)
    return state


def found(state: StateDir, caller: Caller, query: str = "kestrel") -> list[str]:
    return sorted(ids(sessions_search(state, SearchRequest(query, limit=25), caller)))


@pytest.mark.parametrize(
    "key, policy, expected",
    [
        ("agent:main:subagent:s1", Policy("self"), ["s1"]),
        ("agent:main:subagent:s1", Policy("tree"), ["s1", "s2"]),
        ("agent:main:main", Policy("tree"), ["g1", "m1", "s1", "s2"]),  # main-session widening
        ("agent:main:telegram:group:9", Policy("agent"), ["g1", "m1", "s1", "s2"]),
        ("agent:main:subagent:s2", Policy("all"), ["g1", "m1", "s1", "s2"]),  # no a2a: own agent
        ("agent:main:subagent:s2", Policy("all", a2a_enabled=True), ["g1", "m1", "o1", "s1", "s2"]),
        (
            "agent:main:subagent:s2",
            Policy("all", a2a_enabled=True, a2a_allow=("main",)),
            ["g1", "m1", "s1", "s2"],
        ),
        (
            "agent:main:subagent:s2",
            Policy("all", a2a_enabled=True, a2a_allow=("MAIN", "op*")),
            ["g1", "m1", "o1", "s1", "s2"],
        ),
        ("agent:main:main", Policy("agent", a2a_enabled=True), ["g1", "m1", "s1", "s2"]),
        ("agent:main:main", Policy("all", sandboxed=True), ["m1", "s1", "s2"]),  # sandbox clamp
        (
            "agent:main:main",
            Policy("all", sandboxed=True, sandbox_visibility="all"),
            ["g1", "m1", "s1", "s2"],
        ),
    ],
)
def test_visibility_modes_through_search(
    tree: StateDir, key: str, policy: Policy, expected: list[str]
) -> None:
    assert found(tree, Caller(key, policy)) == expected


def test_operator_sees_everything_but_incognito(tree: StateDir) -> None:
    assert found(tree, OPERATOR) == ["g1", "m1", "o1", "s1", "s2"]


def test_history_answers_exactly_as_search_does(tree: StateDir) -> None:
    keys = [
        "agent:main:main",
        "agent:main:subagent:s1",
        "agent:main:subagent:s2",
        "agent:main:telegram:group:9",
        "agent:ops:main",
        "agent:main:dashboard:incognito-x",
        "agent:main:nonexistent",
    ]
    for caller_key in keys[:5]:
        for policy in (
            Policy("self"),
            Policy("tree"),
            Policy("all", a2a_enabled=True),
            Policy("tree", sandboxed=True),
        ):
            caller = Caller(caller_key, policy)
            seen = {
                r.session_key
                for r in sessions_search(tree, SearchRequest("kestrel", limit=25), caller).results
            }
            for key in keys:
                try:
                    sessions_history(tree, HistoryRequest(key), caller)
                    visible = True
                except Forbidden as err:
                    visible = False
                    assert str(err) == "session not found or not visible to this caller"
                assert visible == (key in seen), (caller_key, policy, key)


def test_unknown_caller_is_forbidden(tree: StateDir) -> None:
    with pytest.raises(Forbidden):
        sessions_search(tree, SearchRequest("kestrel"), Caller("agent:main:ghost", Policy()))
    with pytest.raises(Forbidden):
        sessions_history(tree, HistoryRequest("agent:main:main"), Caller("agent:nope:x", Policy()))


# ------------------------------------------------------------------ filters and order


def test_filters_role_session_agent_and_time(tree: StateDir) -> None:
    add(tree, "agent:main:main", "m2", "kestrel answer", 10, role="assistant")
    run = lambda **kw: sorted(
        ids(sessions_search(tree, SearchRequest("kestrel", limit=25, **kw), OPERATOR))
    )  # noqa: E731
    assert run(role="assistant") == ["m2"]
    assert run(session_key="agent:main:subagent:s1") == ["s1"]
    assert run(agent="ops") == ["o1"]
    from .events import BASE_MS

    assert run(since_ms=BASE_MS + 4, until_ms=BASE_MS + 5) == ["g1", "o1"]
    recent = ids(sessions_search(tree, SearchRequest("kestrel", limit=3, order="recent"), OPERATOR))
    assert recent == ["m2", "o1", "g1"]


def test_ranking_prefers_better_matches_then_newer(state: StateDir) -> None:
    add(
        state,
        "agent:main:main",
        "weak",
        "a long message that mentions jaguar once among many other words here",
        1,
    )
    add(state, "agent:main:main", "strong", "jaguar jaguar", 2)
    add(state, "agent:main:main", "strong-old", "jaguar jaguar", 0)
    assert ids(sessions_search(state, SearchRequest("jaguar"), OPERATOR)) == [
        "strong",
        "strong-old",
        "weak",
    ]


def test_phrases_and_prefix(state: StateDir) -> None:
    add(state, "agent:main:main", "p1", "the connection pool exhausted again", 1)
    add(state, "agent:main:main", "p2", "pool connection was fine", 2)
    assert ids(sessions_search(state, SearchRequest('"connection pool"'), OPERATOR)) == ["p1"]
    assert sorted(ids(sessions_search(state, SearchRequest("connection pool"), OPERATOR))) == [
        "p1",
        "p2",
    ]
    assert ids(sessions_search(state, SearchRequest("exhau"), OPERATOR)) == []
    assert ids(sessions_search(state, SearchRequest("exhau", match="prefix"), OPERATOR)) == ["p1"]


# ------------------------------------------------------------------ caps and redaction


def test_huge_messages_keep_excerpts_and_answer_within_caps(state: StateDir) -> None:
    rng = random.Random(5)
    for n in range(25):
        words = " ".join(
            rng.choice(["alpha", "beta", "gamma", "délta", "数据库"]) for _ in range(7000)
        )  # ~85,000 characters: long, but under bounds.MAX_MESSAGE_CHARS
        add(state, "agent:main:main", f"h{n}", words + " marmot " + words, n)
    response = sessions_search(state, SearchRequest("marmot", limit=25), OPERATOR)
    assert response.results and all(len(r.excerpt) <= 301 for r in response.results)
    assert all("marmot" in r.excerpt for r in response.results)
    payload = json.dumps(response.as_json()["results"], ensure_ascii=False).encode()
    assert len(payload) <= 32 * 1024


def test_results_array_is_capped_at_32_kib_with_truncated(state: StateDir) -> None:
    for n in range(25):
        # excerpts of ~300 chars of 4-byte characters: ~1.2 KB each, 25 of them > 32 KiB
        add(state, "agent:main:main", f"w{n}", "𝔘" * 200 + " walrus " + "𝔘" * 200, n)
    response = sessions_search(state, SearchRequest("walrus", limit=25), OPERATOR)
    payload = json.dumps(response.as_json()["results"], ensure_ascii=False).encode("utf-8")
    assert len(payload) <= 32 * 1024
    assert 0 < len(response.results) < 25 and response.truncated
    assert response.as_json()["truncated"] is True


SECRET = "sk-proj-Zq8vRt2LmW9xKp4NcJ7hYb3FdS6gTa1EuQ0iOw5r"


@pytest.mark.parametrize("offset", [0, 1, 150, 290, 299, 300, 305, 450, 1000])
def test_a_secret_in_a_long_message_never_shows_whatever_the_cut(
    state: StateDir, offset: int
) -> None:
    text = (
        "filler " * (offset // 7) + f"export OPENAI_API_KEY={SECRET} then ocelot " + "tail " * 200
    )
    add(state, "agent:main:main", "s", text, 1)
    for query in ("ocelot", "then", "export"):
        middle = SECRET[6:-4]
        results = sessions_search(state, SearchRequest(query), OPERATOR).results
        assert results
        for result in results:
            assert not any(middle[i : i + 8] in result.excerpt for i in range(len(middle) - 7))
    history = sessions_history(state, HistoryRequest("agent:main:main"), OPERATOR)
    body = json.dumps(history.as_json())
    assert SECRET[6:-4] not in body and history.content_redacted


# ------------------------------------------------------------------ folding and languages


def test_case_and_diacritics_fold(state: StateDir) -> None:
    add(state, "agent:main:main", "f1", "Rendez-vous au Café pour le résumé", 1)
    add(state, "agent:main:main", "v1", "Tôi đã gửi một tin nhắn", 2)
    assert ids(sessions_search(state, SearchRequest("cafe"), OPERATOR)) == ["f1"]
    assert ids(sessions_search(state, SearchRequest("RESUME"), OPERATOR)) == ["f1"]
    assert ids(sessions_search(state, SearchRequest("mot"), OPERATOR)) == ["v1"]


def test_multilingual_rows_are_found_by_their_query(state: StateDir, data_dir: Path) -> None:
    rows = [
        line.split("\t")
        for line in (data_dir / "multilingual.tsv").read_text(encoding="utf-8").splitlines()[1:]
        if line
    ]
    for n, (_lang, sentence, _query) in enumerate(rows):
        add(state, f"agent:main:lang{n}", f"l{n}", sentence, n)
    missing = []
    for n, (lang, _sentence, query) in enumerate(rows):
        hits = ids(sessions_search(state, SearchRequest(query, limit=25), OPERATOR))
        if f"l{n}" not in hits:
            missing.append(lang)
    assert missing == []


def test_cjk_substrings_of_any_length(state: StateDir) -> None:
    add(state, "agent:main:main", "zh", "我们明天部署数据库迁移", 1)
    add(state, "agent:main:main", "ja", "データベースの移行は明日です", 2)
    for query, expected in [
        ("数", ["zh"]),
        ("数据库", ["zh"]),
        ("部署数据", ["zh"]),
        ("移行", ["ja"]),
        ("明", ["ja", "zh"]),
        ("库数", []),
    ]:
        assert sorted(ids(sessions_search(state, SearchRequest(query), OPERATOR))) == expected


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize("query", ["", "   ", "x" * 4097])
def test_bad_queries_are_validation_errors(state: StateDir, query: str) -> None:
    add(state, "agent:main:main", "a", "anything", 1)
    with pytest.raises(ValidationError):
        sessions_search(state, SearchRequest(query), OPERATOR)


@pytest.mark.parametrize("limit", [0, 26, -1])
def test_bad_limits(state: StateDir, limit: int) -> None:
    with pytest.raises(ValidationError, match="1 to 25"):
        sessions_search(state, SearchRequest("x", limit=limit), OPERATOR)


def test_history_anchor_off_the_active_branch_is_an_error(state: StateDir) -> None:
    add(state, "agent:main:main", "r", "root", 1)
    add(state, "agent:main:main", "a", "first answer", 2, role="assistant")
    add(state, "agent:main:main", "b", "second answer", 3, parent="r", role="assistant")
    with pytest.raises(ValidationError, match="not on the active branch"):
        sessions_history(state, HistoryRequest("agent:main:main", message_id="a"), OPERATOR)
    answer = sessions_history(state, HistoryRequest("agent:main:main", message_id="b"), OPERATOR)
    assert [m["id"] for m in answer.messages] == ["r", "b"]
    # an id no entry can have is refused in a sentence of its own size, not echoed whole
    with pytest.raises(ValidationError) as refused:
        sessions_history(state, HistoryRequest("agent:main:main", message_id="x" * 100_000),
                         OPERATOR)
    assert str(refused.value) == '"messageId" is 100,000 characters long; the limit is 512'


# ------------------------------------------------------------------ review findings

def test_incognito_words_do_not_shift_scores_others_see(state: StateDir) -> None:
    add(state, "agent:main:main", "m", "zebra crossing here", 1)
    caller = Caller("agent:main:main", Policy("tree"))
    before = sessions_search(state, SearchRequest("zebra"), caller).results[0].score
    for n in range(10):
        add(state, "agent:main:subagent:incognito-x", f"i{n}", "zebra zebra", 10 + n)
    after = sessions_search(state, SearchRequest("zebra"), caller).results[0].score
    assert after == before


def test_an_oversized_anchor_is_cut_to_the_history_cap(state: StateDir) -> None:
    blocks = [{"type": "text", "text": "数" * 4000} for _ in range(30)]
    add(state, "agent:main:main", "before", "short", 1)
    add(state, "agent:main:main", "big", blocks, 2)
    answer = sessions_history(state, HistoryRequest("agent:main:main", message_id="big"), OPERATOR)
    assert answer.bytes <= 80 * 1024 and answer.content_truncated
    assert [m["id"] for m in answer.messages] == ["big"]


def test_history_flags_describe_only_the_returned_window(state: StateDir) -> None:
    add(state, "agent:main:main", "old", f"OPENAI_API_KEY={SECRET}", 1)
    add(state, "agent:main:main", "new", "nothing secret", 2)
    answer = sessions_history(state, HistoryRequest("agent:main:main", limit=1), OPERATOR)
    assert [m["id"] for m in answer.messages] == ["new"] and not answer.content_redacted
    full = sessions_history(state, HistoryRequest("agent:main:main"), OPERATOR)
    assert full.content_redacted


@pytest.mark.sqlite_only
def test_an_unreadable_agent_database_is_skipped_with_a_warning(state: StateDir) -> None:
    add(state, "agent:main:main", "m", "heron sighting", 1)
    broken = state.path / "agents" / "broken" / "sessions.sqlite"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"not sqlite " * 200)
    response = sessions_search(state, SearchRequest("heron"), OPERATOR)
    assert ids(response) == ["m"]
    assert "unreadable" in response.as_json()["warning"] and "broken" in response.as_json()["warning"]
