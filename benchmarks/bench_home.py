"""A fake home holding every format at realistic sizes, synced as whole processes (not a test).

Builds (or reuses, under ``--cache``) a home where each format's files sit in that format's
real layout, made by the tests' and the other benchmarks' own builders (imported, not copied):
a ~600 MB OpenCode ``opencode.db`` in WAL mode, ~3,000 Claude Code files, hundreds of Codex
rollouts, OpenClaw agents, and some hundred MB across the other formats; ``--scale`` shrinks
everything (``--scale 0.1`` for a quick run). Then, with ``HOME`` pointed at it and a fresh
state dir, as whole processes (``python -m backscroll.tui.cli sync --json``):

- the first sync: wall time, messages/s, the child's peak RSS; then the index is finished
  in-process (``reconcile_all``) and timed;
- a no-change sync of the whole home, p50 / p95 over ``--runs`` (the goal: at most 1 s);
- ``backscroll watch`` latency, p50 / p95 over ``--runs``, for each kind of source: a
  message with a unique word appended to a Claude Code file (JSONL), added to a Cline task
  (a whole file, rewritten) and inserted into ``opencode.db`` from a writer connection
  (SQLite, WAL), each timed from the write until ``sessions_search`` (polled every 5 ms)
  finds it;
- what each format's scan costs in a no-change sync (in-process, that format's sources
  only), to say where the second goes;

against a baseline run in the same minute: ``rg -c WORD`` over the home (a Python grep when
ripgrep is missing). The machine's load is printed before and after. Every child has a
timeout. A format of the registry with no generator in ``GENERATORS`` is listed as "not in this
run"; adding one is one small function and one line in that table (a format read only from
a folder a person adds, Aider, also names its folder in ``CONFIGURED``). A format's session
store (OpenClaw's SQLite store) has its own generator, under its store kind.

    .venv/bin/python benchmarks/bench_home.py [--scale 1] [--runs 10] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backscroll.core import formats  # noqa: E402
from backscroll.core.reconcile import reconcile_all  # noqa: E402
from backscroll.core.sources import add_source, all_sources, sync_sources  # noqa: E402
from backscroll.core.state import StateDir  # noqa: E402
from benchmarks.measure import CLI, p50_p95, wait_found  # noqa: E402

DATA = Path("/work/shared/data")
SYNC_TIMEOUT = 3600  # the first sync of a full-size home on a slow machine
QUIET_TIMEOUT = 120
FOUND_TIMEOUT = 30.0


def n_of(count: float, scale: float) -> int:
    return max(1, round(count * scale))


def new_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def copies(template: Path, old_id: str, n: int, where: Callable[[str], Path],
           rng: random.Random) -> int:
    """``n`` copies of ``template``, each with its session id ``old_id`` replaced by a new one
    (in its name and in its lines), at ``where(new_id)``; the bytes written."""
    body = template.read_bytes()
    written = 0
    for _ in range(n):
        sid = new_uuid(rng)
        path = where(sid)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body.replace(old_id.encode(), sid.encode()))
        written += len(body)
    return written


def first_value(path: Path, key: str) -> str:
    for line in path.read_text().splitlines():
        value = json.loads(line).get(key) if line.strip() else None
        if isinstance(value, str):
            return value
    raise ValueError(f"{path}: no {key}")


# --------------------------------------------------------------------- one generator a format
# Each takes (home, scale, rng) and returns the bytes it wrote. They import their builders
# when called: a format whose test or sample is missing is "not in this run", not a crash.


def gen_claude_code(home: Path, scale: float, rng: random.Random) -> int:
    """~3,000 session files in ~60 project folders, from the real samples (fakehome's):
    half short, a third tool-heavy, some with subagents, 1 % the 2.7 MB one."""
    from tests.fakehome import CC_MAIN
    samples = DATA / "claude-code"
    mix = [("short.jsonl", 0.5), ("tool_heavy.jsonl", 0.35), ("subagent.jsonl", 0.14),
           (f"{CC_MAIN}.jsonl", 0.01)]
    written, total = 0, n_of(3000, scale)
    root = home / ".claude" / "projects"
    for name, share in mix:
        template = samples / name
        old = first_value(template, "sessionId")
        written += copies(template, old, n_of(total * share, 1), lambda sid: root / (
            f"-home-me-project{rng.randrange(n_of(60, scale))}") / f"{sid}.jsonl", rng)
    return written


def gen_codex(home: Path, scale: float, rng: random.Random) -> int:
    """Hundreds of rollouts (the real 750 KB sample) in ``sessions/YYYY/MM/DD``."""
    from tests.fakehome import ROLLOUT
    old = ROLLOUT.removesuffix(".jsonl").split("-", 6)[-1]
    return copies(DATA / "codex" / ROLLOUT, old, n_of(200, scale), lambda sid: (
        home / ".codex" / "sessions" / "2026" / f"{rng.randrange(1, 13):02d}"
        / f"{rng.randrange(1, 29):02d}" / f"rollout-2026-05-11T11-26-55-{sid}.jsonl"), rng)


def gen_openclaw(home: Path, scale: float, rng: random.Random) -> int:
    """The two real agents' session folders (with their ``sessions.json``), as many agents."""
    written = 0
    for i in range(n_of(20, scale)):
        for name in ("chairong", "reinforcementsleeping_main"):
            target = home / ".openclaw" / "agents" / f"{name}{i}" / "sessions"
            shutil.copytree(DATA / "openclaw" / name, target)
            written += sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    return written


def _pi_like(home: Path, scale: float, rng: random.Random, which: str) -> int:
    from tests import test_import_pi as pi
    template, old = (pi.PI_FILE, pi.PI_ID) if which == "pi" else (pi.OMP_FILE, pi.OMP_ID)
    folder = home / f".{which}" / "agent" / "sessions" / pi.PROJECT
    stamp = template.name.split("_")[0]
    return copies(template, old, n_of(60, scale), lambda sid: folder / f"{stamp}_{sid}.jsonl",
                  rng)


def gen_pi(home: Path, scale: float, rng: random.Random) -> int:
    return _pi_like(home, scale, rng, "pi")


def gen_omp(home: Path, scale: float, rng: random.Random) -> int:
    return _pi_like(home, scale, rng, "omp")


def _opencode_db(path: Path, mb: float) -> int:
    from benchmarks.bench_opencode import build
    from tests.test_import_opencode import Agent
    agent = Agent(path)
    build(agent, max(1, round(mb)))
    agent.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    agent.conn.close()
    return path.stat().st_size


def gen_opencode(home: Path, scale: float, rng: random.Random) -> int:
    """``opencode.db`` of ~600 MB (bench_opencode's sessions of 40 messages)."""
    return _opencode_db(home / ".local/share/opencode/opencode.db", 600 * scale)


def gen_kilo(home: Path, scale: float, rng: random.Random) -> int:
    return _opencode_db(home / ".local/share/kilo/kilo.db", 30 * scale)


def gen_gemini(home: Path, scale: float, rng: random.Random) -> int:
    """Upsert logs (bench_gemini_copilot's, each answer written twice) in project folders."""
    from benchmarks.bench_gemini_copilot import SID, _gemini
    with tempfile.TemporaryDirectory() as tmp:
        template = _gemini(Path(tmp), 300)
        return copies(template, SID, n_of(60, scale), lambda sid: (
            home / ".gemini" / "tmp" / f"proj{rng.randrange(8)}" / "chats"
            / f"session-2026-05-01T10-00-{sid[:8]}.jsonl"), rng)


def gen_copilot(home: Path, scale: float, rng: random.Random) -> int:
    from benchmarks.bench_gemini_copilot import SID, _copilot
    with tempfile.TemporaryDirectory() as tmp:
        template = _copilot(Path(tmp) / "s", 300)
        return copies(template, SID, n_of(60, scale), lambda sid: (
            home / ".copilot" / "session-state" / sid / "events.jsonl"), rng)


def gen_qwen_code(home: Path, scale: float, rng: random.Random) -> int:
    from benchmarks.bench_appended_formats import SID, qwen_chat
    with tempfile.TemporaryDirectory() as tmp:
        template = qwen_chat(Path(tmp), 1000) / "projects/p/chats" / f"{SID}.jsonl"
        return copies(template, SID, n_of(60, scale), lambda sid: (
            home / ".qwen" / "projects" / f"p{rng.randrange(8)}" / "chats" / f"{sid}.jsonl"), rng)


def gen_cursor(home: Path, scale: float, rng: random.Random) -> int:
    from benchmarks.bench_appended_formats import SID, cursor_transcript
    with tempfile.TemporaryDirectory() as tmp:
        template = (cursor_transcript(Path(tmp), 1000) / "p" / "agent-transcripts" / SID
                    / f"{SID}.jsonl")
        return copies(template, SID, n_of(60, scale), lambda sid: (
            home / ".cursor" / "projects" / f"home-dev-p{rng.randrange(8)}" / "agent-transcripts"
            / sid / f"{sid}.jsonl"), rng)


def gen_cursor_editor(home: Path, scale: float, rng: random.Random) -> int:
    """The editor's global ``state.vscdb`` (bench_cursor_zed's composers and other keys)."""
    from benchmarks.bench_cursor_zed import cursor_db
    path = home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    path.parent.mkdir(parents=True)
    cursor_db(path, n_of(600, scale), 50)
    return path.stat().st_size


def gen_zed(home: Path, scale: float, rng: random.Random) -> int:
    from benchmarks.bench_cursor_zed import zed_db
    path = home / ".local" / "share" / "zed" / "threads" / "threads.db"
    path.parent.mkdir(parents=True)
    zed_db(path, n_of(400, scale), 100)
    return path.stat().st_size


def gen_droid(home: Path, scale: float, rng: random.Random) -> int:
    from tests.appended_formats import write_lines
    from tests.test_import_droid import SID, message, start, text
    lines = [start()] + [
        message(f"m{i}", f"m{i - 1}" if i else None, i % 60, ("user", "assistant")[i % 2],
                text(f"turn {i} of the refund flow " * 20)) for i in range(200)]
    with tempfile.TemporaryDirectory() as tmp:
        template = write_lines(Path(tmp) / "t.jsonl", *lines)
        return copies(template, SID, n_of(200, scale), lambda sid: (
            home / ".factory" / "sessions" / f"-home-dev-p{rng.randrange(8)}" / f"{sid}.jsonl"),
            rng)


def _cline_like(home: Path, scale: float, rng: random.Random, extension: str, count: int,
                by_uuid: bool) -> int:
    """Tasks of the real Cline sample's 443 messages (bench_wholefiles'), each a folder named
    by its start time (Cline) or a UUID (Roo Code) in the extension's global storage."""
    from benchmarks.bench_wholefiles import cline_messages, write_cline_task
    tasks = home / ".config/Code/User/globalStorage" / extension / "tasks"
    written = 0
    for i in range(n_of(count, scale)):
        ts = 1767000000000 + i * 10**7
        name = new_uuid(rng) if by_uuid else str(ts)
        written += write_cline_task(tasks / name, cline_messages(443, ts)).stat().st_size
    return written


def gen_cline(home: Path, scale: float, rng: random.Random) -> int:
    return _cline_like(home, scale, rng, "saoudrizwan.claude-dev", 40, by_uuid=False)


def gen_roo_code(home: Path, scale: float, rng: random.Random) -> int:
    return _cline_like(home, scale, rng, "rooveterinaryinc.roo-cline", 20, by_uuid=True)


def gen_continue(home: Path, scale: float, rng: random.Random) -> int:
    """Sessions of 1,000 messages (bench_wholefiles'), one JSON file each."""
    from benchmarks.bench_wholefiles import continue_history, write_continue_session
    history = continue_history(1000)
    return sum(write_continue_session(home / ".continue" / "sessions", new_uuid(rng),
                                      history).stat().st_size for _ in range(n_of(60, scale)))


def gen_aider(home: Path, scale: float, rng: random.Random) -> int:
    """Chat histories of 2,000 messages in projects under ``~/code`` (bench_wholefiles');
    Aider is read only from a folder a person adds: ``CONFIGURED`` adds it."""
    from benchmarks.bench_wholefiles import write_aider_history
    return sum(write_aider_history(home / "code" / f"p{i}", 2000).stat().st_size
               for i in range(n_of(20, scale)))


def gen_goose(home: Path, scale: float, rng: random.Random) -> int:
    """Goose's ``sessions.db`` (bench_goose_crush's sessions of 40 messages), in WAL mode."""
    from benchmarks.bench_goose_crush import build_goose
    from tests.test_import_goose import Agent
    agent = Agent(home / ".local/share/goose/sessions/sessions.db")
    build_goose(agent, n_of(40, scale))
    agent.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    agent.conn.close()
    return agent.path.stat().st_size


def gen_crush(home: Path, scale: float, rng: random.Random) -> int:
    """A few projects' ``.crush/crush.db`` (bench_goose_crush's), listed in projects.json."""
    from benchmarks.bench_goose_crush import build_crush
    from tests.test_import_crush import Agent, register
    data_dir = home / ".local/share/crush"
    data_dir.mkdir(parents=True)
    written, projects = 0, []
    for i in range(n_of(4, scale)):
        agent = Agent(home / "work" / f"shop{i}")
        build_crush(agent, n_of(10, scale))
        agent.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        agent.conn.close()
        projects.append(agent.project)
        written += agent.path.stat().st_size
    register(data_dir, *projects)
    return written


def gen_openclaw_store(home: Path, scale: float, rng: random.Random) -> int:
    """OpenClaw's SQLite stores, one per agent (bench_openclaw_store's windows, some zstd,
    one cold archive), beside the JSONL agents."""
    from benchmarks.bench_openclaw_store import build
    with tempfile.TemporaryDirectory() as tmp:  # (it writes the same conversations as JSONL)
        stores, _ = build(home / ".openclaw", Path(tmp), 3, n_of(100_000, scale))
    for store in stores:
        store.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.con.close()
    return sum(store.path.stat().st_size for store in stores)


GENERATORS: dict[str, Callable[[Path, float, random.Random], int]] = {
    "claude-code": gen_claude_code,
    "codex": gen_codex,
    "openclaw": gen_openclaw,
    "pi": gen_pi,
    "omp": gen_omp,
    "opencode": gen_opencode,
    "kilo": gen_kilo,
    "gemini": gen_gemini,
    "copilot": gen_copilot,
    "qwen-code": gen_qwen_code,
    "cursor": gen_cursor,
    "cursor-editor": gen_cursor_editor,
    "zed": gen_zed,
    "droid": gen_droid,
    "goose": gen_goose,
    "crush": gen_crush,
    "cline": gen_cline,
    "roo-code": gen_roo_code,
    "continue": gen_continue,
    "aider": gen_aider,
    "openclaw-store": gen_openclaw_store,
}
# Formats read only from a folder a person adds (``sources add KIND FOLDER``): the folder
CONFIGURED = {"aider": "code"}


def kinds() -> list[str]:
    """Every format's name, and its session store's kind (``openclaw-store``) where a
    generator makes one."""
    return [kind for f in formats.known() for kind in (f.name, f.store_kind)
            if kind == f.name or kind in GENERATORS]


def build_home(home: Path, scale: float) -> dict[str, str]:
    """Each format's generator in turn; per format, what it made or why it is not there."""
    made: dict[str, str] = {}
    for kind in kinds():
        make = GENERATORS.get(kind)
        if make is None:
            made[kind] = "not in this run (no generator)"
            continue
        started = time.perf_counter()
        try:
            size = make(home, scale, random.Random(kind))
        except BaseException as err:  # noqa: BLE001 - a missing sample or test (pytest.skip)
            if isinstance(err, KeyboardInterrupt):
                raise
            made[kind] = f"not in this run ({type(err).__name__}: {err})"[:120]
            continue
        made[kind] = f"{size / 1e6:,.0f} MB, built in {time.perf_counter() - started:.0f} s"
        print(f"  {kind:<14} {made[kind]}", flush=True)
    return made


# ------------------------------------------------------------------------------ measuring


def run_sync(env: dict[str, str], timeout: float) -> tuple[float, dict]:
    started = time.perf_counter()
    done = subprocess.run([*CLI, "sync", "--json"], env=env, capture_output=True, text=True,
                          timeout=timeout)
    took = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"sync failed ({done.returncode}): {done.stderr[-2000:]}")
    return took, json.loads(done.stdout.strip().splitlines()[-1])


