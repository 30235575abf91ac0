"""A conversation read in windows (core/conversation.py), its hits, and results grouped by
conversation (core/grouped.py), against the message-level answer they must agree with."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core.conversation import conversation_outline, conversation_window, session_hits
from backscroll.core.errors import Forbidden, ValidationError
from backscroll.core.grouped import conversations_search
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.importers.claude_code import import_claude_code
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.search import SearchRequest, search_rows, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.transcript import active_branch, branch_message
from backscroll.core.verify import verify_state
from backscroll.core.visibility import OPERATOR, Caller, Policy

from .events import header, leaf, msg

pytestmark = pytest.mark.backends  # storage behaviour: on both backends

SECRET = "sk-proj-Qx7Lm2Vb9Tn4Rk8Wz3Yp6Hs1Jd5Fg0Ac2Ne7Ut9Ko4Bi6Mq"


def append(state: StateDir, key: str, events: list[dict], spawned_by: str | None = None) -> None:
    agent = key.split(":")[1]
    meta = SessionMeta(key, session_id=f"sid-{key.rsplit(':', 1)[-1]}", spawned_by=spawned_by)
    with state.open(agent, write=True) as db:
        for event in events:
            db.append(meta, json.dumps(event))


def linear(prefix: str, texts: list[tuple[str, object]], start: int = 0) -> list[dict]:
    events, parent = [header(f"sid-{prefix}")], None
    for i, (role, content) in enumerate(texts):
        events.append(msg(f"{prefix}{i}", parent, role, content, ms=start + (i + 1) * 1000))
        parent = f"{prefix}{i}"
    return events


# --- the outline, windows and hits ---------------------------------------------------------


def test_outline_counts_said_messages_and_windows_render_redacted(state: StateDir) -> None:
    append(state, "agent:main:main", linear("m", [
        ("user", "deploy please"),
        ("assistant", [{"type": "toolCall", "name": "exec", "arguments": {"cmd": "kubectl"}}]),
        ("toolResult", [{"type": "text", "text": "ok"}]),
        ("assistant", f"deploy done; the key was OPENAI_API_KEY={SECRET}"),
        ("user", "thanks, deploy again tomorrow"),
    ]))
    outline = conversation_outline(state, OPERATOR, "agent:main:main")
    assert outline.ids == ("m0", "m1", "m2", "m3", "m4")
    assert outline.roles == ("user", "assistant", "toolResult", "assistant", "user")
    assert outline.said == (1, 2, 0, 3, 4) and outline.said_total == 4
    window = conversation_window(state, OPERATOR, "agent:main:main", 1, 4)
    assert [m["id"] for m in window] == ["m1", "m2", "m3"]
    assert window[0]["content"][0]["type"] == "toolCall"
    assert window[1]["content"][0]["type"] == "toolResult"
    text = window[2]["content"][0]["text"]
    assert SECRET not in text and "OPENAI_API_KEY=" in text
    hits = session_hits(state, OPERATOR, SearchRequest("deploy", session_key="agent:main:main"))
    assert hits == ["m0", "m3", "m4"]
    only_user = SearchRequest("deploy", session_key="agent:main:main", role="user")
    assert session_hits(state, OPERATOR, only_user) == ["m0", "m4"]


def test_the_outline_is_the_active_branch(state: StateDir) -> None:
    events = linear("r", [("user", "first"), ("assistant", "old answer")])
    events.append(leaf("l1", "r0"))
    events.append(msg("new", "r0", "assistant", "new answer", ms=9000))
    append(state, "agent:main:main", events)
    reconcile_agent(state, "main")
    outline = conversation_outline(state, OPERATOR, "agent:main:main")
    assert outline.ids == ("r0", "new")
    assert session_hits(state, OPERATOR, SearchRequest("answer", session_key="agent:main:main")) == [
        "new"]


def test_outline_branch_equals_the_tree_rules_on_real_transcripts(state: StateDir, data_dir) -> None:
    """``tree_events`` (fields taken out by SQLite) gives the same active branch as decoding
    whole events does, for every imported real session."""
    import_openclaw(state, data_dir / "openclaw" / "chairong")
    import_openclaw(state, data_dir / "openclaw" / "reinforcementsleeping_main")
    import_claude_code(state, data_dir / "claude-code")
    checked = 0
    for agent in state.agents():
        with state.open(agent) as db:
            for session in db.sessions():
                whole = [seq for seq, _ in active_branch(db.events(session.pk)).path]
                light = [seq for seq, _ in active_branch(db.tree_events(session.pk)).path]
                assert light == whole, session.key
                checked += 1
    assert checked >= 6


# --- the stored branch messages against the tree rules --------------------------------------

LIFE = "agent:main:life"
STEPS = ("reply", "reply", "reply", "tool", "fork", "side", "idless", "again", "leaf", "model",
         "note", "timeless", "system", "adopt")


def life_event(kind: str, n: int, pick: int, known: list[str]) -> dict:
    """One event of a session's life: ``pick`` chooses an earlier id (or an unknown one)."""
    earlier = known[pick % len(known)] if known and pick % 5 else "ghost"
    role = ("user", "assistant")[n % 2]
    if kind == "tool":
        return msg(f"e{n}", None, "toolResult", [{"type": "text", "text": "ok"}], ms=n * 1000)
    if kind == "fork":
        return msg(f"e{n}", earlier, role, f"fork {n}", ms=n * 1000)
    if kind == "side":
        return msg(f"e{n}", None, "assistant", "aside", ms=n * 1000, appendMode="side")
    if kind == "adopt":  # the parent a fork named and nobody wrote: the branch may run on
        return msg("ghost", earlier, role, "found", ms=n * 1000, appendMode="side")
    if kind == "idless":
        event = msg(f"e{n}", None, role, f"no id {n}", ms=n * 1000)
        del event["id"]
        return event
    if kind == "again":  # an id already used: the first entry wins
        return msg(earlier if earlier != "ghost" else f"e{n}", None, role, "again", ms=n * 1000)
    if kind == "leaf":
        return leaf(f"l{n}", None if pick % 7 == 0 else earlier)
    if kind == "model":
        return {"type": "model_change", "id": f"e{n}", "parentId": None, "model": "m"}
    if kind == "note":
        return {"type": "note", "id": f"e{n}"}
    if kind == "timeless":
        event = msg(f"e{n}", None, role, "when?", ms=n * 1000)
        event["message"]["timestamp"], event["timestamp"] = None, "not a time"
        return event
    if kind == "system":
        return msg(f"e{n}", None, "system", "not shown", ms=n * 1000)
    return msg(f"e{n}", None, role, f"reply {n}", ms=n * 1000)


