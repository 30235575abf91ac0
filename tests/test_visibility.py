"""The visibility rule (core/visibility.py) and the caller policy file (core/config.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backscroll.core.config import Config, load_config, make_caller
from backscroll.core.errors import ValidationError
from backscroll.core.keys import is_incognito, is_main_key
from backscroll.core.visibility import (
    OPERATOR,
    Caller,
    Policy,
    SessionLink,
    may_see_agent,
    visible_keys,
)

# ----------------------------------------------------------------- a hand-built tree

MAIN = "agent:main:main"
GROUP = "agent:main:telegram:group:42"
CRON = "agent:main:cron:nightly"
SUB_A = "agent:main:subagent:a"  # spawned by main
SUB_A1 = "agent:main:subagent:a1"  # spawned by a: two levels deep
SUB_P = "agent:main:subagent:p"  # linked to a through parentSessionKey only
SUB_G = "agent:main:subagent:g"  # spawned by the group chat
SUB_G1 = "agent:main:subagent:g1"
INCOG_DASH = "agent:main:dashboard:incognito-x"
INCOG_SUB = "agent:main:subagent:incognito-y"  # an incognito child of a
SUB_Z = "agent:main:subagent:z"  # spawned by the incognito child

MAIN_DB = [
    SessionLink(MAIN),
    SessionLink(GROUP),
    SessionLink(CRON),
    SessionLink(SUB_A, spawned_by=MAIN),
    SessionLink("Agent:Main:Subagent:A1", spawned_by="AGENT:MAIN:SUBAGENT:A"),  # case
    SessionLink(SUB_P, parent_key=SUB_A),
    SessionLink(SUB_G, spawned_by=GROUP, parent_key=GROUP),
    SessionLink(SUB_G1, spawned_by=SUB_G),
    SessionLink(INCOG_DASH),
    SessionLink(INCOG_SUB, spawned_by=SUB_A),
    SessionLink(SUB_Z, spawned_by=INCOG_SUB),
]
EVERY_MAIN = {MAIN, GROUP, CRON, SUB_A, SUB_A1, SUB_P, SUB_G, SUB_G1, SUB_Z}  # no incognito
MAIN_SPAWNED = {MAIN, SUB_A, SUB_A1, SUB_P, SUB_Z}
TREE_A = {SUB_A, SUB_A1, SUB_P, SUB_Z}

OPS_DB = [
    SessionLink("agent:ops:main"),
    SessionLink("agent:ops:subagent:o1", spawned_by=MAIN),  # a cross-agent spawn
    SessionLink("agent:ops:dashboard:incognito-q"),
]
EVERY_OPS = {"agent:ops:main", "agent:ops:subagent:o1"}


def see(
    key: str | None,
    policy: Policy = Policy(),
    agent: str = "main",
    sessions: list[SessionLink] | None = None,
) -> set[str]:
    caller = OPERATOR if key is None else Caller(key, policy)
    if sessions is None:
        sessions = MAIN_DB if agent == "main" else OPS_DB
    return visible_keys(caller, agent, sessions)


def test_operator_sees_every_session_but_incognito() -> None:
    assert see(None) == EVERY_MAIN
    assert see(None, agent="ops") == EVERY_OPS
    assert OPERATOR.is_operator and OPERATOR.agent_id is None
    assert OPERATOR.describe() == "operator"


def test_self() -> None:
    assert see(SUB_A, Policy("self")) == {SUB_A}
    assert see(MAIN, Policy("self")) == {MAIN}  # no widening under self
    assert see(GROUP, Policy("self")) == {GROUP}


def test_tree_follows_both_links_through_every_level() -> None:
    assert see(SUB_A, Policy("tree")) == TREE_A  # a1 via spawnedBy, p via parentSessionKey
    assert see(SUB_A1, Policy("tree")) == {SUB_A1}
    assert see(GROUP, Policy("tree")) == {GROUP, SUB_G, SUB_G1}
    assert see(CRON, Policy("tree")) == {CRON}
    # the incognito child is hidden, but what it spawned is not incognito
    assert see(INCOG_SUB, Policy("tree")) == {SUB_Z}


def test_tree_widens_for_the_main_session_only() -> None:
    assert see(MAIN, Policy("tree")) == EVERY_MAIN
    assert see("AGENT:MAIN:MAIN", Policy("tree")) == EVERY_MAIN  # keys compare lower-cased
    assert see(SUB_A, Policy("tree")) != EVERY_MAIN


def test_agent_and_all_see_the_whole_own_agent() -> None:
    assert see(CRON, Policy("agent")) == EVERY_MAIN
    assert see(SUB_A1, Policy("all")) == EVERY_MAIN


def test_tree_never_crosses_agents_even_along_a_spawn_link() -> None:
    assert not may_see_agent(Caller(MAIN, Policy("tree")), "ops")
    assert see(MAIN, Policy("tree"), agent="ops") == set()
    assert see(MAIN, Policy("agent", a2a_enabled=True), agent="ops") == set()


def test_sandbox_clamp_keeps_the_spawned_tree_without_widening() -> None:
    for mode in ("self", "tree", "agent", "all"):
        assert see(MAIN, Policy(mode, sandboxed=True)) == MAIN_SPAWNED
        assert see(SUB_A, Policy(mode, sandboxed=True)) == TREE_A
    assert see(GROUP, Policy("all", sandboxed=True)) == {GROUP, SUB_G, SUB_G1}
    # no agent-to-agent from a sandbox, whatever the policy
    clamped = Caller(MAIN, Policy("all", a2a_enabled=True, sandboxed=True))
    assert not may_see_agent(clamped, "ops")
    assert visible_keys(clamped, "ops", OPS_DB) == set()


def test_session_tools_visibility_all_lifts_the_clamp() -> None:
    def lifted(mode: str, **kw) -> Policy:
        return Policy(mode, sandboxed=True, sandbox_visibility="all", **kw)

    assert see(MAIN, lifted("tree")) == EVERY_MAIN
    assert see(SUB_A, lifted("self")) == {SUB_A}
    assert see(CRON, lifted("agent")) == EVERY_MAIN
    assert see(SUB_A, lifted("all", a2a_enabled=True), agent="ops") == EVERY_OPS


@pytest.mark.parametrize(
    "policy, crosses",
    [
        (Policy("all"), False),  # disabled
        (Policy("all", a2a_enabled=True), True),  # empty allow = any agent
        (Policy("all", a2a_enabled=True, a2a_allow=("main",)), False),  # only the caller's side
        (Policy("all", a2a_enabled=True, a2a_allow=("ops",)), False),  # only the target's side
        (Policy("all", a2a_enabled=True, a2a_allow=("main", "ops")), True),
        (Policy("all", a2a_enabled=True, a2a_allow=("MAIN", "Ops")), True),  # case-insensitive
        (Policy("all", a2a_enabled=True, a2a_allow=("M*", "*S")), True),  # globs
        (Policy("all", a2a_enabled=True, a2a_allow=("*",)), True),
        (Policy("all", a2a_enabled=True, a2a_allow=("ma?n", "o?s")), False),  # only * is special
        (Policy("all", a2a_enabled=True, a2a_allow=("mai", "op")), False),  # whole-id matches
        (Policy("agent", a2a_enabled=True), False),  # needs visibility=all
        (Policy("tree", a2a_enabled=True), False),
        (Policy("self", a2a_enabled=True), False),
    ],
)
def test_agent_to_agent(policy: Policy, crosses: bool) -> None:
    caller = Caller(SUB_A, policy)
    assert may_see_agent(caller, "ops") is crosses
    assert may_see_agent(caller, "OPS") is crosses
    assert visible_keys(caller, "ops", OPS_DB) == (EVERY_OPS if crosses else set())
    assert may_see_agent(caller, "main")  # its own agent is always worth opening


def test_allow_glob_with_a_hyphenated_family() -> None:
    lab = [SessionLink("agent:research-lab:main")]
    policy = Policy("all", a2a_enabled=True, a2a_allow=("main", "research-*"))
    assert visible_keys(Caller(MAIN, policy), "research-lab", lab) == {"agent:research-lab:main"}
    assert visible_keys(Caller(MAIN, policy), "ops", OPS_DB) == set()


def test_incognito_is_hidden_from_everyone_including_itself() -> None:
    for caller in (
        OPERATOR,
        Caller(INCOG_DASH, Policy("self")),
        Caller(INCOG_DASH, Policy("all")),
        Caller(SUB_A, Policy("tree")),
        Caller(MAIN, Policy("all", a2a_enabled=True)),
    ):
        for agent, db in (("main", MAIN_DB), ("ops", OPS_DB)):
            assert not any(is_incognito(k) for k in visible_keys(caller, agent, db))
    assert see(INCOG_DASH, Policy("self")) == set()


def test_a_caller_missing_from_the_sessions_sees_only_what_links_give() -> None:
    ghost = "agent:main:subagent:ghost"
    db = MAIN_DB + [SessionLink("agent:main:subagent:orphan", spawned_by=ghost)]
    assert see(ghost, Policy("self"), sessions=db) == set()
    assert see(ghost, Policy("tree"), sessions=db) == {"agent:main:subagent:orphan"}
    assert see(ghost, Policy("agent"), sessions=db) == EVERY_MAIN | {"agent:main:subagent:orphan"}


def test_a_foreign_key_filed_in_a_database_never_leaks() -> None:
    db = MAIN_DB + [SessionLink("agent:ops:stray", spawned_by=MAIN)]
    assert see(MAIN, Policy("agent"), sessions=db) == EVERY_MAIN
    assert see(None, sessions=db) == EVERY_MAIN


def test_cycles_and_dangling_links_terminate() -> None:
    ring = [
        SessionLink(f"agent:x:s{i}", spawned_by=f"agent:x:s{(i + 1) % 500}") for i in range(500)
    ]
    ring.append(
        SessionLink(
            "agent:x:self-loop", spawned_by="agent:x:self-loop", parent_key="agent:x:missing"
        )
    )
    whole = {f"agent:x:s{i}" for i in range(500)}
    assert visible_keys(Caller("agent:x:s7"), "x", ring) == whole
    assert visible_keys(Caller("agent:x:self-loop"), "x", ring) == {"agent:x:self-loop"}
    assert visible_keys(Caller("agent:x:missing"), "x", ring) == {"agent:x:self-loop"}


def test_caller_describe_and_properties() -> None:
    caller = Caller("Agent:Main:Subagent:A", Policy("tree"))
    assert caller.key == SUB_A and caller.agent_id == "main" and not caller.is_operator
    assert caller.describe() == "agent:main:subagent:a (tree)"
    assert Caller(MAIN, Policy("tree", sandboxed=True)).describe() == "agent:main:main (sandboxed)"
    assert Caller(MAIN, Policy("all", a2a_enabled=True)).describe() == (
        "agent:main:main (all, agent-to-agent)"
    )
    assert Caller(MAIN, Policy("agent", sandboxed=True, sandbox_visibility="all")).describe() == (
        "agent:main:main (agent, sandboxed, sessionToolsVisibility=all)"
    )


def test_bad_policy_values_are_refused_not_treated_as_all() -> None:
    with pytest.raises(ValidationError, match="self, tree, agent, all"):
        Policy("everything")
    with pytest.raises(ValidationError, match="spawned, all"):
        Policy(sandbox_visibility="none")
    with pytest.raises(ValidationError):
        Caller("not-a-key")
    assert Policy(a2a_allow=["a"]) == Policy(a2a_allow=("a",))  # type: ignore[arg-type]
    # A copy is checked as the original was (they are named tuples: _replace, not __init__).
    with pytest.raises(ValidationError, match="self, tree, agent, all"):
        Policy()._replace(visibility="everything")
    with pytest.raises(ValidationError):
        Caller(MAIN)._replace(key="not-a-key")
    assert Caller(MAIN)._replace(key="Agent:Main:X").key == "agent:main:x"
    with pytest.raises(ValidationError, match="self, tree, agent, all"):
        Policy._make(["everything", False, (), False, "spawned"])
    assert Caller._make(["Agent:Main:X", Policy()]).key == "agent:main:x"
    with pytest.raises(ValidationError, match="must be a Policy"):
        Caller(MAIN, "all")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="self, tree, agent, all"):
        Policy().__replace__(visibility="everything")  # copy.replace from Python 3.13
    assert hash(Policy(a2a_allow=["a"])) == hash(Policy(a2a_allow=("a",)))  # type: ignore[arg-type]


# ----------------------------------------------------------------- properties

AGENTS = ["a", "b", "c"]
KINDS = [
    "main",
    "telegram:group:g",
    "cron:c",
    "subagent:s",
    "subagent:s",
    "subagent:s",
    "dashboard:incognito-",
    "subagent:incognito-",
]


@st.composite
def forests(draw) -> tuple[dict[str, list[SessionLink]], list[str]]:
    """Random session forests over 2-3 agents. Links may point anywhere: earlier or later
    sessions (so cycles), other agents, missing keys, upper-cased spellings."""
    agents = AGENTS[: draw(st.integers(2, 3))]
    keys: list[str] = []
    for i in range(draw(st.integers(1, 16))):
        agent = draw(st.sampled_from(agents))
        kind = draw(st.sampled_from(KINDS))
        key = f"agent:{agent}:main" if kind == "main" else f"agent:{agent}:{kind}{i}"
        if key not in keys:
            keys.append(key)
    targets = keys + [f"agent:{a}:subagent:gone" for a in agents]
    link = st.one_of(st.none(), st.sampled_from(targets))
    dbs: dict[str, list[SessionLink]] = {a: [] for a in agents}
    for key in keys:
        spawned_by, parent = draw(link), draw(link)
        if parent and draw(st.booleans()):
            parent = parent.upper()
        dbs[key.split(":")[1]].append(SessionLink(key, spawned_by, parent))
    return dbs, keys


POLICIES = st.builds(
    Policy,
    visibility=st.sampled_from(["self", "tree", "agent", "all"]),
    a2a_enabled=st.booleans(),
    a2a_allow=st.lists(
        st.sampled_from(["a", "B", "c", "*", "a*", "*c", "x", "b*b"]), max_size=3
    ).map(tuple),
    sandboxed=st.booleans(),
    sandbox_visibility=st.sampled_from(["spawned", "all"]),
)


def glob_match(pattern: str, text: str) -> bool:
    """A recursive ``*``-only glob, written independently of the module's regex."""
    if not pattern:
        return not text
    if pattern[0] == "*":
        return any(glob_match(pattern[1:], text[i:]) for i in range(len(text) + 1))
    return bool(text) and pattern[0] == text[0] and glob_match(pattern[1:], text[1:])


