"""Reading a settings file written by people (config.toml, hosts.toml, sources.toml): its own
module so that ``hosts`` (which ``visibility`` calls) need not import ``config`` (which imports
``visibility``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .errors import ValidationError


def read_toml(path: Path) -> dict[str, Any]:
    """The file's tables (``{}`` when there is no file); one sentence naming it if unreadable
    (a folder or a link to nothing by that name too: a policy silently ignored would not be
    the one its author wrote)."""
    if not path.is_file():
        if os.path.lexists(path):
            raise ValidationError(f"{path} cannot be read: not a file")
        return {}
    import tomllib  # only when there is a file: ~5 ms of a search's start otherwise

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise ValidationError(f"{path} cannot be read as TOML: {err}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ValidationError(f"{path} cannot be read: {err}") from None