def wait_indexed(state: StateDir, started: float, limit: float = 3600) -> float:
    """Seconds from ``started`` until no agent has a reconciler running (the first sync left
    one in the background per agent) and nothing is left to index."""
    while time.perf_counter() - started < limit:
        reconcile_all(state)  # what no background reconciler holds, here
        running = False
        for agent in state.agents():
            with state.open(agent) as db:
                running = running or db.read_progress().running
        if not running:
            break
        time.sleep(0.5)
    return time.perf_counter() - started


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, capture_output=True, timeout=QUIET_TIMEOUT, check=True)
    return time.perf_counter() - started


def baseline(home: Path) -> tuple[str, float]:
    """Seconds to grep the whole home for a word it does not hold (rg, else Python)."""
    word = "absent" + uuid.uuid4().hex[:10]
    started = time.perf_counter()
    if shutil.which("rg"):
        subprocess.run(["rg", "-c", "--hidden", "--no-ignore", "-a", word, str(home)],
                       capture_output=True, timeout=600)
        return "rg -c WORD", time.perf_counter() - started
    needle = word.encode()
    for path in home.rglob("*"):
        if path.is_file():
            with path.open("rb") as handle:
                while chunk := handle.read(1 << 20):
                    if needle in chunk:
                        break
    return "Python grep", time.perf_counter() - started