def stored_and_computed(state: StateDir) -> tuple[list | None, list]:
    with state.open("main") as db, db.snapshot():
        session = db.session(LIFE)
        assert session is not None
        computed = [tuple(found) for seq, event in active_branch(db.events(session.pk)).path
                    if (found := branch_message(seq, event)) is not None]
        stored = db.branch_messages(session.pk, session.last_seq)
    return (None if stored is None else [tuple(row) for row in stored]), computed


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(life=st.lists(st.tuples(st.sampled_from(STEPS),
                               st.sampled_from(["append", "append", "import", "rebuild"]),
                               st.integers(0, 99)), min_size=1, max_size=16))
@pytest.mark.slow
def test_stored_branch_messages_are_the_branch_the_tree_rules_give(
    fresh_state, life: list[tuple[str, str, int]]
) -> None:
    """Whatever a session lives through (replies, forks, rewinds, side entries, duplicate and
    missing ids, imports, rebuilds), the branch messages stored for it are either current and
    equal to the active branch the tree rules compute from its log, or known to lag (and the
    outline then computes them); after a rebuild they are current unless not in log order."""
    state = fresh_state()
    meta = SessionMeta(LIFE, session_id="sid-life")
    known: list[str] = []
    for n, (kind, how, pick) in enumerate(life):
        event = life_event(kind, n, pick, known)
        with state.open("main", write=True) as db:
            if how == "import":
                db.import_session(meta, [json.dumps(event)])
            else:
                db.append(meta, json.dumps(event))
        if isinstance(event.get("id"), str) and event["type"] != "leaf":
            known.append(event["id"])
        if how == "rebuild":
            reconcile_agent(state, "main")
        stored, computed = stored_and_computed(state)
        if how == "rebuild":  # current, unless not in log order (read back in log order)
            in_order = all(a[0] < b[0] for a, b in zip(computed, computed[1:]))
            assert (stored is not None) == in_order, "a rebuild leaves the branch messages current"
        if stored is not None:
            assert stored == computed
        outline = conversation_outline(state, OPERATOR, LIFE)
        assert list(zip(outline.ids, outline.roles)) == [(sid or "", role)
                                                         for _, sid, role, _ in computed]


