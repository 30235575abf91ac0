"""The demo corpus generator: deterministic, well-formed OpenClaw transcripts with every feature
the demo, the screenshots and the benchmarks rely on."""

from __future__ import annotations

import base64
import itertools
import json
import re
import string
import struct
import types
import zlib
from collections import Counter
from datetime import datetime

import pytest

from backscroll.core.demo import text as demo_text
from backscroll.core.demo.corpus import (
    DEFAULT_NOW_MS,
    DEMO_QUERIES,
    TINY_PNG_B64,
    DemoSession,
    generate,
)
from backscroll.core.demo.parts import Slots
from backscroll.core.keys import is_incognito, normalize_key

DAY = 86_400_000
INCOGNITO_RE = re.compile(
    r"^agent:[^:]+:(dashboard|subagent|internal-session-effects):incognito-[^:]+$")
HEX8 = re.compile(r"^[0-9a-f]{8}$")
CANONICAL = {"message", "thinking_level_change", "model_change", "compaction", "branch_summary",
             "custom", "custom_message", "label", "session_info"}


@pytest.fixture(scope="module")
def corpus() -> list[DemoSession]:
    return list(generate())


def _counted(session: DemoSession) -> int:
    return sum(
        1 for e in session.events
        if e["type"] == "message" and e["message"]["role"] in ("user", "assistant")
    )


def _texts(session: DemoSession, roles=("user", "assistant")) -> list[str]:
    out = []
    for e in session.events:
        if e["type"] == "message" and e["message"]["role"] in roles:
            out += [b["text"] for b in e["message"]["content"] if b["type"] == "text"]
    return out


def _active_path(events: tuple[dict, ...]) -> list[str]:
    """Active branch ids (leaf controls when present, else the last entry), root first."""
    parents: dict[str, str | None] = {}
    leaf = None
    for e in events[1:]:
        if e["type"] == "leaf":
            if e["targetId"] in parents:
                leaf = e["targetId"]
            continue
        parents[e["id"]] = e["parentId"]
        if e["type"] in CANONICAL and e.get("appendMode") != "side":
            leaf = e["id"]
    path = []
    while leaf is not None:
        path.append(leaf)
        leaf = parents[leaf]
    return path[::-1]


def _iso_ms(value: str) -> int:
    return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)


# ----------------------------------------------------------------------------- determinism

def _dump(sessions) -> list[str]:
    return [json.dumps([s.key, s.session_id, s.spawned_by, s.label, s.created_at, s.imported,
                        s.events], ensure_ascii=False) for s in sessions]


def test_same_seed_same_output(corpus: list[DemoSession]) -> None:
    assert _dump(generate()) == _dump(corpus)
    assert _dump(generate(seed=3, messages=800)) == _dump(generate(seed=3, messages=800))


def test_different_seed_different_output(corpus: list[DemoSession]) -> None:
    other = list(generate(seed=8))
    assert _dump(other) != _dump(corpus)
    assert {s.session_id for s in other}.isdisjoint({s.session_id for s in corpus})
    # the structure the demo relies on is the same whatever the seed
    assert {s.key for s in other if s.key.endswith(":main")} == {
        "agent:main:main", "agent:ops:main", "agent:research:main", "agent:support:main"}


def test_now_ms_moves_the_window() -> None:
    now = DEFAULT_NOW_MS - 100 * DAY
    for s in generate(messages=500, now_ms=now):
        assert now - 61 * DAY <= s.created_at <= now
        assert _iso_ms(s.events[-1]["timestamp"]) <= now


# ----------------------------------------------------------------------------- counts

@pytest.mark.parametrize("messages", [3000, 50_000])
def test_message_count_within_5_percent(messages: int) -> None:
    total = sum(_counted(s) for s in generate(messages=messages))
    assert abs(total - messages) <= messages * 0.05
    assert total == messages  # in practice: exact