class Writers:
    """Where a new message goes, one of each kind of source: a Claude Code file (appended),
    a Cline task (rewritten whole, as Cline writes it) and opencode.db (an insert)."""

    def __init__(self, home: Path) -> None:
        from tests.test_import_opencode import Agent
        self.claude = min((home / ".claude" / "projects").rglob("*.jsonl"))
        self.cline = min((home / ".config/Code/User/globalStorage/saoudrizwan.claude-dev"
                          ).rglob("api_conversation_history.json"), default=None)
        db = home / ".local/share/opencode/opencode.db"
        self.opencode = None
        if db.is_file():
            agent = Agent.__new__(Agent)  # the writer side of an existing database
            agent.path = db
            agent.conn = sqlite3.connect(db, isolation_level=None)
            agent.conn.execute("PRAGMA journal_mode=WAL")
            agent.n = 10**9 + random.randrange(10**9)  # ids apart from the build's
            self.sid = agent.conn.execute("SELECT id FROM session LIMIT 1").fetchone()[0]
            self.opencode = agent

    def jsonl(self, word: str) -> None:
        from tests.fakehome import append, claude_user
        append(self.claude, claude_user(self.claude, str(uuid.uuid4()), f"look at {word}"))

    def whole(self, word: str) -> None:
        assert self.cline is not None
        messages = json.loads(self.cline.read_text())
        messages.append({"role": "user", "ts": messages[-1]["ts"] + 1000, "content": [
            {"type": "text", "text": f"[attempt_completion] Result:\n<feedback>\nlook at {word}"
                                     "\n</feedback>"}]})
        self.cline.write_text(json.dumps(messages))

    def sqlite(self, word: str) -> None:
        from tests.test_import_opencode import text
        assert self.opencode is not None
        self.opencode.message("user", [text(f"look at {word}")], sid=self.sid)

    def close(self) -> None:
        if self.opencode is not None:
            self.opencode.conn.close()


