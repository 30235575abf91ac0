"""The sessions of a state dir, for pickers and listings (the browser's "view as" and its
home list of recent conversations, the MCP server's ``sessions_list``), and the command that
resumes a conversation in the agent tool that wrote it.

What a list shows of a session (title, message count, last activity, cwd) is kept in the
storage when it is written or indexed (``schema.SUMMARY_COLUMNS``): a listing never reads a
transcript. A title is the first user message as the index holds it: redacted.
"""

from __future__ import annotations

import heapq
import itertools
import re
import time
from typing import Any, Iterator, Mapping, NamedTuple

from . import formats
from .bounds import cut_marker, cut_text
from .errors import ValidationError
from .facts import Facts
from .fanout import for_each_agent, visible_agents
from .hosts import check_host
from .keys import check_agent_id, is_incognito
from .kinds import check_kinds, session_kind
from .labels import made_up
from .paging import check_offset
from .redact import quoted, redact
from .resume import Resume, resume_command
from .state import StateDir
from .storage import CardFilter, SessionFilter, SessionRow
from .visibility import Caller
from .visible_sessions import open_visible, resolved, visible_sessions


class _ByFormat(Mapping[str, Any]):
    """A format's name -> one field of its record, read from the registry at each use (the
    order is the registry's)."""

    def __init__(self, field: str) -> None:
        self._field = field

    def __getitem__(self, kind: str) -> Any:
        fmt = formats.get(kind)
        if fmt is None:
            raise KeyError(kind)
        return getattr(fmt, self._field)

    def __iter__(self) -> Iterator[str]:
        return iter(formats.names())

    def __len__(self) -> int:
        return len(formats.names())


# Where a session came from, as a person names it (a format's name), and the ``source``
# values stored for it (OpenClaw's: ``live``, appended by its runtime; ``demo``, the demo,
# written in its format): ``Format.stored``.
SOURCES: Mapping[str, tuple[str, ...]] = _ByFormat("stored")
SOURCE_NAMES: Mapping[str, str] = _ByFormat("label")  # as the browser names them
LIST_LIMIT_MAX = 1000
# A label as lists, pickers and answers show it (SECURITY.md, 5): stored whole, shown at most
# this many characters, redacted before it is cut, the cut said by a marker.
LABEL_MAX_CHARS = 200
_LABEL_REDACTED_CHARS = 2000  # redaction reads this much of a long label (far past the cut)
# The time OpenClaw's channels write in front of a user message.
_ENVELOPE = re.compile(r"^\[[A-Z][a-z]{2} \d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})?(?: [^\]\n]{1,16})?\]\s*")


def source_kind(stored: str) -> str:
    """The format (``openclaw``, ``claude-code``, ``codex``…) of a stored ``source`` value;
    one no format claims is OpenClaw's (``formats.fallback``: live appends)."""
    return next((f.name for f in formats.known() if stored in f.stored),
                formats.fallback().name)


AGENTS_NAMED = 12  # an unknown agent's sentence names at most this many of the known ones


def check_known_agent(state: StateDir, caller: Caller, agent: str | None) -> str | None:
    """``agent`` (canonical) if ``caller`` may search it, None for none. An agent that does
    not exist, or that the caller may not see (the same sentence), is bad input: an empty
    answer would read as "nothing matched"."""
    if agent is None:
        return None
    wanted = check_agent_id(agent)
    known = visible_agents(state, caller)
    if wanted in known:
        return wanted
    if not known:
        raise ValidationError(f"there is no agent {quoted(agent)}: there are no agents yet")
    names = ", ".join(known[:AGENTS_NAMED]) + (
        f" and {len(known) - AGENTS_NAMED:,} more" if len(known) > AGENTS_NAMED else "")
    raise ValidationError(f"there is no agent {quoted(agent)}; the agents are {names}")


def check_source(source: str | None) -> str | None:
    if source is not None and source not in SOURCES:
        raise ValidationError(f"source must be one of {', '.join(SOURCES)}, not {source!r}")
    return source