def test_a_database_from_before_stored_branches_catches_up(state: StateDir, backend: str) -> None:
    """Sessions indexed before branch messages were stored open from their log, stay
    searchable, and get their branch messages from the next reconcile."""
    append(state, "agent:main:main", linear("m", [("user", "kiwi one"), ("assistant", "two")]))
    with state.open("main", write=True) as db:  # as the migration leaves them: lagging
        with db.transaction():
            db.conn.execute("DELETE FROM branch_messages")
            db.conn.execute("UPDATE sessions SET branch_seq = 0" if backend == "postgres"
                            else "UPDATE index_state SET branch_seq = 0")
        assert db.lagging_branches()
    assert conversation_outline(state, OPERATOR, "agent:main:main").ids == ("m0", "m1")
    assert sessions_search(state, SearchRequest("kiwi"), OPERATOR).results
    reconcile_agent(state, "main")
    with state.open("main") as db, db.snapshot():
        session = db.session("agent:main:main")
        assert session is not None
        assert [row[1] for row in db.branch_messages(session.pk, session.last_seq) or []] == [
            "m0", "m1"]
    with state.open("main", write=True) as db:
        assert not db.lagging_branches()


@pytest.mark.parametrize("gap", ["ghost", "幽灵"])
def test_an_entry_that_supplies_a_missing_parent_joins_the_stored_branch(state: StateDir,
                                                                         gap: str) -> None:
    """A side entry does not move the leaf, yet when the branch's first entry named its id as
    a parent that was missing, the branch now runs through it (and on to its own parent):
    the stored branch messages do not stay current by leaving it out, and the rebuild it
    asks for indexes and stores the longer branch. (The lines are written with non-ASCII
    escaped: the id is found as \\uXXXX too.)"""
    key = "agent:main:orphan"
    append(state, key, [header("sid-orphan"), msg("b0", None, "user", "first kiwi"),
                        msg("a", gap, "user", "after the gap")])
    reconcile_agent(state, "main")
    assert conversation_outline(state, OPERATOR, key).ids == ("a",)
    append(state, key, [msg(gap, "b0", "assistant", "the lost mango reply",
                            appendMode="side")])
    assert conversation_outline(state, OPERATOR, key).ids == ("b0", gap, "a")
    shown = sessions_history(state, HistoryRequest(key), OPERATOR).messages
    assert [m["id"] for m in shown] == ["b0", gap, "a"]
    reconcile_agent(state, "main")
    assert conversation_outline(state, OPERATOR, key).ids == ("b0", gap, "a")
    assert sessions_search(state, SearchRequest("mango"), OPERATOR).results
    assert not verify_state(state).problems


