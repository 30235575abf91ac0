"""Ranking: BM25 over the messages a caller may see, and nothing else (SPEC 5, 12).

The statistics BM25 needs (how many messages there are, their average length, how many
hold each part of the query) are those of the caller's visible, searchable messages in one
agent database, so a score never moves because a hidden session gained or lost a word
(docs/visibility.md). The storage supplies the candidate rows and raw counts; this module
holds the arithmetic, so every storage backend ranks alike.

- Score of a message: the sum over the query's parts (words or phrases) of
  ``idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average_length))`` with
  ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` (always positive). ``tf`` is how often the
  part occurs in the message (as consecutive tokens, as FTS5 matches it), ``length`` its
  stored text in characters.
- ``df`` of a part is counted exactly up to ``cap`` visible messages; a commoner part is
  estimated from its newest ``cap`` matches: ``cap * N / (visible messages at least as new
  as the cap-th newest match)``, those taken as spread evenly over the visible messages'
  time span. Both come from visible messages only.
"""

from __future__ import annotations

import math
import re
from typing import Sequence

from .query import NON_ASCII_TOKEN_CHAR, TOKEN_CHAR, ParsedQuery, fold
from .storage.model import CorpusStats, PartCount
from .textseg import LazyPattern

K1 = 1.2
B = 0.75


def holding(count: PartCount, rows: int) -> float:
    """Visible messages holding a part (of ``rows``): counted, or scaled from its newest
    matches."""
    if count.newer is None or count.newer <= 0:
        return float(count.found)
    return min(float(rows), count.found * rows / count.newer)


def df(stats: CorpusStats, i: int) -> float:
    return holding(stats.parts[i], stats.rows)


def idf(rows: int, held_by: float) -> float:
    return math.log(1.0 + (rows - held_by + 0.5) / (held_by + 0.5))


# Words are counted with one regex per part on the folded text: the part's tokens with
# anything but token characters between them, the last one a whole token (or, in prefix mode,
# the start of one); the first must start a token, checked on each hit. The index tokenizes
# the same way (query.tokens). ASCII messages, most of them, take a cheaper character class.
_TOKEN_CHAR = LazyPattern(TOKEN_CHAR)
_NON_ASCII_TOKEN_CHAR = re.compile(NON_ASCII_TOKEN_CHAR)


def _pattern(phrase: Sequence[str], prefix: bool, ascii_only: bool) -> re.Pattern[str] | None:
    if ascii_only and not all(tok.isascii() for tok in phrase):
        return None  # an ASCII message cannot hold it
    token, other = ("[a-z0-9]", "[^a-z0-9]") if ascii_only else (
        f"(?:{TOKEN_CHAR})", f"(?:(?!{TOKEN_CHAR}).)")
    body = f"{other}+".join(re.escape(tok) for tok in phrase)
    return re.compile(body if prefix else f"{body}(?!{token})", re.DOTALL)


def _count(pattern: re.Pattern[str], text: str, ascii_only: bool, one_token: bool) -> int:
    """Occurrences starting at a token boundary; overlapping ones count, as in FTS5 (one
    token cannot overlap itself at a token start, so then one scan finds them all)."""
    found = 0
    if one_token:
        for hit in pattern.finditer(text):
            start = hit.start()
            if not start or not (text[start - 1].isalnum() if ascii_only
                                 else _TOKEN_CHAR.match(text[start - 1])):
                found += 1
        return found
    pos = 0
    while (hit := pattern.search(text, pos)) is not None:
        start = hit.start()
        if not start or not (text[start - 1].isalnum() if ascii_only
                             else _TOKEN_CHAR.match(text[start - 1])):
            found += 1
        pos = start + 1
    return found


class TermCounter:
    """How often each part of a query occurs in a message's stored text."""

    def __init__(self, query: ParsedQuery) -> None:
        last = len(query.phrases) - 1
        self.parts = [(p, query.prefix and i == last, len(p) == 1)
                      for i, p in enumerate(query.phrases)]
        self.ascii = [(_pattern(p, prefix, True), one) for p, prefix, one in self.parts]
        self.other: list[tuple[re.Pattern[str] | None, bool]] | None = None  # when needed
        # Every part has a token outside ASCII (a CJK word): text without such characters
        # holds none of them either way, so the check for them decides nothing.
        self.no_ascii = all(p is None for p, _one in self.ascii)

    def counts(self, body: str) -> list[int]:
        if body.isascii() or (  # or only dashes, quotes, emoji outside ASCII
                not self.no_ascii and not _NON_ASCII_TOKEN_CHAR.search(body)):
            text = body.lower()
            return [_count(p, text, True, one) if p else 0 for p, one in self.ascii]
        if self.other is None:  # big Unicode classes: compiled for the first such message
            self.other = [(_pattern(p, prefix, False), one) for p, prefix, one in self.parts]
        text = fold(body)
        return [_count(p, text, False, one) if p else 0 for p, one in self.other]


class Scorer:
    """BM25 of candidate messages of one agent database, with that database's statistics."""

    def __init__(self, query: ParsedQuery, stats: CorpusStats) -> None:
        self.counter = TermCounter(query)
        self.weights = [idf(stats.rows, df(stats, i)) for i in range(len(query.phrases))]
        self.average = stats.chars / stats.rows if stats.rows else 1.0
        self.rows = stats.rows

    def score(self, body: str) -> float:
        norm = K1 * (1 - B + B * len(body) / (self.average or 1.0))
        total = 0.0
        for weight, tf in zip(self.weights, self.counter.counts(body)):
            tf = max(tf, 1)  # the index matched every part: a miscount never zeroes one
            total += weight * tf * (K1 + 1) / (tf + norm)
        return total

    def scores(self, bodies: Sequence[str]) -> list[float]:
        return [self.score(body) for body in bodies]

    def average_rows(self, documents: int) -> float:
        """The average number of messages of ``documents`` holding the visible ones (a
        conversation's length, for BM25 over conversations: core/convmatch.py)."""
        return self.rows / max(documents, 1)

    def part_scores(self, body: str, held: Sequence[bool]) -> list[float]:
        """Each part's term of the message's score, 0 for a part it does not hold; a part the
        index matched in it (``held``) counts at least once. With every part held, the sum is
        ``score``'s: a conversation's ranking (core/convmatch.py) adds up the same terms."""
        norm = K1 * (1 - B + B * len(body) / (self.average or 1.0))
        terms = []
        for weight, tf, matched in zip(self.weights, self.counter.counts(body), held):
            tf = max(tf, 1) if matched else tf
            terms.append(weight * tf * (K1 + 1) / (tf + norm) if tf else 0.0)
        return terms