def label_cut_marker(left_out: int) -> str:
    return f"… [label cut: {left_out:,} more characters]"


def bounded_label(label: str | None) -> str | None:
    """A label as it is shown and returned: redacted, then cut to ``LABEL_MAX_CHARS`` with
    ``label_cut_marker``. Redaction reads ``_LABEL_REDACTED_CHARS`` of it (cut between words,
    as a message is), so a secret that starts before the cut is masked, and a 100 KB label
    costs what a short one does."""
    if not label:
        return label
    head, left_out = label, 0
    if len(label) > _LABEL_REDACTED_CHARS:
        marked = cut_text(label, _LABEL_REDACTED_CHARS)
        head = marked[: marked.rindex(cut_marker(0)[:16])]  # without the message's marker
        left_out = len(label) - len(head)
    text = redact(head)
    if len(text) > LABEL_MAX_CHARS:
        left_out += len(text) - LABEL_MAX_CHARS
        text = text[:LABEL_MAX_CHARS]
    return text + label_cut_marker(left_out) if left_out else text


class SessionSummary(NamedTuple):
    """A session for a picker. The label (``bounded_label``: redacted and cut) and the session
    id are redacted; the keys stay as stored
    (they are what a caller is made from) and are redacted wherever they are shown."""

    key: str
    agent: str
    session_id: str
    label: str | None
    spawned_by: str | None
    created_at: int
    updated_at: int
    events: int
    searchable: bool
    incognito: bool
    title: str | None = None  # the first user message (redacted, as indexed), cut
    messages: int = 0  # indexed user and assistant messages of the active branch
    last_activity: int = 0  # epoch ms: the newest message, else the last change
    source: str = "openclaw"  # openclaw | claude-code | codex
    cwd: str | None = None  # the folder a Claude Code or Codex session ran in (redacted)
    host: str = ""  # the host it came from (core/hosts.py); "" stored before hosts were
    # moved to a cold archive (OpenClaw's archived transcripts); False until a session's
    # storage says so (``SessionRow.archived``, where the store keeps one)
    archived: bool = False
    # What its transcript records of models, tokens, cost, tool calls and files (core/facts.py);
    # None until computed (no message yet, or waiting for its first rebuild)
    facts: Facts | None = None

    @property
    def kind(self) -> str:
        """OpenClaw's kind of session: main, group, cron, hook, node, other (core/kinds.py)."""
        return session_kind(self.key)

    @property
    def display_title(self) -> str:
        """What a list names it by: its label, else its first user message (without the
        ``[Mon 2026-11-30 07:42 GMT+2]`` envelope a chat channel puts in front). A label
        backscroll made up (``imported <file>``, ``reset archive of …``: ``labels.made_up``)
        names a file, so the first message comes before it."""
        first = _ENVELOPE.sub("", self.title or "", count=1)
        if self.label and made_up(self.label):
            return first or self.label
        return self.label or first

    def as_json(self) -> dict[str, Any]:
        """For programs (the MCP server's ``sessions_list``): keys are redacted here, as in
        every answer (a key may hold a token); a label is text, so redacted too. ``resume``:
        the command that resumes it (``resume_of``), None where none is offered."""
        return {
            "sessionKey": redact(self.key),
            "sessionId": self.session_id,
            "agent": self.agent,
            "label": redact(self.label) if self.label else None,  # bounded by summary_of
            "spawnedBy": redact(self.spawned_by) if self.spawned_by else None,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "indexing": not self.searchable,
            "title": self.title,
            "messages": self.messages,
            "lastActivity": self.last_activity,
            "source": self.source,
            "resume": resume_of(self).command,
            "host": self.host or None,
            "kind": self.kind,
            "archived": self.archived,
            "facts": facts_json(self.facts),
        }


def facts_json(facts: Facts | None) -> dict[str, Any] | None:
    """A session's facts for programs (``sessions_list``, ``history --json``): the file paths
    and the model names redacted, as a cwd is (a transcript's ``model`` is free text)."""
    if facts is None:
        return None
    found = facts.as_json()
    found["files"] = [redact(path) for path in found["files"]]
    found["models"] = [redact(model) for model in found["models"]]
    return found