def test_a_branch_whose_parent_came_after_its_child_keeps_its_order(state: StateDir) -> None:
    """An entry may name a parent written after it (the parent arrives later, then a leaf
    control goes back to the child): the branch runs b0, ghost, a while the log holds b0, a,
    ghost. What is stored is read back in log order, so it must not be taken as the branch."""
    key = "agent:main:late"
    append(state, key, [header("sid-late"), msg("b0", None, "user", "first"),
                        msg("a", "ghost", "user", "child"),
                        msg("ghost", "b0", "assistant", "late parent"), leaf("l1", "a")])
    assert conversation_outline(state, OPERATOR, key).ids == ("b0", "ghost", "a")
    reconcile_agent(state, "main")
    assert conversation_outline(state, OPERATOR, key).ids == ("b0", "ghost", "a")
    assert [m["id"] for m in sessions_history(state, HistoryRequest(key), OPERATOR).messages] == [
        "b0", "ghost", "a"]
    assert not verify_state(state).problems
    append(state, key, [msg("c", "a", "assistant", "goes on")])
    reconcile_agent(state, "main")
    assert conversation_outline(state, OPERATOR, key).ids == ("b0", "ghost", "a", "c")
    with state.open("main", write=True) as db:
        assert not db.lagging_branches(), "such a branch is not caught up again every pass"


# --- history read in windows against the whole branch ---------------------------------------


@st.composite
def talks(draw: st.DrawFn) -> list[dict]:
    """A conversation of up to 40 messages of every kind history treats differently (tool
    traffic, turns that only call tools, empty ones, long and secret text, roles it never
    shows), with a rewind in the middle so the branch is not the file's order."""
    events, parent = [header("sid-talk")], None
    kinds = draw(st.lists(st.sampled_from(
        ["user", "assistant", "tool", "calls", "empty", "long", "secret", "system"]),
        min_size=1, max_size=40))
    rewind_at = draw(st.integers(0, len(kinds)))
    for n, kind in enumerate(kinds):
        if n == rewind_at and n >= 2:
            events.append(leaf(f"l{n}", f"t{n - 2}"))  # the last two messages abandoned
            parent = f"t{n - 2}"
        content: object = f"message {n} about herons"
        role = "user" if kind == "user" else "assistant"
        if kind == "tool":
            role, content = "toolResult", [{"type": "text", "text": f"tool said {n}"}]
        elif kind == "calls":
            content = [{"type": "toolCall", "name": "exec", "arguments": {"cmd": f"ls {n}"}}]
        elif kind == "empty":
            content = []
        elif kind == "long":
            content = "heron " * draw(st.integers(200, 3000))
        elif kind == "secret":
            content = f"the key OPENAI_API_KEY={SECRET}"
        elif kind == "system":
            role = "system"
        events.append(msg(f"t{n}", parent, role, content, ms=(n + 1) * 1000))
        parent = f"t{n}"
    return events


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(talk=talks(), limit=st.one_of(st.none(), st.integers(1, 12)), tools=st.booleans(),
       anchor=st.one_of(st.none(), st.integers(0, 45), st.just("nope")),
       max_bytes=st.sampled_from([1500, 6000, 80 * 1024]))
@pytest.mark.slow
def test_history_in_windows_equals_history_of_the_whole_branch(
    fresh_state, monkeypatch, talk: list[dict], limit: int | None, tools: bool,
    anchor: int | str | None, max_bytes: int,
) -> None:
    """``sessions_history`` reads only the events around its window when the branch's
    messages are stored; its answer is the one the whole branch gives (read with the stored
    messages taken away), for any limit, anchor (stored id, redacted id, unknown), tools
    and byte cap. Windows are read three events at a time here, to cross their edges."""
    from backscroll.core import history
    from backscroll.core.storage.postgres.browsing import BrowseReads as PgBrowse
    from backscroll.core.storage.sqlite.browsing import BrowseReads as LiteBrowse

    monkeypatch.setattr(history._Messages, "CHUNK", 3)
    state = fresh_state()
    append(state, "agent:main:talk", talk)
    reconcile_agent(state, "main")
    ids = [e["id"] for e in talk if e["type"] == "message"]
    wanted = None if anchor is None else anchor if isinstance(anchor, str) else (
        ids[anchor % len(ids)])
    if wanted == f"t{len(ids) - 1}" and anchor == 45:
        wanted = history.redact(wanted)  # an id as a search answers with it
    request = HistoryRequest("agent:main:talk", message_id=wanted, limit=limit,
                             include_tools=tools, max_bytes=max_bytes)

    def answer() -> dict | str:
        try:
            return sessions_history(state, request, OPERATOR).as_json()
        except ValidationError as err:
            return str(err)

    with state.open("main") as db, db.snapshot():
        session = db.session("agent:main:talk")
        assert session is not None and db.branch_messages(session.pk, session.last_seq) is not None
    windowed = answer()
    with monkeypatch.context() as patched:
        patched.setattr(LiteBrowse, "branch_messages", lambda *_: None)
        patched.setattr(PgBrowse, "branch_messages", lambda *_: None)
        whole = answer()
    assert windowed == whole