def descends_from(key: str, root: str, db: list[SessionLink]) -> bool:
    """Walk *upward* from ``key`` through its parent links until ``root`` is met."""
    parents = {s.key.lower(): {p.lower() for p in (s.spawned_by, s.parent_key) if p} for s in db}
    todo, done = [key], set()
    while todo:
        current = todo.pop()
        if current == root:
            return True
        if current not in done:
            done.add(current)
            todo.extend(parents.get(current, ()))
    return False


def oracle(caller: Caller, agent: str, db: list[SessionLink]) -> set[str]:
    """Decide each session on its own, from the spec's sentences."""
    p = caller.policy
    clamped = p.sandboxed and p.sandbox_visibility == "spawned"

    def allowed(agent_id: str) -> bool:
        return not p.a2a_allow or any(glob_match(g.lower(), agent_id) for g in p.a2a_allow)

    out = set()
    for s in db:
        key = s.key.lower()
        if is_incognito(key):
            continue
        if caller.key is None:
            ok = True
        elif agent != caller.agent_id:
            ok = (
                p.visibility == "all"
                and p.a2a_enabled
                and not clamped
                and allowed(caller.agent_id)
                and allowed(agent)
            )
        elif clamped:
            ok = descends_from(key, caller.key, db)
        elif p.visibility == "self":
            ok = key == caller.key
        elif p.visibility == "tree":
            ok = is_main_key(caller.key) or descends_from(key, caller.key, db)
        else:
            ok = True
        if ok:
            out.add(key)
    return out


