"""The arguments of the ``sources``, ``sync`` and ``watch`` verbs. Their handlers live in
``sources.py`` and load (with Rich and the live sources) only when one of them runs, so every
other verb starts without them."""

from __future__ import annotations

import argparse
from typing import Any, Callable

from backscroll.core import formats

JSON_HELP = "print the answer as one JSON object (for scripts and agents) instead of text"
PATH_HELP = "the folder the agent tool writes its transcripts in"

def _verb(name: str) -> Callable[..., int]:
    def run(state: Any, args: argparse.Namespace) -> int:
        from . import sources

        return getattr(sources, name)(state, args)

    return run


def add_parsers(add: Any, common: argparse.ArgumentParser) -> None:
    """The three verbs, on the CLI's ``add(name, handler, help)``."""
    p = add("sources", _verb("cmd_sources"), "the transcript folders backscroll reads, and their state")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    add_p = actions.add_parser("add", help="read this folder too (written to config.toml)",
                               description="read this folder too (written to config.toml)",
                               parents=[common])
    add_p.add_argument("kind", choices=formats.names(),
                       help="the agent tool that writes there")
    add_p.add_argument("path", help=PATH_HELP)
    add_p.add_argument("--agent", help="store its sessions under this agent id")
    add_p.add_argument("--json", action="store_true", help=JSON_HELP)
    remove_p = actions.add_parser("remove", help="stop reading this folder (its sessions stay)",
                                  description="stop reading this folder (its sessions stay)",
                                  parents=[common])
    remove_p.add_argument("path", help="a folder as `backscroll sources` lists it")
    remove_p.add_argument("--json", action="store_true", help=JSON_HELP)

    p = add("sync", _verb("cmd_sync"), "take in what is new in every source, then index it")
    p.add_argument("--json", action="store_true", help=JSON_HELP)

    p = add("watch", _verb("cmd_watch"), "follow the sources: take in each new line as it is written")
    p.add_argument("--json", action="store_true", help="one JSON line per sync that found something")
    p.add_argument("--poll", action="store_true", help="poll every second instead of OS events")
