"""Full-text matching on PostgreSQL with exactly the tokens of the SQLite path.

SQLite's FTS5 (``unicode61 remove_diacritics 2`` over the segmented text) decides what a
query matches. Here the same Python code decides: ``query.tokens`` folds and cuts the stored,
segmented text into the tokens FTS5 sees, and those tokens are stored as a ``tsvector`` whose
positions are the token numbers. A query becomes a ``tsquery`` built from
``ParsedQuery.phrases`` (``'a' <-> 'b'`` for a phrase, ``:*`` on a prefix), so ``cafe``
finds ``Café``, a CJK character is a token of its own, and a phrase is a run of positions,
as in SQLite. No text search configuration, dictionary or extension is involved.

A ``tsvector`` has limits FTS5 does not: positions stop at 16,383, a lexeme keeps at most
256 positions and 2,047 bytes, the whole vector stays under 1 MB. A row within them is
*exact* (the vector is the token sequence). Any other row (a huge pasted log) stores its
distinct lexemes without positions, cut to the byte limit, and is checked token by token in
Python whenever its lexemes could match (``phrase_counts``): the answer is the same, only
slower, for those rare rows.

Ranking is not done here: ``core/rank.py`` scores the matches from their text and the
statistics ``matching.py`` counts, as for SQLite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...query import ParsedQuery, tokens

MAX_POSITION = 16383
MAX_POSITIONS_PER_LEXEME = 255
MAX_LEXEME_BYTES = 2046
MAX_LEXEME_TOTAL_BYTES = 900_000  # under the 1 MB a tsvector may hold, with room for headers
# A lexeme cut to the byte limit ends with this mark, so it never equals a whole token (a
# query word still finds it as a prefix, and such rows are checked in Python).
CUT_MARK = "\x02"
# The lexeme of a row too big for any tsvector: such a row is checked for every query. No
# token holds a control character, so none of these marks can collide with a real token.
HUGE_ROW_LEXEME = "\x01huge-row"
_ASCII_TOKEN = re.compile("[a-z0-9]+")


@dataclass(frozen=True)
class IndexedText:
    tsv: str  # a tsvector literal
    exact: bool  # the vector holds every position (phrases come from SQL)


@dataclass(frozen=True)
class CompiledQuery:
    phrases: tuple[str, ...]  # one tsquery per ANDed part, for its frequency and its IDF
    matches: str  # the whole query: every part, ANDed
    candidates: str  # rows without positions that may match some part (checked in Python)
    verify_all: bool  # a query token was cut to the lexeme limit: check every row in Python
    parts: tuple[tuple[str, ...], ...]  # folded tokens of each part (ParsedQuery.phrases)
    prefix: bool


def _quote(lexeme: str) -> str:
    if "'" in lexeme or "\\" in lexeme:
        lexeme = lexeme.replace("\\", "\\\\").replace("'", "''")
    return f"'{lexeme}'"


def _cut(token: str) -> tuple[str, bool]:
    """A token as a lexeme: cut to the byte limit (and marked) when too long; True if cut."""
    if len(token) * 4 <= MAX_LEXEME_BYTES or len(token.encode("utf-8")) <= MAX_LEXEME_BYTES:
        return token, False
    head = token.encode("utf-8")[: MAX_LEXEME_BYTES - 1].decode("utf-8", "ignore")
    return head + CUT_MARK, True


def token_list(body: str) -> list[str]:
    """The folded tokens FTS5 sees in a stored text (``query.tokens``; plain ASCII text, most
    messages, takes a faster path to the same answer: runs of letters and digits)."""
    if body.isascii():
        return _ASCII_TOKEN.findall(body.lower())
    return [token for _start, _end, token in tokens(body)]


def index_text(body: str) -> IndexedText:
    """The tsvector of a stored (redacted, segmented) index row."""
    toks = token_list(body)
    positions: dict[str, list[int]] = {}
    cut_any = False
    for number, token in enumerate(toks, start=1):
        if len(token) * 4 > MAX_LEXEME_BYTES:
            token, cut = _cut(token)
            cut_any = cut_any or cut
        found = positions.get(token)
        if found is None:
            positions[token] = [number]
        else:
            found.append(number)
    exact = (
        not cut_any
        and len(toks) <= MAX_POSITION
        and max(map(len, positions.values()), default=0) <= MAX_POSITIONS_PER_LEXEME
    )
    if exact:
        literal = " ".join(
            f"{_quote(lexeme)}:{numbers[0] if len(numbers) == 1 else ','.join(map(str, numbers))}"
            for lexeme, numbers in positions.items()
        )
        return IndexedText(literal, True)
    if sum(len(lexeme.encode("utf-8")) + 8 for lexeme in positions) > MAX_LEXEME_TOTAL_BYTES:
        literal = _quote(HUGE_ROW_LEXEME)
    else:
        literal = " ".join(_quote(lexeme) for lexeme in positions)
    return IndexedText(literal, False)


def compile_query(query: ParsedQuery) -> CompiledQuery:
    """The tsqueries of a parsed query (``ParsedQuery.phrases``: the same tokens as FTS5)."""
    phrases, loose = [], []
    verify_all = False
    last = len(query.phrases) - 1
    for i, part in enumerate(query.phrases):
        lexemes = []
        prefix = query.prefix and i == last
        for j, token in enumerate(part):
            lexeme, cut = _cut(token)
            if cut:  # any lexeme starting like it: a superset, every candidate is checked
                verify_all = True
                lexemes.append(_quote(lexeme.removesuffix(CUT_MARK)) + ":*")
            else:
                lexemes.append(_quote(lexeme) + (":*" if prefix and j == len(part) - 1 else ""))
        phrases.append(" <-> ".join(lexemes))
        loose.append(" & ".join(lexemes))
    matches = " & ".join(f"({p})" for p in phrases)
    candidates = " | ".join(f"({p})" for p in loose) + f" | {_quote(HUGE_ROW_LEXEME)}"
    return CompiledQuery(
        tuple(phrases), matches, candidates, verify_all, query.phrases,
        query.prefix,
    )


def phrase_counts(toks: list[str], query: CompiledQuery) -> list[int]:
    """Occurrences of each part in a token list (overlapping runs count, as in FTS5)."""
    counts = []
    last = len(query.parts) - 1
    for i, part in enumerate(query.parts):
        prefix = query.prefix and i == last
        head, size = part[0], len(part)
        count = 0
        for start in range(len(toks) - size + 1):
            if size == 1 and prefix:
                count += toks[start].startswith(head)
                continue
            if toks[start] != head:
                continue
            tail_ok = all(toks[start + k] == part[k] for k in range(1, size - 1))
            end = toks[start + size - 1]
            if tail_ok and (end.startswith(part[-1]) if prefix else end == part[-1]):
                count += 1
        counts.append(count)
    return counts

