"""The redaction engine behind the door (``__init__.py``) (loaded on the first call).

A secret becomes a mask: 18+ characters keep their first 6 and last 4 around "…"
(``sk-abc…wxyz``), shorter ones become ``***``. Whatever labels the secret stays
(``DB_PASSWORD=***``, ``Authorization: Bearer eyJhbG…sw5c``, ``https://user:***@host``), so a
reader still sees what was there. docs/redaction.md explains every rule.

Four passes, each close to free when there is nothing to find:

0. *Blocks and fixed formats* (blocks.py): private key blocks (and the second half of
   one split over two messages), PuTTY's private lines, base64 decoded into a secret file,
   Wi-Fi QR codes, expect's send after a password prompt; each found by a literal.
1. *Tokens* that name themselves (vendor prefixes, JWTs, AWS keys, ...; tokens.py),
   and *unknown tokens*: high-entropy strings a few words after a secret word
   (nearby.py). Each contains a long run of token characters with a capital or a
   digit, so bytes ``translate`` tables (memory speed) find those runs and only the windows
   around them are searched.
2. *Secrets named by their context* (context.py, patterns.py): ``NAME=value``
   in every common syntax, JSON fields, XML elements, CLI flags, headers, URL userinfo,
   ``mysql -p``, SQL, .netrc and prose ("the password is ..."). One pattern finds trigger
   words in the lower-cased text; at each hit small anchored patterns read the name and the
   value, and rules.py judges them.
3. *Kubernetes Secret manifests*: the values under ``data:``.

A mask is inert (no rule accepts one as a secret) and the passes repeat until nothing
changes, so ``redact`` is idempotent. Every pattern is linear: repeats are bounded or cannot
overlap; pass 2 resumes after a secret it masked and reads a short rejected value again for
names inside it, but never a long one.
"""

from __future__ import annotations

from . import rules, tokens
from .blocks import block_spans
from .commands import k8s_spans
from .context import context_spans
from .nearby import near_secret_word
from .spans import Span

_ELLIPSIS = "…"
_SHORT_MASK = "***"
_LONG = 18  # from this length a mask keeps 6 + 4 characters: enough to recognise, not to use
_MAX_ROUNDS = 8  # one round finds nothing new in practice; the bound only caps pathologies



def redact(text: str) -> str:
    """``text`` with every secret masked. Idempotent: ``redact(redact(x)) == redact(x)``."""
    # Masking can change what surrounds another candidate (a value that ended at a quote now
    # runs on), so the passes repeat until nothing changes: a text without secrets takes one
    # round, one with secrets two.
    for _ in range(_MAX_ROUNDS):
        masked = _redact_once(text)
        if masked == text:
            break
        text = masked
    return text


def contains_secret(text: str) -> bool:
    """Whether ``redact`` would change ``text``: one round, stopping at the first pass that
    finds a secret."""
    return bool(
        block_spans(text, contains_secret) or _token_spans(text) or context_spans(text) or k8s_spans(text)
    )


def _redact_once(text: str) -> str:
    # Private key blocks first: their armour line must not be taken for another rule's value.
    text = _apply(text, block_spans(text, contains_secret))
    text = _apply(text, _token_spans(text))
    text = _apply(text, context_spans(text))
    return _apply(text, k8s_spans(text))


def _mask(secret: str) -> str:
    if len(secret) >= _LONG:
        return f"{secret[:6]}{_ELLIPSIS}{secret[-4:]}"
    return _SHORT_MASK


def _apply(text: str, spans: list[Span]) -> str:
    """Mask sorted spans; one that overlaps the previous one is skipped (the next round sees
    what is left of it)."""
    if not spans:
        return text
    pieces: list[str] = []
    done = 0
    for start, end in spans:
        if start < done:
            continue
        pieces += (text[done:start], _mask(text[start:end]))
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


# --- Pass 1: tokens ---------------------------------------------------------------------------


def _token_spans(text: str) -> list[Span]:
    # One byte per character ("?" for non-ASCII), so byte offsets are text offsets.
    ascii_text = text.encode("ascii", "replace")
    runs = ascii_text.translate(tokens.RUN_SHAPE)
    run = runs.find(tokens.LONG_RUN)
    if run == -1:
        return []
    upper_or_digit = ascii_text.translate(tokens.UPPER_OR_DIGIT_SHAPE)
    windows = ascii_text.translate(tokens.WINDOW_SHAPE)
    spans: list[Span] = []
    searched = 0  # the windows already searched (a window can hold several runs)
    while run != -1:
        run_end = _find_or_end(runs, b" ", run)
        if upper_or_digit.find(b"a", run, run_end) == -1:
            run = runs.find(tokens.LONG_RUN, run_end)  # a path or a snake_case name
            continue
        if run >= searched:
            start = windows.rfind(b" ", 0, run) + 1
            searched = _find_or_end(windows, b" ", run)
            for match in tokens.find_tokens(text, start, searched):
                check = tokens.TOKEN_CHECKS[match.lastgroup or ""]
                token = match.group()
                # Filler anywhere, or a tail of filler after the prefix (a GitLab prefix then 123123...).
                filler = rules.is_repetitive(token) or rules.is_repetitive(token[-16:])
                if not (filler or rules.has_filler(token)) and (check is None or check(token)):
                    spans.append(match.span())
            for match in tokens.LOOSE_TOKEN.finditer(text, start, searched):
                token = match.group()
                filler = rules.is_repetitive(token[-16:]) or rules.has_filler(token)
                if tokens.loose_token(token) and not filler:
                    spans.append(match.span())
        covered = bool(spans) and spans[-1][1] > run and spans[-1][0] < run_end
        if not covered:
            value_end = run_end
            while value_end < len(text) and text[value_end] == "=":
                value_end += 1
            if near_secret_word(text, run, value_end, ascii_text):
                spans.append((run, value_end))
        run = runs.find(tokens.LONG_RUN, run_end)
    spans.sort(key=lambda span: (span[0], -span[1]))  # of two at one place, the longer
    return spans


def _find_or_end(haystack: bytes, needle: bytes, start: int) -> int:
    found = haystack.find(needle, start)
    return len(haystack) if found == -1 else found