def test_a_conversation_the_caller_may_not_see_is_forbidden(state: StateDir) -> None:
    append(state, "agent:main:main", linear("m", [("user", "hello")]))
    append(state, "agent:main:other", linear("o", [("user", "secret plans")]))
    caller = Caller("agent:main:other", Policy(visibility="self"))
    for call in (lambda: conversation_outline(state, caller, "agent:main:main"),
                 lambda: conversation_window(state, caller, "agent:main:main", 0, 5),
                 lambda: session_hits(state, caller, SearchRequest("hello",
                                                                   session_key="agent:main:main")),
                 lambda: conversation_outline(state, OPERATOR, "agent:main:nope")):
        with pytest.raises(Forbidden, match="not found or not visible"):
            call()


@pytest.mark.slow
def test_a_50000_message_conversation_opens_in_windows(state: StateDir) -> None:
    """The outline of a long conversation holds ids and roles only; a window reads its own
    messages. (Speed is measured by benchmarks/bench_conversation.py, not here.)"""
    lines = [json.dumps(header("long"))]
    parent = None
    for i in range(50_000):
        role = "user" if i % 2 == 0 else "assistant"
        lines.append(json.dumps(msg(f"x{i}", parent, role, f"line {i} of the long talk", ms=i)))
        parent = f"x{i}"
    with state.open("main", write=True) as db:
        db.import_session(SessionMeta("agent:main:long", session_id="long"), lines)
    reconcile_agent(state, "main")
    outline = conversation_outline(state, OPERATOR, "agent:main:long")
    assert len(outline) == 50_000 and outline.said_total == 50_000
    window = conversation_window(state, OPERATOR, "agent:main:long", 30_000, 30_200)
    assert [m["id"] for m in window] == [f"x{i}" for i in range(30_000, 30_200)]
    hits = session_hits(state, OPERATOR, SearchRequest('"line 4242"', session_key="agent:main:long"))
    assert hits == ["x4242"]


# --- grouped results ---------------------------------------------------------------------


def test_one_chatty_session_takes_one_slot(state: StateDir) -> None:
    append(state, "agent:main:chatty", linear("c", [("user", f"pelican number {i}") for i in range(40)],
                                               start=100_000))
    for n in range(3):
        append(state, f"agent:main:quiet{n}", linear(f"q{n}", [(
            "user", "a long message that mentions the pelican once among many other words")]))
    messages = sessions_search(state, SearchRequest("pelican", limit=10), OPERATOR)
    assert {r.session_key for r in messages.results} == {"agent:main:chatty"}  # all ten
    grouped = conversations_search(state, SearchRequest("pelican", limit=10), OPERATOR)
    keys = [c.session.key for c in grouped.conversations]
    assert sorted(keys) == ["agent:main:chatty", "agent:main:quiet0", "agent:main:quiet1",
                            "agent:main:quiet2"]
    hits = {c.session.key: c.hits for c in grouped.conversations}
    assert hits["agent:main:chatty"] == 40 and hits["agent:main:quiet1"] == 1
    chatty = next(c for c in grouped.conversations if c.session.key == "agent:main:chatty")
    assert chatty.session.messages == 40 and chatty.session.title == "pelican number 0"
    payload = grouped.as_json()
    assert payload["conversations"][0]["best"]["excerpt"]
    assert set(payload["conversations"][0]) == {"sessionKey", "sessionId", "agent", "title",
                                                "source", "messages", "lastActivity", "hits",
                                                "resume", "words", "best", "host",
                                                "archived"}


