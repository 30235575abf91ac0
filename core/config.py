"""``<state>/config.toml``: the caller policy, with the agent runtime's names.

```toml
[tools.sessions]
visibility = "tree"            # self | tree | agent | all

[tools.agentToAgent]
enabled = false
allow = ["main", "research-*"] # agent-id globs; empty = any

[agents.defaults.sandbox]
mode = "off"                   # "off" (default) or "all": callers are sandboxed
sessionToolsVisibility = "spawned"   # spawned | all
```
A caller is sandboxed when ``--sandboxed`` says so, or when the file sets the sandbox
``mode`` to anything but ``"off"``. Per-call overrides (``--visibility``, ``--sandboxed``)
win over the file.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .errors import ValidationError
from .keys import normalize_key
from .visibility import OPERATOR, SANDBOX_MODES, VISIBILITY_MODES, Caller, Policy


@dataclass(frozen=True)
class Config:
    policy: Policy = Policy()


def load_config(state_dir: Path) -> Config:
    path = Path(state_dir) / "config.toml"
    if not path.is_file():
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ValidationError(f"{path} cannot be read: {err}") from None
    try:
        return Config(policy=_policy(data))
    except ValidationError as err:
        raise ValidationError(f"{path}: {err}") from None


def _section(data: dict[str, Any], *names: str) -> dict[str, Any]:
    for name in names:
        data = data.get(name, {})
        if not isinstance(data, dict):
            raise ValidationError(f"[{'.'.join(names)}] must be a table")
    return data


def _policy(data: dict[str, Any]) -> Policy:
    sessions = _section(data, "tools", "sessions")
    a2a = _section(data, "tools", "agentToAgent")
    sandbox = _section(data, "agents", "defaults", "sandbox")
    visibility = check_visibility(sessions.get("visibility", "tree"))
    enabled = a2a.get("enabled", False)
    allow = a2a.get("allow", [])
    if not isinstance(enabled, bool):
        raise ValidationError("tools.agentToAgent.enabled must be true or false")
    if not isinstance(allow, list) or not all(isinstance(a, str) for a in allow):
        raise ValidationError("tools.agentToAgent.allow must be a list of agent-id globs")
    tools_visibility = sandbox.get("sessionToolsVisibility", "spawned")
    if tools_visibility not in SANDBOX_MODES:
        raise ValidationError(
            f"agents.defaults.sandbox.sessionToolsVisibility must be one of "
            f"{', '.join(SANDBOX_MODES)}, not {tools_visibility!r}"
        )
    mode = sandbox.get("mode", "off")
    if not isinstance(mode, str):
        raise ValidationError("agents.defaults.sandbox.mode must be a string")
    return Policy(
        visibility=visibility,
        a2a_enabled=enabled,
        a2a_allow=tuple(allow),
        sandboxed=mode != "off",
        sandbox_visibility=tools_visibility,
    )


def check_visibility(value: Any) -> str:
    if value not in VISIBILITY_MODES:
        raise ValidationError(
            f"visibility must be one of {', '.join(VISIBILITY_MODES)}, not {value!r}"
        )
    return value


def make_caller(
    config: Config,
    as_key: str | None,
    visibility: str | None = None,
    sandboxed: bool | None = None,
) -> Caller:
    """The operator (no key), or a session caller with the file's policy and overrides."""
    if as_key is None:
        return OPERATOR
    policy = config.policy
    if visibility is not None:
        policy = replace(policy, visibility=check_visibility(visibility))
    if sandboxed is not None:
        policy = replace(policy, sandboxed=sandboxed)
    return Caller(normalize_key(as_key), policy)
