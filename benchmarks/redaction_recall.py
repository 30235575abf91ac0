"""Recall and look-alike rate of ``redact`` on the corpus redaction_corpus.py builds (not a test).

    .venv/bin/python benchmarks/redaction_corpus.py --gitleaks <path> --detect-secrets <path>
    .venv/bin/python benchmarks/redaction_recall.py [corpus.jsonl] [--misses N] [--no-speed]

The families issue 22 added (command-line passwords, split and armoured keys, PuTTY, decoded
.env files, Wi-Fi codes, expect, Zapier hooks, whsec_ and STS tokens, tokens in session keys)
are measured apart, on vectors redaction_generated.py writes in shapes the tests do not use.

Recall: the share of true vectors whose secret part is fully hidden. A secret of 18+
characters is hidden when no 8 characters of its middle (what the mask never keeps) show; a
shorter one when it does not show at all. Look-alikes masked: the share of false vectors that
``redact`` changed. Both are printed per source and overall, with two splits reported apart:
true vectors whose secret is filler (one character is most of it, ``APxxxxxxxxxx``, or a
short unit repeated: placeholders by this project's rule, kept on purpose) and false vectors
that are near misses (a true vector's secret plus "extra", another rule's key, a published
sample key, a value gitleaks itself put under a token's name: a format-exact scanner with
allowlists rejects them, a redactor may hide them).

Speed: MB/s of ``redact`` (CPU time of this process, the best of three runs, so that other
work on the machine does not count) on ordinary chat text (bench_redact.py's messages, dense
with the words password, token, key), the same with one true vector each, and the user and
assistant text of the shared sample transcripts when /work/shared/data is there.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_redact import DATA, plain_message, transcript_texts  # noqa: E402
from redaction_generated import generated_records  # noqa: E402

from backscroll.core.redact import redact  # noqa: E402

DEFAULT_CORPUS = Path(__file__).resolve().parent / "redaction_corpus.jsonl"


def fragments(secret: str) -> list[str]:
    if len(secret) < 18:
        return [secret]
    middle = secret[6:-4]
    return [middle[i : i + 8] for i in range(max(1, len(middle) - 7))]


def leaked(text: str, output: str, secrets: list[str]) -> bool:
    for secret in secrets:
        if is_filler(secret):
            continue
        elsewhere = text.replace(secret, "\0")
        for fragment in fragments(secret):
            if fragment in output and fragment not in elsewhere:
                return True
    return False


def is_filler(secret: str) -> bool:
    """One character making up most of it (an 'x' or a 'Z' repeated after a prefix) or a short
    unit repeated (TESTTESTTEST...): a placeholder by this project's rule."""
    if not secret:
        return False
    if len(secret) >= 12 and any(secret == (secret[:n] * len(secret))[: len(secret)] for n in (3, 4)):
        return True
    return max(secret.count(c) for c in set(secret)) * 2 > len(secret)


def evaluate(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    stats: dict[str, dict[str, Any]] = {}
    for source in sorted({rec["source"] for rec in records}) + ["overall"]:
        stats[source] = {"true": 0, "hidden": 0, "filler": 0, "filler_hidden": 0, "false": 0,
                         "changed": 0, "near": 0, "near_changed": 0, "misses": [], "changes": []}
    for rec in records:
        output = redact(rec["text"])
        for source in (rec["source"], "overall"):
            s = stats[source]
            if rec["label"] == "true":
                filler = all(is_filler(x) for x in rec["secrets"])
                ok = not leaked(rec["text"], output, rec["secrets"])
                key = "filler" if filler else "true"
                s[key] += 1
                s[key + "_hidden" if filler else "hidden"] += ok
                if not ok and not filler and source != "overall":
                    s["misses"].append((rec, output))
            else:
                changed = output != rec["text"]
                key = "near" if rec["near_miss"] else "false"
                s[key] += 1
                s["near_changed" if rec["near_miss"] else "changed"] += changed
                if changed and not rec["near_miss"] and source != "overall":
                    s["changes"].append((rec, output))
    return stats


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:6.2f}%" if whole else "     -"


def print_table(stats: dict[str, dict[str, Any]]) -> None:
    print(f"{'source':16} {'true':>6} {'recall':>8} {'filler':>7} {'recall*':>8}   "
          f"{'false':>6} {'masked':>8} {'near':>5} {'masked*':>8}")
    for source, s in stats.items():
        all_true = s["true"] + s["filler"]
        all_false = s["false"] + s["near"]
        print(f"{source:16} {s['true']:6} {pct(s['hidden'], s['true']):>8} {s['filler']:7} "
              f"{pct(s['hidden'] + s['filler_hidden'], all_true):>8}   {s['false']:6} "
              f"{pct(s['changed'], s['false']):>8} {s['near']:5} "
              f"{pct(s['changed'] + s['near_changed'], all_false):>8}")
    print("recall: true vectors fully hidden, filler placeholders left out; recall*: with them.")
    print("masked: look-alikes changed, near misses left out; masked*: with them.")
    print("(see redaction_corpus.py for what counts as filler and as a near miss)")


def print_examples(stats: dict[str, dict[str, Any]], limit: int) -> None:
    for source, s in stats.items():
        if source == "overall":
            continue
        for rec, output in s["misses"][:limit]:
            print(f"MISS   {source}/{rec['rule']}: {rec['text'][:160]!r}\n    -> {output[:160]!r}")
        for rec, output in s["changes"][:limit]:
            print(f"MASKED {source}/{rec['rule']}: {rec['text'][:160]!r}\n    -> {output[:160]!r}")


def speed(records: list[dict[str, Any]]) -> None:
    rng = random.Random(6)
    plain = [plain_message(rng) for _ in range(3000)]
    secrets = [r["text"] for r in records if r["label"] == "true"] or ["token=abc"]
    rich = []
    for text in plain:
        cut = rng.randrange(len(text))
        rich.append(text[:cut] + " " + rng.choice(secrets) + " " + text[cut:])
    corpora = [("ordinary chat text", plain), ("chat text, one secret each", rich)]
    if DATA.exists() and (texts := transcript_texts()):
        corpora.append(("shared sample transcripts", texts))
    for label, corpus in corpora:
        size = sum(len(t.encode()) for t in corpus)
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            for text in corpus:
                redact(text)
            best = min(best, time.process_time() - start)
        print(f"speed, {label:28} {size / best / 1e6:7.2f} MB/s of CPU time  "
              f"({len(corpus)} messages, {size / len(corpus):.0f} bytes each)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--misses", type=int, default=0, help="print up to N misses per source")
    parser.add_argument("--no-speed", action="store_true")
    args = parser.parse_args()
    if not args.corpus.exists():
        sys.exit(f"{args.corpus} not found: build it with benchmarks/redaction_corpus.py")
    records = [json.loads(line) for line in args.corpus.read_text(encoding="utf-8").splitlines()]
    stats = evaluate(records)
    print_table(stats)
    if args.misses:
        print_examples(stats, args.misses)
    print("\ngenerated families (redaction_generated.py):")
    generated = evaluate(generated_records())
    print_table(generated)
    if args.misses:
        print_examples(generated, args.misses)
    if not args.no_speed:
        speed(records)


if __name__ == "__main__":
    main()
