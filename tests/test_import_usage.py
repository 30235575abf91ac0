"""Every importer puts the model and the token usage of each API response on the assistant
message in OpenClaw's shape (``core/importers/usage.py``), once per response, leaving out
what its format does not record. The tests of each format's fields sit with the format's
converter input here; the real samples are used where they hold usage."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from backscroll.core.importers.aider import import_aider
from backscroll.core.importers.aider import usages_in_output as aider_usages
from backscroll.core.importers.claude_code import import_claude_code
from backscroll.core.importers.claude_code.follow import follow_transcript
from backscroll.core.importers.cline import import_tasks
from backscroll.core.importers.codex import import_codex
from backscroll.core.importers.codex.follow import follow_rollout
from backscroll.core.importers.common import ImportReport
from backscroll.core.importers.copilot import import_copilot
from backscroll.core.importers.gemini import import_gemini
from backscroll.core.importers.openclaw import import_openclaw
from backscroll.core.importers.pi import import_pi
from backscroll.core.importers.qwen_code import import_qwen_code
from backscroll.core.importers.usage import count, increment, minus, openclaw_usage, plus
from backscroll.core.state import StateDir

TOKENS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")


def assistant_usages(state: StateDir, agent: str, key: str | None = None
                     ) -> list[dict[str, Any]]:
    """The ``message`` of every stored assistant message of ``agent`` (of session ``key``)
    that carries usage."""
    out = []
    with state.open(agent) as db:
        for session in db.sessions():
            if key is not None and session.key != key:
                continue
            for _, event in db.events(session.pk):
                message = event.get("message") or {}
                if event["type"] == "message" and "usage" in message:
                    assert message["role"] == "assistant", event
                    out.append(message)
    return out


def summed(messages: list[dict[str, Any]]) -> Counter:
    total: Counter = Counter()
    for message in messages:
        usage = message["usage"]
        total.update({k: usage[k] for k in TOKENS if k in usage})
        total.update({f"cost.{k}": v for k, v in (usage.get("cost") or {}).items()})
    return total


# ------------------------------------------------------------------ the shape


def test_usage_keeps_only_what_is_recorded() -> None:
    assert openclaw_usage() is None
    assert openclaw_usage(input="12", output=None, cost=float("nan")) is None
    assert openclaw_usage(input=10, output=5) == {"input": 10, "output": 5, "totalTokens": 15}
    assert openclaw_usage(input=10, output=5, cache_read=100, total=200) == {
        "input": 10, "output": 5, "cacheRead": 100, "totalTokens": 200}
    assert openclaw_usage(cost=0.25) == {"cost": {"total": 0.25}}
    assert openclaw_usage(output=3, cost_input=0.5, cost_output=0.25) == {
        "output": 3, "totalTokens": 3, "cost": {"input": 0.5, "output": 0.25, "total": 0.75}}
    # negative, fractional, boolean counts are not counts; 7.0 written by JavaScript is 7
    assert openclaw_usage(input=-1, output=2.5, cache_read=True, cache_write=7.0) == {
        "cacheWrite": 7, "totalTokens": 7}
    assert minus(100, 30) == 70 and minus(100, None) == 100 and minus(None, 30) is None
    assert minus(10, 30) == 0
    assert plus(None, "x") is None and plus(4, None, 6) == 10


counts = st.one_of(st.none(), st.integers(0, 10**9), st.integers(-5, -1), st.text(max_size=2),
                   st.floats(allow_nan=True), st.booleans())


@given(counts, counts, counts, counts, counts, counts)
def test_usage_is_always_numbers_and_totals_add_up(i, o, r, w, t, c) -> None:
    usage = openclaw_usage(input=i, output=o, cache_read=r, cache_write=w, total=t, cost=c)
    if usage is None:
        return
    for key, value in usage.items():
        if key == "cost":
            assert all(isinstance(v, (int, float)) and v >= 0 for v in value.values())
        else:
            assert key in TOKENS and isinstance(value, int) and not isinstance(value, bool)
            assert value >= 0
    if count(t) is None and "totalTokens" in usage:
        assert usage["totalTokens"] == sum(usage.get(k, 0) for k in TOKENS[:4])


snapshots = st.lists(st.fixed_dictionaries({"input": st.integers(0, 50),
                                            "output": st.integers(0, 500)}), min_size=1,
                     max_size=6)


@given(snapshots)
def test_increments_of_growing_snapshots_sum_to_the_last(lines) -> None:
    grown = []  # each line's usage so far, never smaller than the line before (streaming)
    for line in lines:
        before = grown[-1] if grown else {"input": 0, "output": 0}
        grown.append({k: max(v, before[k]) for k, v in line.items()})
    total: Counter = Counter()
    before = None
    for now in grown:
        added = increment(now, before)
        if added is not None:
            total.update(added)
        before = now
    assert {k: total[k] for k in grown[-1]} == grown[-1]


# ------------------------------------------------------------------ Claude Code

CC_MAIN = "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"


def claude_responses(file: Path) -> dict[str, dict[str, int]]:
    """message id -> the usage its last line records (the whole response's)."""
    out: dict[str, dict[str, int]] = {}
    for line in file.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record.get("message") if record.get("type") == "assistant" else None
        if isinstance(message, dict) and isinstance(message.get("usage"), dict):
            u = message["usage"]
            out[message["id"]] = {"input": u["input_tokens"], "output": u["output_tokens"],
                                  "cacheRead": u["cache_read_input_tokens"],
                                  "cacheWrite": u["cache_creation_input_tokens"]}
    return out


def test_claude_code_split_response_counts_once(tmp_path: Path, data_dir: Path) -> None:
    folder = tmp_path / "projects" / "p"
    folder.mkdir(parents=True)
    shutil.copy(data_dir / "claude-code" / CC_MAIN, folder / CC_MAIN)
    state = StateDir(tmp_path / "state", database_url="")
    import_claude_code(state, folder)
    responses = claude_responses(folder / CC_MAIN)
    assert len(responses) == 217  # over 408 assistant lines
    main = "agent:claude-code:claude-code:" + CC_MAIN.removesuffix(".jsonl")
    messages = assistant_usages(state, "claude-code", main)  # not the sub-agent rebuilt
    expected: Counter = Counter()
    for usage in responses.values():
        expected.update(usage)
    got = summed(messages)
    assert {k: got[k] for k in expected} == dict(expected)
    assert got["totalTokens"] == sum(expected.values())
    assert not any("cost" in m["usage"] for m in messages)  # Claude Code records no cost
    # the split: the first line of msg_01AjAt… carries the input and the output so far, the
    # last one only the output written since; the lines between add nothing
    split = [m for m in messages if m["responseId"] == "msg_01AjAtmphJjr4oSLfTyzk8LA"]
    assert [m["usage"] for m in split] == [
        {"input": 3, "output": 9, "cacheRead": 17842, "cacheWrite": 8165, "totalTokens": 26019},
        {"input": 0, "output": 200, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 200},
    ]
    assert {m["model"] for m in messages} == {"claude-opus-4-6", "claude-haiku-4-5-20251001"}
    assert {m["provider"] for m in messages} == {"anthropic"}


def usage_by_entry(state: StateDir, agent: str) -> dict[str, dict[str, Any]]:
    with state.open(agent) as db:
        return {event["id"]: event["message"]["usage"]
                for session in db.sessions() for _, event in db.events(session.pk)
                if "usage" in (event.get("message") or {})}


def test_claude_code_response_split_between_two_reads_counts_once(
    tmp_path: Path, data_dir: Path
) -> None:
    """A sync that reads the file while a response is being written, then reads on: each
    entry is the one a whole read makes, so the response counts once."""
    lines = (data_dir / "claude-code" / CC_MAIN).read_bytes().splitlines(keepends=True)[:66]
    numbered = list(enumerate(lines, start=1))

    def synced(name: str, *reads: slice) -> dict[str, dict[str, Any]]:
        state = StateDir(tmp_path / name / "state", database_url="")
        file = tmp_path / name / CC_MAIN
        file.parent.mkdir()
        file.write_bytes(b"".join(lines))
        carry = None
        with state.open("claude-code", write=True) as db:
            for part in reads:
                carry = follow_transcript(db, "claude-code", file, numbered[part], carry,
                                          ImportReport(), {}).carry
        return usage_by_entry(state, "claude-code")

    whole = synced("whole", slice(None))
    outputs = {r["message"]["id"]: r["message"]["usage"]["output_tokens"]
               for r in map(json.loads, lines) if r.get("type") == "assistant"}
    assert sum(u["output"] for u in whole.values()) == sum(outputs.values())
    for cut in (8, 10, 44, 61):  # inside msg_01AjAt… (lines 8-15) and msg_01Cwyj… (44-65)
        assert synced(f"cut{cut}", slice(None, cut), slice(cut, None)) == whole, cut


# ------------------------------------------------------------------ Codex

ROLLOUT = "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
CODEX_SID = "0a1b2c3d-0000-4000-8000-00000000c0de"


def test_codex_each_response_once(tmp_path: Path, data_dir: Path) -> None:
    state = StateDir(tmp_path / "state", database_url="")
    import_codex(state, data_dir / "codex" / ROLLOUT)
    records = [json.loads(line) for line in (data_dir / "codex" / ROLLOUT).open()]
    counts = [r["payload"]["info"] for r in records
              if r["type"] == "event_msg" and r["payload"].get("type") == "token_count"]
    total = counts[-1]["total_token_usage"]
    messages = assistant_usages(state, "codex")
    assert len(messages) == len(counts) == 66
    assert all(m["content"] == [] for m in messages)  # each an entry of its own
    assert summed(messages) == {
        "input": total["input_tokens"] - total["cached_input_tokens"],
        "cacheRead": total["cached_input_tokens"], "output": total["output_tokens"],
        "totalTokens": total["total_tokens"]}
    assert {(m["model"], m["provider"]) for m in messages} == {("gpt-5.5", "openai")}
    assert not any("cacheWrite" in m["usage"] or "cost" in m["usage"] for m in messages)


def codex_lines() -> list[dict[str, Any]]:
    def line(second: int, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": f"2026-06-01T09:00:{second:02d}.000Z", "type": kind,
                "payload": payload}

    def tokens(n: int, total: int) -> dict[str, Any]:
        last = {"input_tokens": 1000 * n, "cached_input_tokens": 400 * n,
                "output_tokens": 10 * n, "reasoning_output_tokens": n,
                "total_tokens": 1010 * n}
        return line(n + 10, "event_msg", {"type": "token_count", "info": {
            "total_token_usage": {"total_tokens": total}, "last_token_usage": last}})

    return [
        line(0, "session_meta", {"id": CODEX_SID, "timestamp": "2026-06-01T09:00:00.000Z",
                                 "cwd": "/home/dev/shop", "model_provider": "openai"}),
        line(1, "turn_context", {"model": "gpt-5.2-codex", "cwd": "/home/dev/shop"}),
        line(1, "event_msg", {"type": "token_count", "info": None, "rate_limits": {}}),
        line(2, "event_msg", {"type": "user_message", "message": "rename the gazebo"}),
        line(3, "response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                                  "arguments": "{\"command\": [\"ls\"]}"}),
        tokens(1, 1010),
        line(4, "response_item", {"type": "function_call_output", "call_id": "c1",
                                  "output": "gazebo.py"}),
        line(5, "response_item", {"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text", "text": "Renamed."}]}),
        tokens(2, 3030),
        tokens(2, 3030),  # the same count again: no second response
    ]


