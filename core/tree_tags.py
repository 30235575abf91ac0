"""A session's *tree*: the session and the sessions it descends from, as its index rows name
them, so a search can select a ``tree`` caller's sessions inside the full-text index.

A ``tree`` caller sees its session and every session spawned from it
(``visibility.spawned_closure``). If each index row names its session's ancestors, "rows
naming the caller" is the caller's whole tree in one term, whatever its size. The walk
follows the same links as ``spawned_closure`` in the other direction (``spawnedBy`` and
``parentSessionKey``, only to sessions that exist in the same database under the agent's
own key prefix, each once), up to ``SCOPE_DEPTH`` links.

The tree is computed when a session's rows are (re)built and stored with them, so what a
session's rows name is always known exactly, even after links changed (a spawner imported
after its children): a search names such sessions one by one instead (see
``storage/sqlite/matching.py``), and their next rebuild brings their tree up to date.
"""

from __future__ import annotations

from typing import Callable

from .visibility import SessionLink

SCOPE_DEPTH = 8


def ancestors(
    key: str,
    link_of: Callable[[str], SessionLink | None],
    agent_id: str,
    depth: int = SCOPE_DEPTH,
) -> list[str]:
    """``key`` and the sessions it descends from within ``depth`` links, nearest first.

    ``link_of(key)`` returns a session's links, or None when no such session exists.
    """
    prefix = f"agent:{agent_id.lower()}:"
    key = key.lower()
    found = [key]
    if not key.startswith(prefix):  # never visible to a tree caller: its own tag only
        return found
    seen = {key}
    frontier = [key]
    for _ in range(depth):
        parents: list[str] = []
        for child in frontier:
            link = link_of(child)
            if link is None:
                continue
            for parent in (link.spawned_by, link.parent_key):
                parent = parent.lower() if parent else None
                if not parent or parent in seen or not parent.startswith(prefix):
                    continue
                if link_of(parent) is None:
                    continue
                seen.add(parent)
                found.append(parent)
                parents.append(parent)
        if not parents:
            break
        frontier = parents
    return found