def test_sessions_and_agents_arguments() -> None:
    sessions = list(generate(messages=20_000, sessions=300, agents=2))
    assert len(sessions) == 300
    assert {s.key.split(":")[1] for s in sessions} == {"main", "ops"}
    assert sum(map(_counted, sessions)) == 20_000
    one = list(generate(messages=5000, sessions=120, agents=1))
    assert len(one) == 120
    assert {s.key.split(":")[1] for s in one} == {"main"}


def test_tiny_corpus_still_well_formed() -> None:
    small = list(generate(messages=40, sessions=5))
    assert len(small) == 5
    for s in small:
        assert s.events[0]["type"] == "session"
        assert _counted(s) >= 2


def test_default_corpus_shape(corpus: list[DemoSession]) -> None:
    kinds = Counter(s.key.split(":")[2] for s in corpus)
    assert len(corpus) == 75
    assert {s.key for s in corpus if s.key.endswith(":main")} == {
        "agent:main:main", "agent:ops:main", "agent:research:main", "agent:support:main"}
    assert kinds["subagent"] >= 7 and kinds["cron"] >= 6
    keys = [s.key for s in corpus]
    assert len(set(keys)) == len(keys)
    assert all(normalize_key(k) == k for k in keys)
    assert any(re.match(r"^agent:main:telegram:group:\d+$", k) for k in keys)
    assert any(re.match(r"^agent:support:slack:channel:c0[a-z0-9]+$", k) for k in keys)
    crons = {s.key: s.label for s in corpus if ":cron:" in s.key}
    assert crons["agent:ops:cron:nightly-backup"] == "Cron: nightly backup"
    assert crons["agent:ops:cron:cert-expiry"] == "Cron: certificate expiry check"
    assert all(label and label.startswith("Cron: ") for label in crons.values())


# ----------------------------------------------------------------------------- entries

def test_headers_ids_and_parents(corpus: list[DemoSession]) -> None:
    for s in corpus:
        head = s.events[0]
        assert head == {"type": "session", "version": 3, "id": s.session_id,
                        "timestamp": head["timestamp"], "cwd": head["cwd"]}
        assert _iso_ms(head["timestamp"]) == s.created_at
        assert re.match(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
                        s.session_id)
        assert [e["type"] for e in s.events[1:4]] == ["model_change", "thinking_level_change",
                                                      "custom"]
        assert s.events[1]["parentId"] is None
        seen: set[str] = set()
        for e in s.events[1:]:
            assert e["type"] != "session"
            assert HEX8.match(e["id"]) and e["id"] not in seen
            if e is not s.events[1]:
                assert e["parentId"] in seen  # every parentId names an earlier entry
            seen.add(e["id"])


def test_timestamps_increase_within_the_window(corpus: list[DemoSession]) -> None:
    for s in corpus:
        assert DEFAULT_NOW_MS - 61 * DAY <= s.created_at < DEFAULT_NOW_MS
        entry_ms = [_iso_ms(e["timestamp"]) for e in s.events]
        assert entry_ms == sorted(entry_ms)
        assert entry_ms[-1] <= DEFAULT_NOW_MS
        msg_ms = [e["message"]["timestamp"] for e in s.events if e["type"] == "message"]
        assert all(a < b for a, b in zip(msg_ms, msg_ms[1:]))
        for e in s.events:
            if e["type"] == "message":
                assert 0 <= _iso_ms(e["timestamp"]) - e["message"]["timestamp"] < 1000
    spread = max(s.created_at for s in corpus) - min(s.created_at for s in corpus)
    assert spread > 50 * DAY