def test_codex_usage_entries_do_not_depend_on_where_reads_fall(tmp_path: Path) -> None:
    """A sync that reads the rollout between a response's last item and its ``token_count``
    stores what one import stores: the usage is an entry of its own, made from its line."""
    file = tmp_path / f"rollout-2026-06-01T09-00-00-{CODEX_SID}.jsonl"
    lines = [json.dumps(r).encode() + b"\n" for r in codex_lines()]
    file.write_bytes(b"".join(lines))
    numbered = list(enumerate(lines, start=1))
    found = {}
    for cut in (None, 5, 6, 8, 9):
        state = StateDir(tmp_path / f"cut{cut}", database_url="")
        carry = None
        with state.open("codex", write=True) as db:
            for part in ((slice(None),) if cut is None else (slice(None, cut), slice(cut, None))):
                carry = follow_rollout(db, "codex", file, numbered[part], carry,
                                       ImportReport()).carry
        messages = assistant_usages(state, "codex")
        assert summed(messages) == {"input": 1800, "cacheRead": 1200, "output": 30,
                                    "totalTokens": 3030}, cut
        assert [m["usage"]["output"] for m in messages] == [10, 20]  # the repeat: not again
        assert {m["model"] for m in messages} == {"gpt-5.2-codex"}
        found[cut] = usage_by_entry(state, "codex")
    assert all(entries == found[None] for entries in found.values())