def pick_caller(keys: list[str], pick: int, policy: Policy) -> Caller:
    # the operator, any session (incognito ones too), or a caller with no session at all
    candidates: list[str | None] = [None, "agent:a:subagent:nobody", *keys]
    key = candidates[pick % len(candidates)]
    return OPERATOR if key is None else Caller(key, policy)


@settings(max_examples=400, deadline=None)
@given(data=forests(), policy=POLICIES, pick=st.integers(0, 100))
def test_agrees_with_an_upward_walking_oracle(data, policy, pick) -> None:
    dbs, keys = data
    caller = pick_caller(keys, pick, policy)
    for agent, db in dbs.items():
        got = visible_keys(caller, agent, db)
        assert got == oracle(caller, agent, db)
        assert not any(is_incognito(k) for k in got)  # incognito never visible
        assert got <= {s.key.lower() for s in db}  # only sessions given
        if got:  # the cheap pre-check never skips a database with something visible
            assert may_see_agent(caller, agent)


@settings(max_examples=200, deadline=None)
@given(data=forests(), policy=POLICIES, pick=st.integers(0, 100))
def test_self_is_the_caller_or_nothing(data, policy, pick) -> None:
    dbs, keys = data
    caller = pick_caller(keys, pick, policy)
    if caller.is_operator:
        return
    caller = Caller(caller.key, Policy("self", policy.a2a_enabled, policy.a2a_allow))
    for agent, db in dbs.items():
        expected = (
            {caller.key}
            if agent == caller.agent_id and caller.key in keys and not is_incognito(caller.key)
            else set()
        )
        assert visible_keys(caller, agent, db) == expected


