"""``<state>/config.toml``: the caller policy, under the agent runtime's own names.

```toml
[tools.sessions]
visibility = "tree"                  # self | tree | agent | all
toolCalls = false                    # true | ["agent-glob", ...]: agent callers that may
                                     # search tool calls (the operator always may)

[tools.agentToAgent]
enabled = false
allow = ["main", "research-*"]       # agent-id globs (* only); empty = any

[agents.defaults.sandbox]
mode = "off"                         # off | non-main | all: which callers are sandboxed
sessionToolsVisibility = "spawned"   # spawned | all

[[agents.list]]                      # one agent's own settings (OpenClaw's agents.list[])
id = "research"
sandbox = { sessionToolsVisibility = "all" }   # overrides the default for this agent
```
An unknown ``visibility`` falls back to ``"tree"`` with one warning (``Config.warnings``,
written once per process by ``report_warnings``), as OpenClaw's runtime falls back; the
value is trimmed and lower-cased first, as there. A sandboxed caller's clamp is its own
agent's ``agents.list[].sandbox.sessionToolsVisibility`` when that agent has one, else
``agents.defaults.sandbox.sessionToolsVisibility``.

A caller is sandboxed when ``--sandboxed`` says so, or else by the sandbox ``mode``, as in
the runtime: ``"all"`` sandboxes every session, ``"non-main"`` every session but the
agent's main one, ``"off"`` (the default) none. Per-call overrides win over the file; other
keys of the runtime's config are ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, NamedTuple

from .errors import ValidationError
from .keys import is_main_key, normalize_key
from .tomlfile import read_toml
from .visibility import OPERATOR, SANDBOX_MODES, VISIBILITY_MODES, Caller, Policy

SANDBOX_SESSION_MODES = ("off", "non-main", "all")  # agents.defaults.sandbox.mode


class Config(NamedTuple):
    # ``policy.sandboxed`` is what mode "all" gives; "non-main" is decided per caller key.
    policy: Policy = Policy()
    sandbox_mode: str = "off"
    # agent id -> its own sessionToolsVisibility (agents.list[].sandbox), beside the default
    agent_sandbox_visibility: tuple[tuple[str, str], ...] = ()
    warnings: tuple[str, ...] = ()  # sentences about values that fell back (report_warnings)

    def sandbox_visibility_for(self, agent_id: str | None) -> str:
        """The sandbox clamp for a caller of ``agent_id``: its agent's own, else the default."""
        if agent_id is not None:
            for agent, value in self.agent_sandbox_visibility:
                if agent == agent_id.lower():
                    return value
        return self.policy.sandbox_visibility


_warned: set[str] = set()


def report_warnings(config: Config, write: Callable[[str], Any]) -> None:
    """Write each of ``config``'s warnings once per process (a long-lived server or a browser
    that reloads the file says it once, not at every call)."""
    for sentence in config.warnings:
        if sentence not in _warned:
            _warned.add(sentence)
            write(f"backscroll: warning: {sentence}")


def load_config(state_dir: Path) -> Config:
    """The file's policy; a missing file gives the defaults."""
    path = Path(state_dir) / "config.toml"
    data = read_toml(path)
    try:
        return _config(data)
    except ValidationError as err:  # one sentence that names the file and the problem
        raise ValidationError(f"{path}: {err}") from None


def _table(data: dict[str, Any], *names: str) -> dict[str, Any]:
    for depth, name in enumerate(names, 1):
        data = data.get(name, {})
        if not isinstance(data, dict):
            raise ValidationError(f"{'.'.join(names[:depth])} must be a table")
    return data