# ------------------------------------------------------------------ Gemini CLI

GEMINI_CHATS = "agents/gemini-cli/home/.gemini/tmp"


def gemini_tokens(file: Path) -> dict[str, dict[str, int]]:
    """message id -> its tokens (the first copy that has them: the CLI sets them once)."""
    text = file.read_text(encoding="utf-8")
    records = ([json.loads(line) for line in text.splitlines() if line.strip()]
               if file.suffix == ".jsonl" else json.loads(text)["messages"])
    out: dict[str, dict[str, int]] = {}
    for record in records:
        if record.get("type") == "gemini" and isinstance(record.get("tokens"), dict):
            out.setdefault(record["id"], record["tokens"])
    return out


def test_gemini_each_message_tokens_once(tmp_path: Path, data_dir: Path) -> None:
    state = StateDir(tmp_path / "state", database_url="")
    import_gemini(state, data_dir / GEMINI_CHATS)
    files = sorted((data_dir / GEMINI_CHATS).glob("*/chats/session-*"))
    tokens = [t for f in files for t in gemini_tokens(f).values()]
    assert len(tokens) == 6 + 3
    messages = assistant_usages(state, "gemini")
    assert len(messages) == len(tokens)
    assert all(m["content"] == [] and m["provider"] == "google" and m["model"]
               for m in messages)
    assert summed(messages) == {
        "input": sum(t["input"] - t["cached"] + t["tool"] for t in tokens),
        "cacheRead": sum(t["cached"] for t in tokens),
        "output": sum(t["output"] + t["thoughts"] for t in tokens),
        "totalTokens": sum(t["total"] for t in tokens)}
    # Gemini's total is the prompt (cache included), the answer, the thoughts and tool use
    assert summed(messages)["totalTokens"] == sum(
        summed([m])[k] for m in messages for k in ("input", "cacheRead", "output"))


