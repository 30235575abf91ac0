"""Hostile files in a watched home (local only, not in CI; issue 22's rerun).

A fake home (``tests/fakehome.py``: the three agent tools' folders, real transcripts) is
followed by ``backscroll watch --json`` (or synced by ``backscroll sync --json`` every
second, ``--mode sync``) as a child process, with ``HOME`` and ``BACKSCROLL_STATE_DIR``
pointing into a temporary folder. While it runs, a thread keeps appending good lines (each
with a word of its own) to a Claude Code, a Codex and an OpenClaw transcript, and starts a
new Claude Code session every 5 s; the hostile files of ``scripts/hostile_files.py`` are put
into the source folders once the first sync is done: poison ids and lines, a FIFO swapped in
and out for a transcript, a sparse 64 GiB file, a zstd bomb, a long line with no newline,
links to ``/`` and out of the folder, files claiming another file's session.

Every child has a timeout and an address-space limit (``--max-vm-mb``); at the end the good
words are searched (after reconciling and ``tests/faults.py``'s file checks) in a child of its
own. Per round it prints good lines found vs written (goal: all), errors and tracebacks
(none), the peak RSS of sync/watch (``--rss-goal-mb``), hangs (none) and a verdict per hostile
file; exit code 0 when every goal is met. docs/sources.md ("Hostile files") says more.

    .venv/bin/python scripts/hostile_home.py --seconds 60               # all at once, watch
    .venv/bin/python scripts/hostile_home.py --mode sync --seconds 60
    .venv/bin/python scripts/hostile_home.py --each --seconds 15 --poll
    .venv/bin/python scripts/hostile_home.py --only none,sid-space,fifo

On a shared machine pass ``--poll`` while links are followed (before the fix): a watch that
follows the link to ``/`` asks inotify to watch every folder of the disk, and inotify's
watches are counted per user. ``--keep`` keeps the temporary folder for a look afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]  # the tests package, hostile_files

from hostile_files import (  # noqa: E402
    HOSTILES,
    MIB,
    OUTSIDE_WORD,
    PLANTED_CC,
    PLANTED_OC,
    Home,
    Outcome,
    Writer,
)

from tests.fakehome import build_home  # noqa: E402

DATA = next((p for p in (ROOT.parent / "shared" / "data", ROOT.parents[1] / "shared" / "data",
                         Path("/work/shared/data")) if p.is_dir()), Path("shared/data"))
SYSCALLS = {0: "read", 7: "poll", 17: "pread64", 202: "futex", 230: "clock_nanosleep",
            232: "epoll_wait", 257: "openat", 271: "ppoll", 281: "epoll_pwait"}
MEASURE = r"""
import json, sys, time
from backscroll.core.reconcile import reconcile_all
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR
sys.path.insert(0, sys.argv[2])
from tests.faults import check_files
state, words = StateDir(sys.argv[1]), json.load(sys.stdin)
out = {"keys": {}, "paths": [], "pending": 0, "errors": [], "holding": {}}
deadline = time.monotonic() + 90
while True:
    try:
        reconcile_all(state)
        pending = 0
        for agent in state.agents():
            with state.open(agent) as db:
                pending += db.pending_count()[0]
    except Exception as err:
        out["errors"].append(f"reconciling: {type(err).__name__}: {err}")
        break
    out["pending"] = pending
    if not pending or time.monotonic() > deadline:
        break
    time.sleep(0.5)
for agent in state.agents():
    with state.open(agent) as db:
        out["paths"] += list(db.file_states())
for agent in state.agents():  # the sessions whose stored events hold a planted word
    with state.open(agent) as db:
        for session in db.sessions():
            text = json.dumps([e for _seq, e in db.events(session.pk)], ensure_ascii=False)
            for word in sys.argv[3].split(","):
                if word in text:
                    out["holding"].setdefault(word, []).append(session.key)
if state.agents():  # sound files, a true index, no entry twice (as after every fault)
    out["errors"] += [f"files: {problem}" for problem in check_files(state)]
