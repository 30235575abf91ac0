"""Which sessions a caller may see (SPEC 4). ``visible_keys`` is the one function that
decides; search, history, export and the browser's "view as" all call it.

- The operator (a person at the terminal) sees every session of every agent.
- A session caller sees, by ``visibility``: ``self`` its own session; ``tree`` its session
  and every session it spawned, transitively through ``spawnedBy`` / ``parentSessionKey``
  (an agent's main session ``agent:<id>:main`` sees its whole agent); ``agent`` every
  session of its agent; ``all`` every session of its agent, and other agents' sessions when
  the agent-to-agent policy allows both agent ids.
- Sandboxed with ``sessionToolsVisibility = "spawned"`` (the default), a caller sees itself
  and what it spawned, transitively, without the main-session widening, whatever
  ``visibility`` says.
- Incognito sessions are never visible, to anyone, the operator included.
- ``tree`` never crosses agents: cross-agent access needs ``visibility = "all"``.

Keys are compared lower-cased. Whether the caller's own session exists is the search
layer's question; here a missing caller simply sees what the links give it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterable, NamedTuple

from .errors import ValidationError
from .keys import is_incognito, is_main_key, normalize_key

VISIBILITY_MODES = ("self", "tree", "agent", "all")
SANDBOX_MODES = ("spawned", "all")  # sandbox.sessionToolsVisibility


class SessionLink(NamedTuple):  # a tuple: one is made for every session of a database
    """One session of an agent database and the links to the session that spawned it."""

    key: str
    spawned_by: str | None = None
    parent_key: str | None = None


class _PolicyFields(NamedTuple):
    visibility: str = "tree"
    a2a_enabled: bool = False
    a2a_allow: tuple[str, ...] = ()  # agent-id globs (``*`` only); empty = any agent
    sandboxed: bool = False
    sandbox_visibility: str = "spawned"
    # agent-id globs (``*`` only) whose callers may search tool calls (``may_search_tools``);
    # empty: none (config.toml ``[tools.sessions] toolCalls``)
    tool_calls: tuple[str, ...] = ()


def _checked_replace(self, **changes: Any):  # type: ignore[no-untyped-def]
    """``_replace`` through the constructor, so a copy is checked as the original was."""
    return type(self)(**{**self._asdict(), **changes})


def _checked_make(cls, values: Iterable[Any]):  # type: ignore[no-untyped-def]
    return cls(*values)


class Policy(_PolicyFields):
    """A named tuple (cheap to define: storage/model.py says why) checked when made: every
    way a named tuple offers to make one (``_make``, ``_replace``, ``copy.replace``) goes
    through ``__new__``."""

    __slots__ = ()
    _replace = __replace__ = _checked_replace
    _make = classmethod(_checked_make)

    def __new__(cls, *args: Any, **kwargs: Any) -> Policy:
        fields = _PolicyFields(*args, **kwargs)
        # An unknown mode must never fall through to "see everything": refuse it up front.
        if fields.visibility not in VISIBILITY_MODES:
            raise ValidationError(
                f"visibility must be one of {', '.join(VISIBILITY_MODES)}, not {fields.visibility!r}"
            )
        if fields.sandbox_visibility not in SANDBOX_MODES:
            raise ValidationError(
                f"sessionToolsVisibility must be one of {', '.join(SANDBOX_MODES)}, "
                f"not {fields.sandbox_visibility!r}"
            )
        # A list would make it unhashable; keep equality by value.
        return super().__new__(cls, *fields._replace(a2a_allow=tuple(fields.a2a_allow),
                                                     tool_calls=tuple(fields.tool_calls)))

    @property
    def clamped(self) -> bool:
        """The sandbox clamp applies: only the caller's own spawned tree, nothing else."""
        return self.sandboxed and self.sandbox_visibility == "spawned"


class _CallerFields(NamedTuple):
    key: str | None  # None: the operator
    policy: Policy
    # The host its session is on (core/hosts.py); None: the machine asking (the storage's).
    host: str | None = None