# ------------------------------------------------------------------ Cline and Roo Code

CLINE_TASKS = ("agents/cline/home/.config/Code/User/globalStorage/saoudrizwan.claude-dev/"
               "tasks")


def test_cline_history_metrics_and_ui_requests(tmp_path: Path, data_dir: Path) -> None:
    """A task's api history: each assistant message's ``metrics``; a task read from its UI
    messages: each answered ``api_req_started``, as an empty assistant message."""
    state = StateDir(tmp_path / "state", database_url="")
    tasks = data_dir / CLINE_TASKS
    import_tasks(state, tasks)
    history = json.loads((tasks / "1777073160794" / "api_conversation_history.json").read_text())
    metrics = [m["metrics"] for m in history if m["role"] == "assistant"]
    ui = json.loads((tasks / "1767644899093" / "ui_messages.json").read_text())
    requests = [json.loads(m["text"]) for m in ui if m.get("say") == "api_req_started"]
    requests = [r for r in requests if "tokensIn" in r]
    with state.open("cline") as db:
        by_task = {s.session_id: [e["message"] for _, e in db.events(s.pk)
                                  if "usage" in e.get("message", {})] for s in db.sessions()}
    answers, calls = by_task["1777073160794"], by_task["1767644899093"]
    assert len(answers) == len(metrics) == 221 and all(m["content"] for m in answers)
    assert summed(answers) == {
        "input": sum(m["tokens"]["prompt"] - m["tokens"]["cached"] for m in metrics),
        "output": sum(m["tokens"]["completion"] for m in metrics),
        "cacheRead": sum(m["tokens"]["cached"] for m in metrics),
        "totalTokens": sum(m["tokens"]["prompt"] + m["tokens"]["completion"]
                           for m in metrics)}
    assert {m["model"] for m in answers} == {"claude_4_5_opus"}
    assert len(calls) == len(requests) and all(m["content"] == [] for m in calls)
    got = summed(calls)
    assert (got["input"], got["output"], got["cacheRead"], got["cacheWrite"], got["cost.total"]
            ) == tuple(sum(r[k] for r in requests)
                       for k in ("tokensIn", "tokensOut", "cacheReads", "cacheWrites", "cost"))
    assert all("cost" in m["usage"] for m in calls)  # recorded (0 here), so kept


