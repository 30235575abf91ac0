"""Plans the demo archive: which agents and sessions exist, their kinds, sizes, times and
features (spawns, secrets, rewinds...), all from one seed."""

from __future__ import annotations

import random
from typing import Any

from . import incident
from . import text as demo_text
from .parts import (
    DAY_MS,
    HOUR_MS,
    MIN_MS,
    UPPER_NUM,
    rand_hex,
    rand_str,
    rand_uuid,
)

# --------------------------------------------------------------------------- agents & models

_ROLES = ("main", "ops", "research", "support")
_AGENT_NAMES = ("main", "ops", "research", "support", "finance", "home", "writer", "devbot")

# role -> provider, model, api, price per Mtok (input, output, cacheRead, cacheWrite), thinking
MODELS: dict[str, tuple[str, str, str, tuple[float, float, float, float], tuple[str, ...]]] = {
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

TOOL_SHARE = 0.5  # of dashboard sessions: Claude Code or Codex sessions run in a repository

# kind -> (relative message weight, minimum budget)
_WEIGHTS = {"main": (8.0, 12), "group": (2.5, 4), "direct": (1.3, 2), "dashboard": (1.0, 2),
            "incognito": (0.7, 2), "subagent": (0.8, 2)}
FEATURE_COST = {"spawn": 3, "secret": 2, "image": 2, "rewind": 2, "regenerate": 3,
                 "compaction": 0}
_CRON_HOUR = {"nightly-backup": 2, "cert-expiry": 6, "disk-usage": 7, "dependency-audit": 5,
              "morning-briefing": 7, "weekly-digest": 8, "ticket-sla": 17}
_LANG_TZ = {"fr_support": 1, "es_support": 1, "de_ops": 1, "vi_personal": 7, "zh_ops": 8,
            "ja_research": 9, "ko_support": 9}


class Plan:
    """One session to generate (everything but the events)."""

    __slots__ = ("index", "key", "sid", "kind", "agent", "roles", "parent", "label", "start",
                 "budget", "children", "features", "pool", "imported", "task", "depth", "tz",
                 "job", "lang", "span", "seed", "weight", "fixed", "tool", "script")

    def __init__(self, index: int, kind: str, agent: str, roles: tuple[str, ...]) -> None:
        self.index = index
        self.kind = kind
        self.agent = agent
        self.roles = roles
        self.key = ""
        self.sid = ""
        self.parent: Plan | None = None
        self.label: str | None = None
        self.start: int | None = None
        self.budget = 0
        self.children: list[Plan] = []
        self.features: list[tuple[str, str]] = []
        self.pool: tuple[str, ...] = ()
        self.imported = False
        self.tool: str | None = None  # claude-code | codex: a coding tool's session, in a repo
        self.task: str | None = None
        self.depth = 0
        self.tz = 0
        self.job: str | None = None
        self.lang: str | None = None
        self.span = HOUR_MS
        self.seed = 0
        self.weight = 1.0
        self.fixed = False
        self.script: str | None = None  # a conversation written word for word (incident.py)


def _natural_size(beats: tuple[demo_text.Beat, ...]) -> int:
    return sum(2 + len(b.steps) for b in beats)


class Planner:
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
        self.items: list[Plan] = []
        self.keys: set[str] = set()

    def pick(self, role: str) -> str:
        """The agent that plays ``role`` (the first agent stands in for missing ones)."""
        return role if role in self.names else self.names[0]

    # -- building blocks

    def add(self, kind: str, agent: str, make_key, **fields: Any) -> Plan:
        item = Plan(len(self.items), kind, agent, self.roles_of[agent])
        for name, value in fields.items():
            setattr(item, name, value)
        item.seed = self.seed * 10_000_019 + item.index
        item.sid = rand_uuid(self.rng)
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
            pool.extend(demo_text.POOLS[role])
        if kind == "group":
            pool = list(demo_text.POOLS["support_group" if "support" in item.roles and "main" not in
                                item.roles else "group"])
        elif kind == "incognito":
            pool = list(demo_text.POOLS["incognito"])
        elif item.tool:  # a coding tool works on code
            pool = list(demo_text.POOLS["coding"])
        if not item.pool:
            item.pool = tuple(pool)
        if item.lang:
            item.tz = _LANG_TZ[item.lang]
            item.fixed = True
            item.budget = _natural_size(demo_text.SCENARIOS[item.lang])
        elif kind == "cron":
            item.fixed = True
            item.budget = 2 + len(demo_text.CRON_JOBS[item.job][3].steps)
        else:
            item.tz = self.rng.choice((0, 0, 1, 2, -5, 8))
        self.items.append(item)
        return item

    def _span(self, kind: str) -> int:
        r = self.rng
        if kind == "group":
            return r.randint(1 * DAY_MS, 4 * DAY_MS)
        return r.randint(20 * MIN_MS, 8 * HOUR_MS)

    def cron(self, agent: str, job: str, days_ago: int, plain: bool) -> Plan:
        start = (self.now // DAY_MS - days_ago) * DAY_MS + _CRON_HOUR.get(job, 6) * HOUR_MS
        start += self.rng.randint(0, 90_000)

        def key(p: Plan) -> str:
            base = f"agent:{agent}:cron:{job}"
            return base if plain else f"{base}:run:{p.sid}"

        return self.add("cron", agent, key, job=job, label=demo_text.CRON_JOBS[job][1], start=start,
                        span=8 * MIN_MS, pool=())

    def spawn(self, parent: Plan, task: str, incognito: bool = False) -> Plan:
        agent = parent.agent

        def key(p: Plan) -> str:
            if incognito:
                return f"agent:{agent}:subagent:incognito-{rand_hex(self.rng, 12)}"
            return f"agent:{agent}:subagent:{rand_uuid(self.rng)}"

        child = self.add("subagent", agent, key, parent=parent, task=task,
                         label=demo_text.SUBTASKS[task][0], depth=parent.depth + 1,
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
                 lambda it: f"agent:{s}:slack:channel:c0{rand_str(r, UPPER_NUM, 9).lower()}",
                 lang="es_support")
        self.add("direct", s, lambda it: f"agent:{s}:telegram:direct:{self._num(10**8, 10**10)}",
                 lang="fr_support")
        for job in ("nightly-backup", "cert-expiry", "disk-usage", "weekly-digest",
                    "morning-briefing", "ticket-sla"):
            self.cron(p(demo_text.CRON_JOBS[job][0]), job, 1, plain=True)
        incog = self.add("incognito", m, lambda it: f"agent:{m}:dashboard:incognito-{rand_hex(r, 12)}")
        self.spawn(incog, "offer", incognito=True)
        self.add("group", o, lambda it: f"agent:{o}:feishu:group:oc_{rand_hex(r, 16)}", lang="zh_ops")
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

    def filler(self, spawners: dict[str, list[Plan]]) -> None:
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
                    tasks = [t for x in parent.roles for t in demo_text.ROLE_SUBTASKS.get(x, ())]
                else:
                    tasks = list(demo_text.SUBTASKS[parent.task][3])
                if tasks and len(parent.children) < (4 if parent.depth == 0 else 2):
                    child = self.spawn(parent, r.choice(tasks))
                    if demo_text.SUBTASKS[child.task][3]:
                        spawners[agent].append(child)
                    return
            kind = "dashboard"
        if kind == "cron":
            jobs = [j for j, spec in demo_text.CRON_JOBS.items() if self.pick(spec[0]) == agent]
            self.cron(agent, r.choice(jobs or ["morning-briefing"]), r.randint(1, 58), plain=False)
            return
        lang = None
        if kind == "lang":
            lang = r.choice(demo_text.LANG_POOLS[role])
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
            item.features.append(("secret", r.choice(tuple(demo_text.SECRET_BEATS))))
        if r.random() < 0.03 and kind != "group":
            item.features.append(("image", ""))
        if kind in ("direct", "dashboard", "group"):
            spawners.setdefault(agent, []).append(item)

    def _session_key(self, agent: str):
        def key(item: Plan) -> str:  # agent:<id>:session-<epochMs>, bumped past collisions
            if f"agent:{agent}:session-{item.start}" in self.keys:
                item.start += 1
            return f"agent:{agent}:session-{item.start}"

        return key

    def _filler_key(self, kind: str, agent: str):
        r = self.rng
        if kind == "dashboard":
            in_dashboard = self._session_key(agent)

            def key(item: Plan) -> str:  # some are a coding tool's sessions (resumable there)
                if r.random() < TOOL_SHARE:
                    item.tool = "claude-code" if r.random() < 0.6 else "codex"
                    return f"agent:{agent}:{item.tool}:{item.sid}"
                return in_dashboard(item)

            return key
        if kind == "incognito":
            return lambda it: f"agent:{agent}:dashboard:incognito-{rand_hex(r, 12)}"
        if kind == "group":
            return lambda it: r.choice((
                f"agent:{agent}:telegram:group:{r.randint(1000, 99999)}",
                f"agent:{agent}:slack:channel:c0{rand_str(r, UPPER_NUM, 9).lower()}",
                f"agent:{agent}:discord:channel:{r.randint(10**17, 10**18)}",
            ))
        return lambda it: r.choice((
            f"agent:{agent}:telegram:direct:{r.randint(10**8, 10**10)}",
            f"agent:{agent}:discord:direct:{r.randint(10**17, 10**18)}",
            f"agent:{agent}:slack:direct:u0{rand_str(r, UPPER_NUM, 9).lower()}",
        ))

    # -- everything

    def build(self) -> list[Plan]:
        self.showcase()
        target = self.sessions if self.sessions is not None else max(
            len(self.items), round(self.messages / 40))
        if target < len(self.items):  # parents come before their children: cut the tail
            kept = self.items[:target]
            for item in kept:
                item.children = [c for c in item.children if c.index < target]
            self.items = kept
        spawners: dict[str, list[Plan]] = {}
        for item in self.items:
            if item.kind == "main" or (item.kind == "subagent" and demo_text.SUBTASKS[item.task][3]
                                       and not item.key.split(":")[-1].startswith("incognito")):
                spawners.setdefault(item.agent, []).append(item)
        # the incident takes the last filler's place; with no filler, it comes on top, unless
        # the number of sessions was asked for
        room = len(self.items) < target
        whole = room or self.sessions is None
        while len(self.items) < target - room:
            self.filler(spawners)
        if whole:
            showing = self.incident()
        self._budgets()
        candidates = [i for i in self.items if i.kind != "main"]
        wanted = min(len(candidates), round(0.12 * len(self.items)))
        for item in self.rng.sample(candidates, wanted):
            item.imported = True
        if whole:
            showing.imported = False  # indexed from the start: the investigation's example
        return self.items

    def incident(self) -> Plan:
        """The session worth investigating (``incident.py``), last, drawn from random numbers
        of its own: the sessions before it are the ones the corpus had without it."""
        agent = self.pick("ops")
        item = Plan(len(self.items), "dashboard", agent, self.roles_of[agent])
        item.seed = self.seed * 10_000_019 + item.index
        rng = random.Random(item.seed ^ 0x1AC1DE)
        item.sid = rand_uuid(rng)
        item.span = 2 * HOUR_MS
        item.start = self.now - 2 * DAY_MS - 5 * HOUR_MS - rng.randint(0, 3600) * 1000
        while f"agent:{agent}:session-{item.start}" in self.keys:
            item.start += 1
        item.key = f"agent:{agent}:session-{item.start}"
        self.keys.add(item.key)
        item.label = incident.LABEL
        item.script = incident.NAME
        item.fixed = True
        item.budget = _natural_size(incident.BEATS)
        self.items.append(item)
        return item

    def _budgets(self) -> None:
        r = self.rng
        variable: list[Plan] = []
        fixed_total = minimum = 0
        for item in self.items:
            if item.fixed:
                fixed_total += item.budget
                continue
            weight, low = _WEIGHTS[item.kind]
            item.weight = weight * r.uniform(0.5, 1.6)
            item.budget = low + 3 * len(item.children) + sum(
                FEATURE_COST[f] for f, _ in item.features)
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