def test_grouped_hits_count_as_the_conversation_counts_them(state: StateDir) -> None:
    append(state, "agent:main:main", linear("m", [("user", "walrus"), ("assistant", "a walrus"),
                                                  ("user", "no"), ("assistant", "walrus again")]))
    [found] = conversations_search(state, SearchRequest("walrus"), OPERATOR).conversations
    hits = session_hits(state, OPERATOR, SearchRequest("walrus", session_key="agent:main:main"))
    assert found.hits == len(hits) == 3
    assert found.result.message_id in hits


def test_filters_by_source_and_project_apply_to_messages_and_groups(state: StateDir) -> None:
    for key, source, cwd in (("agent:main:claude-code:a", "claude-code", "/w/shop"),
                             ("agent:main:codex:b", "codex", "/w/shop/api"),
                             ("agent:main:main", "live", None)):
        first = header(f"sid-{key[-1]}")
        if cwd:
            first["cwd"] = cwd
        with state.open("main", write=True) as db:
            meta = SessionMeta(key, session_id=f"sid-{key[-1]}", source=source)
            db.append(meta, json.dumps(first))
            db.append(meta, json.dumps(msg(f"{key[-1]}1", None, "user", "the otter report")))
    def keys(**filters: object) -> tuple[set[str], set[str]]:
        request = SearchRequest("otter", **filters)  # type: ignore[arg-type]
        flat = {r.session_key for r in sessions_search(state, request, OPERATOR).results}
        grouped = {c.session.key for c in conversations_search(state, request, OPERATOR).conversations}
        return flat, grouped

    assert keys(source="codex") == ({"agent:main:codex:b"},) * 2
    assert keys(source="openclaw") == ({"agent:main:main"},) * 2
    assert keys(project="/w/shop") == ({"agent:main:claude-code:a", "agent:main:codex:b"},) * 2
    assert keys(project="/w/shop", source="claude-code") == ({"agent:main:claude-code:a"},) * 2


# The property: for any visible set, a one-word grouped answer holds the sessions of the
# message-level answer, each at its best message (newest first: in that order), with each
# session's matching messages; best first, conversations rank as wholes (core/convmatch.py).

WORDS = ("heron", "otter", "lynx")
KEYS = ("agent:main:main", "agent:main:subagent:a", "agent:main:subagent:b",
        "agent:main:subagent:c", "agent:main:telegram:group:1", "agent:ops:main")


@st.composite
def corpora(draw: st.DrawFn) -> tuple[dict[str, list[str]], dict[str, str | None]]:
    """Up to 24 messages (so a message-level answer of 25 holds every match) over the keys,
    with random spawn links."""
    talks: dict[str, list[str]] = {}
    for key in KEYS:
        count = draw(st.integers(0, 4))
        talks[key] = [" ".join(draw(st.lists(st.sampled_from(WORDS + ("the", "a")), min_size=1,
                                             max_size=4))) for _ in range(count)]
    links = {key: draw(st.sampled_from([None, "agent:main:main", "agent:main:subagent:a"]))
             for key in KEYS if ":subagent:" in key}
    return talks, links


