"""Known-item retrieval on the demo corpus (issue 27, SPEC 19; docs/performance.md, "Finding a
conversation"): does a search find the conversation a person remembers by a few words said
in it at different moments?

    .venv/bin/python benchmarks/bench_retrieval.py [--targets 150] [--seed 27]

The demo corpus (core/demo, seed 7, 3,000 messages) is built once, every session indexed,
into --cache. Queries are drawn with a seeded generator:

- a target: a conversation the operator sees with at least N messages holding a
  *distinctive* word (at least 3 characters, a letter among them, in at most 2% of the
  corpus's indexed messages: the words a person remembers, not "the");
- a query of N = 2, 3 or 4 words: N different messages of the target, one distinctive word
  drawn from each (all different);
- its variant: the last word replaced by a distinctive word of another conversation that the
  target holds nowhere (a word misremembered from elsewhere).

Each query is asked of three systems, the operator's view, limit 25 (the most an answer
holds): *per-message matching* (a conversation matches when one message holds every word,
best message first: the grouping of ``sessions_search``), *conversation matching* (each
word somewhere in it) newest first, and conversation matching with its ranking (words in one
message first, then the fused score: core/convmatch.py). For each: success@1 and @5 (the
target is first, among the first five), mean reciprocal rank (1/rank, 0 past 25) and the
share of queries answered with nothing ("no results").
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from backscroll.core.demo.state import DEMO_MESSAGES, DEMO_SEED, build_demo
from backscroll.core.grouped import conversations_search
from backscroll.core.keys import is_incognito
from backscroll.core.query import tokens
from backscroll.core.search import LIMIT_MAX, SearchRequest
from backscroll.core.state import StateDir
from backscroll.core.textseg import desegment
from backscroll.core.visibility import OPERATOR
from backscroll.core.visible_sessions import visible_sessions

DISTINCTIVE_SHARE = 0.02  # a word in at most this share of the indexed messages
SIZES = (2, 3, 4)
SYSTEMS = {
    "per-message matching": dict(spread=False, order="best"),
    "conversation matching, newest first": dict(spread=True, order="recent"),
    "conversation matching, ranked": dict(spread=True, order="best"),
}


def demo_state(cache: Path) -> StateDir:
    """The demo, every session indexed (the demo command leaves its imported ones pending)."""
    path = cache / f"retrieval-s{DEMO_SEED}-m{DEMO_MESSAGES}"
    done = path / ".built"
    if not done.is_file():
        shutil.rmtree(path, ignore_errors=True)  # a build cut short
        path.mkdir(parents=True)
        build_demo(StateDir(path, database_url=""), leave_imported_pending=False)
        done.write_text("")
    path.chmod(0o700)  # a state dir holds conversations: backscroll warns of any other mode
    return StateDir(path, database_url="")


def conversations(state: StateDir) -> dict[tuple[str, str], list[set[str]]]:
    """Each conversation the operator sees: (agent, key) -> each indexed message's words."""
    out: dict[tuple[str, str], list[set[str]]] = {}
    for agent in state.agents():
        with state.open(agent) as db:
            visible = visible_sessions(db, OPERATOR).scope.pks
            for session in db.sessions():
                if session.pk not in visible or is_incognito(session.key):
                    continue
                words = [{tok for _s, _e, tok in tokens(desegment(row.body or ""))}
                         for _rowid, row in db.index_rows(session.pk)]
                if words:
                    out[(agent, session.key)] = words
    return out


def distinctive(talks: dict[tuple[str, str], list[set[str]]]) -> set[str]:
    counts: dict[str, int] = {}
    messages = 0
    for words_of in talks.values():
        for words in words_of:
            messages += 1
            for word in words:
                counts[word] = counts.get(word, 0) + 1
    return {w for w, n in counts.items() if n <= DISTINCTIVE_SHARE * messages and len(w) >= 3
            and any(c.isalpha() for c in w)}


def queries(talks: dict[tuple[str, str], list[set[str]]], rare: set[str], targets: int,
            rng: random.Random) -> list[tuple[str, int, bool, tuple[str, str]]]:
    """(query, words, variant, target) for ``targets`` conversations per size."""
    out = []
    keys = sorted(talks)
    for size in SIZES:
        eligible = [k for k in keys if sum(1 for w in talks[k] if w & rare) >= size]
        for target in rng.sample(eligible, min(targets, len(eligible))):
            messages = [sorted(w & rare) for w in talks[target] if w & rare]
            picked: list[str] = []
            for words in rng.sample(messages, len(messages)):
                fresh = [w for w in words if w not in picked]
                if fresh:
                    picked.append(rng.choice(fresh))
                if len(picked) == size:
                    break
            if len(picked) < size:
                continue
            out.append((" ".join(picked), size, False, target))
            held = set().union(*talks[target])
            other = rng.choice([k for k in keys if k != target])
            foreign = sorted(set().union(*talks[other]) & rare - held)
            if foreign:
                out.append((" ".join(picked[:-1] + [rng.choice(foreign)]), size, True, target))
    return out


def rank_of(state: StateDir, query: str, target: tuple[str, str], system: dict) -> int | None:
    request = SearchRequest(query, limit=LIMIT_MAX, order=system["order"])
    found = conversations_search(state, request, OPERATOR, spread=system["spread"])
    for n, hit in enumerate(found.conversations, 1):
        if (hit.result.agent, hit.session.key) == target:
            return n
    return None if found.conversations else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=150, help="conversations per query size")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/backscroll-bench"))
    args = parser.parse_args()
    state = demo_state(args.cache)
    talks = conversations(state)
    rare = distinctive(talks)
    asked = queries(talks, rare, args.targets, random.Random(args.seed))
    print(f"demo: {len(talks)} conversations, {sum(len(w) for w in talks.values())} indexed "
          f"messages, {len(rare)} distinctive words; {len(asked)} queries (seed {args.seed})")
    print(f"load: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    print()
    print("| queries | n | system | success@1 | success@5 | MRR | no results | ms/query |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for variant in (False, True):
        for size in (*SIZES, None):
            chosen = [q for q in asked if q[2] == variant and (size is None or q[1] == size)]
            if not chosen:
                continue
            label = ("one word from elsewhere" if variant else "words of the target") + (
                f", {size} words" if size else ", all")
            for name, system in SYSTEMS.items():
                start = time.perf_counter()
                ranks = [rank_of(state, q, target, system) for q, _n, _v, target in chosen]
                ms = (time.perf_counter() - start) * 1000 / len(chosen)
                at1 = sum(1 for r in ranks if r == 1) / len(ranks)
                at5 = sum(1 for r in ranks if r and r <= 5) / len(ranks)
                mrr = statistics.fmean(1 / r if r else 0.0 for r in ranks)
                empty = sum(1 for r in ranks if r == 0) / len(ranks)
                print(f"| {label} | {len(chosen)} | {name} | {at1:.2f} | {at5:.2f} | {mrr:.3f} "
                      f"| {empty:.2f} | {ms:.1f} |")


if __name__ == "__main__":
    main()
