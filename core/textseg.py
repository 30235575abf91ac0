"""Substring search for scripts written without spaces, on top of FTS5 ``unicode61``.

unicode61 cuts tokens only at separators, so a sentence of Chinese, Japanese, Thai... is one
huge token and a word inside it can never be found. ``segment`` inserts U+200B ZERO WIDTH SPACE
(a separator for unicode61) around every character of those scripts, so each character (with
its combining marks) becomes a token of its own; a query segmented the same way becomes a
phrase of single-character tokens, which FTS5 finds anywhere in a sentence.

The rule works on *clusters* (a base character plus the joiners that follow it: combining
marks, variation selectors, Hangul medial/final jamo) and *runs* (maximal sequences of
segmentable clusters). Inside a run a U+200B goes between every two clusters; at a run's edge
one goes unless the neighbour is whitespace or the text's start/end (a space already
separates). Example, with · standing for U+200B::

    "用Python写代码 好" -> "用·Python·写·代·码 好"

Exact inverse: every inserted U+200B touches a run, and a U+200B that was already in the text
never does (it is not whitespace, so the edge between it and a run gets an inserted U+200B,
which then sits between them). ``desegment`` removes exactly the U+200B touching a run, so
``desegment(segment(t)) == t`` for every ``t`` (tests/test_query.py checks it with hypothesis).

Changing anything here changes what the index holds: bump ``indexer.EXTRACTION_VERSION``.
"""

from __future__ import annotations

import re
import unicodedata

ZWSP = "\u200b"

# Blocks of scripts written without spaces between words. Within them, combining marks (and
# Hangul medial/final jamo, so a decomposed syllable stays one cluster) are joiners, not bases.
_BLOCKS: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0E7F),  # Thai
    (0x0E80, 0x0EFF),  # Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x19E0, 0x19FF),  # Khmer Symbols
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3021, 0x302F),  # Hangzhou numerals, ideographic tone marks
    (0x3031, 0x3035),  # kana repeat marks
    (0x3038, 0x303C),  # more ideographic iteration marks
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana
    (0x3130, 0x318F),  # Hangul Compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana Phonetic Extensions
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xA960, 0xA97F),  # Hangul Jamo Extended-A
    (0xA9E0, 0xA9FF),  # Myanmar Extended-B
    (0xAA60, 0xAA7F),  # Myanmar Extended-A
    (0xAC00, 0xD7AF),  # Hangul Syllables
    (0xD7B0, 0xD7FF),  # Hangul Jamo Extended-B
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0xFF66, 0xFF9F),  # Halfwidth Katakana
    (0xFFA0, 0xFFDC),  # Halfwidth Hangul
    (0x1B000, 0x1B16F),  # Kana Supplement, Kana Extended-A, Small Kana Extension
    (0x20000, 0x323AF),  # CJK Extensions B-H, Compatibility Ideographs Supplement
)
# Hangul jungseong/jongseong: they continue the syllable started by a choseong.
_HANGUL_TAIL = ((0x1160, 0x11FF), (0xD7B0, 0xD7FF))
# Joiners outside those blocks: generic combining marks and variation selectors (IVS).
_OTHER_JOINERS = (
    (0x0300, 0x036F),
    (0x1AB0, 0x1AFF),
    (0x1DC0, 0x1DFF),
    (0x20D0, 0x20FF),
    (0xFE00, 0xFE0F),
    (0xFE20, 0xFE2F),
    (0xE0100, 0xE01EF),
)