def _one_of(value: Any, allowed: tuple[str, ...], name: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValidationError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
    return value


def _config(data: dict[str, Any]) -> Config:
    sessions = _table(data, "tools", "sessions")
    a2a = _table(data, "tools", "agentToAgent")
    sandbox = _table(data, "agents", "defaults", "sandbox")
    enabled = a2a.get("enabled", False)
    if not isinstance(enabled, bool):
        raise ValidationError("tools.agentToAgent.enabled must be true or false")
    allow = a2a.get("allow", [])
    if not isinstance(allow, list) or not all(isinstance(g, str) for g in allow):
        raise ValidationError("tools.agentToAgent.allow must be a list of agent-id globs")
    mode = _one_of(sandbox.get("mode", "off"), SANDBOX_SESSION_MODES,
                   "agents.defaults.sandbox.mode")
    visibility, warnings = _visibility(sessions.get("visibility", "tree"))
    tool_calls = _tool_calls(sessions.get("toolCalls", False))
    policy = Policy(
        visibility=visibility,
        a2a_enabled=enabled,
        a2a_allow=tuple(allow),
        sandboxed=mode == "all",
        tool_calls=tool_calls,
        sandbox_visibility=_one_of(sandbox.get("sessionToolsVisibility", "spawned"),
                                   SANDBOX_MODES, "agents.defaults.sandbox.sessionToolsVisibility"),
    )
    return Config(policy=policy, sandbox_mode=mode,
                  agent_sandbox_visibility=_agent_overrides(data), warnings=warnings)


def _tool_calls(value: Any) -> tuple[str, ...]:
    """``tools.sessions.toolCalls``: false (no agent caller may search tool calls), true
    (every one may), or a list of agent-id globs (``*`` only) naming those that may."""
    if value is True:
        return ("*",)
    if value is False:
        return ()
    if isinstance(value, list) and all(isinstance(g, str) for g in value):
        return tuple(value)
    raise ValidationError("tools.sessions.toolCalls must be true, false or a list of "
                          "agent-id globs")


def _visibility(value: Any) -> tuple[str, tuple[str, ...]]:
    """The file's ``tools.sessions.visibility``: an unknown value is ``tree``, with a warning
    (OpenClaw's ``resolveSessionToolsVisibility`` does the same, trimmed and lower-cased)."""
    if isinstance(value, str) and value.strip().lower() in VISIBILITY_MODES:
        return value.strip().lower(), ()
    return "tree", (
        f"tools.sessions.visibility {value!r} is not one of {', '.join(VISIBILITY_MODES)}: "
        "using \"tree\", as OpenClaw does",)


def _agent_overrides(data: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """``agents.list[]``: each agent's own ``sandbox.sessionToolsVisibility``, if it has one."""
    agents = data.get("agents", {})
    entries = agents.get("list", []) if isinstance(agents, dict) else []
    if not isinstance(entries, list):
        raise ValidationError("agents.list must be a list of tables (one per agent)")
    found: list[tuple[str, str]] = []
    for n, entry in enumerate(entries):
        where = f"agents.list[{n}]"
        if not isinstance(entry, dict):
            raise ValidationError(f"{where} must be a table")
        sandbox = entry.get("sandbox", {})
        if not isinstance(sandbox, dict):
            raise ValidationError(f"{where}.sandbox must be a table")
        if "sessionToolsVisibility" not in sandbox:
            continue
        agent_id = entry.get("id")
        if not isinstance(agent_id, str) or not agent_id.strip():
            raise ValidationError(f"{where} has a sandbox.sessionToolsVisibility but no id")
        value = _one_of(sandbox["sessionToolsVisibility"], SANDBOX_MODES,
                        f"{where}.sandbox.sessionToolsVisibility")
        found.append((agent_id.strip().lower(), value))
    return tuple(found)


def check_visibility(value: Any) -> str:
    """A ``--visibility`` value, or a ValidationError listing the allowed ones."""
    return _one_of(value, VISIBILITY_MODES, "visibility")


def make_caller(
    config: Config,
    as_key: str | None,
    visibility: str | None = None,
    sandboxed: bool | None = None,
    host: str | None = None,
) -> Caller:
    """The operator (no key), or a session caller with the file's policy and overrides, on
    ``host`` (None: this machine's label, ``core/hosts.py``): its key means its host's session.

    A bad ``visibility`` is refused even for the operator (it is bad input either way),
    though the operator's view does not depend on it."""
    if visibility is not None:
        check_visibility(visibility)
    if as_key is None:
        if host is not None:
            raise ValidationError("--as-host names the host of an --as session: give --as KEY")
        return OPERATOR
    key = normalize_key(as_key)
    policy = config.policy
    if visibility is not None:
        policy = policy._replace(visibility=visibility)
    own = config.sandbox_visibility_for(key.split(":", 2)[1])
    if own != policy.sandbox_visibility:  # the caller's agent has its own clamp
        policy = policy._replace(sandbox_visibility=own)
    if sandboxed is None:  # the file decides: "non-main" spares only the main session
        sandboxed = config.sandbox_mode == "all" or (
            config.sandbox_mode == "non-main" and not is_main_key(key)
        )
    return Caller(key, policy._replace(sandboxed=sandboxed), host)
