"""A deterministic, seeded generator of a realistic demo archive (OpenClaw transcripts).

``generate(seed, messages, ...)`` yields :class:`DemoSession` objects, one at a time: the
session's key and lineage plus its OpenClaw JSONL entries (header first). It only generates;
``state.py`` writes the sessions into a state dir. The same arguments always give the same
output (no wall clock, no global random state, no hash-order dependence).

What the default corpus (``messages=3000``) holds: four agents (``main``, ``ops``,
``research``, ``support``) with a main session each; group chats
(``agent:main:telegram:group:<id>``, ``agent:support:slack:channel:<id>``...); labelled cron
sessions (``agent:ops:cron:nightly-backup`` "Cron: nightly backup", certificate expiry,
disk usage...); sub-agents two levels deep (``sessions_spawn`` tool calls whose result names
``details.childSessionKey``); incognito sessions (``agent:main:dashboard:incognito-<hex>``
and an incognito sub-agent); sessions in French, Spanish, German, Vietnamese, Chinese,
Japanese and Korean; pasted (fake) secrets; a screenshot upload; rewound branches (a
``leaf`` control back to an earlier entry) and one regenerated answer (a sibling branch
without leaf control); ~12% of sessions flagged ``imported`` (stored unindexed); and a session
worth investigating (``incident.py``: ``agent:ops:session-…`` "Deploy billing-api v2.22.0", a
failed ``bash`` call ``./deploy.sh billing-api v2.22.0``, then ``git push --force origin main``).

Good demo searches (``DEMO_QUERIES``): ``connection pool exhausted`` (a deploy incident, an
alert, a cron report, sub-agent log triage, a Chinese ops chat), ``rollback``,
``certificate``, ``migration``, ``flaky test``, ``research summary``, ``refund``,
``déploiement`` (French support), ``数据库`` (Chinese), ``Zertifikat`` (German).

Scale: ``generate(messages=1_000_000, sessions=10_000, agents=1)`` streams the million messages
in about 12 s on one core, ~80,000 messages/s (``benchmarks/bench_demo_corpus.py``). All text
is invented (``text.py``); the secrets are random strings with the right shape. The work is
done by ``planner.py`` (what exists), ``session.py`` (its entries) and ``parts.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

from .parts import DEFAULT_NOW_MS, TINY_PNG_B64, DemoSession
from .planner import Planner
from .session import Context, SessionBuilder

__all__ = ["DEFAULT_NOW_MS", "DEMO_QUERIES", "TINY_PNG_B64", "DemoSession", "generate"]

DEMO_QUERIES: tuple[str, ...] = (
    "connection pool exhausted",
    "rollback",
    "certificate",
    "migration",
    "flaky test",
    "research summary",
    "refund",
    "déploiement",
    "数据库",
    "Zertifikat",
)


def generate(
    seed: int = 7,
    messages: int = 3000,
    agents: int | None = None,
    sessions: int | None = None,
    now_ms: int | None = None,
) -> Iterator[DemoSession]:
    """Yield the demo sessions for ``seed``, one by one (parents before their sub-agents).

    ``messages`` is the total number of user + assistant message entries (exact unless the
    corpus is too small for its fixed parts); ``agents`` defaults to 4, ``sessions`` to about
    one per 40 messages; timestamps lie in the 60 days before ``now_ms``
    (default :data:`DEFAULT_NOW_MS`).
    """
    if messages < 1:
        raise ValueError("messages must be at least 1")
    agents = 4 if agents is None else agents
    if agents < 1:
        raise ValueError("agents must be at least 1")
    if sessions is not None and sessions < 1:
        raise ValueError("sessions must be at least 1")
    now = DEFAULT_NOW_MS if now_ms is None else int(now_ms)
    return _stream(Planner(seed, messages, agents, sessions, now), now)


def _stream(planner: Planner, now: int) -> Iterator[DemoSession]:
    plans = planner.build()
    ctx = Context(now)
    for plan in plans:
        yield SessionBuilder(plan, ctx).build()