def summary_of(agent_id: str, s: SessionRow, facts: Facts | None = None) -> SessionSummary:
    return SessionSummary(
        key=s.key,
        agent=agent_id,
        session_id=redact(s.session_id),
        label=bounded_label(s.label),
        spawned_by=s.spawned_by or s.parent_key,
        created_at=s.created_at,
        updated_at=s.updated_at,
        events=s.last_seq,
        searchable=s.searchable,
        incognito=is_incognito(s.key),
        title=s.title,
        messages=s.messages,
        last_activity=s.last_activity,
        source=source_kind(s.source),
        cwd=redact(s.cwd) if s.cwd else None,
        host=s.host,
        archived=bool(getattr(s, "archived", False)),
        facts=facts,
    )


def _newest_first(summary: SessionSummary) -> tuple[int, str]:
    return (summary.last_activity, summary.key)


def list_sessions(state: StateDir) -> list[SessionSummary]:
    """Every session of every readable agent, newest activity first."""
    found = []

    def cards(agent_id: str) -> list[SessionRow]:
        with state.open(agent_id) as db:
            return db.session_cards(SessionFilter([], exclude=True))

    for agent_id, sessions, err in for_each_agent(state, cards):
        if err is None and sessions is not None:
            found.extend(summary_of(agent_id, s) for s in sessions)
    found.sort(key=_newest_first, reverse=True)
    return found


def visible_session_list(
    state: StateDir,
    caller: Caller,
    agent: str | None = None,
    since_ms: int | None = None,
    *,
    until_ms: int | None = None,
    source: str | None = None,
    project: str | None = None,
    limit: int | None = None,
    host: str | None = None,
    search: str | None = None,
    kinds: list[str] | tuple[str, ...] | None = None,
    active_minutes: int | None = None,
    label: str | None = None,
    archived: bool | None = None,
    offset: int | None = None,
) -> list[SessionSummary]:
    """The sessions ``caller`` may see (the rule search and history apply), newest activity
    first; optionally only of one agent or ``source`` (openclaw, claude-code, codex), in a
    ``project`` (a cwd, or below it), from one ``host``, last active in a time range, the
    first ``limit``. These filters run inside the query, before the limit.

    OpenClaw's ``sessions_list`` filters too: ``search`` (case-insensitive, in the label and
    the title as shown: redacted), ``kinds`` (``kinds.session_kind``), ``active_minutes``
    (last active within that many minutes), ``label`` (the label as shown, exactly),
    ``archived`` (True: only cold-archived sessions, False: only the others; a session is not
    archived unless its storage says so), and ``offset`` (skip that many, for the next page).
    They run on the sessions the query gives, before ``offset`` and ``limit``."""
    wanted = check_agent_id(agent) if agent is not None else None
    keep = _list_filter(search, kinds, label, archived)
    skip = check_offset(offset)
    if active_minutes is not None:
        if (isinstance(active_minutes, bool) or not isinstance(active_minutes, int)
                or active_minutes < 1):
            raise ValidationError(
                f"activeMinutes must be a whole number of minutes from 1, not {active_minutes!r}")
        recent = int(time.time() * 1000) - active_minutes * 60_000
        since_ms = recent if since_ms is None else max(since_ms, recent)
    cards = CardFilter(SOURCES[source] if check_source(source) else None, project, since_ms,
                       until_ms, check_host(host) if host is not None else None)
    if limit is not None and not 1 <= limit <= LIST_LIMIT_MAX:
        raise ValidationError(f"limit must be from 1 to {LIST_LIMIT_MAX}, not {limit}")
    # the query's own limit, when nothing is filtered after it: enough for the page
    query_limit = None if keep is not None or limit is None else limit + skip
    state.require()
    with resolved(state, caller) as who:  # the caller's database opened once
        wanted = check_known_agent(state, caller, agent)
        per_agent = []

        def visible_cards(agent_id: str) -> tuple[list[SessionRow], dict[int, Facts]]:
            with who.open(agent_id) as db, db.snapshot():
                visible = visible_sessions(db, caller)
                rows = db.session_cards(visible.as_filter(), cards, query_limit)
                return rows, db.session_facts([row.pk for row in rows])

        agents = [a for a in state.agents() if wanted in (None, a)]
        for agent_id, found, err in for_each_agent(state, visible_cards, agents=agents,
                                                   caller=caller):
            if err is None and found is not None:  # as in search: an unreadable database
                rows, facts = found  # hides nothing else
                summaries = (summary_of(agent_id, s, facts.get(s.pk)) for s in rows)
                per_agent.append([s for s in summaries if keep is None or keep(s)])
    merged = heapq.merge(*per_agent, key=_newest_first, reverse=True)
    return list(itertools.islice(merged, skip, None if limit is None else skip + limit))


