"""Turns one planned session into its OpenClaw entries (the conversation, tool calls,
spawned sub-agents, images, rewinds), deterministically from the plan's seed."""

from __future__ import annotations

import json
import random
from typing import Any

from . import incident
from . import text as demo_text
from .parts import (
    ALNUM,
    DAY_MS,
    TINY_PNG_B64,
    DemoSession,
    Slots,
    between,
    chat_stamp,
    in_own_words,
    iso,
    pick,
    rand_hex,
    rand_str,
    rand_uuid,
)
from .planner import FEATURE_COST, MODELS, Plan

# --------------------------------------------------------------------------- one session

class SessionBuilder:
    """Writes the events of one planned session."""

    def __init__(self, plan: Plan, ctx: Context) -> None:
        self.p = plan
        self.ctx = ctx
        self.rng = random.Random(plan.seed)
        self.events: list[dict] = []
        self.ids: set[str] = set()
        self.tip: str | None = None
        self.remaining = plan.budget
        self.recent_users: list[str] = []
        self.context_tokens = between(self.rng, 9000, 16000)
        role = plan.roles[0] if plan.kind != "incognito" else "main"
        provider, model, api, prices, levels = MODELS[role]
        self.provider, self.model, self.api, self.prices = provider, model, api, prices
        self.thinking = self.rng.choice(levels) if plan.kind != "cron" else "off"
        if plan.kind == "subagent":
            parent_start = plan.parent.start or ctx.now - DAY_MS
            self.spawn_slots, spawn_ts = ctx.pending.pop(
                plan.index, (Slots(random.Random(plan.seed ^ 0x5EED), parent_start), parent_start))
            if "task" not in self.spawn_slots:
                self.spawn_slots["task"] = demo_text.SUBTASKS[plan.task][1].format_map(self.spawn_slots)
            plan.start = spawn_ts + between(self.rng, 300, 2500)
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
        self.scenario: tuple[demo_text.Beat, ...] | None = None
        self.beat_i = 0
        self.slots: Slots | None = None
        self.last_name = ""
        self.cwd = ctx.cwd(plan)
        # this person's habit: how often they open or close a message with a few words
        self.habit = (self.rng.random() * 0.5, self.rng.random() * 0.4)

    # -- low level

    def _id(self) -> str:
        ids = self.ids
        while True:
            eid = f"{self.rng.getrandbits(32):08x}"
            if eid not in ids:
                ids.add(eid)
                return eid

    def _wait(self, lo: int, hi: int) -> None:
        d = between(self.rng, lo, hi)
        room = (self.limit - self.ts) // (self.remaining * 3 + 4)
        if d > room:
            d = room
        self.ts += d if d > 1 else 1

    def _append(self, event: dict) -> dict:
        self.events.append(event)
        self.tip = event["id"]
        return event

    def _entry(self, kind: str, **fields: Any) -> dict:
        event = {"type": kind, "id": self._id(), "parentId": self.tip, "timestamp": iso(self.ts)}
        event.update(fields)
        return self._append(event)

    def _message(self, msg: dict) -> dict:
        self.ts += 1 + (self.ts & 7)
        return self._append({"type": "message", "id": self._id(), "parentId": self.tip,
                             "timestamp": iso(self.ts), "message": msg})

    def _user(self, text: str, image: bool = False, provenance: dict | None = None) -> dict:
        p = self.p
        if p.kind == "group":
            who = pick(self.rng, demo_text.SENDERS.get(p.lang or "", demo_text.SIMPLE["person"]))
            text = f"{chat_stamp(self.ts, p.tz)}{who}: {text}"
        elif p.kind in ("main", "direct", "dashboard", "incognito"):
            text = chat_stamp(self.ts, p.tz) + text
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
        out = chars // 4 + between(r, 8, 120)
        fresh = between(r, 20, 600)
        write = between(r, 0, 900)
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
            return "toolu_01" + rand_str(r, ALNUM, 22)
        if self.provider == "openai":
            return f"call_{rand_str(r, ALNUM, 24)}|fc_{rand_hex(r, 32)}"
        return f"call_function_{rand_str(r, ALNUM, 12).lower()}_1"

    def _thinking_block(self, text: str) -> dict:
        block = {"type": "thinking", "thinking": text}
        if self.provider == "minimax-portal":
            block["thinkingSignature"] = rand_hex(self.rng, 64)
        return block

    def _tool(self, blocks: list[dict], chars: int, name: str, args: dict, result: str,
              error: bool = False, details: dict | None = None) -> dict:
        call_id = self._call_id()
        blocks.append({"type": "toolCall", "id": call_id, "name": name, "arguments": args})
        self._assistant(blocks, chars + 40, stop="toolUse")
        self._wait(300, 9000 if name == "exec" else 4000)
        if details is None and name == "exec":
            details = {"status": "failed" if error else "completed", "exitCode": 1 if error else 0,
                       "durationMs": between(self.rng, 40, 8000), "cwd": self.cwd}
        msg: dict[str, Any] = {"role": "toolResult", "toolCallId": call_id, "toolName": name,
                               "content": [{"type": "text", "text": result}]}
        if details is not None:
            msg["details"] = details
        msg["isError"] = error
        msg["timestamp"] = self.ts
        return self._message(msg)

    # -- beats

    def _next_beat(self) -> tuple[demo_text.Beat, Slots, str | None]:
        """The next beat of the current scenario (a new scenario when it ran out)."""
        p, r = self.p, self.rng
        user_text = None
        if self.scenario is None or self.beat_i >= len(self.scenario):
            self.beat_i = 0
            if p.kind == "subagent":  # its task; later the parent sends more of the same kind
                name = demo_text.SUBTASKS[p.task][2]
                if self.scenario is None:
                    self.slots = self.spawn_slots
                else:
                    self.slots = Slots(r, self.ts)
                    task = demo_text.SUBTASKS[p.task][1].format_map(self.slots)
                    self.slots["task"] = "[from parent] Next one: " + task
            elif (p.lang or p.script) and self.scenario is None:
                name = p.lang or p.script or ""
                self.slots = Slots(r, self.ts)
            elif p.kind == "cron":
                name = ""
                self.slots = Slots(r, self.ts)
            else:
                pool = p.pool
                name = pick(r, pool)
                if name == self.last_name and len(pool) > 1:
                    name = pool[(pool.index(name) + 1) % len(pool)]
                self.slots = Slots(r, self.ts)
            self.last_name = name
            self.fresh = self.scenario is not None  # a new topic (not the first)
            self.scenario = ((demo_text.CRON_JOBS[p.job][3],) if p.kind == "cron"
                             else incident.BEATS if name == incident.NAME
                             else demo_text.SCENARIOS[name])
        beat = self.scenario[self.beat_i]
        self.beat_i += 1
        if p.kind == "cron":
            user_text = f"[cron:{p.job}] {demo_text.CRON_JOBS[p.job][2]}"
        elif p.kind == "subagent" and self.beat_i == 1:
            user_text = self.slots["task"]
        return beat, self.slots, user_text

    def _provenance(self) -> dict | None:
        if self.p.kind != "subagent":
            return None
        return {"kind": "inter_session", "sourceSessionKey": self.p.parent.key,
                "sourceChannel": "internal", "sourceTool": "sessions_spawn"}

    def _play(self, beat: demo_text.Beat, slots: Slots, allowed: int, user_text: str | None = None,
              image: bool = False) -> None:
        """One turn: user, k tool calls, final reply; uses at most ``allowed`` (>= 2) messages."""
        r, p = self.rng, self.p
        if user_text is None:
            user_text = in_own_words(r, self.habit, pick(r, beat.user)).format_map(slots)
            if p.kind == "subagent" and not user_text.startswith("[from parent]"):
                user_text = "[from parent] " + user_text
        self._pause()
        self._user(user_text, image=image, provenance=self._provenance())
        self._wait(1500, 25000)
        steps = beat.steps[: allowed - 2]
        think = None
        if beat.think and self.thinking != "off" and r.random() < 0.8:
            think = self._thinking_block(pick(r, beat.think).format_map(slots))
        for step in steps:
            blocks: list[dict] = []
            if think is not None:
                blocks.append(think)
                think = None
            chars = 0
            if step.pre and r.random() < 0.7:
                text = pick(r, step.pre).format_map(slots)
                blocks.append({"type": "text", "text": text})
                chars = len(text)
            args = {name: value.format_map(slots) for name, value in step.args}
            result = pick(r, step.result).format_map(slots)
            self._tool(blocks, chars, step.tool, args, result, step.error)
            self._wait(800, 12000)
        reply = pick(r, beat.reply).format_map(slots)
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
        self._user(pick(self.rng, demo_text.CHATTER))
        self._wait(900, 6000)
        self._assistant([{"type": "text", "text": "NO_REPLY"}], 8)

    def _tail(self) -> None:
        self._wait(2000, 30000)
        text = pick(self.rng, demo_text.TAIL_REPLIES)
        self._assistant([{"type": "text", "text": text}], len(text))

    # -- features

    def _spawn(self, child: Plan) -> None:
        r, p = self.rng, self.p
        label, task_template = demo_text.SUBTASKS[child.task][:2]
        if self.remaining >= 2:
            pool = demo_text.SPAWN_FOLLOWUP if p.kind == "subagent" else demo_text.SPAWN_USER
            self._wait(*self.short_gap)
            self._user(pick(r, pool), provenance=self._provenance())
        self._wait(1500, 12000)
        # The child's slots: its task text now, the rest of its transcript later.
        child_slots = Slots(random.Random(child.seed ^ 0x5EED), self.ts)
        if self.slots is not None:  # inherit what the conversation is about
            child_slots.update({k: v for k, v in self.slots.items() if k != "task"})
        child_slots["task"] = task_template.format_map(child_slots)
        run_id = rand_uuid(r)
        result = json.dumps({"status": "accepted", "childSessionKey": child.key, "runId": run_id})
        pre = pick(r, demo_text.SPAWN_PRE)
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
            reply = pick(r, demo_text.SPAWN_REPLY).format(label=label)
            self._assistant([{"type": "text", "text": reply}], len(reply))

    def _rewind(self) -> None:
        """An abandoned side branch, then a leaf control back to where it started."""
        r = self.rng
        fork = self.tip
        kept_users = list(self.recent_users)
        beat = pick(r, demo_text.ABANDONED)
        self._play(beat, self.slots or Slots(r, self.ts), 2)
        self._wait(5000, 120000)
        self._entry("leaf", targetId=fork)
        self.tip = fork
        self.recent_users = kept_users

    def _regenerate(self) -> None:
        """A turn answered twice: the first answer stays as an off-branch sibling."""
        r = self.rng
        beat, slots, user_text = self._next_beat()
        text = user_text or pick(r, beat.user).format_map(slots)
        self._pause()
        asked = self._user(text, provenance=self._provenance())
        self._wait(1500, 9000)
        first = pick(r, demo_text.REGENERATED)
        self._assistant([{"type": "text", "text": first}], len(first))
        if self.remaining >= 1:
            self._wait(20000, 90000)
            self.tip = asked["id"]
            reply = pick(r, beat.reply).format_map(slots)
            self._assistant([{"type": "text", "text": reply}], len(reply))

    def _compaction(self) -> None:
        if not self.recent_users:
            return
        slots = self.slots or Slots(self.rng, self.ts)
        self._wait(1000, 4000)
        self._entry("compaction", summary=demo_text.COMPACTION_SUMMARY.format_map(slots),
                    firstKeptEntryId=self.recent_users[0], tokensBefore=self.context_tokens,
                    details={"readFiles": [], "modifiedFiles": []}, fromHook=True)
        self.context_tokens = between(self.rng, 6000, 12000)

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
        return [(th, kind, arg, FEATURE_COST[kind]) for th, kind, arg in spaced]

    # -- the whole session

    def build(self) -> DemoSession:
        p, r = self.p, self.rng
        self.events.append({"type": "session", "version": 3, "id": p.sid,
                            "timestamp": iso(self.ts), "cwd": self.cwd})
        self.ts += between(r, 1, 5)
        self._entry("model_change", provider=self.provider, modelId=self.model)
        self._entry("thinking_level_change", thinkingLevel=self.thinking)
        self.ts += 1
        snapshot = {"timestamp": self.ts, "provider": self.provider, "modelApi": self.api,
                    "modelId": self.model}
        self._append({"type": "custom", "customType": "model-snapshot", "data": snapshot,
                      "id": self._id(), "parentId": self.tip, "timestamp": iso(self.ts)})
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
            source=p.tool or "demo",
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
            self._play(demo_text.SECRET_BEATS[arg], Slots(r, self.ts), 2)
        elif kind == "image":
            self.fresh = True
            self._play(demo_text.IMAGE_BEAT, Slots(r, self.ts), 2, image=True)
        elif kind == "rewind":
            self._rewind()
        elif kind == "regenerate":
            self._regenerate()


class Context:
    """State shared across sessions while streaming: sub-agents waiting for their parent."""

    def __init__(self, now: int) -> None:
        self.now = now
        self.pending: dict[int, tuple[Slots, int]] = {}

    @staticmethod
    def cwd(p: Plan) -> str:
        if p.tool:  # a coding tool runs in a checkout of one of the repositories
            repos = demo_text.SIMPLE["repo"]
            return f"/home/sam/src/{repos[p.seed % len(repos)].split('/')[1]}"
        suffix = "" if p.agent == "main" else f"-{p.agent}"
        if "research" in p.roles and p.agent != "main":
            return f"C:\\Users\\sam\\.openclaw\\workspace{suffix}"
        return f"/home/sam/.openclaw/workspace{suffix}"
