"""The write use cases a runtime or a person starts: append events to a session as they
happen (SPEC 3: each stored and indexed in its own transaction) and delete a session.

Importers of whole transcripts are in ``importers/``; both go through the storage's write
path, so the rules (same transaction, dirty on a branch switch) are the storage's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from .bounds import too_long
from .errors import ValidationError
from .hosts import check_host
from .keys import agent_of, normalize_key
from .state import StateDir
from .storage import SessionMeta


@dataclass
class AppendReport:
    key: str
    stored: int = 0
    indexed: int = 0
    dirty: int = 0  # events that left the session for reconciliation (a branch switch, ...)
    refused: list[str] = field(default_factory=list)  # "<where>:<line>: reason"

    def as_json(self) -> dict[str, object]:
        return {
            "stored": self.stored,
            "indexed": self.indexed,
            "dirty": self.dirty,
            "refused": self.refused,
        }


def append_events(
    state: StateDir,
    meta: SessionMeta,
    lines: Iterable[str | bytes | int],
    where: str = "stdin",
    on_refused: Callable[[str], None] | None = None,
) -> AppendReport:
    """Store each JSON line as one event of ``meta.key`` (created if new), each in its own
    transaction. A malformed line is refused with ``<where>:<line>: reason`` (and passed to
    ``on_refused`` at once); nothing of it is stored, and the next lines go on.

    ``lines`` may come from ``bounds.read_lines``: a line over the size bound is given as its
    size (an int), never held in memory, and refused."""
    meta = meta._replace(
        key=normalize_key(meta.key),  # every key is checked before anything is created
        spawned_by=normalize_key(meta.spawned_by) if meta.spawned_by else None,
        parent_key=normalize_key(meta.parent_key) if meta.parent_key else None,
    )
    report = AppendReport(meta.key)
    with state.open(agent_of(meta.key), write=True) as db:
        for lineno, line in enumerate(lines, start=1):
            if isinstance(line, int):
                problem = f"{where}:{lineno}: {too_long(line)}"
            elif not line.strip():
                continue
            else:
                try:
                    result = db.append(meta, line)
                except ValidationError as err:
                    problem = f"{where}:{lineno}: {err}"
                else:
                    report.stored += 1
                    if result.outcome == "indexed":
                        report.indexed += 1
                    elif result.outcome == "dirty":
                        report.dirty += 1
                    continue
            report.refused.append(problem)
            if on_refused is not None:
                on_refused(problem)
    return report


PURGE_TRIES = 3  # a purge a reader blocks is tried again this often (each waits up to 1 s)


@dataclass
class Deletion:
    key: str
    purged: bool  # the backend's purge finished (SQLite: no reader held the log)
    remains: list[str]  # what the purge did not reach, and what finishes it (sentences)

    def as_json(self) -> dict[str, object]:
        return {"purgePending": not self.purged, "remains": self.remains}


def delete_session(state: StateDir, key: str, host: str | None = None) -> Deletion:
    """Delete a session (of ``host``; None: this machine's, ``core/hosts.py``): its events,
    index rows and index state, in one transaction, then purge (tried again briefly while a
    reader holds the log). The files a live source took it in from remember it, so that
    ``sync`` takes in only what they get after the delete (``sources/deleted.py``). Returns
    the canonical key and what the purge left behind; an unknown session is bad input."""
    from .sources.deleted import remember as remember_deleted  # only a delete needs it

    key = normalize_key(key)
    if host is not None:
        host = check_host(host)
    state.require()
    agent = agent_of(key)
    if agent in state.agents():
        with state.open(agent, write=True) as db:
            if host in (None, state.host) and db.session(key, host) is not None:
                with db.atomic():  # the files that fed it remember it: sync never takes it in
                    remember_deleted(db, key)
            if db.delete_session(key, host):
                purged = db.purge(only_if_pending=True)
                for _ in range(PURGE_TRIES - 1):
                    if purged:
                        break
                    purged = db.purge(only_if_pending=True)
                return Deletion(key, purged, db.purge_limits())
    where = f" of host {host}" if host is not None else ""
    raise ValidationError(f"no session {key}{where} in {state.path}")
