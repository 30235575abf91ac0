"""The demo generator's building blocks: time and random helpers, the session record it
yields, and the slots that fill the invented text's placeholders consistently."""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from . import text as demo_text

DEFAULT_NOW_MS = 1_796_040_000_000  # 2026-11-30T12:00:00Z: fixed, so the output is repeatable
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
MIN_MS = 60_000


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
    source: str = "demo"  # or claude-code / codex: what the session's store says wrote it


# --------------------------------------------------------------------------- small helpers

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_DAY_ISO: dict[int, str] = {}
_DAY_LABEL: dict[int, str] = {}
ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
UPPER_NUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_B64URL = ALNUM + "-_"
_B64 = ALNUM + "+/"


def iso(ms: int) -> str:
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
    return iso(ms)[:10]


def chat_stamp(ms: int, tz_hours: int) -> str:
    """``[Thu 2026-10-08 14:02 GMT+1]``, the prefix OpenClaw puts on channel messages."""
    local = ms + tz_hours * HOUR_MS
    day, rem = divmod(local, DAY_MS)
    label = _DAY_LABEL.get(day)
    if label is None:
        label = _DAY_LABEL[day] = (_EPOCH + timedelta(days=day)).strftime("%a %Y-%m-%d")
    minute = rem // MIN_MS
    zone = "UTC" if tz_hours == 0 else f"GMT{tz_hours:+d}"
    return f"[{label} {minute // 60:02d}:{minute % 60:02d} {zone}] "


def rand_str(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choices(alphabet, k=n))


def rand_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def pick(rng: random.Random, seq):
    """``rng.choice`` without its overhead (this runs several times per message)."""
    return seq[int(rng.random() * len(seq))]


def in_own_words(rng: random.Random, habit: tuple[float, float], template: str) -> str:
    """A request as one session's person writes it: now and then an opener or a closing word
    (``habit``: how often each), so one scenario reads differently in each session."""
    opens, closes = habit
    if rng.random() < opens:
        keep = template[1:2].isupper() or template[:1] in "{@"  # "CI is red", "{test} ..."
        template = pick(rng, demo_text.OPENERS) + (template if keep else template[:1].lower() + template[1:])
    if rng.random() < closes:
        template = template.rstrip(".") + pick(rng, demo_text.CLOSERS)
    return template


def between(rng: random.Random, lo: int, hi: int) -> int:
    """``rng.randint`` without its overhead."""
    return lo + int(rng.random() * (hi - lo + 1))


def rand_hex(rng: random.Random, n: int) -> str:
    return f"{rng.getrandbits(4 * n):0{n}x}"


# --------------------------------------------------------------------------- slots

def _prev_ver(ver: str) -> str:
    major, minor, patch = ver[1:].split(".")
    if int(patch) > 0:
        return f"v{major}.{minor}.{int(patch) - 1}"
    return f"v{major}.{int(minor) - 1}.4"


def _jwt(r: random.Random, s: Slots) -> str:
    import base64

    payload = json.dumps(
        {"sub": f"usr_{rand_hex(r, 10)}", "scope": "read:orders", "iat": s.now // 1000,
         "exp": s.now // 1000 + 3600}, separators=(",", ":"),
    ).encode()
    body = base64.urlsafe_b64encode(payload).decode().rstrip("=")
    return f"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.{body}.{rand_str(r, _B64URL, 43)}"


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
    "rev": lambda r, s: rand_hex(r, 12),
    "prev_rev": lambda r, s: rand_hex(r, 12),
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
    "cust_id": lambda r, s: "cus_" + rand_str(r, ALNUM, 14),
    "chid": lambda r, s: rand_str(r, ALNUM, 14),
    "eng_id": lambda r, s: str(r.randint(1200, 9800)),
    "sha": lambda r, s: rand_hex(r, 7),
    "commit_msg": lambda r, s: r.choice((
        "Speed up test fixtures by sharing state", "Reuse fixtures across tests in a module",
        "Cache expensive setup between tests")),
    "size": lambda r, s: f"{r.uniform(12, 180):.1f}",
    "delta": lambda r, s: f"{r.uniform(0.1, 3.2):.1f}",
    "snap": lambda r, s: rand_hex(r, 8),
    "restore_n": lambda r, s: str(r.randint(900, 4000)),
    "open_tickets": lambda r, s: str(r.randint(9, 48)),
    "month_es": lambda r, s: r.choice(("octubre", "noviembre", "septiembre")),
    # fake secrets with the right shape
    "openai_key": lambda r, s: "sk-proj-" + rand_str(r, _B64URL, 64),
    "github_token": lambda r, s: "ghp_" + rand_str(r, ALNUM, 36),
    "jwt": _jwt,
    "pg_url": lambda r, s: (
        f"postgres://app:S3cr3tPass{rand_str(r, ALNUM, 6)}@{s['host']}:5432/{s['db']}"),
    "aws_key_id": lambda r, s: "AKIA" + rand_str(r, UPPER_NUM, 16),
    "aws_secret": lambda r, s: rand_str(r, _B64, 40),
}

_GROUP_OF = {key: name for name, (keys, _rows) in demo_text.GROUPS.items() for key in keys}


class Slots(dict):
    """Template values, generated on first use and then kept (coherent within a scenario)."""

    __slots__ = ("rng", "now")

    def __init__(self, rng: random.Random, now: int) -> None:
        super().__init__()
        self.rng = rng
        self.now = now

    def __missing__(self, key: str) -> str:
        group = _GROUP_OF.get(key)
        if group is not None:
            keys, rows = demo_text.GROUPS[group]
            row = pick(self.rng, rows)
            self.update(zip(keys, row))
            return self[key]
        pool = demo_text.SIMPLE.get(key)
        if pool is not None:
            value = pick(self.rng, pool)
        else:
            func = _FUNCS.get(key)
            if func is None:
                raise KeyError(key)
            value = func(self.rng, self)
        self[key] = value
        return value
