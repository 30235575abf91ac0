"""Rough throughput of backscroll.core.redact.redact (not a test): messages per second.

    .venv/bin/python benchmarks/bench_redact.py

Corpora: plain English/CJK chat messages (200-2000 characters, no secret), the same with
the secret test vectors mixed in, and the user/assistant text of the shared sample
transcripts when /work/shared/data is present.
"""

from __future__ import annotations

import glob
import json
import random
import time
from collections.abc import Callable
from pathlib import Path

from backscroll.core.redact import redact

DATA = Path("/work/shared/data")
# Developer chat, with the trigger words (token, key, password, pass) that cost the most.
SENTENCES = (
    "the index keeps every session of an agent and we should check why the search",
    "returned nothing for that query so I ran the tests again after the refactor",
    "and they pass now but the token budget of the model is small please look at",
    "the key points of the plan password reset flow needs a review before we ship",
    "version 2 of the browser on Monday",
)
WORDS = " ".join(SENTENCES).split()
CJK = [
    "人人生而自由，在尊严和权利上一律平等。",
    "他们赋有理性和良心，并应以兄弟关系的精神相对待。",
    "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。",
    "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다.",
]


def plain_message(rng: random.Random) -> str:
    target = rng.randint(200, 2000)
    parts: list[str] = []
    while sum(map(len, parts)) < target:
        if rng.random() < 0.25:
            parts.append(rng.choice(CJK))
        else:
            sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))
            parts.append(sentence.capitalize() + rng.choice([". ", "? ", ": ", ", see `x`. "]))
    return "".join(parts)


def secret_lines() -> list[str]:
    lines = (DATA / "secrets_true.tsv").read_text(encoding="utf-8").splitlines()[1:]
    return [line.split("\t", 1)[1].replace("\\n", "\n") for line in lines]


def transcript_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted(glob.glob(str(DATA / "**" / "*.jsonl"), recursive=True)):
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            message = event.get("message") or event.get("payload")
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                continue
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in blocks if isinstance(blocks, list) else []:
                if isinstance(block, dict) and isinstance(block.get("text"), str):
                    texts.append(block["text"])
    return texts


def measure(label: str, corpus: list[str], fn: Callable[[str], str] = redact) -> None:
    chars = sum(map(len, corpus))
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for text in corpus:
            fn(text)
        best = min(best, time.perf_counter() - start)
    print(
        f"{label:34} {len(corpus):6} msgs  avg {chars // len(corpus):5} chars  "
        f"{len(corpus) / best:9,.0f} msg/s  {best / len(corpus) * 1e6:6.1f} us/msg"
    )


def main() -> None:
    rng = random.Random(6)
    plain = [plain_message(rng) for _ in range(5000)]
    secrets = secret_lines()
    rich = []
    for text in plain[:2000]:
        cut = rng.randrange(len(text))
        rich.append(text[:cut] + " " + rng.choice(secrets) + " " + text[cut:])
    measure("plain English/CJK (no secret)", plain)
    measure("secret-rich (one secret each)", rich)
    measure("secret test vectors alone", secrets * 50)
    if DATA.exists():
        texts = transcript_texts()
        if texts:
            measure("sample transcripts (user/assistant)", texts)


if __name__ == "__main__":
    main()
