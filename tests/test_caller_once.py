"""The caller is resolved once per request (``visible_sessions.resolved``): a search, a grouped
search, history and the lists open the caller's agent database once, the check that the
caller exists and the request's reads sharing it; and the answers and sentences stay."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from backscroll.core.catalog import project_list, visible_session_list
from backscroll.core.errors import Forbidden
from backscroll.core.grouped import conversations_search
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.visibility import OPERATOR, Caller, Policy

from .events import msg

pytestmark = pytest.mark.backends

AGENTS = ("alpha", "main", "zulu")
CALLER = Caller("agent:main:main", Policy())


def build(state: StateDir) -> None:
    for agent in AGENTS:
        with state.open(agent, write=True) as db:
            for i in range(2):
                db.append(SessionMeta(f"agent:{agent}:main"), json.dumps(
                    msg(f"m{i}", f"m{i - 1}" if i else None, "user", f"heron {i} in {agent}")))


def answer(found: object) -> object:
    """What a use case answered, comparable: its JSON when it has one."""
    as_json = getattr(found, "as_json", None)
    return as_json() if as_json is not None else found


def counting(state: StateDir, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every reader opened from now on, by agent."""
    opened: Counter[str] = Counter()
    real = StateDir.open

    def open_counted(self: StateDir, agent_id: str, write: bool = False):  # noqa: ANN202
        if not write:
            opened[agent_id] += 1
        return real(self, agent_id, write)

    monkeypatch.setattr(StateDir, "open", open_counted)
    return opened


def test_a_request_opens_the_callers_database_once(state: StateDir, monkeypatch) -> None:
    build(state)
    before = {
        "search": sessions_search(state, SearchRequest("heron"), CALLER),
        "grouped": conversations_search(state, SearchRequest("heron"), CALLER),
        "history": sessions_history(state, HistoryRequest("agent:main:main"), CALLER),
        "list": visible_session_list(state, CALLER),
        "projects": project_list(state, CALLER),
    }
    requests = {
        "search": lambda: sessions_search(state, SearchRequest("heron"), CALLER),
        "grouped": lambda: conversations_search(state, SearchRequest("heron"), CALLER),
        "history": lambda: sessions_history(state, HistoryRequest("agent:main:main"), CALLER),
        "list": lambda: visible_session_list(state, CALLER),
        "projects": lambda: project_list(state, CALLER),
    }
    for name, request in requests.items():
        opened = counting(state, monkeypatch)
        assert answer(request()) == answer(before[name]), name  # the same answer as without counting
        assert opened["main"] == 1, (name, opened)
        monkeypatch.undo()
    assert {r.agent for r in before["search"].results} == {"main"}  # the caller's own agent
    assert before["history"].messages


def test_a_caller_whose_agent_is_not_searched_is_still_checked_once(state: StateDir,
                                                                    monkeypatch) -> None:
    build(state)
    caller = Caller("agent:main:main", Policy(visibility="all", a2a_enabled=True))
    opened = counting(state, monkeypatch)
    found = sessions_search(state, SearchRequest("heron", agent="alpha"), caller)
    assert {r.agent for r in found.results} == {"alpha"}
    assert opened == Counter(main=1, alpha=1)  # main: the check only
    opened.clear()
    found = sessions_search(state, SearchRequest("heron", agent="alpha"), OPERATOR)
    assert {r.agent for r in found.results} == {"alpha"} and opened == Counter(alpha=1)


def test_the_sentences_stay(state: StateDir) -> None:
    build(state)
    with pytest.raises(Forbidden, match="^session agent:main:ghost does not exist or may not "
                                        "search$"):
        sessions_search(state, SearchRequest("heron"), Caller("agent:main:ghost", Policy()))
    with pytest.raises(Forbidden, match="^session agent:nope:x does not exist or may not "
                                        "search$"):
        sessions_history(state, HistoryRequest("agent:main:main"), Caller("agent:nope:x", Policy()))
    with pytest.raises(Forbidden, match="^session agent:main:ghost on host far does not exist"):
        visible_session_list(state, Caller("agent:main:ghost", Policy(), host="far"))
