"""One request over many agent databases: which agents, and what one agent's failure means.

Every use case that reads or writes all agents (search, the session lists, status, verify,
reconcile, sync, the sources list) goes through ``for_each_agent``, which holds the rule once:

- a database that cannot be used (corrupt, older or newer schema, locked, read-only) is that
  agent's failure: it is handed back with the agent, and the other agents go on;
- the server gone (``Unreachable``) stops the whole request at once: every other agent would
  wait for it the same way. A use case that writes adds ``Forbidden`` (a role that may only
  read is refused by every agent alike).

``visible_agents`` is the one list of the agents a caller may see (``may_see_agent``), for the
fan-out and for whoever offers agents to choose from (the browser's filters).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Generic, NamedTuple, TypeVar

from .errors import BackscrollError, Forbidden, Unreachable
from .state import StateDir
from .visibility import Caller, may_see_agent

T = TypeVar("T")

# What stops a request at once rather than being one agent's failure.
STOPS_READS: tuple[type[BaseException], ...] = (Unreachable,)
STOPS_WRITES: tuple[type[BaseException], ...] = (Unreachable, Forbidden)


class AgentResult(NamedTuple, Generic[T]):
    """One agent's answer: ``value`` when ``fn`` returned, else the ``error`` it raised."""

    agent: str
    value: T | None
    error: BackscrollError | None


def visible_agents(state: StateDir, caller: Caller) -> list[str]:
    """The agents of ``state`` that ``caller`` may see, in ``state.agents()``'s order."""
    return [agent for agent in state.agents() if may_see_agent(caller, agent)]


def for_each_agent(
    state: StateDir,
    fn: Callable[[str], T],
    *,
    agents: Iterable[str] | None = None,
    caller: Caller | None = None,
    stops: tuple[type[BaseException], ...] = STOPS_READS,
    fails: type[BaseException] | tuple[type[BaseException], ...] = BackscrollError,
) -> Iterator[AgentResult[T]]:
    """``fn(agent)`` for every agent (``agents``, else all of ``state``; only those ``caller``
    may see when a caller is given), one at a time, in order. An error of ``fails`` is that
    agent's (``AgentResult.error``); one of ``stops`` is raised at once; anything else too."""
    chosen = state.agents() if agents is None else agents
    for agent in chosen:
        if caller is not None and not may_see_agent(caller, agent):
            continue
        try:
            value = fn(agent)
        except stops:
            raise
        except fails as err:
            yield AgentResult(agent, None, err)  # type: ignore[arg-type]
            continue
        yield AgentResult(agent, value, None)
