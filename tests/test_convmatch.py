"""Conversation matching (core/convmatch.py, SPEC 19): a conversation matches when each word
or phrase occurs somewhere in its visible active-branch user and assistant text; its rank,
its hits per word, where it opens; and the message-level answer that must not move."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core import convmatch
from backscroll.core.conversation import session_hits
from backscroll.core.grouped import conversations_search
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR, Caller, Policy

from .events import header, msg
from .test_conversation import CALLERS, KEYS, append, linear

pytestmark = pytest.mark.backends  # storage behaviour: on both backends

QUERY = "billing-api rollback v2.21.6"


def keys(state: StateDir, query: str, caller: Caller = OPERATOR, **request: object) -> list[str]:
    found = conversations_search(state, SearchRequest(query, limit=25, **request), caller)  # type: ignore[arg-type]
    return [c.session.key for c in found.conversations]


def test_each_word_somewhere_in_the_conversation(state: StateDir) -> None:
    append(state, "agent:main:together", linear("t", [
        ("user", "the billing-api needs a rollback to v2.21.6"), ("assistant", "done")]))
    append(state, "agent:main:spread", linear("s", [
        ("user", "billing-api is failing"), ("assistant", "I will do a rollback"),
        ("user", "pin it at v2.21.6")], start=50_000))
    append(state, "agent:main:missing", linear("m", [
        ("user", "billing-api is failing"), ("assistant", "I will do a rollback")]))
    assert keys(state, QUERY) == ["agent:main:together", "agent:main:spread"]
    # the message-level answer did not move: one message must hold every word
    flat = sessions_search(state, SearchRequest(QUERY, limit=25), OPERATOR)
    assert [(r.session_key, r.message_id) for r in flat.results] == [("agent:main:together", "t0")]
    assert keys(state, "billing-api zebra") == []


def test_a_word_only_in_a_tool_result_or_off_the_branch_does_not_count(state: StateDir) -> None:
    events = [header("sid-t"),
              msg("u1", None, "user", "deploy the billing-api", ms=1000),
              msg("a1", "u1", "assistant", [{"type": "toolCall", "id": "c1", "name": "bash",
                                             "arguments": {"command": "rollback"}}], ms=2000),
              msg("r1", "a1", "toolResult", [{"type": "text", "text": "rollback v2.21.6 ok"}],
                  ms=3000, toolCallId="c1", toolName="bash"),
              msg("a2", "r1", "assistant", "finished", ms=4000)]
    append(state, "agent:main:tools", events)
    assert keys(state, "billing-api finished") == ["agent:main:tools"]
    assert keys(state, "billing-api rollback") == []
    assert keys(state, "billing-api v2.21.6") == []
    # an abandoned branch: b2 (b3, the later child of b1, is on the active branch)
    append(state, "agent:main:branch", [
        header("sid-b"), msg("b1", None, "user", "the walrus", ms=10_000),
        msg("b2", "b1", "assistant", "the narwhal", ms=11_000),
        msg("b3", "b1", "assistant", "the beluga", ms=12_000)])
    reconcile_agent(state, "main")  # a branch point: the session is rebuilt
    assert keys(state, "walrus beluga") == ["agent:main:branch"]
    assert keys(state, "walrus narwhal") == []


def test_a_word_only_in_a_hidden_session_does_not_count(state: StateDir) -> None:
    append(state, "agent:main:main", linear("m", [("user", "the heron report")]))
    append(state, "agent:main:subagent:a", linear("a", [("user", "the heron"), ("user", "lynx")]),
           spawned_by="agent:main:main")
    append(state, "agent:main:subagent:b", linear("b", [("user", "lynx and heron")]))
    only_a = Caller("agent:main:subagent:a", Policy(visibility="self"))
    assert keys(state, "heron lynx", only_a) == ["agent:main:subagent:a"]
    assert keys(state, "report lynx", only_a) == []  # report: only in main, hidden from a
    tree = Caller("agent:main:main", Policy(visibility="tree"))
    assert keys(state, "report lynx", tree) == []  # no one conversation holds both
    seen = {r.session_key for r in sessions_search(state, SearchRequest("lynx"), tree).results}
    assert set(keys(state, "heron lynx", tree)) == seen
    assert set(keys(state, "heron lynx")) == {"agent:main:subagent:a", "agent:main:subagent:b"}


def test_filters_apply_to_the_messages_that_hold_the_words(state: StateDir) -> None:
    append(state, "agent:main:main", linear("m", [("user", "the otter"), ("assistant", "a puffin")]))
    assert keys(state, "otter puffin") == ["agent:main:main"]
    assert keys(state, "otter puffin", role="user") == []
    assert keys(state, "otter puffin", since_ms=1_780_000_002_000) == []
    assert keys(state, "otter puffin", session_key="agent:main:main") == ["agent:main:main"]


def test_together_ranks_above_spread_out_then_the_conversation_score(state: StateDir) -> None:
    # three parts: all in one message; two of three in one; each alone (the newest)
    append(state, "agent:main:one", linear("o", [
        ("user", "a long message about many things where the kestrel and the osprey and the "
                 "merlin all appear once among other words and more words")]))
    append(state, "agent:main:two", linear("t", [
        ("user", "kestrel osprey"), ("assistant", "merlin")], start=10_000))
    append(state, "agent:main:three", linear("h", [
        ("user", "kestrel"), ("assistant", "osprey"), ("user", "merlin")], start=20_000))
    append(state, "agent:main:three-rich", linear("r", [
        ("user", "kestrel kestrel kestrel"), ("assistant", "osprey osprey"),
        ("user", "merlin merlin")], start=30_000))
    found = conversations_search(state, SearchRequest("kestrel osprey merlin"), OPERATOR)
    order = [c.session.key for c in found.conversations]
    assert order[:2] == ["agent:main:one", "agent:main:two"]
    assert set(order[2:]) == {"agent:main:three", "agent:main:three-rich"}
    scores = {c.session.key: c.result.score for c in found.conversations}
    # equal together: the conversation's BM25 decides
    assert order[2:] == sorted(order[2:], key=lambda k: -scores[k])
    # newest first: the best hits' times, whatever the score
    recent = keys(state, "kestrel osprey merlin", order="recent")
    assert recent == ["agent:main:three-rich", "agent:main:three", "agent:main:two",
                      "agent:main:one"]


def test_hits_per_word_and_where_it_opens(state: StateDir) -> None:
    append(state, "agent:main:main", linear("m", [
        ("user", "the billing-api fails"), ("assistant", "rollback first"),
        ("user", "billing-api rollback now"), ("assistant", "rolled back to v2.21.6"),
        ("user", "thanks"), ("assistant", "the billing-api is fine")]))
    [found] = conversations_search(state, SearchRequest(QUERY), OPERATOR).conversations
    assert found.result.message_id == "m2"  # holds two of the three words: the most
    assert [(w.word, w.hits, w.best) for w in found.words] == [
        ("billing-api", 3, "m2"), ("rollback", 2, "m2"), ("v2.21.6", 1, "m3")]
    walk = session_hits(state, OPERATOR, SearchRequest(QUERY, session_key="agent:main:main"),
                        any_word=True)
    assert found.hits == len(walk) == 5 and found.result.message_id in walk
    assert session_hits(state, OPERATOR, SearchRequest(QUERY, session_key="agent:main:main")) == []
    payload = conversations_search(state, SearchRequest(QUERY), OPERATOR).as_json()
    assert payload["conversations"][0]["words"][2] == {"word": "v2.21.6", "hits": 1, "best": "m3"}
    # a phrase is one part, shown as typed
    [found] = conversations_search(state, SearchRequest('"billing-api rollback" thanks'),
                                   OPERATOR).conversations
    assert [(w.word, w.hits) for w in found.words] == [("billing-api rollback", 1), ("thanks", 1)]


def test_rows_without_text_are_the_same_rows_and_their_text_reads_back(state: StateDir) -> None:
    from backscroll.core.query import parse_query
    from backscroll.core.visible_sessions import visible_sessions

    append(state, "agent:main:main", linear("m", [("user", f"heron number {n}") for n in range(5)]))
    with state.open("main") as db, db.snapshot():
        scope = visible_sessions(db, OPERATOR).scope
        full = db.match(parse_query("heron"), scope, window=3, limit=3)
        bare = db.match(parse_query("heron"), scope, window=3, limit=3, texts=False)
        assert bare.rows == [row._replace(body="") for row in full.rows] and len(full.rows) == 3
        assert (bare.windowed, bare.stats) == (full.windowed, full.stats)
        assert db.rows_with_text([row.rowid for row in bare.rows]) == full.rows


def test_ids_and_words_of_a_conversation_answer_are_redacted(state: StateDir) -> None:
    from .test_conversation import SECRET

    append(state, "agent:main:main", [
        header("sid-m"), msg(f"one-{SECRET}", None, "user", "the heron", ms=1000),
        msg(f"two-{SECRET}", f"one-{SECRET}", "assistant", "the lynx", ms=2000)])
    answer = conversations_search(state, SearchRequest("heron lynx"), OPERATOR)
    [found] = answer.conversations
    assert len(found.words) == 2 and found.words[0].best != f"one-{SECRET}"
    assert SECRET not in json.dumps(answer.as_json())
    assert "heron" in json.dumps(answer.as_json())  # not everything masked
    words = conversations_search(state, SearchRequest(f"heron {SECRET}"), OPERATOR)
    assert words.conversations == []  # stored text is redacted: the token is nowhere


def test_hits_of_many_sessions_at_once_are_each_sessions_own(state: StateDir) -> None:
    from backscroll.core.query import parse_query
    from backscroll.core.storage import MatchFilters

    for n in range(3):
        append(state, f"agent:main:s{n}", linear(f"s{n}", [
            ("user", "the heron"), ("assistant", "no"), ("user", "heron again")][: n + 1],
            start=n * 10_000))
    with state.open("main") as db:
        pks = [db.session(f"agent:main:s{n}").pk for n in range(3)]
        def hits(limit: int, filters: MatchFilters = MatchFilters()) -> list[list[str]]:
            found = db.sessions_hit_ids(parse_query("heron"), pks, limit, filters)
            return [found[pk] for pk in pks]

        assert hits(10) == [["s00"], ["s10"], ["s20", "s22"]]
        assert hits(1) == [["s00"], ["s10"], ["s20"]]
        assert hits(10, MatchFilters("assistant")) == [[], [], []]
        assert hits(10, MatchFilters(since_ms=1_780_000_023_000)) == [[], [], ["s22"]]
        assert db.sessions_hit_ids(parse_query("heron"), pks[1:2], 5) == {pks[1]: ["s10"]}


def test_the_message_level_grouping_stays_on_request(state: StateDir) -> None:
    append(state, "agent:main:spread", linear("s", [("user", "heron"), ("user", "lynx")]))
    append(state, "agent:main:one", linear("o", [("user", "heron lynx")], start=10_000))
    assert keys(state, "heron lynx") == ["agent:main:one", "agent:main:spread"]
    grouped = conversations_search(state, SearchRequest("heron lynx"), OPERATOR, spread=False)
    assert [c.session.key for c in grouped.conversations] == ["agent:main:one"]


def test_bounds_check_each_candidate_and_say_so(state: StateDir, monkeypatch) -> None:
    for n in range(6):
        append(state, f"agent:main:s{n}", linear(f"s{n}", [
            ("user", "the common word"), ("assistant", f"the rare{n % 2} word"),
            ("user", "common again")], start=n * 10_000))
    whole = conversations_search(state, SearchRequest("common rare1", limit=25), OPERATOR)
    assert sorted(c.session.key for c in whole.conversations) == [
        "agent:main:s1", "agent:main:s3", "agent:main:s5"]
    assert "rankedNewest" not in whole.as_json()
    # a window of 2 matches: 'common' (12 matches) is checked per candidate conversation
    monkeypatch.setattr(convmatch, "RANK_WINDOW", 2)
    checked = conversations_search(state, SearchRequest("common rare1", limit=25), OPERATOR)
    assert sorted(c.session.key for c in checked.conversations) == [
        "agent:main:s3", "agent:main:s5"]  # rare1's newest 2 matches: their conversations
    assert checked.as_json()["rankedNewest"] == 2 and checked.response.truncated
    assert [(w.word, w.hits) for w in checked.conversations[0].words] == [
        ("common", 2), ("rare1", 1)]
    monkeypatch.setattr(convmatch, "RANK_WINDOW", 1000)
    monkeypatch.setattr(convmatch, "CANDIDATES_MAX", 1)
    capped = conversations_search(state, SearchRequest("common rare1", limit=25), OPERATOR)
    assert [c.session.key for c in capped.conversations] == ["agent:main:s5"]
    assert capped.as_json()["rankedNewest"] == 1000


def test_cli_and_json_show_the_words(state: StateDir, capsys) -> None:
    from backscroll.tui.cli import main

    append(state, "agent:main:main", linear("m", [("user", "billing-api down"),
                                                  ("assistant", "rollback to v2.21.6")]))
    base = ["search", QUERY, "--state-dir", str(state.path), "--group"]
    assert main(base + ["--json"]) == 0
    [conversation] = json.loads(capsys.readouterr().out)["conversations"]
    assert [w["word"] for w in conversation["words"]] == ["billing-api", "rollback", "v2.21.6"]
    assert main(base) == 0
    out = capsys.readouterr().out
    assert "billing-api 1" in out and "v2.21.6 1" in out
    assert main(["search", QUERY, "--state-dir", str(state.path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"] == []  # per message: no match


def test_the_browser_row_names_each_word_and_opens_at_the_best_hit(state: StateDir) -> None:
    from backscroll.tui.screens.conversation import CoreSource
    from backscroll.tui.widgets.results import grouped_prompt, row_anchor

    append(state, "agent:main:main", linear("m", [("user", "billing-api down"),
                                                  ("assistant", "rollback to v2.21.6")]))
    [hit] = conversations_search(state, SearchRequest(QUERY), OPERATOR).conversations
    text = grouped_prompt(hit, lambda: 1_790_000_000.0, width=80).plain
    assert "2 hits" in text and "billing-api 1 · rollback 1 · v2.21.6 1" in text
    assert row_anchor(hit) == "m1"  # two of the three words
    source = CoreSource(state, OPERATOR, "agent:main:main", any_word=True)
    assert source.hits(SearchRequest(QUERY)) == ["m0", "m1"]


async def test_the_mcp_tool_answers_the_library_json_as_its_caller(state: StateDir) -> None:
    from .test_mcp import call, server_for

    append(state, "agent:main:main", linear("m", [("user", "billing-api down"),
                                                  ("assistant", "rollback to v2.21.6")]))
    append(state, "agent:main:subagent:a", linear("a", [("user", "billing-api rollback v2.21.6")]),
           spawned_by="agent:main:main")
    append(state, "agent:main:subagent:b", linear("b", [("user", "billing-api"),
                                                        ("user", "rollback v2.21.6")]))
    for caller in (OPERATOR, Caller("agent:main:subagent:a", Policy(visibility="self"))):
        result = await call(server_for(state, caller), "conversations_search", {"query": QUERY})
        expected = conversations_search(state, SearchRequest(QUERY), caller).as_json()
        assert not result.is_error and result.structured_content == expected
    assert [c["sessionKey"] for c in expected["conversations"]] == ["agent:main:subagent:a"]
    refused = await call(server_for(state), "conversations_search", {"query": "  "})
    assert refused.is_error and "empty" in refused.content[0].text


# The property: for any corpus and caller, a conversation matches exactly when, for each
# word, the message-level search of that word alone finds a message of it; its hits per word
# are those searches' counts; and it ranks "together" exactly when the message-level search
# of all the words finds it.

WORDS = ("heron", "otter", "lynx", "ibis")


@st.composite
def corpora(draw: st.DrawFn) -> tuple[dict[str, list[str]], dict[str, str | None]]:
    talks = {key: [" ".join(draw(st.lists(st.sampled_from(WORDS + ("the",)), min_size=1,
                                          max_size=3))) for _ in range(draw(st.integers(0, 4)))]
             for key in KEYS}
    links = {key: draw(st.sampled_from([None, "agent:main:main", "agent:main:subagent:a"]))
             for key in KEYS if ":subagent:" in key}
    return talks, links


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(corpus=corpora(), words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3,
                                        unique=True))
@pytest.mark.slow
def test_conversation_matching_is_the_message_rule_per_word(fresh_state, corpus, words) -> None:
    talks, links = corpus
    state = fresh_state()
    clock = 0
    for key, texts in talks.items():
        events, parent = [header(f"sid-{key}")], None
        for n, text in enumerate(texts):
            clock += 1000
            entry = f"{key.rsplit(':', 1)[-1]}-{n}"
            events.append(msg(entry, parent, "user" if n % 2 == 0 else "assistant", text, ms=clock))
            parent = entry
        append(state, key, events, spawned_by=links.get(key))
    query = " ".join(words)
    for caller in CALLERS:
        per_word = []
        for word in words:
            found = sessions_search(state, SearchRequest(word, limit=25), caller).results
            counts: dict[str, int] = {}
            for r in found:
                counts[r.session_key] = counts.get(r.session_key, 0) + 1
            per_word.append(counts)
        expected = set(per_word[0]).intersection(*per_word[1:])
        together = {r.session_key for r in
                    sessions_search(state, SearchRequest(query, limit=25), caller).results}
        answer = conversations_search(state, SearchRequest(query, limit=25), caller)
        assert {c.session.key for c in answer.conversations} == expected, caller
        for c in answer.conversations:
            assert [w.hits for w in c.words] == [counts[c.session.key] for counts in per_word]
        ranks = [c.session.key in together for c in answer.conversations]
        assert ranks == sorted(ranks, reverse=True)  # every "together" one first