@settings(max_examples=200, deadline=None)
@given(data=forests(), policy=POLICIES, pick=st.integers(0, 100))
def test_sandboxed_spawned_is_the_tree_without_widening(data, policy, pick) -> None:
    dbs, keys = data
    caller = pick_caller(keys, pick, policy)
    if caller.is_operator:
        return
    boxed = Caller(
        caller.key,
        Policy(
            policy.visibility,
            policy.a2a_enabled,
            policy.a2a_allow,
            sandboxed=True,
            sandbox_visibility="spawned",
        ),
    )
    for agent, db in dbs.items():
        got = visible_keys(boxed, agent, db)
        if agent != caller.agent_id:
            assert got == set()
            continue
        closure = {s.key for s in db if descends_from(s.key, caller.key, db)}
        assert got == {k for k in closure if not is_incognito(k)}
        if not is_main_key(caller.key):
            assert got == visible_keys(Caller(caller.key, Policy("tree")), agent, db)


@settings(max_examples=200, deadline=None)
@given(data=forests(), policy=POLICIES, pick=st.integers(0, 100))
def test_modes_are_nested_for_the_own_agent(data, policy, pick) -> None:
    dbs, keys = data
    caller = pick_caller(keys, pick, policy)
    if caller.is_operator:
        return
    db = dbs.get(caller.agent_id, [])
    seen = [
        visible_keys(
            Caller(
                caller.key,
                Policy(
                    mode,
                    policy.a2a_enabled,
                    policy.a2a_allow,
                    policy.sandboxed,
                    policy.sandbox_visibility,
                ),
            ),
            caller.agent_id,
            db,
        )
        for mode in ("self", "tree", "agent", "all")
    ]
    assert seen[0] <= seen[1] <= seen[2] <= seen[3]


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 60), shift=st.integers(1, 59), start=st.integers(0, 59))
def test_any_ring_terminates_and_is_closed(n, shift, start) -> None:
    ring = [
        SessionLink(f"agent:r:s{i}", spawned_by=f"agent:r:s{(i + shift) % n}") for i in range(n)
    ]
    caller = Caller(f"agent:r:s{start % n}", Policy("tree"))
    got = visible_keys(caller, "r", ring)
    assert got == oracle(caller, "r", ring)
    assert caller.key in got


