"""Secret redaction (SPEC 6): every text that is indexed, shown or exported passes ``redact``.

A secret becomes a mask: 18+ characters keep their first 6 and last 4 around "…"
(``sk-abc…wxyz``), shorter ones become ``***``. Whatever labels the secret stays
(``DB_PASSWORD=***``, ``Authorization: Bearer eyJhbG…sw5c``, ``https://user:***@host``), so a
reader still sees what was there. The rules live in redact_rules.py; docs/redaction.md
explains them.

Three passes, each close to free when there is nothing to find:

0. *PEM private key blocks*, found by their literal ``-----BEGIN`` line.
1. *Tokens* that name themselves (vendor prefixes, JWTs, AWS keys, ...). Each one contains a
   long run of token characters with a capital or a digit, so bytes ``translate`` tables
   (memory speed) find those runs and only the windows around them are searched, with one
   combined pattern.
2. *Secrets named by their context*: ``NAME=value``, JSON fields, CLI flags, headers, URL
   userinfo. One pattern finds trigger words followed by a separator in the lower-cased
   text; at each hit a small anchored pattern reads the name and the value.

A mask is inert (no rule accepts one as a secret) and the passes repeat until nothing
changes, so ``redact`` is idempotent. Every pattern is linear: repeats are bounded or cannot
overlap; pass 2 resumes after a secret it masked and reads a short rejected value again for
names inside it, but never a long one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from . import redact_rules as rules

# Bump whenever a rule changes: it is part of the indexer version, so every session is
# re-indexed with the new rules (SPEC 3, 8).
REDACTION_VERSION = 2

_ELLIPSIS = "…"
_SHORT_MASK = "***"
_LONG = 18  # from this length a mask keeps 6 + 4 characters: enough to recognise, not to use
_MAX_ROUNDS = 8  # one round finds nothing new in practice; the bound only caps pathologies

Span = tuple[int, int]
# A context handler gets the prepared text, the hit's start and end, and returns the span of
# the secret it found (or None) and where the scan resumes.
Handler = Callable[["_Scan", int, int], tuple[Span | None, int]]


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
    return bool(_pem_spans(text) or _token_spans(text) or _context_spans(text))


def _redact_once(text: str) -> str:
    # Private key blocks first: their armour line must not be taken for another rule's value.
    text = _apply(text, _pem_spans(text))
    text = _apply(text, _token_spans(text))
    return _apply(text, _context_spans(text))


def _mask(secret: str) -> str:
    if len(secret) >= _LONG:
        return f"{secret[:6]}{_ELLIPSIS}{secret[-4:]}"
    return _SHORT_MASK


def _is_mask(value: str) -> bool:
    return value == _SHORT_MASK or (len(value) == 11 and value[6] == _ELLIPSIS)


def _apply(text: str, spans: list[Span]) -> str:
    """Mask sorted, non-overlapping spans."""
    if not spans:
        return text
    pieces: list[str] = []
    done = 0
    for start, end in spans:
        pieces += (text[done:start], _mask(text[start:end]))
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


# --- Pass 0: PEM private keys ----------------------------------------------------------------


def _pem_spans(text: str) -> list[Span]:
    if "-----BEGIN " not in text:
        return []
    return [m.span("secret") for m in rules.PEM_BLOCK.finditer(text) if not _is_mask(m["secret"])]


# --- Pass 1: tokens ---------------------------------------------------------------------------


def _token_spans(text: str) -> list[Span]:
    # One byte per character ("?" for non-ASCII), so byte offsets are text offsets.
    ascii_text = text.encode("ascii", "replace")
    runs = ascii_text.translate(rules.RUN_SHAPE)
    run = runs.find(rules.LONG_RUN)
    if run == -1:
        return []
    upper_or_digit = ascii_text.translate(rules.UPPER_OR_DIGIT_SHAPE)
    windows = ascii_text.translate(rules.WINDOW_SHAPE)
    spans: list[Span] = []
    while run != -1:
        run_end = _find_or_end(runs, b" ", run)
        if upper_or_digit.find(b"a", run, run_end) == -1:
            run = runs.find(rules.LONG_RUN, run_end)  # a path or a snake_case name
            continue
        start = windows.rfind(b" ", 0, run) + 1
        end = _find_or_end(windows, b" ", run)
        for match in rules.TOKEN.finditer(text, start, end):
            check = rules.TOKEN_CHECKS[match.lastgroup or ""]
            token = match.group()
            if not rules.is_repetitive(token) and (check is None or check(token)):
                spans.append(match.span())
        run = runs.find(rules.LONG_RUN, end)
    return spans


def _find_or_end(haystack: bytes, needle: bytes, start: int) -> int:
    found = haystack.find(needle, start)
    return len(haystack) if found == -1 else found


# --- Pass 2: context --------------------------------------------------------------------------


class _Scan:
    """A text prepared for pass 2: views of the same length, so offsets are shared."""

    def __init__(self, text: str) -> None:
        self.text = text
        # Lower-cased ASCII, one byte per character ("?" for anything else).
        self.low = text.encode("ascii", "replace").lower()

    @functools.cached_property
    def names(self) -> bytes:
        """"a" where a name character is, " " elsewhere."""
        return self.low.translate(rules.NAME_SHAPE)


def _context_spans(text: str) -> list[Span]:
    if not any(hint in text for hint in rules.SEPARATOR_HINTS) and not _mentions_bearer(text):
        return []
    scan = _Scan(text)
    spans: list[Span] = []
    resume = 0
    while (hit := rules.LOCATOR.search(scan.low, resume)) is not None:
        trigger = hit.group()
        start = hit.start() - rules.TRIGGER_BACK.get(trigger, 0)
        found, resume = _HANDLERS[trigger](scan, start, hit.end())
        resume = max(resume, hit.end())
        if found is not None and not _is_mask(text[found[0] : found[1]]):
            spans.append(found)
    return spans


def _mentions_bearer(text: str) -> bool:
    return "earer" in text or "EARER" in text


def _assignment(scan: _Scan, start: int, end: int) -> tuple[Span | None, int]:
    """``NAME <sep> value`` where the hit lies inside NAME (DB_PASSWORD=..., "apiKey": ...,
    --api-key ..., ?token=...)."""
    text, names = scan.text, scan.names
    name_start = names.rfind(b" ", 0, start) + 1
    name_end = _find_or_end(names, b" ", end)
    if name_end - name_start > 2 * rules.MAX_NAME:  # a run this long is data, not a name
        return None, name_end
    name = text[name_start:name_end]
    if not rules.name_strength(name):  # token_count, credentialId, author: read on past it
        return None, name_end
    pattern = rules.FLAG_VALUE if name.startswith("-") else rules.ASSIGNMENT
    match = pattern.match(text, name_end)
    if match is None:
        return None, name_end
    group = match.lastgroup or ""  # the value's group closes last: dq, sq, bq, eq or bare
    value_start, value_end = match.span(group)
    value = match.group(group)
    if _is_mask(value):
        return None, match.end()
    if group == "bare":
        sep, spaced = match.group("sep"), bool(match.group("pre") or match.group("post"))
        if sep == "=" and not spaced and not match.group("close"):
            in_query = name_start > 0 and text[name_start - 1] in "?&"
            style = "query" if in_query else "tight"
        else:
            style = "spaced" if sep in ("=", ":=") else "colon"
        if name.startswith("-") and value.startswith("-"):
            return None, name_end  # --password-stdin --other: the next flag is no value
        if name.startswith("-"):
            style = "tight"  # a flag's next word is its value: --password hunter2
        if value[-1] in ")]}":
            value = _trim_closers(value)
            value_end = value_start + len(value)
    else:
        style = "quoted"
    if value and rules.assignment_is_secret(name, value, style):
        return (value_start, value_end), match.end()
    # A rejected value may hold the next candidate (--flag "client_secret": ...), so the scan
    # goes on inside it; only a long bare value is skipped whole, which keeps chains like
    # key=key=key=... linear.
    long_bare = group == "bare" and len(value) > rules.MAX_REREAD
    return None, (match.end() if long_bare else value_start)


def _found(match: re.Match[str], secret: bool, end: int) -> tuple[Span | None, int]:
    """A secret resumes the scan after it; a rejected candidate right after its trigger, so
    that nothing it read is skipped unexamined."""
    return (match.span("secret"), match.end()) if secret else (None, end)


_OPENER = {")": "(", "]": "[", "}": "{"}


def _trim_closers(value: str) -> str:
    """Drop closing brackets a bare value only picked up from its surroundings: f(token=abc)."""
    while value and value[-1] in ")]}" and value.count(value[-1]) > value.count(_OPENER[value[-1]]):
        value = value[:-1]
    return value


def _auth(scan: _Scan, start: int, end: int) -> tuple[Span | None, int]:
    """``Authorization: <scheme> <credentials>``; any other name with "auth" is an assignment."""
    if not scan.low.startswith(b"authorization", start):
        return _assignment(scan, start, end)
    match = rules.AUTH_HEADER.match(scan.text, start)
    if match is None:
        return None, end
    value = match.group("secret")
    # With a scheme the next word is the credential; without one, prose must not be masked.
    secret = not rules.is_placeholder(value) and (
        match.group("scheme") is not None
        or not (rules.plain_words(value) or rules.code_like(value))
    )
    return _found(match, secret, end)


def _bearer(scan: _Scan, start: int, end: int) -> tuple[Span | None, int]:
    """``Bearer <token>`` without a header name (curl -H "Bearer ...", logs, prose)."""
    match = rules.BARE_BEARER.match(scan.text, start)
    if match is None or (start and scan.text[start - 1].isalpha()):
        return None, end
    value = match.group("secret")
    return _found(match, rules.looks_random(value) and not rules.is_placeholder(value), end)


def _cookie(scan: _Scan, start: int, end: int) -> tuple[Span | None, int]:
    """``Cookie:`` / ``Set-Cookie:`` headers: all their name=value pairs."""
    match = rules.COOKIE_HEADER.match(scan.text, start)
    if match is None:
        return None, end
    return match.span("secret"), match.end()


def _url_userinfo(scan: _Scan, start: int, end: int) -> tuple[Span | None, int]:
    """``scheme://user:password@host``: the password goes, the user stays."""
    match = rules.URL_USERINFO.match(scan.text, start)
    if match is None:
        return None, end
    return _found(match, not rules.is_placeholder(match.group("secret")), end)