class LazyPattern:
    """A regular expression compiled on first use. Patterns over these big Unicode classes
    take milliseconds to compile, which a process that only ever sees ASCII text (a CLI
    search for an English word) never needs to pay."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str):  # noqa: ANN204 - the compiled pattern's attribute
        if self._compiled is None:
            self._compiled = re.compile(*self._source)
        return getattr(self._compiled, name)


def _ranges(codepoints: list[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for cp in sorted(codepoints):
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


def _char_class(ranges: list[tuple[int, int]] | tuple[tuple[int, int], ...]) -> str:
    """The inside of a regex ``[...]`` for these ranges, as escapes (no raw marks in patterns)."""
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


def _build() -> tuple[str, str, str, str]:
    bases: list[int] = []
    marks: list[int] = []
    big: list[tuple[int, int]] = []
    for lo, hi in _BLOCKS:
        if hi - lo > 0x1000:  # the big ideograph/syllable blocks hold no marks: skip the scan
            big.append((lo, hi))
            continue
        for cp in range(lo, hi + 1):
            if any(a <= cp <= b for a, b in _HANGUL_TAIL):
                continue
            (marks if unicodedata.category(chr(cp)).startswith("M") else bases).append(cp)
    mark_ranges = _ranges(marks) + list(_OTHER_JOINERS)
    return (
        _char_class(_ranges(bases) + big),
        _char_class(mark_ranges + list(_HANGUL_TAIL)),
        _char_class(mark_ranges),
        _char_class(_BLOCKS),
    )


# SEG_CLASS: base characters that are segmented; JOIN_CLASS: what stays with its base (marks,
# Hangul medial/final jamo); MARK_CLASS: the marks alone (unicode61 separators or diacritics,
# never token letters); BLOCK_CLASS: the whole blocks, bases and marks.
SEG_CLASS, JOIN_CLASS, MARK_CLASS, BLOCK_CLASS = _build()

_ANY_SEG = LazyPattern(f"[{SEG_CLASS}]")
# A run of segmentable clusters: a base, then bases and joiners in any order (all joiners of
# the run belong to some cluster of it). Captured, so ``split`` returns text, run, text, ...
_RUN_BODY = f"[{SEG_CLASS}][{SEG_CLASS}{JOIN_CLASS}]*"
_RUN = LazyPattern(f"({_RUN_BODY})")
_ZWSP_BEFORE_JOINER = LazyPattern(f"{ZWSP}(?=[{JOIN_CLASS}])")
_HAS_JOINER = LazyPattern(f"[{JOIN_CLASS}]")
# A segmented run with the U+200B at its edges (outside the group) and between its clusters.
_SEGMENTED_RUN = LazyPattern(f"{ZWSP}?({_RUN_BODY}(?:{ZWSP}{_RUN_BODY})*){ZWSP}?")


def has_segmentable(text: str) -> bool:
    """True if ``text`` holds a character of a script written without spaces."""
    return not text.isascii() and _ANY_SEG.search(text) is not None


def segment(text: str) -> str:
    """Make every Han/Kana/Hangul/Thai/Lao/Khmer/Myanmar cluster its own unicode61 token."""
    if text.isascii() or _ANY_SEG.search(text) is None:  # fast path: most messages
        return text
    parts = _RUN.split(text)  # even indexes: other text (maybe ""), odd: runs
    for i in range(1, len(parts), 2):
        run = ZWSP.join(parts[i])  # C-speed; then glue the joiners back to their base
        if _HAS_JOINER.search(run) is not None:
            run = _ZWSP_BEFORE_JOINER.sub("", run)
        before, after = parts[i - 1], parts[i + 1]
        # No separator is needed next to whitespace; anything else (a letter, digit, U+200B,
        # punctuation) gets one, which is what makes an original U+200B unambiguous.
        if before and not before[-1].isspace():
            run = ZWSP + run
        if after and not after[0].isspace():
            run += ZWSP
        parts[i] = run
    return "".join(parts)


def desegment(text: str) -> str:
    """Remove exactly the U+200B that ``segment`` inserted (the ones touching a run)."""
    if ZWSP not in text:
        return text
    parts = _SEGMENTED_RUN.split(text)
    parts[1::2] = [run.replace(ZWSP, "") for run in parts[1::2]]
    return "".join(parts)