def test_message_shapes(corpus: list[DemoSession]) -> None:
    roles = Counter()
    blocks = Counter()
    for s in corpus:
        calls: dict[str, str] = {}
        for e in s.events:
            if e["type"] != "message":
                continue
            m = e["message"]
            roles[m["role"]] += 1
            assert isinstance(m["content"], list) and isinstance(m["timestamp"], int)
            for b in m["content"]:
                blocks[(m["role"], b["type"])] += 1
            if m["role"] == "user":
                assert m["content"][0]["type"] == "text" and m["content"][0]["text"]
            elif m["role"] == "assistant":
                assert m["stopReason"] in ("stop", "toolUse")
                assert m["usage"]["totalTokens"] == sum(
                    m["usage"][k] for k in ("input", "output", "cacheRead", "cacheWrite"))
                tools = [b for b in m["content"] if b["type"] == "toolCall"]
                assert (m["stopReason"] == "toolUse") == bool(tools)
                for b in tools:
                    assert isinstance(b["arguments"], dict)
                    calls[b["id"]] = b["name"]
            else:
                assert m["role"] == "toolResult"
                # a tool result answers the call right before it
                assert calls.pop(m["toolCallId"]) == m["toolName"]
                assert m["isError"] in (True, False)
                assert m["content"][0]["type"] == "text"
        assert not calls
    assert roles["toolResult"] > 300
    assert blocks[("assistant", "thinking")] > 20
    assert blocks[("user", "image")] >= 1
    exec_calls = [b for s in corpus for e in s.events if e["type"] == "message"
                  for b in e["message"]["content"] if b.get("name") == "exec"]
    assert exec_calls and all(set(b["arguments"]) == {"command"} for b in exec_calls)


def test_all_events_json_serializable(corpus: list[DemoSession]) -> None:
    for s in corpus:
        for e in s.events:
            line = json.dumps(e, ensure_ascii=False, separators=(",", ":"))
            assert "\n" not in line
            assert json.loads(line) == e