CALLERS = (
    OPERATOR,
    Caller("agent:main:main", Policy(visibility="tree")),
    Caller("agent:main:subagent:a", Policy(visibility="tree")),
    Caller("agent:main:subagent:a", Policy(visibility="self")),
    Caller("agent:main:subagent:b", Policy(visibility="agent")),
    Caller("agent:main:subagent:a", Policy(sandboxed=True)),
)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(corpus=corpora(), word=st.sampled_from(WORDS), order=st.sampled_from(["best", "recent"]))
@pytest.mark.slow
def test_grouped_results_equal_message_results_collapsed(
    tmp_path_factory: pytest.TempPathFactory,
    corpus: tuple[dict[str, list[str]], dict[str, str | None]],
    word: str,
    order: str,
) -> None:
    talks, links = corpus
    state = StateDir(tmp_path_factory.mktemp("grouped") / "state")
    clock = 0
    for key, texts in talks.items():
        events, parent = [header(f"sid-{key}")], None
        for n, text in enumerate(texts):
            clock += 1000
            entry = f"{key.rsplit(':', 1)[-1]}-{n}"
            events.append(msg(entry, parent, "user" if n % 2 == 0 else "assistant", text,
                              ms=clock))
            parent = entry
        append(state, key, events, spawned_by=links.get(key))
    for caller in CALLERS:
        request = SearchRequest(word, limit=25, order=order)
        flat = sessions_search(state, request, caller).results
        grouped = conversations_search(state, request, caller)
        firsts: dict[str, str] = {}
        for result in flat:
            firsts.setdefault(result.session_key, result.message_id)
        found = [(c.session.key, c.result.message_id) for c in grouped.conversations]
        if order == "recent":
            assert found == list(firsts.items()), caller
        else:  # conversations rank as wholes (core/convmatch.py), each opens at its best
            assert sorted(found) == sorted(firsts.items()), caller
            assert [c.result.score for c in grouped.conversations] == sorted(
                (c.result.score for c in grouped.conversations), reverse=True)
        counted = Counter(r.session_key for r in flat)
        assert {c.session.key: c.hits for c in grouped.conversations} == dict(counted)
        assert all(c.result.excerpt and word in c.result.excerpt.lower()
                   for c in grouped.conversations)


def test_search_rows_keeps_the_grouped_candidates_in_order(state: StateDir) -> None:
    append(state, "agent:main:main", linear("m", [("user", "ibis"), ("user", "ibis ibis")]))
    response, candidates = search_rows(state, SearchRequest("ibis"), OPERATOR, grouped=True)
    assert len(candidates) == len(response.results) == 1
    assert candidates[0][4] == 2  # the session's hits


def test_history_and_conversation_agree_on_the_newest_messages(state: StateDir) -> None:
    append(state, "agent:main:main", linear("m", [("user", f"text {i}") for i in range(30)]))
    history = sessions_history(state, HistoryRequest("agent:main:main", limit=5), OPERATOR)
    outline = conversation_outline(state, OPERATOR, "agent:main:main")
    window = conversation_window(state, OPERATOR, "agent:main:main", len(outline) - 5, len(outline))
    assert [m["id"] for m in window] == [m["id"] for m in history.messages]


def test_the_cli_keeps_its_message_answer_and_groups_on_request(state: StateDir, capsys) -> None:
    from backscroll.tui.cli import main

    append(state, "agent:main:chatty", linear("c", [("user", f"kestrel {i}") for i in range(6)]))
    append(state, "agent:main:quiet", linear("q", [("user", "one kestrel")]))
    base = ["search", "kestrel", "--json", "--state-dir", str(state.path)]
    assert main(base) == 0
    flat = json.loads(capsys.readouterr().out)
    assert len(flat["results"]) == 7 and "conversations" not in flat
    assert main(base + ["--group"]) == 0
    grouped = json.loads(capsys.readouterr().out)
    assert "results" not in grouped
    assert {c["sessionKey"]: c["hits"] for c in grouped["conversations"]} == {
        "agent:main:chatty": 6, "agent:main:quiet": 1}
    assert main(base + ["--group", "--source", "codex"]) == 0
    assert json.loads(capsys.readouterr().out)["conversations"] == []
    assert main(base + ["--source", "windsurf"]) == 2
    assert main(["search", "kestrel", "--group", "--state-dir", str(state.path)]) == 0
    out = capsys.readouterr().out
    assert "agent:main:chatty  6 hits" in out and "2 conversations as operator" in out
