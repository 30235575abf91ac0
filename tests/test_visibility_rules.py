"""The visibility rule through hand-built trees, nesting of modes, and config.toml.

The oracle-based property tests live in test_visibility.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backscroll.core.config import load_config, make_caller
from backscroll.core.errors import ValidationError
from backscroll.core.keys import is_incognito
from backscroll.core.visibility import (
    OPERATOR,
    Caller,
    Policy,
    SessionLink,
    may_see_agent,
    visible_keys,
)

MAIN = [
    SessionLink("agent:main:main"),
    SessionLink("agent:main:subagent:a", spawned_by="agent:main:main"),
    SessionLink("agent:main:subagent:b", spawned_by="agent:main:subagent:a"),
    SessionLink(
        "agent:main:subagent:c", parent_key="agent:main:subagent:a"
    ),  # parentSessionKey only
    SessionLink("agent:main:telegram:group:1"),
    SessionLink("agent:main:cron:nightly"),
    SessionLink("agent:main:dashboard:incognito-1"),
    SessionLink("agent:main:subagent:incognito-2", spawned_by="agent:main:subagent:a"),
]
ALL_MAIN = {
    "agent:main:main",
    "agent:main:subagent:a",
    "agent:main:subagent:b",
    "agent:main:subagent:c",
    "agent:main:telegram:group:1",
    "agent:main:cron:nightly",
}
TREE_A = {"agent:main:subagent:a", "agent:main:subagent:b", "agent:main:subagent:c"}


def see(key: str | None, policy: Policy = Policy(), agent: str = "main", sessions=MAIN) -> set[str]:
    caller = OPERATOR if key is None else Caller(key, policy)
    return visible_keys(caller, agent, sessions)


def test_modes_on_a_hand_built_tree() -> None:
    assert see(None) == ALL_MAIN
    assert see("agent:main:subagent:a", Policy("self")) == {"agent:main:subagent:a"}
    assert see("agent:main:subagent:a", Policy("tree")) == TREE_A
    assert see("agent:main:subagent:b", Policy("tree")) == {"agent:main:subagent:b"}
    assert see("agent:main:main", Policy("tree")) == ALL_MAIN  # main-session widening
    assert see("agent:main:cron:nightly", Policy("agent")) == ALL_MAIN
    assert see("agent:main:cron:nightly", Policy("all")) == ALL_MAIN


def test_sandbox_clamp_and_its_lifting() -> None:
    assert see("agent:main:main", Policy("tree", sandboxed=True)) == {
        "agent:main:main",
        "agent:main:subagent:a",
        "agent:main:subagent:b",
        "agent:main:subagent:c",
    }  # no widening: only what main spawned
    assert see("agent:main:subagent:a", Policy("all", sandboxed=True)) == TREE_A
    assert (
        see("agent:main:main", Policy("agent", sandboxed=True, sandbox_visibility="all"))
        == ALL_MAIN
    )


@pytest.mark.parametrize(
    "policy, other_visible",
    [
        (Policy("all"), False),
        (Policy("all", a2a_enabled=True), True),
        (Policy("all", a2a_enabled=True, a2a_allow=("main",)), False),  # only one side allowed
        (Policy("all", a2a_enabled=True, a2a_allow=("MAIN", "Ops")), True),  # case-insensitive
        (Policy("all", a2a_enabled=True, a2a_allow=("ma*", "o*")), True),
        (Policy("agent", a2a_enabled=True), False),  # cross-agent needs visibility=all
        (Policy("tree", a2a_enabled=True), False),
        (Policy("all", a2a_enabled=True, sandboxed=True), False),
    ],
)
def test_agent_to_agent_policy(policy: Policy, other_visible: bool) -> None:
    ops = [SessionLink("agent:ops:main"), SessionLink("agent:ops:dashboard:incognito-9")]
    caller = Caller("agent:main:subagent:a", policy)
    assert may_see_agent(caller, "ops") is other_visible
    assert visible_keys(caller, "ops", ops) == ({"agent:ops:main"} if other_visible else set())


def test_cyclic_and_dangling_links_terminate() -> None:
    loop = [
        SessionLink("agent:x:a", spawned_by="agent:x:b"),
        SessionLink("agent:x:b", spawned_by="agent:x:a"),
        SessionLink("agent:x:c", spawned_by="agent:x:ghost"),
    ]
    assert see("agent:x:a", agent="x", sessions=loop) == {"agent:x:a", "agent:x:b"}
    assert see("agent:x:ghost", agent="x", sessions=loop) == {"agent:x:c"}


# ------------------------------------------------------------------ properties


@st.composite
def forest(draw):
    agents = ["a", "b", "c"]
    links: dict[str, list[SessionLink]] = {a: [] for a in agents}
    keys: list[str] = []
    for i in range(draw(st.integers(1, 14))):
        agent = draw(st.sampled_from(agents))
        kind = draw(st.sampled_from(["main", "subagent:s", "group:g", "dashboard:incognito-"]))
        key = f"agent:{agent}:main" if kind == "main" else f"agent:{agent}:{kind}{i}"
        if key in keys:
            continue
        parent = draw(st.sampled_from(keys)) if keys and draw(st.booleans()) else None
        via_parent_key = draw(st.booleans())
        links[agent].append(
            SessionLink(key, None if via_parent_key else parent, parent if via_parent_key else None)
        )
        keys.append(key)
    if draw(st.booleans()) and len(keys) > 1:  # sometimes a cycle
        first = keys[0]
        agent = first.split(":")[1]
        links[agent] = [
            SessionLink(l.key, l.spawned_by or keys[-1], l.parent_key) if l.key == first else l
            for l in links[agent]
        ]
    return links, keys


@settings(max_examples=200, deadline=None)
@given(data=forest(), pick=st.integers(0, 50))
def test_modes_are_nested(data, pick) -> None:
    links, keys = data
    callers = [k for k in keys if not is_incognito(k)]
    if not callers:
        return
    key = callers[pick % len(callers)]
    own = links[key.split(":")[1]]
    seen = [
        visible_keys(Caller(key, Policy(mode)), key.split(":")[1], own)
        for mode in ("self", "tree", "agent", "all")
    ]
    assert seen[0] <= seen[1] <= seen[2] <= seen[3]
    assert seen[0] == {key}


# ------------------------------------------------------------------ config.toml


def test_config_defaults_and_full_file(tmp_path: Path) -> None:
    assert load_config(tmp_path).policy == Policy()
    (tmp_path / "config.toml").write_text(
        '[tools.sessions]\nvisibility = "all"\n'
        '[tools.agentToAgent]\nenabled = true\nallow = ["main", "research-*"]\n'
        '[agents.defaults.sandbox]\nmode = "all"\nsessionToolsVisibility = "all"\n'
    )
    assert load_config(tmp_path).policy == Policy("all", True, ("main", "research-*"), True, "all")
    caller = make_caller(
        load_config(tmp_path), "Agent:Main:Main", visibility="self", sandboxed=False
    )
    assert caller == Caller(
        "agent:main:main", Policy("self", True, ("main", "research-*"), False, "all")
    )
    assert make_caller(load_config(tmp_path), None) is OPERATOR


@pytest.mark.parametrize(
    "text, message",
    [
        ("[tools.sessions\n", r"config.toml (is not valid|cannot be read)"),
        ('[[agents.list]]\nid = "main"\nsandbox = { sessionToolsVisibility = "some" }\n',
         r"agents.list\[0\].sandbox.sessionToolsVisibility must be one of spawned, all"),
        ('[tools.agentToAgent]\nallow = "main"\n', "allow must be a list"),
        ('[agents.defaults.sandbox]\nsessionToolsVisibility = "some"\n', "sessionToolsVisibility"),
    ],
)
def test_bad_config_is_one_sentence_naming_the_file(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "config.toml").write_text(text)
    with pytest.raises(ValidationError, match=message) as err:
        load_config(tmp_path)
    assert str(tmp_path / "config.toml") in str(err.value)


def test_bad_override_and_key() -> None:
    with pytest.raises(ValidationError, match="self, tree, agent, all"):
        make_caller(load_config(Path("/nonexistent")), "agent:main:main", visibility="world")
    with pytest.raises(ValidationError, match="not a session key"):
        make_caller(load_config(Path("/nonexistent")), "main")