def test_image_block_is_a_valid_png(corpus: list[DemoSession]) -> None:
    raw = base64.b64decode(TINY_PNG_B64, validate=True)
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    pos, tags = 8, []
    while pos < len(raw):
        (length,) = struct.unpack(">I", raw[pos:pos + 4])
        tag, data = raw[pos + 4:pos + 8], raw[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", raw[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(tag + data) == crc
        tags.append(tag)
        pos += 12 + length
    assert tags == [b"IHDR", b"IDAT", b"IEND"]
    images = [b for s in corpus for e in s.events if e["type"] == "message"
              for b in e["message"]["content"] if b["type"] == "image"]
    assert images and all(b == {"type": "image", "data": TINY_PNG_B64, "mimeType": "image/png"}
                          for b in images)


# ----------------------------------------------------------------------------- branches

def test_rewound_branches(corpus: list[DemoSession]) -> None:
    rewound = 0
    for s in corpus:
        ids = [e.get("id") for e in s.events]
        leaves = [i for i, e in enumerate(s.events) if e["type"] == "leaf"]
        for i in leaves:
            leaf = s.events[i]
            assert leaf["targetId"] in ids[:i]  # an earlier, existing entry
            assert leaf["parentId"] == ids[i - 1]
            nxt = s.events[i + 1]
            assert nxt["parentId"] == leaf["targetId"]  # the new branch grows from the target
        if leaves:
            rewound += 1
            path = set(_active_path(s.events))
            for i in leaves:
                abandoned = [e for e in s.events[:i] if e["type"] == "message"
                             and e["parentId"] == s.events[i]["targetId"]]
                assert abandoned and all(e["id"] not in path for e in abandoned)
    assert rewound >= 2
    assert any(s.key == "agent:main:main" and any(e["type"] == "leaf" for e in s.events)
               for s in corpus)


def test_sibling_branch_without_leaf_control(corpus: list[DemoSession]) -> None:
    found = 0
    for s in corpus:
        if any(e["type"] == "leaf" for e in s.events):
            continue
        children = Counter(e["parentId"] for e in s.events[1:])
        forks = [pid for pid, n in children.items() if n > 1]
        if not forks:
            continue
        found += 1
        path = set(_active_path(s.events))
        assert s.events[-1]["id"] in path  # classic rule: last entry in file order is the leaf
        for pid in forks:
            siblings = [e for e in s.events[1:] if e["parentId"] == pid]
            assert sum(e["id"] in path for e in siblings) == 1
            off = [e for e in siblings if e["id"] not in path]
            assert off[0]["message"]["role"] == "assistant"
    assert found >= 1
    assert any(re.match(r"^agent:main:session-\d+$", s.key) for s in corpus)


def test_compaction_entries_point_into_the_path() -> None:
    sessions = list(itertools.islice(generate(messages=50_000), 10))
    compactions = 0
    for s in sessions:
        ids = set()
        for e in s.events[1:]:
            if e["type"] == "compaction":
                compactions += 1
                assert e["firstKeptEntryId"] in ids and e["summary"].startswith("## Goal")
            ids.add(e["id"])
    assert compactions >= 1


# ----------------------------------------------------------------------------- lineage

def _spawns(session: DemoSession) -> dict[str, tuple[int, int]]:
    """child key -> (index of the sessions_spawn call, of its result), from the transcript."""
    calls, out = {}, {}
    for i, e in enumerate(session.events):
        if e["type"] != "message":
            continue
        m = e["message"]
        for b in m["content"]:
            if b["type"] == "toolCall" and b["name"] == "sessions_spawn":
                assert b["arguments"]["task"] and b["arguments"]["label"]
                calls[b["id"]] = i
        if m["role"] == "toolResult" and m["toolName"] == "sessions_spawn":
            child = m["details"]["childSessionKey"]
            assert m["details"]["status"] == "accepted"
            assert json.loads(m["content"][0]["text"])["childSessionKey"] == child
            out[child] = (calls.pop(m["toolCallId"]), i)
    return out


def test_subagents_two_levels_deep(corpus: list[DemoSession]) -> None:
    by_key = {s.key: s for s in corpus}
    depth2 = 0
    for s in corpus:
        is_sub = ":subagent:" in s.key
        assert (s.spawned_by is not None) == is_sub
        assert s.parent_key == s.spawned_by
        if not is_sub:
            continue
        parent = by_key[s.spawned_by]  # the spawning session exists
        spawned = _spawns(parent)
        assert s.key in spawned
        spawn_ms = parent.events[spawned[s.key][1]]["message"]["timestamp"]
        assert s.created_at > spawn_ms
        first_user = next(e["message"] for e in s.events
                          if e["type"] == "message" and e["message"]["role"] == "user")
        assert first_user["provenance"] == {"kind": "inter_session", "sourceSessionKey": parent.key,
                                            "sourceChannel": "internal",
                                            "sourceTool": "sessions_spawn"}
        # the child's task is the one the parent handed over
        task = json.dumps(parent.events[spawned[s.key][0]]["message"]["content"][-1]["arguments"]
                          ["task"])
        assert json.dumps(first_user["content"][0]["text"]) == task
        if parent.spawned_by is not None:
            depth2 += 1
            assert ":subagent:" not in parent.spawned_by  # never deeper than two
    assert depth2 >= 3
    # every spawn recorded in a transcript names a generated session
    for s in corpus:
        for child in _spawns(s):
            assert by_key[child].spawned_by == s.key
    spawners = {s.spawned_by for s in corpus}
    assert any(s.key in spawners for s in corpus if s.spawned_by == "agent:main:main")


def test_incognito_sessions(corpus: list[DemoSession]) -> None:
    incognito = [s.key for s in corpus if "incognito" in s.key]
    assert len(incognito) >= 2
    assert all(INCOGNITO_RE.match(k) and is_incognito(k) for k in incognito)
    assert any(":dashboard:incognito-" in k for k in incognito)
    assert any(":subagent:incognito-" in k for k in incognito)


def test_some_sessions_imported(corpus: list[DemoSession]) -> None:
    imported = [s for s in corpus if s.imported]
    assert 0.10 <= len(imported) / len(corpus) <= 0.15
    assert not any(s.key.endswith(":main") for s in imported)


# ----------------------------------------------------------------------------- content

def test_secrets_present(corpus: list[DemoSession]) -> None:
    text = "\n".join(t for s in corpus for t in _texts(s, ("user",)))
    assert re.search(r"OPENAI_API_KEY=sk-proj-[A-Za-z0-9_-]{40,}", text)
    assert re.search(r"\bghp_[A-Za-z0-9]{36}\b", text)
    assert re.search(r"Authorization: Bearer eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
                     text)
    assert re.search(r"postgres://app:S3cr3tPass\w*@[\w.-]+:5432/\w+", text)
    assert re.search(r"\bAKIA[A-Z0-9]{16}\b", text)
    # random-looking, and different per seed
    other = "\n".join(t for s in generate(seed=8) for t in _texts(s, ("user",)))
    key = re.search(r"sk-proj-[A-Za-z0-9_-]+", text).group()
    assert key not in other and re.search(r"sk-proj-[A-Za-z0-9_-]+", other)


def test_accents_and_cjk_present(corpus: list[DemoSession]) -> None:
    text = "\n".join(t for s in corpus for t in _texts(s))
    for word in ("café", "résumé", "déploiement", "anstoßen", "Überwachung", "Đà Nẵng",
                 "¿Hay algo más", "Größe"):
        assert word in text, word
    assert re.search(r"[\u4e00-\u9fff]{4}", text)  # Chinese (and kanji)
    assert re.search(r"[\u3040-\u309f\u30a0-\u30ff]{3}", text)  # Japanese kana
    assert re.search(r"[\uac00-\ud7af]{3}", text)  # Korean hangul
    fr = [s for s in corpus if any("déploiement" in t for t in _texts(s))]
    assert fr and fr[0].key.startswith("agent:support:")


def test_demo_queries_find_several_sessions(corpus: list[DemoSession]) -> None:
    def hits(query: str) -> int:
        q = query.casefold()
        return sum(1 for s in corpus if any(q in t.casefold() for t in _texts(s)))

    assert len(DEMO_QUERIES) >= 5
    for query in ("connection pool exhausted", "rollback", "certificate", "migration",
                  "flaky test"):
        assert query in DEMO_QUERIES
        assert hits(query) >= 3, query
    for query in DEMO_QUERIES:
        assert hits(query) >= 1, query


def test_every_template_fills() -> None:
    """Each placeholder in the text pools has a value (no KeyError at 1M messages)."""
    templates: list[str] = []
    beats = [b for scenario in demo_text.SCENARIOS.values() for b in scenario]
    beats += list(demo_text.SECRET_BEATS.values()) + list(demo_text.ABANDONED) + [demo_text.IMAGE_BEAT]
    beats += [job[3] for job in demo_text.CRON_JOBS.values()]
    for b in beats:
        templates += list(b.user) + list(b.reply) + list(b.think)
        for step in b.steps:
            templates += list(step.result) + list(step.pre) + [v for _, v in step.args]
    templates += [task[1] for task in demo_text.SUBTASKS.values()] + [demo_text.COMPACTION_SUMMARY]
    import random

    for template in templates:
        slots = Slots(random.Random(1), DEFAULT_NOW_MS)
        slots["task"] = "task"
        template.format_map(slots)
        for _, field, _, _ in string.Formatter().parse(template):
            assert field is None or field in slots
    for name, (_label, _task, scenario, grandchildren) in demo_text.SUBTASKS.items():
        assert scenario in demo_text.SCENARIOS
        assert all(g in demo_text.SUBTASKS and not demo_text.SUBTASKS[g][3] for g in grandchildren), name
    for pool in list(demo_text.POOLS.values()) + list(demo_text.LANG_POOLS.values()):
        assert all(name in demo_text.SCENARIOS for name in pool)


# ----------------------------------------------------------------------------- scale

def test_million_message_setting_streams() -> None:
    stream = generate(messages=1_000_000, sessions=10_000, agents=1)
    assert isinstance(stream, types.GeneratorType)  # nothing generated yet
    first = list(itertools.islice(stream, 100))
    assert len(first) == 100
    assert all(isinstance(s, DemoSession) and s.key.startswith("agent:main:") for s in first)
    # ~100 messages per session on average: the first sessions alone are not everything
    assert 2_000 < sum(map(_counted, first)) < 200_000
    nxt = next(stream)
    assert nxt.key not in {s.key for s in first}
    stream.close()