WATCHED = [("jsonl", "Claude Code append (JSONL)"), ("whole", "Cline task rewritten (whole file)"),
           ("sqlite", "opencode.db insert (SQLite)")]


def watch_latency(env: dict[str, str], state: StateDir, home: Path,
                  runs: int) -> dict[str, list[float]]:
    writers = Writers(home)
    watcher = subprocess.Popen([*CLI, "watch", "--json"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    latency: dict[str, list[float]] = {kind: [] for kind, _ in WATCHED}
    try:
        # ready once a first message written after its start is found (its catch-up is done)
        word = f"warmup{uuid.uuid4().hex[:12]}"
        writers.jsonl(word)
        if wait_found(state, word, time.perf_counter(), 300) == float("inf"):
            print("  watch: the warm-up message was not found in 300 s", flush=True)
            return latency
        kinds = [("jsonl", writers.jsonl)]
        if writers.cline is not None:
            kinds.append(("whole", writers.whole))
        if writers.opencode is not None:
            kinds.append(("sqlite", writers.sqlite))
        for _ in range(runs):
            for kind, write in kinds:
                word = f"latency{uuid.uuid4().hex[:12]}"
                started = time.perf_counter()
                write(word)
                latency[kind].append(wait_found(state, word, started))
                print(f"  watch {kind}: {latency[kind][-1] * 1000:,.0f} ms", flush=True)
                time.sleep(0.2)  # apart, as messages come
    finally:
        if watcher.poll() is None:
            os.killpg(watcher.pid, signal.SIGINT)
        try:
            watcher.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(watcher.pid, signal.SIGKILL)
            watcher.wait(30)
        writers.close()
    return latency


def per_format_scan(state: StateDir, runs: int = 3) -> list[tuple[str, float]]:
    """In-process, a no-change sync of one format's sources only (found as every sync finds
    them: the config and detection are in it): the best of ``runs``."""
    costs = []
    for fmt in formats.known():
        best = float("inf")
        for _ in range(runs):
            started = time.perf_counter()
            sync_sources(state, [s for s in all_sources(state.path) if s.kind == fmt.name])
            best = min(best, time.perf_counter() - started)
        costs.append((fmt.name, best))
    return sorted(costs, key=lambda item: -item[1])


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--cache", type=Path, help="keep the built home here (reused)")
    args = parser.parse_args()
    load_before = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="bench_home-"))
    root = args.cache or tmp
    home = root / f"home-{args.scale:g}"
    marker = root / f"home-{args.scale:g}.json"
    if marker.is_file():
        made = json.loads(marker.read_text())
        print(f"home: {home} (cached)")
    else:
        shutil.rmtree(home, ignore_errors=True)
        print(f"building {home} at scale {args.scale:g}", flush=True)
        made = build_home(home, args.scale)
        marker.write_text(json.dumps(made))
    total = folder_size(home)
    files = sum(1 for p in home.rglob("*") if p.is_file())
    state = StateDir(tmp / "state")
    for kind, folder in CONFIGURED.items():
        if (home / folder).is_dir():
            add_source(state.path, kind, home / folder, None)
    env = {**os.environ, "HOME": str(home), "BACKSCROLL_STATE_DIR": str(state.path)}
    for variable in {f.home_env for f in formats.known()} | {f.folder_env for f in formats.known()}:
        env.pop(variable, None) if variable else None
        os.environ.pop(variable, None) if variable else None
    os.environ.update(HOME=env["HOME"], BACKSCROLL_STATE_DIR=env["BACKSCROLL_STATE_DIR"])
    try:
        print(f"home: {total / 1e6:,.0f} MB in {files:,} files", flush=True)
        first, report = run_sync(env, SYNC_TIMEOUT)
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"first sync: {first:.1f} s, {report.get('messages', 0):,} messages", flush=True)
        started = time.perf_counter()
        indexed = wait_indexed(state, started)
        print(f"indexed: {indexed:.1f} s after the first sync", flush=True)
        quiet = [run_sync(env, QUIET_TIMEOUT)[0] for _ in range(args.runs)]
        print(f"no-change sync: {p50_p95(quiet)}", flush=True)
        start_only = [timed([*CLI, "--version"], env) for _ in range(args.runs)]
        in_process = []
        for _ in range(args.runs):
            started = time.perf_counter()
            sync_sources(state)
            in_process.append(time.perf_counter() - started)
        base_name, base = baseline(home)
        latency = watch_latency(env, state, home, args.runs)
        scans = per_format_scan(state)
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # the state (and the home, unless cached)

    messages = report.get("messages", 0)
    print()
    print(f"scale {args.scale:g}: {total / 1e6:,.0f} MB in {files:,} files; "
          f"load {' '.join(f'{x:.2f}' for x in load_before)} before, "
          f"{' '.join(f'{x:.2f}' for x in load_after)} after ({os.cpu_count()} cores)")
    print()
    print("| format | in the home |")
    print("|---|---|")
    for name, what in made.items():
        print(f"| {name} | {what} |")
    for name in sorted(set(GENERATORS) - set(made)):
        print(f"| {name} | generator without a registered format |")
    print()
    quiet_p50 = statistics.median(quiet)
    print("| measure | value | vs baseline |")
    print("|---|---|---|")
    print(f"| baseline: {base_name} over the home | {base * 1000:,.0f} ms | 1 |")
    print(f"| first sync (process) | {first:.1f} s, {messages:,} messages, "
          f"{messages / first:,.0f} messages/s, peak RSS {rss:,.0f} MB | {first / base:.1f} |")
    print(f"| index finished after it (in-process) | {indexed:.1f} s | |")
    print(f"| no-change sync (process, {args.runs} runs) | {p50_p95(quiet)} "
          f"({'meets' if quiet_p50 <= 1 else 'misses'} 1 s) | {quiet_p50 / base:.2f} |")
    print(f"| of it: a process that starts and exits (`backscroll --version`) | "
          f"{p50_p95(start_only)} | |")
    print(f"| of it: the no-change sync in-process | {p50_p95(in_process)} | |")
    for kind, label in WATCHED:
        samples = latency[kind]
        missed = sum(s == float("inf") for s in samples)
        kept = [s for s in samples if s != float("inf")]
        note = f", {missed} not found in {FOUND_TIMEOUT:.0f} s" if missed else ""
        print(f"| watch: {label} until found ({len(samples)} runs) | {p50_p95(kept)}{note} | |")
    print()
    print("no-change sync per format (in-process, its sources only, best of 3):")
    for name, cost in scans:
        print(f"  {name:<14} {cost * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