for word in words:
    try:
        found = sessions_search(state, SearchRequest(query=word, limit=10), OPERATOR)
        out["keys"][word] = [r.session_key for r in found.results]
    except Exception as err:
        out["errors"].append(f"searching {word}: {type(err).__name__}: {err}")
print(json.dumps(out))
"""


LIVE: set[Child] = set()  # children not reaped yet: killed when the script ends, however


class Child:
    """A backscroll process: its lines, its exit, its peak RSS (``wait4``), a hard kill."""

    def __init__(self, args: list[str], env: dict[str, str], max_vm_mb: int) -> None:
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "backscroll.tui.cli", *args], stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace", env=env,
            start_new_session=True)
        try:
            cap = max_vm_mb * MIB
            resource.prlimit(self.popen.pid, resource.RLIMIT_AS, (cap, cap))
        except OSError:
            pass  # already gone: its exit says why
        LIVE.add(self)
        self.out: list[tuple[float, str]] = []
        self.err: list[str] = []
        self.rc: int | None = None
        self.maxrss_mb = 0.0
        self.readers = [threading.Thread(target=self._read, args=(stream, sink), daemon=True)
                        for stream, sink in ((self.popen.stdout, self.out),
                                             (self.popen.stderr, self.err))]
        for reader in self.readers:
            reader.start()

    def _read(self, stream, sink: list) -> None:  # noqa: ANN001
        for line in stream:
            sink.append((time.monotonic(), line.rstrip("\n")) if sink is self.out
                        else line.rstrip("\n"))

    def reap(self, block: bool = False) -> bool:
        if self.rc is not None:
            return True
        pid, status, usage = os.wait4(self.popen.pid, 0 if block else os.WNOHANG)
        if pid == 0:
            return False
        self.rc = self.popen.returncode = os.waitstatus_to_exitcode(status)
        LIVE.discard(self)
        self.maxrss_mb = usage.ru_maxrss / 1024
        for reader in self.readers:
            reader.join(5)
        return True

    def wait(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not self.reap():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def kill(self) -> None:
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)  # its own group (start_new_session)
        except ProcessLookupError:
            pass
        self.reap(block=True)

    def blocked_in(self) -> str:
        """What its threads wait in (``/proc/<pid>/task/*/syscall``), for a hang's row."""
        calls = []
        for task in sorted(Path(f"/proc/{self.popen.pid}/task").glob("*")):
            try:
                number = (task / "syscall").read_text().split()[0]
            except (OSError, IndexError):
                continue
            calls.append(SYSCALLS.get(int(number), number) if number.isdigit() else number)
        return ", ".join(f"{calls.count(c)}x {c}" for c in dict.fromkeys(calls)) or "unknown"


@dataclass
class Round:
    name: str
    hostiles: list[str]
    starts: int = 0
    kills: int = 0
    planted: list[Path] = field(default_factory=list)
    written: int = 0
    found: int = 0
    missing: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # every stderr sentence
    peak_rss_mb: float = 0.0
    verdicts: dict[str, tuple[str | None, str]] = field(default_factory=dict)  # (why not, said)

    def ok(self, goal_mb: float) -> bool:
        return not self.failures(goal_mb)

    def failures(self, goal_mb: float) -> list[str]:
        """What failed: the round's measures, then each hostile file whose verdict failed
        (only those, not every file of the round)."""
        measures = [what for what, bad in (
            ("good lines", self.written == 0 or self.found != self.written),
            ("errors", bool(self.errors)), ("hangs", bool(self.hangs)),
            ("peak RSS", self.peak_rss_mb > goal_mb))
            if bad]
        where = f" (round: {self.name})" if measures and self.name else ""
        return ([f"{', '.join(measures)}{where}"] if measures else []) + [
            name for name, (why, _) in self.verdicts.items() if why is not None]


def child_env(home: Path, state: Path, root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (
        "CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENCLAW_STATE_DIR", "BACKSCROLL_DATABASE_URL",
        "BACKSCROLL_DEBUG")}
    return {**env, "HOME": str(home), "BACKSCROLL_STATE_DIR": str(state),
            "XDG_CACHE_HOME": str(root / "cache"), "COLUMNS": "100000", "PYTHONUNBUFFERED": "1"}


def collect(child: Child, result: Round, expected_rc: tuple[int, ...] = (0,)) -> None:
    result.peak_rss_mb = max(result.peak_rss_mb, child.maxrss_mb)
    lines, skip = child.err, -1
    for i, line in enumerate(lines):
        if i <= skip:
            continue  # the rest of a traceback
        if line.startswith("Traceback"):
            skip = next((j for j in range(i + 1, len(lines))
                         if lines[j] and not lines[j].startswith(" ")), len(lines))
            result.errors.append(f"traceback: {lines[skip] if skip < len(lines) else '?'}")
        elif "internal error" in line or "Error" in line.split(":")[0]:
            result.errors.append(line)
        elif line.startswith("backscroll: "):
            result.problems.append(line.removeprefix("backscroll: "))
    if child.rc is not None and child.rc not in expected_rc and child.rc != -signal.SIGKILL:
        tail = lines[-1] if lines else "(nothing on stderr)"
        result.errors.append(f"{child.popen.args[3]} exited with {child.rc}: {tail}")


def run_watch(env: dict[str, str], args: argparse.Namespace, writer: Writer, until: float,
              result: Round, first_sync: threading.Event) -> None:
    """Keep a ``watch`` running until ``until``; a hang or a death is counted and the watch
    started again (and, with ``--kill-every``, it is SIGKILLed at random points)."""
    rng = random.Random(args.seed)
    while time.monotonic() < until:
        child = Child(["watch", "--json", *(["--poll"] if args.poll else [])], env,
                      args.max_vm_mb)
        result.starts += 1
        seen, last = 0, time.monotonic()
        kill_at = last + rng.uniform(0.2, 2 * args.kill_every) if args.kill_every else until
        while not child.reap():
            now = time.monotonic()
            if kill_at < now < until:  # the fault campaign's SIGKILL, with the files present
                child.kill()
                result.kills += 1
                break
            if len(child.out) > seen:
                seen, last = len(child.out), child.out[-1][0]
                if seen > 1:
                    first_sync.set()
            waiting = writer.first_unseen(last)
            if waiting is not None and now - max(waiting, last) > args.hang_after:
                result.hangs.append(f"watch: nothing taken in for {args.hang_after:.0f} s while "
                                    f"lines were written (threads in {child.blocked_in()})")
                child.kill()
                break
            if now >= until:
                child.popen.send_signal(signal.SIGINT)
                if not child.wait(args.hang_after):
                    result.hangs.append(f"watch: still running {args.hang_after:.0f} s after "
                                        f"ctrl+c (threads in {child.blocked_in()})")
                    child.kill()
                break
            time.sleep(0.1)
        collect(child, result)
        if child.rc is not None and child.rc != -signal.SIGKILL and time.monotonic() < until:
            first_sync.set()  # it died: plant anyway, the next one starts with them
            time.sleep(1)


def run_sync(env: dict[str, str], args: argparse.Namespace, until: float, result: Round,
             first_sync: threading.Event, last: bool = False) -> None:
    """``sync`` every second until ``until`` (once more at the end, with ``last``)."""
    while time.monotonic() < until or last:
        child = Child(["sync", "--json"], env, args.max_vm_mb)
        result.starts += 1
        if not child.wait(args.hang_after):
            result.hangs.append(f"sync: not done in {args.hang_after:.0f} s "
                                f"(threads in {child.blocked_in()})")
            child.kill()
        collect(child, result)
        first_sync.set()
        if last:
            return
        time.sleep(1)


def plant(home: Home, names: list[str], writer: Writer, result: Round) -> list[threading.Thread]:
    swappers = []
    for name in names:
        hostile = HOSTILES[name]
        try:
            home.planted[name] = hostile.plant(home)
        except Exception as err:  # noqa: BLE001 - the row says so
            result.verdicts[name] = (f"could not be planted: {type(err).__name__}: {err}", "")
            continue
        if hostile.swapped:
            swapper = threading.Thread(target=writer.swap, args=(home.planted[name],),
                                       daemon=True)
            swapper.start()
            swappers.append(swapper)
    return swappers


def measure(env: dict[str, str], state: Path, words: list[str], planted: list[str],
            result: Round) -> dict:
    child = subprocess.Popen([sys.executable, "-c", MEASURE, str(state), str(ROOT),
                              ",".join(planted)], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = child.communicate(json.dumps(words), timeout=300)
    except subprocess.TimeoutExpired:
        result.hangs.append("measuring (reconcile and search) took over 300 s")
        return {}
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
    if child.returncode != 0:
        result.errors.append(f"measuring failed: {(err.strip().splitlines() or ['?'])[-1]}")
        return {}
    answer = json.loads(out)
    result.errors += answer["errors"]
    if answer["pending"]:
        result.errors.append(f"{answer['pending']} sessions still pending reconciliation")
    return answer


def run_round(tmp: Path, names: list[str], args: argparse.Namespace, cache: Path) -> Round:
    result = Round(", ".join(names) or "none (control)", names)
    home = Home(tmp, tmp / "home", build_home(tmp / "home", args.data), args.bigline_mb,
                args.bomb_gib, args.root_link, cache)
    state = tmp / "state"
    env = child_env(home.home, state, tmp)
    writer = Writer(home, args.interval, args.swap_ms / 1000)
    first_sync = threading.Event()
    start = time.monotonic()
    writer.start()
    run = run_watch if args.mode == "watch" else run_sync
    runner = threading.Thread(target=run, daemon=True, args=(
        env, args, writer, start + args.seconds + args.settle, result, first_sync)
        if args.mode == "watch" else (env, args, start + args.seconds, result, first_sync))
    runner.start()
    first_sync.wait(min(args.seconds, 60))
    swappers = plant(home, names, writer, result)
    time.sleep(max(0.0, start + args.seconds - time.monotonic()))
    writer.stop.set()
    writer.join(10)
    for swapper in swappers:
        swapper.join(10)
    runner.join()
    if args.mode == "sync":
        run_sync(env, args, 0, result, first_sync, last=True)
    result.errors += writer.errors
    planted_words = [OUTSIDE_WORD, PLANTED_CC, PLANTED_OC]
    answer = measure(env, state, [*writer.words, *planted_words], planted_words, result)
    keys_of = answer.get("keys", {})
    result.written = len(writer.words)
    result.missing = [w for w in writer.words if not keys_of.get(w)]
    result.found = result.written - len(result.missing)
    good_keys: dict[str, set[str]] = {}
    for word, fmt in writer.words.items():
        good_keys.setdefault(fmt, set()).update(keys_of.get(word, []))
    result.planted = list(home.planted.values())
    reported = {name: [p for p in result.problems if home.planted[name].name in p]
                for name in home.planted}
    outcome = Outcome(reported, keys_of, answer.get("holding", {}), good_keys,
                      answer.get("paths", []),
                      result.hangs, result.peak_rss_mb, args.rss_goal_mb, result.kills)
    for name in home.planted:
        try:
            why = HOSTILES[name].check(home, outcome, name)
            if any(home.planted[name].name in error for error in result.errors):
                why = "an error names it" + (f", {why}" if why else "")
        except Exception as err:  # noqa: BLE001 - a row, not a crash
            why = f"check failed: {type(err).__name__}: {err}"
        said = reported[name][0] if reported[name] else ""
        result.verdicts[name] = (why, said)
    return result


def print_round(result: Round, args: argparse.Namespace) -> None:
    goal = args.rss_goal_mb
    mark = lambda ok: "ok" if ok else "FAIL"  # noqa: E731
    kills = f", {result.kills} SIGKILLs" if result.kills else ""
    print(f"\n== hostile files: {result.name}  ({args.mode}, {args.seconds:.0f} s, "
          f"{args.mode} started {result.starts} times{kills})")
    print(f"{'':2}{'measure':<38} {'value':>12}  {'goal':<12} verdict")
    rows = [
        ("good lines found / written", f"{result.found:,} / {result.written:,}", "all",
         result.written > 0 and result.found == result.written),
        ("errors and tracebacks", f"{len(result.errors):,}", "none", not result.errors),
        (f"peak RSS of {args.mode}", f"{result.peak_rss_mb:,.0f} MB", f"< {goal:.0f} MB",
         result.peak_rss_mb <= goal),
        ("hangs (nothing taken in, or no exit)", f"{len(result.hangs):,}", "none",
         not result.hangs),
    ]
    for what, value, want, ok in rows:
        print(f"{'':2}{what:<38} {value:>12}  {want:<12} {mark(ok)}")
    if result.verdicts:
        print(f"\n{'':2}{'hostile file':<16} {'verdict':<56} reported as")
        for name, (why, said) in result.verdicts.items():
            verdict = "ok" if why is None else f"FAIL: {why}"
            print(f"{'':2}{name:<16} {shorten(verdict, 56):<56} {shorten(said, 100) or '-'}")
    named = {str(path.name) for path in result.planted}
    others = [p for p in result.problems if not any(name in p for name in named)]
    for title, items in (("errors", result.errors), ("hangs", result.hangs),
                         ("problems that name no hostile file", others),
                         ("good words not found", result.missing)):
        if items:
            unique = list(dict.fromkeys(items))
            print(f"{'':2}{title} ({len(items)}, {len(unique)} different):")
            for item in unique[:8]:
                print(f"{'':4}{shorten(item, 160)}")


def shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60, help="good lines are written this long")
    parser.add_argument("--settle", type=float, default=5, help="then the watch gets this long")
    parser.add_argument("--mode", choices=("watch", "sync"), default="watch")
    parser.add_argument("--each", action="store_true",
                        help="a control round, then one round per hostile file alone")
    parser.add_argument("--only", help=f"comma-separated, of none, {', '.join(HOSTILES)}")
    parser.add_argument("--poll", action="store_true", help="watch --poll (see above)")
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between good lines")
    parser.add_argument("--hang-after", type=float, default=30,
                        help="seconds a child may take nothing in (or not stop) before it is a hang")
    parser.add_argument("--swap-ms", type=float, default=2, help="FIFO and transcript swap")
    parser.add_argument("--rss-goal-mb", type=float, default=300)
    parser.add_argument("--max-vm-mb", type=int, default=4096, help="address space of a child")
    parser.add_argument("--bigline-mb", type=int, default=400, help="above the RSS goal")
    parser.add_argument("--bomb-gib", type=int, default=4)
    parser.add_argument("--root-link", default="/", help="where the link to / points")
    parser.add_argument("--data", type=Path, default=DATA, help="the shared real transcripts")
    parser.add_argument("--kill-every", type=float, default=0,
                        help="SIGKILL the watch at a random point about every this many seconds")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    chosen = args.only.split(",") if args.only else list(HOSTILES)
    unknown = [n for n in chosen if n != "none" and n not in HOSTILES]
    if unknown:
        parser.error(f"unknown hostile file(s): {', '.join(unknown)}")
    chosen = [n for n in chosen if n != "none"]
    rounds = [[]] + [[n] for n in chosen] if args.each else [chosen]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the children go too
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also started in the background
    tmp = Path(tempfile.mkdtemp(prefix="hostile-home-"))
    results = []
    try:
        for i, names in enumerate(rounds):
            try:
                result = run_round(tmp / f"round-{i}", names, args, tmp)
            except Exception as err:  # noqa: BLE001 - a failed round is a row
                result = Round(", ".join(names) or "none (control)", names,
                               errors=[f"the round itself failed: {type(err).__name__}: {err}"])
            print_round(result, args)
            results.append(result)
            sys.stdout.flush()
    finally:
        for child in list(LIVE):
            child.kill()
        if args.keep:
            print(f"\nkept: {tmp}")
        else:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)
    failed = [", ".join(r.failures(args.rss_goal_mb)) for r in results
              if not r.ok(args.rss_goal_mb)]
    print(f"\n{len(results) - len(failed)} of {len(results)} rounds met every goal"
          + (f"; failed: {'; '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
