"""A deterministic, seeded generator of a realistic demo archive (OpenClaw transcripts).

``generate(seed, messages, ...)`` yields :class:`DemoSession` objects, one at a time: the
session's key and lineage plus its OpenClaw JSONL entries (header first). It only generates;
``demo.py`` writes the sessions into a state dir. The same arguments always give the same
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
without leaf control); and ~12% of sessions flagged ``imported`` (stored unindexed).

Good demo searches (``DEMO_QUERIES``): ``connection pool exhausted`` (a deploy incident, an
alert, a cron report, sub-agent log triage, a Chinese ops chat), ``rollback``,
``certificate``, ``migration``, ``flaky test``, ``research summary``, ``refund``,
``déploiement`` (French support), ``数据库`` (Chinese), ``Zertifikat`` (German).

Scale: ``generate(messages=1_000_000, sessions=10_000, agents=1)`` streams the million messages
in about 12 s on one core, ~80,000 messages/s (``benchmarks/bench_demo_corpus.py``). All text
is invented (``demo_text.py``); the secrets are random strings with the right shape.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from . import text as T

__all__ = ["DEFAULT_NOW_MS", "DEMO_QUERIES", "TINY_PNG_B64", "DemoSession", "generate"]

DEFAULT_NOW_MS = 1_796_040_000_000  # 2026-11-30T12:00:00Z: fixed, so the output is repeatable
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
MIN_MS = 60_000

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

# A valid 4x4 RGB PNG (the same string in every image block; real uploads are 20-170 KB).
TINY_PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR42mPQqr8CRwzEcQBg0hfRVkK/ygAAAABJ"
    "RU5ErkJggg=="
)


@dataclass(frozen=True)
class DemoSession:
    key: str
    session_id: str
    spawned_by: str | None
    parent_key: str | None
    label: str | None
    created_at: int  # epoch ms
    events: tuple[dict, ...]  # OpenClaw JSONL entries, header first
    imported: bool  # True: store without indexing (awaits background reconciliation)


# --------------------------------------------------------------------------- small helpers

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_DAY_ISO: dict[int, str] = {}
_DAY_LABEL: dict[int, str] = {}
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_UPPER_NUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_B64URL = _ALNUM + "-_"
_B64 = _ALNUM + "+/"


def _iso(ms: int) -> str:
    """``2026-11-30T12:00:00.000Z`` (cached per day: this runs for every entry)."""
    day, rem = divmod(ms, DAY_MS)
    prefix = _DAY_ISO.get(day)
    if prefix is None:
        prefix = _DAY_ISO[day] = (_EPOCH + timedelta(days=day)).strftime("%Y-%m-%dT")
    sec, milli = divmod(rem, 1000)
    hour, sec = divmod(sec, 3600)
    minute, sec = divmod(sec, 60)
    return f"{prefix}{hour:02d}:{minute:02d}:{sec:02d}.{milli:03d}Z"


def _date(ms: int) -> str:
    return _iso(ms)[:10]


def _chat_stamp(ms: int, tz_hours: int) -> str:
    """``[Thu 2026-10-08 14:02 GMT+1]``, the prefix OpenClaw puts on channel messages."""
    local = ms + tz_hours * HOUR_MS
    day, rem = divmod(local, DAY_MS)
    label = _DAY_LABEL.get(day)
    if label is None:
        label = _DAY_LABEL[day] = (_EPOCH + timedelta(days=day)).strftime("%a %Y-%m-%d")
    minute = rem // MIN_MS
    zone = "UTC" if tz_hours == 0 else f"GMT{tz_hours:+d}"
    return f"[{label} {minute // 60:02d}:{minute % 60:02d} {zone}] "


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choices(alphabet, k=n))


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _pick(rng: random.Random, seq):
    """``rng.choice`` without its overhead (this runs several times per message)."""
    return seq[int(rng.random() * len(seq))]


def _between(rng: random.Random, lo: int, hi: int) -> int:
    """``rng.randint`` without its overhead."""
    return lo + int(rng.random() * (hi - lo + 1))


def _hex(rng: random.Random, n: int) -> str:
    return f"{rng.getrandbits(4 * n):0{n}x}"


# --------------------------------------------------------------------------- slots

def _prev_ver(ver: str) -> str:
    major, minor, patch = ver[1:].split(".")
    if int(patch) > 0:
        return f"v{major}.{minor}.{int(patch) - 1}"
    return f"v{major}.{int(minor) - 1}.4"


def _jwt(r: random.Random, s: _Slots) -> str:
    import base64

    payload = json.dumps(
        {"sub": f"usr_{_hex(r, 10)}", "scope": "read:orders", "iat": s.now // 1000,
         "exp": s.now // 1000 + 3600}, separators=(",", ":"),
    ).encode()
    body = base64.urlsafe_b64encode(payload).decode().rstrip("=")
    return f"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.{body}.{_rand(r, _B64URL, 43)}"


_FUNCS: dict[str, Any] = {
    "ver": lambda r, s: f"v2.{r.randint(8, 31)}.{r.randint(0, 9)}",
    "prev_ver": lambda r, s: _prev_ver(s["ver"]),
    "prev_ver_plain": lambda r, s: s["prev_ver"][1:],
    "pr": lambda r, s: str(r.randint(1200, 4800)),
    "n_fail": lambda r, s: str(r.randint(2, 7)),
    "n_pass": lambda r, s: str(50 - int(s["n_fail"])),
    "pool_errors": lambda r, s: str(r.randint(180, 2400)),
    "pool_errors_big": lambda r, s: str(int(s["pool_errors"]) * 88 // 100),
    "pool_errors_small": lambda r, s: str(int(s["pool_errors"]) - int(s["pool_errors_big"])),
    "err_pct": lambda r, s: f"{r.uniform(3.5, 18):.1f}",
    "err_low": lambda r, s: f"{r.uniform(0.05, 0.4):.2f}",
    "pool": lambda r, s: r.choice(("10", "20", "30")),
    "waiting": lambda r, s: str(r.randint(40, 300)),
    "pool_free": lambda r, s: str(r.randint(8, 25)),
    "rps": lambda r, s: str(r.randint(120, 900)),
    "p99": lambda r, s: str(r.randint(1800, 9000)),
    "p99_low": lambda r, s: str(r.randint(140, 420)),
    "idle_tx": lambda r, s: str(r.randint(18, 60)),
    "active": lambda r, s: str(r.randint(5, 30)),
    "age": lambda r, s: f"{r.randint(7, 48):02d}",
    "rev": lambda r, s: _hex(r, 12),
    "prev_rev": lambda r, s: _hex(r, 12),
    "dur": lambda r, s: f"{r.randint(2, 19)}m {r.randint(0, 59):02d}s",
    "days": lambda r, s: str(r.randint(5, 19)),
    "exp_date": lambda r, s: _date(s.now + int(s["days"]) * DAY_MS),
    "today": lambda r, s: _date(s.now),
    "disk_pct": lambda r, s: str(r.randint(82, 97)),
    "disk_used": lambda r, s: str(int(s["disk_pct"]) * 2),
    "arx": lambda r, s: f"{r.randint(1000, 29999):05d}",
    "arx2": lambda r, s: f"{r.randint(1000, 29999):05d}",
    "bench_id": lambda r, s: str(r.randint(100, 999)),
    "p50_old": lambda r, s: str(r.randint(38, 60)),
    "p50_new": lambda r, s: str(int(s["p50_old"]) - r.randint(5, 15)),
    "p99_old": lambda r, s: str(r.randint(180, 260)),
    "p99_new": lambda r, s: str(int(s["p99_old"]) + r.randint(60, 200)),
    "ticket": lambda r, s: f"#{r.randint(40000, 99999)}",
    "ticket_n2": lambda r, s: str(r.randint(40000, 99999)),
    "ticket_n3": lambda r, s: str(r.randint(40000, 99999)),
    "amount": lambda r, s: r.choice(("€49.00", "$129.00", "€19.90", "$299.00", "€89.00")),
    "charge_date": lambda r, s: _date(s.now - r.randint(1, 6) * DAY_MS),
    "cust_id": lambda r, s: "cus_" + _rand(r, _ALNUM, 14),
    "chid": lambda r, s: _rand(r, _ALNUM, 14),
    "eng_id": lambda r, s: str(r.randint(1200, 9800)),
    "sha": lambda r, s: _hex(r, 7),
    "commit_msg": lambda r, s: r.choice((
        "Speed up test fixtures by sharing state", "Reuse fixtures across tests in a module",
        "Cache expensive setup between tests")),
    "size": lambda r, s: f"{r.uniform(12, 180):.1f}",
    "delta": lambda r, s: f"{r.uniform(0.1, 3.2):.1f}",
    "snap": lambda r, s: _hex(r, 8),
    "restore_n": lambda r, s: str(r.randint(900, 4000)),
    "open_tickets": lambda r, s: str(r.randint(9, 48)),
    "month_es": lambda r, s: r.choice(("octubre", "noviembre", "septiembre")),
    # fake secrets with the right shape
    "openai_key": lambda r, s: "sk-proj-" + _rand(r, _B64URL, 64),
    "github_token": lambda r, s: "ghp_" + _rand(r, _ALNUM, 36),
    "jwt": _jwt,
    "pg_url": lambda r, s: (
        f"postgres://app:S3cr3tPass{_rand(r, _ALNUM, 6)}@{s['host']}:5432/{s['db']}"),
    "aws_key_id": lambda r, s: "AKIA" + _rand(r, _UPPER_NUM, 16),
    "aws_secret": lambda r, s: _rand(r, _B64, 40),
}

_GROUP_OF = {key: name for name, (keys, _rows) in T.GROUPS.items() for key in keys}


class _Slots(dict):
    """Template values, generated on first use and then kept (coherent within a scenario)."""

    __slots__ = ("rng", "now")

    def __init__(self, rng: random.Random, now: int) -> None:
        super().__init__()
        self.rng = rng
        self.now = now

    def __missing__(self, key: str) -> str:
        group = _GROUP_OF.get(key)
        if group is not None:
            keys, rows = T.GROUPS[group]
            row = _pick(self.rng, rows)
            self.update(zip(keys, row))
            return self[key]
        pool = T.SIMPLE.get(key)
        if pool is not None:
            value = _pick(self.rng, pool)
        else:
            func = _FUNCS.get(key)
            if func is None:
                raise KeyError(key)
            value = func(self.rng, self)
        self[key] = value
        return value


# --------------------------------------------------------------------------- agents & models

_ROLES = ("main", "ops", "research", "support")
_AGENT_NAMES = ("main", "ops", "research", "support", "finance", "home", "writer", "devbot")

# role -> provider, model, api, price per Mtok (input, output, cacheRead, cacheWrite), thinking
_MODELS: dict[str, tuple[str, str, str, tuple[float, float, float, float], tuple[str, ...]]] = {
    "main": ("anthropic", "claude-sonnet-4-5", "anthropic-messages", (3.0, 15.0, 0.3, 3.75),
             ("medium", "low")),
    "ops": ("openai", "gpt-5.1-codex", "openai-responses", (1.25, 10.0, 0.125, 0.0),
            ("low", "minimal")),
    "research": ("openai", "gpt-5.1", "openai-responses", (1.25, 10.0, 0.125, 0.0),
                 ("high", "medium")),
    "support": ("minimax-portal", "MiniMax-M2.5", "anthropic-messages", (0.3, 1.2, 0.03, 0.375),
                ("off", "low")),
    "generic": ("anthropic", "claude-haiku-4-5", "anthropic-messages", (1.0, 5.0, 0.1, 1.25),
                ("low", "off")),
}

# kind -> (relative message weight, minimum budget)
_WEIGHTS = {"main": (8.0, 12), "group": (2.5, 4), "direct": (1.3, 2), "dashboard": (1.0, 2),
            "incognito": (0.7, 2), "subagent": (0.8, 2)}
_FEATURE_COST = {"spawn": 3, "secret": 2, "image": 2, "rewind": 2, "regenerate": 3,
                 "compaction": 0}
_CRON_HOUR = {"nightly-backup": 2, "cert-expiry": 6, "disk-usage": 7, "dependency-audit": 5,
              "morning-briefing": 7, "weekly-digest": 8, "ticket-sla": 17}
_LANG_TZ = {"fr_support": 1, "es_support": 1, "de_ops": 1, "vi_personal": 7, "zh_ops": 8,
            "ja_research": 9, "ko_support": 9}


class _Plan:
    """One session to generate (everything but the events)."""

    __slots__ = ("index", "key", "sid", "kind", "agent", "roles", "parent", "label", "start",
                 "budget", "children", "features", "pool", "imported", "task", "depth", "tz",
                 "job", "lang", "span", "seed", "weight", "fixed")

    def __init__(self, index: int, kind: str, agent: str, roles: tuple[str, ...]) -> None:
        self.index = index
        self.kind = kind
        self.agent = agent
        self.roles = roles
        self.key = ""
        self.sid = ""
        self.parent: _Plan | None = None
        self.label: str | None = None
        self.start: int | None = None
        self.budget = 0
        self.children: list[_Plan] = []
        self.features: list[tuple[str, str]] = []
        self.pool: tuple[str, ...] = ()
        self.imported = False
        self.task: str | None = None
        self.depth = 0
        self.tz = 0
        self.job: str | None = None
        self.lang: str | None = None
        self.span = HOUR_MS
        self.seed = 0
        self.weight = 1.0
        self.fixed = False


def _natural_size(beats: tuple[T.Beat, ...]) -> int:
    return sum(2 + len(b.steps) for b in beats)


class _Planner:
    def __init__(self, seed: int, messages: int, agents: int, sessions: int | None, now: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.now = now
        self.messages = messages
        self.names = [
            _AGENT_NAMES[i] if i < len(_AGENT_NAMES) else f"agent{i + 1}" for i in range(agents)
        ]
        self.roles_of = {
            a: tuple(r for r in _ROLES if self.pick(r) == a) or ("generic",) for a in self.names
        }
        self.sessions = sessions
        self.items: list[_Plan] = []
        self.keys: set[str] = set()

    def pick(self, role: str) -> str:
        """The agent that plays ``role`` (the first agent stands in for missing ones)."""
        return role if role in self.names else self.names[0]

    # -- building blocks

    def add(self, kind: str, agent: str, make_key, **fields: Any) -> _Plan:
        item = _Plan(len(self.items), kind, agent, self.roles_of[agent])
        for name, value in fields.items():
            setattr(item, name, value)
        item.seed = self.seed * 10_000_019 + item.index
        item.sid = _uuid(self.rng)
        if item.start is None and kind not in ("subagent", "cron", "main"):
            item.span = self._span(kind)
            # 3 h margin: sub-agents (and theirs) may still run after the parent ends
            item.start = self.now - self.rng.randint(item.span + 3 * HOUR_MS, 59 * DAY_MS)
        if kind == "main":
            item.start = self.now - 59 * DAY_MS - self.rng.randint(0, 20 * HOUR_MS)
            item.span = self.now - 3 * HOUR_MS - item.start
        key = make_key(item)
        while key in self.keys:  # random ids: draw again
            key = make_key(item)
        item.key = key
        self.keys.add(key)
        pool: list[str] = []
        for role in item.roles:
            pool.extend(T.POOLS[role])
        if kind == "group":
            pool = list(T.POOLS["support_group" if "support" in item.roles and "main" not in
                                item.roles else "group"])
        elif kind == "incognito":
            pool = list(T.POOLS["incognito"])
        if not item.pool:
            item.pool = tuple(pool)
        if item.lang:
            item.tz = _LANG_TZ[item.lang]
            item.fixed = True
            item.budget = _natural_size(T.SCENARIOS[item.lang])
        elif kind == "cron":
            item.fixed = True
            item.budget = 2 + len(T.CRON_JOBS[item.job][3].steps)
        else:
            item.tz = self.rng.choice((0, 0, 1, 2, -5, 8))
        self.items.append(item)
        return item

    def _span(self, kind: str) -> int:
        r = self.rng
        if kind == "group":
            return r.randint(1 * DAY_MS, 4 * DAY_MS)
        return r.randint(20 * MIN_MS, 8 * HOUR_MS)

    def cron(self, agent: str, job: str, days_ago: int, plain: bool) -> _Plan:
        start = (self.now // DAY_MS - days_ago) * DAY_MS + _CRON_HOUR.get(job, 6) * HOUR_MS
        start += self.rng.randint(0, 90_000)

        def key(p: _Plan) -> str:
            base = f"agent:{agent}:cron:{job}"
            return base if plain else f"{base}:run:{p.sid}"

        return self.add("cron", agent, key, job=job, label=T.CRON_JOBS[job][1], start=start,
                        span=8 * MIN_MS, pool=())

    def spawn(self, parent: _Plan, task: str, incognito: bool = False) -> _Plan:
        agent = parent.agent

        def key(p: _Plan) -> str:
            if incognito:
                return f"agent:{agent}:subagent:incognito-{_hex(self.rng, 12)}"
            return f"agent:{agent}:subagent:{_uuid(self.rng)}"

        child = self.add("subagent", agent, key, parent=parent, task=task,
                         label=T.SUBTASKS[task][0], depth=parent.depth + 1,
                         span=self.rng.randint(5 * MIN_MS, 60 * MIN_MS))
        parent.children.append(child)
        return child

    def _num(self, lo: int, hi: int) -> str:
        return str(self.rng.randint(lo, hi))

    # -- the showcase: every feature the demo needs, whatever the seed

    def showcase(self) -> None:
        p, r = self.pick, self.rng
        mains = {a: self.add("main", a, lambda it, a=a: f"agent:{a}:main") for a in self.names}
        main, ops, research, support = (mains[p(x)] for x in _ROLES)
        main.features += [("secret", "openai"), ("image", ""), ("rewind", "")]
        child = self.spawn(main, "bisect")
        self.spawn(child, "ci_history")
        ops.features += [("rewind", ""), ("secret", "postgres")]
        child = self.spawn(ops, "logs")
        self.spawn(child, "pg_activity")
        child = self.spawn(research, "papers")
        self.spawn(child, "fetch_paper")
        support.features += [("secret", "bearer")]
        self.spawn(support, "reply")
        m, o, s = main.agent, ops.agent, support.agent
        group = self.add("group", m, lambda it: f"agent:{m}:telegram:group:{self._num(1000, 9999)}")
        group.features += [("secret", "github")]
        self.add("group", s,
                 lambda it: f"agent:{s}:slack:channel:c0{_rand(r, _UPPER_NUM, 9).lower()}",
                 lang="es_support")
        self.add("direct", s, lambda it: f"agent:{s}:telegram:direct:{self._num(10**8, 10**10)}",
                 lang="fr_support")
        for job in ("nightly-backup", "cert-expiry", "disk-usage", "weekly-digest",
                    "morning-briefing", "ticket-sla"):
            self.cron(p(T.CRON_JOBS[job][0]), job, 1, plain=True)
        incog = self.add("incognito", m, lambda it: f"agent:{m}:dashboard:incognito-{_hex(r, 12)}")
        self.spawn(incog, "offer", incognito=True)
        self.add("group", o, lambda it: f"agent:{o}:feishu:group:oc_{_hex(r, 16)}", lang="zh_ops")
        rs = research.agent
        self.add("group", rs, lambda it: f"agent:{rs}:discord:channel:{self._num(10**17, 10**18)}",
                 lang="ja_research")
        self.add("direct", s, lambda it: f"agent:{s}:discord:direct:{self._num(10**17, 10**18)}",
                 lang="ko_support")
        self.add("group", o, lambda it: f"agent:{o}:telegram:group:{self._num(1000, 99999)}",
                 lang="de_ops")
        self.add("direct", m, lambda it: f"agent:{m}:telegram:direct:{self._num(10**8, 10**10)}",
                 lang="vi_personal")
        classic = self.add("dashboard", m, self._session_key(m))
        classic.features += [("regenerate", ""), ("secret", "aws")]

    # -- filler sessions

    _KIND_WEIGHTS = {
        "main": (("direct", 25), ("dashboard", 15), ("group", 15), ("cron", 13), ("subagent", 22),
                 ("incognito", 2), ("lang", 4)),
        "ops": (("group", 20), ("cron", 28), ("direct", 10), ("dashboard", 16), ("subagent", 20),
                ("lang", 6)),
        "research": (("dashboard", 25), ("direct", 15), ("cron", 12), ("subagent", 38),
                     ("lang", 10)),
        "support": (("direct", 45), ("group", 20), ("cron", 8), ("subagent", 17), ("lang", 10)),
        "generic": (("direct", 30), ("dashboard", 30), ("group", 10), ("cron", 10),
                    ("subagent", 20)),
    }

    def filler(self, spawners: dict[str, list[_Plan]]) -> None:
        r = self.rng
        agent = self.names[0] if r.random() < 0.3 else r.choice(self.names)
        roles = self.roles_of[agent]
        role = r.choice(roles)
        kinds, weights = zip(*self._KIND_WEIGHTS[role])
        kind = r.choices(kinds, weights)[0]
        if kind == "subagent":
            candidates = spawners.get(agent)
            if candidates:
                parent = candidates[r.randrange(len(candidates))]
                if parent.depth == 0:
                    tasks = [t for x in parent.roles for t in T.ROLE_SUBTASKS.get(x, ())]
                else:
                    tasks = list(T.SUBTASKS[parent.task][3])
                if tasks and len(parent.children) < (4 if parent.depth == 0 else 2):
                    child = self.spawn(parent, r.choice(tasks))
                    if T.SUBTASKS[child.task][3]:
                        spawners[agent].append(child)
                    return
            kind = "dashboard"
        if kind == "cron":
            jobs = [j for j, spec in T.CRON_JOBS.items() if self.pick(spec[0]) == agent]
            self.cron(agent, r.choice(jobs or ["morning-briefing"]), r.randint(1, 58), plain=False)
            return
        lang = None
        if kind == "lang":
            lang = r.choice(T.LANG_POOLS[role])
            kind = "group" if lang in ("de_ops", "zh_ops", "ja_research") else "direct"
        item = self.add(kind, agent, self._filler_key(kind, agent), lang=lang)
        if lang:  # short scripted conversations: keep them as they are
            return
        roll = r.random()
        if roll < 0.10:
            item.features.append(("rewind", ""))
        elif roll < 0.14:
            item.features.append(("regenerate", ""))
        if r.random() < 0.04:
            item.features.append(("secret", r.choice(tuple(T.SECRET_BEATS))))
        if r.random() < 0.03 and kind != "group":
            item.features.append(("image", ""))
        if kind in ("direct", "dashboard", "group"):
            spawners.setdefault(agent, []).append(item)

    def _session_key(self, agent: str):
        def key(item: _Plan) -> str:  # agent:<id>:session-<epochMs>, bumped past collisions
            if f"agent:{agent}:session-{item.start}" in self.keys:
                item.start += 1
            return f"agent:{agent}:session-{item.start}"

        return key

    def _filler_key(self, kind: str, agent: str):
        r = self.rng
        if kind == "dashboard":
            return self._session_key(agent)
        if kind == "incognito":
            return lambda it: f"agent:{agent}:dashboard:incognito-{_hex(r, 12)}"
        if kind == "group":
            return lambda it: r.choice((
                f"agent:{agent}:telegram:group:{r.randint(1000, 99999)}",
                f"agent:{agent}:slack:channel:c0{_rand(r, _UPPER_NUM, 9).lower()}",
                f"agent:{agent}:discord:channel:{r.randint(10**17, 10**18)}",
            ))
        return lambda it: r.choice((
            f"agent:{agent}:telegram:direct:{r.randint(10**8, 10**10)}",
            f"agent:{agent}:discord:direct:{r.randint(10**17, 10**18)}",
            f"agent:{agent}:slack:direct:u0{_rand(r, _UPPER_NUM, 9).lower()}",
        ))

    # -- everything

    def build(self) -> list[_Plan]:
        self.showcase()
        target = self.sessions if self.sessions is not None else max(
            len(self.items), round(self.messages / 40))
        if target < len(self.items):  # parents come before their children: cut the tail
            kept = self.items[:target]
            for item in kept:
                item.children = [c for c in item.children if c.index < target]
            self.items = kept
        spawners: dict[str, list[_Plan]] = {}
        for item in self.items:
            if item.kind == "main" or (item.kind == "subagent" and T.SUBTASKS[item.task][3]
                                       and not item.key.split(":")[-1].startswith("incognito")):
                spawners.setdefault(item.agent, []).append(item)
        while len(self.items) < target:
            self.filler(spawners)
        self._budgets()
        candidates = [i for i in self.items if i.kind != "main"]
        wanted = min(len(candidates), round(0.12 * len(self.items)))
        for item in self.rng.sample(candidates, wanted):
            item.imported = True
        return self.items

    def _budgets(self) -> None:
        r = self.rng
        variable: list[_Plan] = []
        fixed_total = minimum = 0
        for item in self.items:
            if item.fixed:
                fixed_total += item.budget
                continue
            weight, low = _WEIGHTS[item.kind]
            item.weight = weight * r.uniform(0.5, 1.6)
            item.budget = low + 3 * len(item.children) + sum(
                _FEATURE_COST[f] for f, _ in item.features)
            minimum += item.budget
            variable.append(item)
        extra = self.messages - fixed_total - minimum
        if extra <= 0 or not variable:
            return
        total_weight = sum(i.weight for i in variable)
        given = 0
        for item in variable:
            share = int(extra * item.weight / total_weight)
            item.budget += share
            given += share
        for n in range(extra - given):
            variable[n % len(variable)].budget += 1


# --------------------------------------------------------------------------- one session

class _Session:
    """Writes the events of one planned session."""

    def __init__(self, plan: _Plan, ctx: _Context) -> None:
        self.p = plan
        self.ctx = ctx
        self.rng = random.Random(plan.seed)
        self.events: list[dict] = []
        self.ids: set[str] = set()
        self.tip: str | None = None
        self.remaining = plan.budget
        self.recent_users: list[str] = []
        self.context_tokens = _between(self.rng, 9000, 16000)
        role = plan.roles[0] if plan.kind != "incognito" else "main"
        provider, model, api, prices, levels = _MODELS[role]
        self.provider, self.model, self.api, self.prices = provider, model, api, prices
        self.thinking = self.rng.choice(levels) if plan.kind != "cron" else "off"
        if plan.kind == "subagent":
            parent_start = plan.parent.start or ctx.now - DAY_MS
            self.spawn_slots, spawn_ts = ctx.pending.pop(
                plan.index, (_Slots(random.Random(plan.seed ^ 0x5EED), parent_start), parent_start))
            if "task" not in self.spawn_slots:
                self.spawn_slots["task"] = T.SUBTASKS[plan.task][1].format_map(self.spawn_slots)
            plan.start = spawn_ts + _between(self.rng, 300, 2500)
        else:
            self.spawn_slots = None
        self.ts = plan.start
        self.limit = min(ctx.now - 1000, plan.start + plan.span)
        # pacing: long pauses between topics fill the session's span; turns within a topic
        # follow each other within minutes (seconds for sub-agents)
        topics = max(1, plan.budget // 8)
        self.turn_gap = max(4000, (self.limit - self.ts) // (topics + 1))
        self.short_gap = {"subagent": (3000, 40000), "cron": (300, 4000)}.get(
            plan.kind, (20000, 400000))
        self.fresh = plan.kind not in ("subagent", "cron")  # those start right away
        self.scenario: tuple[T.Beat, ...] | None = None
        self.beat_i = 0
        self.slots: _Slots | None = None
        self.last_name = ""
        self.cwd = ctx.cwd(plan)

    # -- low level

    def _id(self) -> str:
        ids = self.ids
        while True:
            eid = f"{self.rng.getrandbits(32):08x}"
            if eid not in ids:
                ids.add(eid)
                return eid

    def _wait(self, lo: int, hi: int) -> None:
        d = _between(self.rng, lo, hi)
        room = (self.limit - self.ts) // (self.remaining * 3 + 4)
        if d > room:
            d = room
        self.ts += d if d > 1 else 1

    def _append(self, event: dict) -> dict:
        self.events.append(event)
        self.tip = event["id"]
        return event

    def _entry(self, kind: str, **fields: Any) -> dict:
        event = {"type": kind, "id": self._id(), "parentId": self.tip, "timestamp": _iso(self.ts)}
        event.update(fields)
        return self._append(event)

    def _message(self, msg: dict) -> dict:
        self.ts += 1 + (self.ts & 7)
        return self._append({"type": "message", "id": self._id(), "parentId": self.tip,
                             "timestamp": _iso(self.ts), "message": msg})

    def _user(self, text: str, image: bool = False, provenance: dict | None = None) -> dict:
        p = self.p
        if p.kind == "group":
            who = _pick(self.rng, T.SENDERS.get(p.lang or "", T.SIMPLE["person"]))
            text = f"{_chat_stamp(self.ts, p.tz)}{who}: {text}"
        elif p.kind in ("main", "direct", "dashboard", "incognito"):
            text = _chat_stamp(self.ts, p.tz) + text
        content: list[dict] = [{"type": "text", "text": text}]
        if image:
            content.append({"type": "image", "data": TINY_PNG_B64, "mimeType": "image/png"})
        msg: dict[str, Any] = {"role": "user", "content": content, "timestamp": self.ts}
        if provenance:
            msg["provenance"] = provenance
        self.remaining -= 1
        event = self._message(msg)
        self.recent_users.append(event["id"])
        if len(self.recent_users) > 4:
            del self.recent_users[0]
        return event

    def _assistant(self, blocks: list[dict], chars: int, stop: str = "stop") -> dict:
        r = self.rng
        out = chars // 4 + _between(r, 8, 120)
        fresh = _between(r, 20, 600)
        write = _between(r, 0, 900)
        cached = self.context_tokens
        self.context_tokens += fresh + out
        pi, po, pr, pw = self.prices
        cost_in, cost_out = fresh * pi / 1e6, out * po / 1e6
        cost_read, cost_write = cached * pr / 1e6, write * pw / 1e6
        usage = {"input": fresh, "output": out, "cacheRead": cached, "cacheWrite": write,
                 "totalTokens": fresh + out + cached + write,
                 "cost": {"input": round(cost_in, 6), "output": round(cost_out, 6),
                          "cacheRead": round(cost_read, 6), "cacheWrite": round(cost_write, 6),
                          "total": round(cost_in + cost_out + cost_read + cost_write, 6)}}
        self.remaining -= 1
        return self._message({"role": "assistant", "content": blocks, "api": self.api,
                              "provider": self.provider, "model": self.model, "usage": usage,
                              "stopReason": stop, "timestamp": self.ts})

    def _call_id(self) -> str:
        r = self.rng
        if self.provider == "anthropic":
            return "toolu_01" + _rand(r, _ALNUM, 22)
        if self.provider == "openai":
            return f"call_{_rand(r, _ALNUM, 24)}|fc_{_hex(r, 32)}"
        return f"call_function_{_rand(r, _ALNUM, 12).lower()}_1"

    def _thinking_block(self, text: str) -> dict:
        block = {"type": "thinking", "thinking": text}
        if self.provider == "minimax-portal":
            block["thinkingSignature"] = _hex(self.rng, 64)
        return block

    def _tool(self, blocks: list[dict], chars: int, name: str, args: dict, result: str,
              error: bool = False, details: dict | None = None) -> dict:
        call_id = self._call_id()
        blocks.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
        self._assistant(blocks, chars + 40, stop="toolUse")
        self._wait(300, 9000 if name == "exec" else 4000)
        if details is None and name == "exec":
            details = {"status": "failed" if error else "completed", "exitCode": 1 if error else 0,
                       "durationMs": _between(self.rng, 40, 8000), "cwd": self.cwd}
        msg: dict[str, Any] = {"role": "toolResult", "toolCallId": call_id, "toolName": name,
                               "content": [{"type": "text", "text": result}]}
        if details is not None:
            msg["details"] = details
        msg["isError"] = error
        msg["timestamp"] = self.ts
        return self._message(msg)

    # -- beats

    def _next_beat(self) -> tuple[T.Beat, _Slots, str | None]:
        """The next beat of the current scenario (a new scenario when it ran out)."""
        p, r = self.p, self.rng
        user_text = None
        if self.scenario is None or self.beat_i >= len(self.scenario):
            self.beat_i = 0
            if p.kind == "subagent":  # its task; later the parent sends more of the same kind
                name = T.SUBTASKS[p.task][2]
                if self.scenario is None:
                    self.slots = self.spawn_slots
                else:
                    self.slots = _Slots(r, self.ts)
                    task = T.SUBTASKS[p.task][1].format_map(self.slots)
                    self.slots["task"] = "[from parent] Next one: " + task
            elif p.lang and self.scenario is None:
                name = p.lang
                self.slots = _Slots(r, self.ts)
            elif p.kind == "cron":
                name = ""
                self.slots = _Slots(r, self.ts)
            else:
                pool = p.pool
                name = _pick(r, pool)
                if name == self.last_name and len(pool) > 1:
                    name = pool[(pool.index(name) + 1) % len(pool)]
                self.slots = _Slots(r, self.ts)
            self.last_name = name
            self.fresh = self.scenario is not None  # a new topic (not the first)
            self.scenario = (T.CRON_JOBS[p.job][3],) if p.kind == "cron" else T.SCENARIOS[name]
        beat = self.scenario[self.beat_i]
        self.beat_i += 1
        if p.kind == "cron":
            user_text = f"[cron:{p.job}] {T.CRON_JOBS[p.job][2]}"
        elif p.kind == "subagent" and self.beat_i == 1:
            user_text = self.slots["task"]
        return beat, self.slots, user_text

    def _provenance(self) -> dict | None:
        if self.p.kind != "subagent":
            return None
        return {"kind": "inter_session", "sourceSessionKey": self.p.parent.key,
                "sourceChannel": "internal", "sourceTool": "sessions_spawn"}

    def _play(self, beat: T.Beat, slots: _Slots, allowed: int, user_text: str | None = None,
              image: bool = False) -> None:
        """One turn: user, k tool calls, final reply; uses at most ``allowed`` (>= 2) messages."""
        r, p = self.rng, self.p
        if user_text is None:
            user_text = _pick(r, beat.user).format_map(slots)
            if p.kind == "subagent" and not user_text.startswith("[from parent]"):
                user_text = "[from parent] " + user_text
        self._pause()
        self._user(user_text, image=image, provenance=self._provenance())
        self._wait(1500, 25000)
        steps = beat.steps[: allowed - 2]
        think = None
        if beat.think and self.thinking != "off" and r.random() < 0.8:
            think = self._thinking_block(_pick(r, beat.think).format_map(slots))
        for step in steps:
            blocks: list[dict] = []
            if think is not None:
                blocks.append(think)
                think = None
            chars = 0
            if step.pre and r.random() < 0.7:
                text = _pick(r, step.pre).format_map(slots)
                blocks.append({"type": "text", "text": text})
                chars = len(text)
            args = {name: value.format_map(slots) for name, value in step.args}
            result = _pick(r, step.result).format_map(slots)
            self._tool(blocks, chars, step.tool, args, result, step.error)
            self._wait(800, 12000)
        reply = _pick(r, beat.reply).format_map(slots)
        if p.kind == "group" and r.random() < 0.3:
            reply = "[[reply_to_current]] " + reply
        blocks = [think] if think is not None else []
        blocks.append({"type": "text", "text": reply})
        self._assistant(blocks, len(reply))

    def _pause(self) -> None:
        """Before a user turn: a long pause for a new topic, a short one within a topic."""
        if self.fresh:
            self.fresh = False
            self._wait(self.turn_gap // 3, self.turn_gap * 5 // 3)
        else:
            self._wait(*self.short_gap)

    def _chatter(self) -> None:
        """Group noise the bot stays silent on."""
        self._wait(self.turn_gap // 4, self.turn_gap)
        self._user(_pick(self.rng, T.CHATTER))
        self._wait(900, 6000)
        self._assistant([{"type": "text", "text": "NO_REPLY"}], 8)

    def _tail(self) -> None:
        self._wait(2000, 30000)
        text = _pick(self.rng, T.TAIL_REPLIES)
        self._assistant([{"type": "text", "text": text}], len(text))

    # -- features

    def _spawn(self, child: _Plan) -> None:
        r, p = self.rng, self.p
        label, task_template = T.SUBTASKS[child.task][:2]
        if self.remaining >= 2:
            pool = T.SPAWN_FOLLOWUP if p.kind == "subagent" else T.SPAWN_USER
            self._wait(*self.short_gap)
            self._user(_pick(r, pool), provenance=self._provenance())
        self._wait(1500, 12000)
        # The child's slots: its task text now, the rest of its transcript later.
        child_slots = _Slots(random.Random(child.seed ^ 0x5EED), self.ts)
        if self.slots is not None:  # inherit what the conversation is about
            child_slots.update({k: v for k, v in self.slots.items() if k != "task"})
        child_slots["task"] = task_template.format_map(child_slots)
        run_id = _uuid(r)
        result = json.dumps({"status": "accepted", "childSessionKey": child.key, "runId": run_id})
        pre = _pick(r, T.SPAWN_PRE)
        self._tool(
            [{"type": "text", "text": pre}], len(pre), "sessions_spawn",
            {"task": child_slots["task"], "label": label, "runTimeoutSeconds": 900},
            result,
            details={"status": "accepted", "childSessionKey": child.key, "runId": run_id,
                     "mode": "run", "modelApplied": True,
                     "note": "auto-announces on completion; do not poll"},
        )
        self.ctx.pending[child.index] = (child_slots, self.ts)
        if self.remaining >= 1:
            self._wait(800, 5000)
            reply = _pick(r, T.SPAWN_REPLY).format(label=label)
            self._assistant([{"type": "text", "text": reply}], len(reply))

    def _rewind(self) -> None:
        """An abandoned side branch, then a leaf control back to where it started."""
        r = self.rng
        fork = self.tip
        kept_users = list(self.recent_users)
        beat = _pick(r, T.ABANDONED)
        self._play(beat, self.slots or _Slots(r, self.ts), 2)
        self._wait(5000, 120000)
        self._entry("leaf", targetId=fork)
        self.tip = fork
        self.recent_users = kept_users

    def _regenerate(self) -> None:
        """A turn answered twice: the first answer stays as an off-branch sibling."""
        r = self.rng
        beat, slots, user_text = self._next_beat()
        text = user_text or _pick(r, beat.user).format_map(slots)
        self._pause()
        asked = self._user(text, provenance=self._provenance())
        self._wait(1500, 9000)
        first = _pick(r, T.REGENERATED)
        self._assistant([{"type": "text", "text": first}], len(first))
        if self.remaining >= 1:
            self._wait(20000, 90000)
            self.tip = asked["id"]
            reply = _pick(r, beat.reply).format_map(slots)
            self._assistant([{"type": "text", "text": reply}], len(reply))

    def _compaction(self) -> None:
        if not self.recent_users:
            return
        slots = self.slots or _Slots(self.rng, self.ts)
        self._wait(1000, 4000)
        self._entry("compaction", summary=T.COMPACTION_SUMMARY.format_map(slots),
                    firstKeptEntryId=self.recent_users[0], tokensBefore=self.context_tokens,
                    details={"readFiles": [], "modifiedFiles": []}, fromHook=True)
        self.context_tokens = _between(self.rng, 6000, 12000)

    def _forced(self) -> list[tuple[int, str, Any, int]]:
        """Feature turns at evenly spread points of the budget: (threshold, kind, arg, cost)."""
        p, r = self.p, self.rng
        items: list[tuple[str, Any]] = [(f, a) for f, a in p.features]
        items += [("spawn", child) for child in p.children]
        r.shuffle(items)
        if p.budget >= 240:  # long sessions get compacted now and then
            items += [("compaction", None)] * (p.budget // 160)
        n = len(items)
        spaced = [(p.budget * (i + 1) // (n + 1), kind, arg) for i, (kind, arg) in enumerate(items)]
        spaced.sort(key=lambda x: x[0])
        return [(th, kind, arg, _FEATURE_COST[kind]) for th, kind, arg in spaced]

    # -- the whole session

    def build(self) -> DemoSession:
        p, r = self.p, self.rng
        self.events.append({"type": "session", "version": 3, "id": p.sid,
                            "timestamp": _iso(self.ts), "cwd": self.cwd})
        self.ts += _between(r, 1, 5)
        self._entry("model_change", provider=self.provider, modelId=self.model)
        self._entry("thinking_level_change", thinkingLevel=self.thinking)
        self.ts += 1
        snapshot = {"timestamp": self.ts, "provider": self.provider, "modelApi": self.api,
                    "modelId": self.model}
        self._append({"type": "custom", "customType": "model-snapshot", "data": snapshot,
                      "id": self._id(), "parentId": self.tip, "timestamp": _iso(self.ts)})
        forced = self._forced()
        reserve = sum(f[3] for f in forced)
        while self.remaining > 0:
            if forced:
                threshold, kind, arg, cost = forced[0]
                if p.budget - self.remaining >= threshold or self.remaining <= reserve:
                    forced.pop(0)
                    reserve -= cost
                    self._feature(kind, arg)
                    continue
            allowed = self.remaining - reserve
            if allowed >= 2:
                if p.kind == "group" and not p.lang and r.random() < 0.12:
                    self._chatter()
                    continue
                beat, slots, user_text = self._next_beat()
                self._play(beat, slots, allowed, user_text)
            else:
                self._tail()
        return DemoSession(
            key=p.key,
            session_id=p.sid,
            spawned_by=p.parent.key if p.parent else None,
            parent_key=p.parent.key if p.parent else None,
            label=p.label,
            created_at=p.start,
            events=tuple(self.events),
            imported=p.imported,
        )

    def _feature(self, kind: str, arg: Any) -> None:
        r = self.rng
        if kind == "spawn":
            self._spawn(arg)
        elif kind == "compaction":
            self._compaction()
        elif self.remaining < 2:
            self._tail()
        elif kind == "secret":
            self.fresh = True
            self._play(T.SECRET_BEATS[arg], _Slots(r, self.ts), 2)
        elif kind == "image":
            self.fresh = True
            self._play(T.IMAGE_BEAT, _Slots(r, self.ts), 2, image=True)
        elif kind == "rewind":
            self._rewind()
        elif kind == "regenerate":
            self._regenerate()


class _Context:
    """State shared across sessions while streaming: sub-agents waiting for their parent."""

    def __init__(self, now: int) -> None:
        self.now = now
        self.pending: dict[int, tuple[_Slots, int]] = {}

    @staticmethod
    def cwd(p: _Plan) -> str:
        suffix = "" if p.agent == "main" else f"-{p.agent}"
        if "research" in p.roles and p.agent != "main":
            return f"C:\\Users\\sam\\.openclaw\\workspace{suffix}"
        return f"/home/sam/.openclaw/workspace{suffix}"


# --------------------------------------------------------------------------- public API

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
    return _stream(_Planner(seed, messages, agents, sessions, now), now)


def _stream(planner: _Planner, now: int) -> Iterator[DemoSession]:
    plans = planner.build()
    ctx = _Context(now)
    for plan in plans:
        yield _Session(plan, ctx).build()