# ------------------------------------------------------------------ OpenClaw's own lineage


def file_usages(files: list[Path]) -> list[dict[str, Any]]:
    out = []
    for file in files:
        for line in file.read_text(encoding="utf-8").splitlines():
            message = json.loads(line).get("message") if line.strip() else None
            if isinstance(message, dict) and "usage" in message:
                out.append(message["usage"])
    return out


def test_pi_omp_and_openclaw_keep_the_usage_they_write(tmp_path: Path, data_dir: Path) -> None:
    """These formats write OpenClaw's shape already: every message's usage is stored as is."""
    state = StateDir(tmp_path / "state", database_url="")
    pi = data_dir / "agents/pi/home/.pi/agent/sessions"
    omp = data_dir / "agents/omp/home/.omp/agent/sessions"
    import_pi(state, pi)
    import_pi(state, omp, source="omp")
    for agent, folder in (("pi", pi), ("omp", omp)):
        stored = [m["usage"] for m in assistant_usages(state, agent)]
        written = file_usages(sorted(folder.rglob("*.jsonl")))
        assert len(written) > 400
        assert sorted(map(json.dumps, stored)) == sorted(map(json.dumps, written)), agent
    openclaw = data_dir / "openclaw" / "chairong"
    import_openclaw(state, openclaw, agent="claw")
    stored = [m["usage"] for m in assistant_usages(state, "claw")]
    assert sorted(map(json.dumps, stored)) == sorted(
        map(json.dumps, file_usages(sorted(openclaw.glob("*.jsonl")))))
    assert stored and all("cost" in u and "totalTokens" in u for u in stored)


# ------------------------------------------------------------------ Qwen Code