def _list_filter(search: str | None, kinds: Any, label: str | None, archived: bool | None):
    """The test OpenClaw's list filters make of a session, or None when there are none."""
    wanted_kinds = check_kinds(kinds)
    for name, value in (("search", search), ("label", label)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValidationError(f"{name} must be text that is not blank, not {value!r}")
    if archived is not None and not isinstance(archived, bool):
        raise ValidationError(f"archived must be true or false, not {archived!r}")
    if search is None and wanted_kinds is None and label is None and archived is None:
        return None
    needle = search.strip().casefold() if search is not None else None
    exact = label.strip() if label is not None else None

    def keep(s: SessionSummary) -> bool:
        if wanted_kinds is not None and s.kind not in wanted_kinds:
            return False
        if archived is not None and s.archived != archived:
            return False
        if exact is not None and (s.label or "").strip() != exact:
            return False
        if needle is not None:
            shown = f"{s.label or ''}\n{s.display_title}\n{s.title or ''}".casefold()
            if needle not in shown:
                return False
        return True

    return keep


def visible_session(state: StateDir, caller: Caller, session_key: str,
                    host: str | None = None) -> SessionSummary:
    """What a list shows of one session the caller may see (of ``host``); ``Forbidden`` (the
    same sentence as history's) when it may not, or when there is no such session."""
    with open_visible(state, caller, session_key, host) as (db, session):
        [card] = db.session_cards(SessionFilter([session.pk]))
        facts = db.session_facts([session.pk]).get(session.pk)
    return summary_of(db.agent_id, card, facts)


def project_list(state: StateDir, caller: Caller) -> list[tuple[str, int]]:
    """The projects of the sessions ``caller`` may see, with how many sessions each, most
    first: the choices of a project filter. The cwds are as stored, not redacted: they are
    the values the filter matches (``CardFilter.project``); whoever shows one redacts it
    (the browser's filter dialog shows it through ``shown``)."""
    state.require()
    counts: dict[str, int] = {}
    with resolved(state, caller) as who:  # the caller's database opened once

        def projects(agent_id: str) -> list[tuple[str, int]]:
            with who.open(agent_id) as db, db.snapshot():
                return db.projects(visible_sessions(db, caller).as_filter())

        for _agent, found, _err in for_each_agent(state, projects, caller=caller):
            for cwd, count in found or ():
                counts[cwd] = counts.get(cwd, 0) + count
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def resume_of(summary: SessionSummary) -> Resume:
    """The way back into ``summary``'s conversation: its command (``resume.resume_command``,
    the one rule), its key for OpenClaw (``Format.resume_by_key``), or a sentence saying why
    there is none."""
    fmt = formats.get(summary.source)
    if fmt is not None and fmt.resume_by_key:
        return Resume("key", redact(summary.key))
    rest = summary.key.split(":", 2)[2] if summary.key.count(":") >= 2 else ""
    return resume_command(summary.source, rest.startswith(f"{summary.source}:"),
                          summary.session_id, summary.cwd)
