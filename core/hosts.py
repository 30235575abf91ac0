"""The host a session came from: a machine label, so a team server keeps ``agent:main:main``
of two hosts as two sessions, each under its host (docs/postgres.md, "Hosts").

This machine's label is ``host = "NAME"`` at the top of ``<state>/config.toml``, else the
machine's hostname made into a label (redacted, lower-cased, characters outside the label's
alphabet replaced by ``-``, cut to 64). A label is 1-64 of ``a-z 0-9 . _ -`` starting with a
letter or a digit, as agent ids are; one given by a person (the setting, ``--host``) that is
not is one sentence. A caller (``--as KEY``) is resolved within its own host: this machine's
label unless given.
"""

from __future__ import annotations

import re
import socket
from pathlib import Path

from .errors import ValidationError
from .redact import quoted, redact
from .storage.model import default_host

HOST_MAX = 64
_LABEL = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
FALLBACK = default_host()


def check_host(value: object, what: str = "host") -> str:
    """A label a person gave, lower-cased; a ValidationError (one sentence) otherwise."""
    if isinstance(value, str):
        label = value.strip().lower()
        if _LABEL.fullmatch(label):
            return label
    raise ValidationError(
        f"{what} {quoted(value)} is not a host label: 1-{HOST_MAX} of a-z 0-9 . _ -, "
        "starting with a letter or a digit"
    )


def from_hostname(name: str) -> str:
    """A machine's hostname as a label: never refused, whatever the system says."""
    label = re.sub(r"[^a-z0-9._-]+", "-", redact(name).lower())
    label = label.lstrip("._-")[:HOST_MAX].rstrip("._-")
    return label if _LABEL.fullmatch(label) else FALLBACK


def machine_host(state_dir: Path) -> str:
    """This machine's label: config.toml's ``host``, else the hostname."""
    from .tomlfile import read_toml

    path = Path(state_dir) / "config.toml"
    data = read_toml(path)
    if "host" in data:
        return check_host(data["host"], f"{path}: host")
    return from_hostname(socket.gethostname())


class MachineHost:
    """This machine's label, read when first needed and kept (picklable: a storage carries it
    into a helper process)."""

    def __init__(self, state_dir: Path, given: str | None = None) -> None:
        self.state_dir = Path(state_dir)
        self._label = check_host(given) if given is not None else None

    def __call__(self) -> str:
        if self._label is None:
            self._label = machine_host(self.state_dir)
        return self._label