class Caller(_CallerFields):
    __slots__ = ()
    _replace = __replace__ = _checked_replace
    _make = classmethod(_checked_make)

    def __new__(cls, key: str | None, policy: Policy = Policy(), host: str | None = None
                ) -> Caller:
        if not isinstance(policy, Policy):  # a mode name or a tuple would be read unchecked
            raise ValidationError(f"a caller's policy must be a Policy, not {policy!r}")
        if host is not None:
            from .hosts import check_host

            host = check_host(host)
        # The key's canonical form, so every comparison below is lower-cased.
        return super().__new__(cls, None if key is None else normalize_key(key), policy, host)

    @property
    def is_operator(self) -> bool:
        return self.key is None

    @property
    def agent_id(self) -> str | None:
        return None if self.key is None else self.key.split(":", 2)[1]

    def describe(self) -> str:
        """For status lines: ``operator``, ``agent:main:main (tree)``, ``... (sandboxed)``."""
        if self.key is None:
            return "operator"
        p = self.policy
        if p.clamped:  # visibility does not matter then, so do not suggest it does
            return f"{self.key} (sandboxed)"
        parts = [p.visibility]
        if p.visibility == "all" and p.a2a_enabled:
            parts.append("agent-to-agent")
        if p.sandboxed:
            parts.append("sandboxed, sessionToolsVisibility=all")
        return f"{self.key} ({', '.join(parts)})"


OPERATOR = Caller(None)


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    # Only ``*`` is special (unlike fnmatch, ``?`` and ``[`` are literal, as in the runtime).
    return re.compile(".*".join(re.escape(p) for p in pattern.lower().split("*")))


def _allowed(policy: Policy, agent_id: str) -> bool:
    agent_id = agent_id.lower()
    return not policy.a2a_allow or any(_glob(g).fullmatch(agent_id) for g in policy.a2a_allow)


def may_search_tools(caller: Caller) -> bool:
    """Whether ``caller`` may search the tool-call index and list tool calls (SPEC 18): the
    operator always; a session caller when its agent id matches a ``toolCalls`` glob. What
    it then sees is the visibility rule's, as for messages."""
    if caller.key is None:
        return True
    agent_id = (caller.agent_id or "").lower()
    return any(_glob(g).fullmatch(agent_id) for g in caller.policy.tool_calls)


def may_see_agent(caller: Caller, agent_id: str) -> bool:
    """Whether any session of ``agent_id`` can be visible: lets search skip databases."""
    agent_id = agent_id.lower()
    if caller.is_operator or agent_id == caller.agent_id:
        return True
    p = caller.policy
    return (
        not p.clamped  # the sandboxed tree never crosses agents either
        and p.visibility == "all"
        and p.a2a_enabled
        and _allowed(p, caller.agent_id or "")
        and _allowed(p, agent_id)
    )


def spawned_closure(root: str, sessions: Iterable[SessionLink]) -> set[str]:
    """``root`` and every session spawned from it, transitively. Each key is visited once,
    so cycles terminate; links to sessions that are not given are simply never followed."""
    children: dict[str, set[str]] = {}
    for s in sessions:
        for parent in (s.spawned_by, s.parent_key):
            if parent:
                children.setdefault(parent.lower(), set()).add(s.key.lower())
    root = root.lower()
    seen = {root}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return seen


def within_own_tree(caller: Caller, agent_id: str) -> bool:
    """Whether ``visible_keys`` gives this caller, in ``agent_id``'s database, at most the
    sessions spawned from its own (``spawned_closure``): then the sessions linked under its
    own are all the rule needs to be given (a search need not read every session)."""
    if caller.key is None or agent_id.lower() != caller.agent_id:
        return False
    p = caller.policy
    return p.clamped or p.visibility == "self" or (
        p.visibility == "tree" and not is_main_key(caller.key))


def visible_keys(caller: Caller, agent_id: str, sessions: Iterable[SessionLink]) -> set[str]:
    """The lower-cased keys of ``sessions`` (all sessions of ``agent_id``'s database) that
    ``caller`` may see."""
    agent_id = agent_id.lower()
    prefix = f"agent:{agent_id}:"
    # A key of another agent filed here is ignored: it must not leak across agents.
    sessions = [s for s in sessions if s.key.lower().startswith(prefix)]
    every = {s.key.lower() for s in sessions}
    if caller.is_operator:
        seen = every
    elif agent_id != caller.agent_id:
        seen = every if may_see_agent(caller, agent_id) else set()
    else:
        own = caller.key or ""
        mode = caller.policy.visibility
        if caller.policy.clamped:
            seen = spawned_closure(own, sessions)
        elif mode == "self":
            seen = {own}
        elif mode == "tree":
            seen = every if is_main_key(own) else spawned_closure(own, sessions)
        elif mode in ("agent", "all"):
            seen = every
        else:  # unreachable (Policy validates), but fail closed rather than open
            seen = set()
        seen &= every  # the caller's own key may not be among the sessions given
    return {key for key in seen if not is_incognito(key)}