# ----------------------------------------------------------------- config.toml

FULL = """
[tools.sessions]
visibility = "all"

[tools.agentToAgent]
enabled = true
allow = ["main", "research-*"]

[agents.defaults.sandbox]
mode = "all"
sessionToolsVisibility = "all"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_missing_file_gives_the_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config == Config()
    assert config.policy == Policy("tree", False, (), False, "spawned")
    assert config.sandbox_mode == "off"
    caller = make_caller(config, "agent:main:subagent:a")
    assert caller == Caller(SUB_A, Policy())
    assert make_caller(config, None) is OPERATOR


def test_a_full_file(tmp_path: Path) -> None:
    write(tmp_path, FULL)
    config = load_config(tmp_path)
    assert config.policy == Policy("all", True, ("main", "research-*"), True, "all")
    assert config.sandbox_mode == "all"
    assert make_caller(config, "Agent:Main:Main") == Caller(MAIN, config.policy)


def test_an_empty_file_and_unrelated_keys_give_the_defaults(tmp_path: Path) -> None:
    write(tmp_path, '[gateway]\nport = 1\n[tools]\nprofile = "coding"\n')
    assert load_config(tmp_path) == Config()


def test_overrides_win_over_the_file(tmp_path: Path) -> None:
    write(tmp_path, FULL)
    caller = make_caller(load_config(tmp_path), SUB_A, visibility="self", sandboxed=False)
    assert caller.policy == Policy("self", True, ("main", "research-*"), False, "all")
    caller = make_caller(Config(), SUB_A, sandboxed=True)
    assert caller.policy.clamped


def test_sandbox_mode_non_main_spares_only_the_main_session(tmp_path: Path) -> None:
    write(tmp_path, '[agents.defaults.sandbox]\nmode = "non-main"\n')
    config = load_config(tmp_path)
    assert not make_caller(config, MAIN).policy.sandboxed
    assert make_caller(config, GROUP).policy.sandboxed
    assert make_caller(config, SUB_A).policy.clamped
    assert not make_caller(config, GROUP, sandboxed=False).policy.sandboxed


def test_malformed_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "[tools.sessions\nvisibility = \n")
    with pytest.raises(ValidationError) as err:
        load_config(tmp_path)
    assert str(path) in str(err.value) and "cannot be read as TOML" in str(err.value)


@pytest.mark.parametrize(
    "text, problem",
    [
        # an unknown tools.sessions.visibility falls back to tree (test_tools_contract.py)
        ('[tools]\nsessions = "tree"\n', "tools.sessions must be a table"),
        (
            '[tools.agentToAgent]\nenabled = "yes"\n',
            "tools.agentToAgent.enabled must be true or false",
        ),
        ('[tools.agentToAgent]\nallow = "main"\n', "tools.agentToAgent.allow must be a list"),
        ("[tools.agentToAgent]\nallow = [1]\n", "tools.agentToAgent.allow must be a list"),
        (
            '[agents.defaults.sandbox]\nmode = "sometimes"\n',
            "agents.defaults.sandbox.mode must be one of off, non-main, all",
        ),
        (
            '[agents.defaults.sandbox]\nsessionToolsVisibility = "tree"\n',
            "agents.defaults.sandbox.sessionToolsVisibility must be one of spawned, all",
        ),
    ],
)
def test_bad_values_name_the_file_and_the_problem(tmp_path: Path, text: str, problem: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ValidationError) as err:
        load_config(tmp_path)
    message = str(err.value)
    assert message.startswith(f"{path}: ") and problem in message
    assert "\n" not in message


def test_make_caller_refuses_bad_input() -> None:
    with pytest.raises(ValidationError, match="visibility must be one of self, tree, agent, all"):
        make_caller(Config(), SUB_A, visibility="everything")
    with pytest.raises(ValidationError, match="visibility must be one of"):
        make_caller(Config(), None, visibility="bogus")
    with pytest.raises(ValidationError, match="is not a session key"):
        make_caller(Config(), "main")
