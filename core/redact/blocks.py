"""Pass 0 of redaction: key material and secrets in blocks and fixed formats.

Each form is found by a literal (``----``, ``Private-Lines:``, ``base64``, ``WIFI:``,
``expect`` and ``send``), so a text without it costs one substring search. Every pattern is linear: repeats
are bounded or separated by a character they cannot hold, and each backward look stops at the
previous block.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from . import rules
from .rules import is_mask
from .spans import Span

# An armoured private key: PEM (RSA, EC, OPENSSH, ENCRYPTED, PGP ... BLOCK), the SSH.com form
# with four dashes and spaces, OpenVPN's static key (hex, mixed case). The body goes whatever
# it is written in (base64, hex, headers, words); the armour lines stay. A block cut off before
# its END line is masked to the end of the text.
_ARMOUR_NAME = r"(?:[A-Za-z0-9]+ ){0,4}(?:PRIVATE KEY(?: BLOCK)?|(?i:static key)(?: V\d)?)"
PRIVATE_KEY_BLOCK = re.compile(
    r"-{4,5} ?BEGIN " + _ARMOUR_NAME + r" ?-{4,5}\s*"
    r"(?P<secret>(?!-{4})\S[\s\S]*?)(?=\s*(?:-{4,5} ?END|\Z))"
)
# The END line of a block whose BEGIN is not in this text (a key pasted over two messages).
PRIVATE_KEY_END = re.compile(r"-{4,5} ?END " + _ARMOUR_NAME + r" ?-{4,5}")
_BEGIN = re.compile(r"-{4,5} ?BEGIN ")
_KEY_LINE = re.compile(r"[ \t]*[A-Za-z0-9+/=]{1,200}[ \t]*\r?")
# PuTTY's .ppk: the base64 lines after "Private-Lines: N" (the MAC after them is no secret).
PUTTY_PRIVATE = re.compile(
    r"Private-Lines:[ \t]*\d{1,4}[ \t]*\r?\n"
    r"(?P<secret>[A-Za-z0-9+/=]{1,200}(?=\r?$)(?:\r?\n[A-Za-z0-9+/=]{1,200}(?=\r?$)){0,499})",
    re.MULTILINE,
)
# A base64 blob decoded into a file or a pipe: echo <b64> | base64 -d > .env, base64 -d <<< <b64>.
def _b64_arg(n: int) -> str:
    return rf"""(?P<q{n}>["']?)(?P<blob{n}>[A-Za-z0-9+/]{{16,}}={{0,2}})(?P=q{n})"""


_DECODE = r"base64[ \t]+(?:-d|--decode|-D)(?![\w-])"
BASE64_DECODED = re.compile(
    r"""(?:(?:echo|printf)(?<![\w-]echo)(?<![\w-]printf)"""
    r"""(?:[ \t]+(?:-[A-Za-z]{1,3}|["']?%s["']?))*[ \t]+""" + _b64_arg(1)
    + r"[ \t]*\|[ \t]*(?:sudo[ \t]+)?" + _DECODE + r"|" + _DECODE + r"[ \t]*<<<[ \t]*" + _b64_arg(2) + r")"
    r"(?P<rest>[^\n]{0,200})"
)
# Where the decoded text goes, when the file's name says it holds secrets.
_SECRET_FILE = re.compile(
    r"""(?:>|\btee[ \t]+(?:-a[ \t]+)?|-o[ \t]*)[ \t]*["']?[^\s"';|&]*"""
    r"""(?:\.env\b|\.pem\b|\.key\b|\.p12\b|\.pfx\b|\.jks\b|id_rsa|id_ed25519|id_ecdsa|credentials|secret"""
    r"""|token|passw|\.npmrc|\.pypirc|\.netrc|\.pgpass|kubeconfig|\.dockercfg|auth\.json)""",
    re.IGNORECASE,
)
# A Wi-Fi QR code: WIFI:T:WPA;S:<name>;P:<password>;; (fields in any order, \; escapes).
WIFI_PASSWORD = re.compile(
    r"WIFI:(?:[A-Za-z]{1,2}:(?:\\.|[^;\\\n]){0,100};){0,6}?P:(?P<secret>(?:\\.|[^;\\\n]){1,200})",
    re.IGNORECASE,
)
# expect scripts: send "<password>\r" after an expect that waits for a password prompt.
EXPECT_SEND = re.compile(
    r"""send(?<![\w-]send)(?:[ \t]+--)?[ \t]+(?P<q>["{])(?P<secret>[^"{}\\\n]{1,200})(?:\\[rn])?["}]"""
)
_PROMPT_WORDS = re.compile(r"assword|passphrase|passcode|\bpin\b|secret|token|\botp\b", re.IGNORECASE)
_EXPECT_REACH = 300


def block_spans(text: str, contains_secret: Callable[[str], bool]) -> list[Span]:
    """Every secret of pass 0 in ``text``, sorted; ``contains_secret`` judges decoded base64."""
    spans: list[Span] = []
    if "----" in text:  # the armour of every key block
        if "BEGIN " in text:
            spans += [
                m.span("secret")
                for m in PRIVATE_KEY_BLOCK.finditer(text)
                if not (is_mask(m["secret"]) or _stand_in(m["secret"]))
            ]
        if "END " in text:
            spans += _key_tails(text)
    if "Private-Lines:" in text:
        spans += [m.span("secret") for m in PUTTY_PRIVATE.finditer(text) if not is_mask(m["secret"])]
    if "base64" in text:
        spans += _decoded(text, contains_secret)
    if "WIFI:" in text:
        spans += _wifi(text)
    if "expect" in text and "send" in text:
        spans += _expect(text)
    if len(spans) > 1:
        spans.sort(key=lambda span: (span[0], -span[1]))
    return spans


def _stand_in(body: str) -> bool:
    """One short bare word (-----BEGIN PRIVATE KEY-----\nanything\n-----END...) stands in for
    a key; a long one of letters only is a key written without digits."""
    return body.isalpha() and len(body) <= 24


def _key_tails(text: str) -> list[Span]:
    """The key lines before an END line whose BEGIN is not in the text: the lines of base64
    right above it, back to the previous block at most."""
    spans: list[Span] = []
    floor = 0  # nothing before this belongs to the next END line
    for end in PRIVATE_KEY_END.finditer(text):
        stop = end.start()
        start = text.rfind("\n", floor, stop) + 1 or floor  # the END line's start
        on_line = text[start:stop]
        if _BEGIN.search(text, floor, stop) is None and (
            not on_line.strip(" \t") or _KEY_LINE.fullmatch(on_line)
        ):
            while start > floor:
                line_start = text.rfind("\n", floor, start - 1) + 1 or floor
                if not _KEY_LINE.fullmatch(text, line_start, start - 1):
                    break
                start = line_start
            body = text[start:stop].strip()
            random = any(c.isdigit() or c in "+/" for c in body)  # not a few words
            if len(body) >= 16 and random and not is_mask(body) and not _stand_in(body):
                first = text.index(body, start)
                spans.append((first, first + len(body)))
        floor = end.end()
    return spans


def _decoded(text: str, contains_secret: Callable[[str], bool]) -> list[Span]:
    spans = []
    for match in BASE64_DECODED.finditer(text):
        group = "blob1" if match.group("blob1") is not None else "blob2"
        blob = match.group(group)
        if is_mask(blob) or rules.is_repetitive(blob):
            continue
        if _SECRET_FILE.search(match.group("rest")) or _holds_secret(blob, contains_secret):
            spans.append(match.span(group))
    return spans


def _holds_secret(blob: str, contains_secret: Callable[[str], bool]) -> bool:
    try:
        decoded = base64.b64decode(blob + "=" * (-len(blob) % 4)).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    return contains_secret(decoded)


def _wifi(text: str) -> list[Span]:
    spans = []
    for match in WIFI_PASSWORD.finditer(text):
        value = match.group("secret")
        if not (is_mask(value) or rules.is_placeholder(value)):
            spans.append(match.span("secret"))
    return spans


def _expect(text: str) -> list[Span]:
    spans = []
    for match in EXPECT_SEND.finditer(text):
        before = text[max(0, match.start() - _EXPECT_REACH) : match.start()]
        asked = before.rfind("expect")
        value = match.group("secret")
        if asked == -1 or _PROMPT_WORDS.search(before, asked) is None:
            continue  # send "yes\r" after "continue connecting?"
        if not (is_mask(value) or rules.is_placeholder(value)):
            spans.append(match.span("secret"))
    return spans