def _curl_user(scan: _Scan, start: int, end: int) -> tuple[Span | None, int]:
    """curl ``-u user:password`` / ``--user user:password`` (the password may be quoted alone)."""
    text = scan.text
    if start and text[start - 1] == "-":
        start -= 1  # the hit "-u" was inside "--user"
    if start and text[start - 1] not in " \t\n\"'":
        return None, end
    match = rules.CURL_USER.match(text, start)
    if match is None:
        return None, end
    user, password = match.group("user"), match.group("secret")
    # test:test, www-data:www-data, 1000:1000 (docker -u uid:gid) are not credentials.
    credential = not (
        rules.is_placeholder(password)
        or password.lower() == user.lower()
        or (user.isdigit() and password.isdigit())
    )
    return _found(match, credential, end)


def _bundler(scan: _Scan, start: int, end: int) -> tuple[Span | None, int]:
    """``BUNDLE_<HOST>=user:password``, Bundler's per-host credentials."""
    if start and scan.names[start - 1] == 0x61:  # inside a longer name
        return None, end
    match = rules.BUNDLER_CREDENTIAL.match(scan.text, start)
    if match is None:
        return None, end
    return _found(match, not rules.is_placeholder(match.group("secret")), end)


_HANDLERS: dict[bytes, Handler] = {
    **dict.fromkeys(
        (b"key", b"ken", b"pass", b"pwd", b"g", b"cret", b"cr3t", b"cred", b"--"), _assignment
    ),
    b"uth": _auth,
    b"bearer": _bearer,
    b"kie": _cookie,
    b"://": _url_userinfo,
    b"-u": _curl_user,
    b"bundle_": _bundler,
}
