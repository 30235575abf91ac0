"""Which sessions a caller may see (SPEC 4). ``visible_keys`` is the one function that
decides; search and history both call it.

- The operator (a person at the terminal) sees every session of every agent.
- A session caller sees, by ``visibility``: ``self`` its own session; ``tree`` its session
  and every session it spawned, transitively through ``spawnedBy`` / ``parentSessionKey``
  (an agent's main session ``agent:<id>:main`` sees its whole agent); ``agent`` every
  session of its agent; ``all`` every session of its agent, and other agents' sessions when
  the agent-to-agent policy allows both agent ids.
- Sandboxed with ``sessionToolsVisibility = "spawned"`` (the default), a caller sees itself
  and what it spawned, transitively, without the main-session widening, whatever
  ``visibility`` says.
- Incognito sessions are never visible, to anyone.
- ``tree`` never crosses agents: cross-agent access needs ``visibility = "all"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from .keys import is_incognito, is_main_key

VISIBILITY_MODES = ("self", "tree", "agent", "all")
SANDBOX_MODES = ("spawned", "all")


@dataclass(frozen=True)
class SessionLink:
    key: str
    spawned_by: str | None = None
    parent_key: str | None = None


@dataclass(frozen=True)
class Policy:
    visibility: str = "tree"
    a2a_enabled: bool = False
    a2a_allow: tuple[str, ...] = ()
    sandboxed: bool = False
    sandbox_visibility: str = "spawned"

    @property
    def clamped(self) -> bool:
        """The sandbox clamp applies: only the caller's own spawned tree."""
        return self.sandboxed and self.sandbox_visibility == "spawned"


@dataclass(frozen=True)
class Caller:
    key: str | None  # None: the operator
    policy: Policy = Policy()

    @property
    def is_operator(self) -> bool:
        return self.key is None

    @property
    def agent_id(self) -> str | None:
        return None if self.key is None else self.key.split(":")[1]

    def describe(self) -> str:
        if self.key is None:
            return "operator"
        mode = "sandboxed" if self.policy.clamped else self.policy.visibility
        extra = ", agent-to-agent" if self.policy.a2a_enabled and mode == "all" else ""
        return f"{self.key} ({mode}{extra})"


OPERATOR = Caller(None)


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile("^" + ".*".join(re.escape(p) for p in pattern.lower().split("*")) + "$")


def _allowed(policy: Policy, agent_id: str) -> bool:
    return not policy.a2a_allow or any(_glob(p).match(agent_id.lower()) for p in policy.a2a_allow)


def may_see_agent(caller: Caller, agent_id: str) -> bool:
    """Whether any session of ``agent_id`` can be visible: lets search skip databases."""
    if caller.is_operator or agent_id.lower() == caller.agent_id:
        return True
    policy = caller.policy
    return (
        not policy.clamped
        and policy.visibility == "all"
        and policy.a2a_enabled
        and _allowed(policy, caller.agent_id or "")
        and _allowed(policy, agent_id)
    )


def spawned_closure(root: str, sessions: Iterable[SessionLink]) -> set[str]:
    """``root`` and every session spawned from it, transitively (cycles and dangling links
    are harmless: each key is visited once)."""
    children: dict[str, list[str]] = {}
    for s in sessions:
        for parent in {s.spawned_by, s.parent_key}:
            if parent:
                children.setdefault(parent.lower(), []).append(s.key.lower())
    seen = {root}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return seen


def visible_keys(caller: Caller, agent_id: str, sessions: Iterable[SessionLink]) -> set[str]:
    """The keys of ``sessions`` (all sessions of one agent database) the caller may see."""
    sessions = list(sessions)
    agent_id = agent_id.lower()
    every = {s.key.lower() for s in sessions}
    if caller.is_operator:
        seen = every
    elif agent_id != caller.agent_id:
        seen = every if may_see_agent(caller, agent_id) else set()
    else:
        own = caller.key.lower()
        mode = caller.policy.visibility
        if caller.policy.clamped:
            seen = spawned_closure(own, sessions)
        elif mode == "self":
            seen = {own}
        elif mode == "tree":
            seen = every if is_main_key(own) else spawned_closure(own, sessions)
        else:  # agent, all
            seen = every
        seen &= every
    return {key for key in seen if not is_incognito(key)}
