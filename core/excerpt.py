"""A short window of a matched message, around the place that best explains the match.

Rule (docs/query-language.md): whitespace and control characters collapse to single spaces;
the window holds the most distinct query phrases that fit in it together (ties: the tightest,
then the earliest), roughly centred, with its edges moved to word boundaries when one is near.
A cut end gets ``…``. Length: a text of at most ``max_chars`` is returned whole; otherwise the
visible text is at most ``max_chars`` with one cut end and ``max_chars - 1`` with two, so an
excerpt, ellipses included, is never longer than ``max_chars + 1`` (301 by default).
A message longer than ``SCAN_CHARS`` is only looked at in a window of that size around the
first plain occurrence of a query term, so the work per excerpt is bounded.
"""

from __future__ import annotations

import re
import unicodedata
from collections import deque
from typing import NamedTuple

from .query import ParsedQuery, tokens

ELLIPSIS = "…"
_COLLAPSE = re.compile("[\\s\x00-\x1f\x7f-\x9f]+")  # controls too: an excerpt goes to terminals
_SNAP = 20  # how far an edge may move inwards to land between words
SCAN_CHARS = 20_000  # the most of one message an excerpt ever looks at


class Excerpt(NamedTuple):
    text: str
    # (start, end) offsets into ``text`` of each matched token; sorted, never overlapping
    # (tokens of one phrase or CJK word are separate spans that may touch).
    highlights: tuple[tuple[int, int], ...]


class _Hit(NamedTuple):
    start: int
    end: int
    phrase: int  # index into query.phrases
    spans: tuple[tuple[int, int], ...]


def _hits(toks: list[tuple[int, int, str]], query: ParsedQuery) -> list[_Hit]:
    """Every place a whole phrase occurs (consecutive tokens, as FTS5 phrases match)."""
    where: dict[str, list[int]] = {}
    for i, (_, _, tok) in enumerate(toks):
        where.setdefault(tok, []).append(i)
    last = len(query.phrases) - 1
    hits: list[_Hit] = []
    for k, phrase in enumerate(query.phrases):
        n = len(phrase)
        is_prefix = query.prefix and k == last

        def same(j: int, tok: str) -> bool:
            want = phrase[j]
            return tok.startswith(want) if is_prefix and j == n - 1 else tok == want

        if is_prefix and n == 1:
            starts = [i for i, (_, _, tok) in enumerate(toks) if tok.startswith(phrase[0])]
        else:
            starts = where.get(phrase[0], [])
        for i in starts:
            run = toks[i : i + n]
            if len(run) == n and all(same(j, tok) for j, (_, _, tok) in enumerate(run)):
                hits.append(_Hit(run[0][0], run[-1][1], k, tuple((s, e) for s, e, _ in run)))
    hits.sort()
    return hits


def _best_spot(hits: list[_Hit], room: int) -> tuple[int, int]:
    """(start, end) of the stretch <= ``room`` chars with the most distinct phrases."""
    if not hits:
        return 0, 0  # nothing found in Python (tokenizer mismatch): show the beginning
    best = (0, 0, hits[0].start, hits[0].end)  # (distinct, -width, start, end)
    counts: dict[int, int] = {}
    ends: deque[int] = deque()  # window indexes by decreasing end: ends[0] has the max end
    left = 0
    for right, hit in enumerate(hits):
        counts[hit.phrase] = counts.get(hit.phrase, 0) + 1
        while ends and hits[ends[-1]].end <= hit.end:
            ends.pop()
        ends.append(right)
        # Drop hits on the left that are too far away, or repeat a phrase seen later anyway.
        while left < right and (
            hits[ends[0]].end - hits[left].start > room or counts[hits[left].phrase] > 1
        ):
            counts[hits[left].phrase] -= 1
            if not counts[hits[left].phrase]:
                del counts[hits[left].phrase]
            left += 1
            if ends[0] < left:
                ends.popleft()
        start, end = hits[left].start, hits[ends[0]].end
        score = (len(counts), start - end, start, end)
        if score[:2] > best[:2]:
            best = score
    return best[2], best[3]


def _is_mark(ch: str) -> bool:
    return unicodedata.category(ch).startswith("M")


def _window(text: str, spot_start: int, spot_end: int, max_chars: int) -> tuple[int, int]:
    n = len(text)
    if n <= max_chars:
        return 0, n
    room = max_chars - 1  # visible characters when both ends are cut
    start = spot_start - max(0, (room - (spot_end - spot_start)) // 2)
    if start <= 0:
        start, end = 0, max_chars  # only the end is cut
    elif start + room >= n:
        start, end = n - max_chars, n  # only the start is cut
    else:
        end = start + room
    # Prefer word boundaries: only ever shrink, never past the spot.
    if 0 < start < n and text[start - 1] != " " and text[start] != " ":
        space = text.find(" ", start, min(spot_start, start + _SNAP))
        if space != -1:
            start = space + 1
    if end < n and text[end - 1] != " " and text[end] != " ":
        space = text.rfind(" ", max(spot_end, end - _SNAP), end)
        if space != -1:
            end = space
    # Never separate a combining mark from its base.
    while 0 < start < min(spot_start, end) and _is_mark(text[start]):
        start += 1
    while max(spot_end, start) < end < n and _is_mark(text[end]):
        end -= 1
    while start < end and text[start] == " ":
        start += 1
    while end > start and text[end - 1] == " ":
        end -= 1
    return start, end


def _scan_span(body: str, query: ParsedQuery) -> tuple[int, int]:
    """The part of ``body`` an excerpt looks at: all of it up to ``SCAN_CHARS``, else
    ``SCAN_CHARS`` around the first place a query term occurs as plain lower-case text (a
    match only found through diacritic folding falls back to the beginning)."""
    n = len(body)
    if n <= SCAN_CHARS:
        return 0, n
    lowered = body.lower()
    found = [p for term in query.terms if (p := lowered.find(term)) >= 0]
    start = max(0, min(min(found, default=0) - SCAN_CHARS // 2, n - SCAN_CHARS))
    if start > 0:  # begin after a space, not inside a word
        space = body.find(" ", start, start + _SNAP)
        start = space + 1 if space != -1 else start
    return start, min(n, start + SCAN_CHARS)


def make_excerpt(body: str, query: ParsedQuery, max_chars: int = 300) -> Excerpt:
    """The excerpt of ``body`` (desegmented message text) to show for ``query``; never more
    than ``SCAN_CHARS`` of it are looked at, however long the message."""
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    lo, hi = _scan_span(body, query)
    text = _COLLAPSE.sub(" ", body[lo:hi]).strip()
    hits = _hits(list(tokens(text)), query)
    spot_start, spot_end = _best_spot(hits, max_chars - 1)
    start, end = _window(text, spot_start, spot_end, max_chars)
    head = ELLIPSIS if start > 0 or lo > 0 else ""
    tail = ELLIPSIS if end < len(text) or hi < len(body) else ""
    if head and tail and end - start > max_chars - 1:
        end = start + max_chars - 1  # the scan cut an end the window did not
    shift = len(head) - start
    highlights = sorted(
        {(s + shift, e + shift) for hit in hits for s, e in hit.spans if start <= s and e <= end}
    )
    return Excerpt(head + text[start:end] + tail, tuple(highlights))