def test_qwen_code_usage_metadata(tmp_path: Path, data_dir: Path) -> None:
    """The real sample (an OpenAI-style call: the thoughts inside the candidates), and a
    Gemini call (the thoughts beside them, in the total); the telemetry line of the same call
    is not counted again."""
    home = tmp_path / "home"
    shutil.copytree(data_dir / "agents/qwen-code/home/.qwen", home / ".qwen")
    [chat] = (home / ".qwen").rglob("*.jsonl")
    with chat.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({
            "uuid": "g9", "parentUuid": "u3", "sessionId": chat.stem, "type": "assistant",
            "timestamp": "2026-05-05T11:09:00.000Z", "model": "gemini-2.5-pro",
            "message": {"role": "model", "parts": [{"text": "done"}]},
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 5,
                              "thoughtsTokenCount": 20, "totalTokenCount": 125,
                              "cachedContentTokenCount": 60}}) + "\n")
    state = StateDir(tmp_path / "state", database_url="")
    import_qwen_code(state, home / ".qwen")
    usages = [(m["model"], m["usage"]) for m in assistant_usages(state, "qwen-code")]
    assert usages == [
        ("cleanunicorn/qwen3-coder-30b-a3b-instruct",
         {"input": 17997, "output": 47, "cacheRead": 12, "totalTokens": 18056}),
        ("gemini-2.5-pro", {"input": 40, "output": 25, "cacheRead": 60, "totalTokens": 125}),
    ]


# ------------------------------------------------------------------ GitHub Copilot CLI


def test_copilot_output_per_answer_and_input_per_run(tmp_path: Path, data_dir: Path) -> None:
    state = StateDir(tmp_path / "state", database_url="")
    import_copilot(state, data_dir / "agents/copilot-cli/home/.copilot/session-state")
    [events] = (data_dir / "agents/copilot-cli/home/.copilot/session-state").glob("*/events.jsonl")
    records = [json.loads(line) for line in events.read_text().splitlines()]
    outputs = [r["data"]["outputTokens"] for r in records if r["type"] == "assistant.message"]
    [shutdown] = [r["data"] for r in records if r["type"] == "session.shutdown"]
    messages = assistant_usages(state, "copilot")
    answers = [m for m in messages if m["content"]]
    assert [m["usage"] for m in answers] == [{"output": n, "totalTokens": n} for n in outputs]
    [run] = [m for m in messages if not m["content"]]
    metric = shutdown["modelMetrics"]["claude-sonnet-4.6"]["usage"]
    assert run["model"] == "claude-sonnet-4.6"
    assert run["usage"] == {"input": metric["inputTokens"] - metric["cacheReadTokens"],
                            "cacheRead": metric["cacheReadTokens"], "cacheWrite": 0,
                            "totalTokens": metric["inputTokens"]}
    assert sum(outputs) == metric["outputTokens"]  # so the run's output is not added again


# ------------------------------------------------------------------ Aider

AIDER_TOKENS = re.compile(r"^> Tokens: (\S+) sent, (\S+) received\.(?:\s+Cost: \$(\S+) message)?",
                          re.M)


def aider_count(printed: str) -> int:
    return round(float(printed[:-1]) * 1000) if printed.endswith("k") else int(printed)


def test_aider_tokens_lines(tmp_path: Path, data_dir: Path) -> None:
    """Each ``> Tokens:`` line (one model call, counts rounded as aider prints them) is an
    empty assistant message; a cost is kept when the line has one."""
    state = StateDir(tmp_path / "state", database_url="")
    folder = data_dir / "agents/aider/home/code/Simple-Calulator"
    import_aider(state, folder)
    lines = AIDER_TOKENS.findall((folder / ".aider.chat.history.md").read_text())
    assert len(lines) == 20
    messages = assistant_usages(state, "aider")
    assert all(m["content"] == [] for m in messages)
    assert [(m["usage"]["input"], m["usage"]["output"], m["usage"].get("cost"))
            for m in messages] == [
        (aider_count(sent), aider_count(received), {"total": float(cost)} if cost else None)
        for sent, received, cost in lines]


def test_aider_cache_counts() -> None:
    assert aider_usages("Tokens: 12k sent, 1.0k cache write, 9.5k cache hit, 222 received.  "
                   "Cost: $0.01 message, $0.05 session.") == [
        {"input": 1500, "output": 222, "cacheRead": 9500, "cacheWrite": 1000,
         "totalTokens": 12222, "cost": {"total": 0.01}}]
    assert aider_usages("Tokens: lots sent") == []
