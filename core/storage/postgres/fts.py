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

bm25 is FTS5's formula (``k1`` 1.2, ``b`` 0.75, IDF clamped at 1e-6), computed from stored
statistics: the phrase frequency of a row is ``ts_rank_cd`` with unit weights (the number of
phrase occurrences), its length the stored token count, the average and the document
frequencies come from the agent's rows (see ``match.py``).
"""

from __future__ import annotations

import math
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
# Every row also holds the day of its message as a lexeme without position ("\x03d<day>"),
# so the GIN index itself can keep a query to the newest days (match.py's slices).
DAY_MS = 86_400_000

K1 = 1.2
B = 0.75
MIN_IDF = 1e-6

_ASCII_TOKEN = re.compile("[a-z0-9]+")


@dataclass(frozen=True)
class IndexedText:
    tsv: str  # a tsvector literal
    ntokens: int  # |D| of bm25: tokens FTS5 counts for the row
    exact: bool  # the vector holds every position (phrases and counts come from SQL)
    lexemes: tuple[str, ...]  # distinct lexemes of an exact row (document frequencies)


@dataclass(frozen=True)
class CompiledQuery:
    phrases: tuple[str, ...]  # one tsquery per ANDed part, for its frequency and its IDF
    lookups: tuple[str | None, ...]  # a part that is one whole word: its lexeme (lexeme_df)
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


def day_lexeme(ts: int) -> str:
    return f"\x03d{ts // DAY_MS}"


def days_query(first_ts: int, last_ts: int) -> str:
    """A tsquery matching rows whose message day lies between those of two times."""
    return " | ".join(_quote(f"\x03d{day}") for day in range(first_ts // DAY_MS, last_ts // DAY_MS + 1))


def is_mark(lexeme: str) -> bool:
    """A lexeme that is a mark (a day, a huge row), not a token."""
    return lexeme < " "


def index_text(body: str, ts: int = 0) -> IndexedText:
    """The tsvector of a stored (redacted, segmented) index row of a message at ``ts``."""
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
    day = _quote(day_lexeme(ts))
    if exact:
        literal = " ".join(
            f"{_quote(lexeme)}:{numbers[0] if len(numbers) == 1 else ','.join(map(str, numbers))}"
            for lexeme, numbers in positions.items()
        )
        return IndexedText(f"{day} {literal}", len(toks), True, tuple(positions))
    if sum(len(lexeme.encode("utf-8")) + 8 for lexeme in positions) > MAX_LEXEME_TOTAL_BYTES:
        literal = _quote(HUGE_ROW_LEXEME)
    else:
        literal = " ".join(_quote(lexeme) for lexeme in positions)
    return IndexedText(f"{day} {literal}", len(toks), False, ())


def compile_query(query: ParsedQuery) -> CompiledQuery:
    """The tsqueries of a parsed query (``ParsedQuery.phrases``: the same tokens as FTS5)."""
    phrases, loose, lookups = [], [], []
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
        lookups.append(part[0] if len(part) == 1 and not prefix else None)
    matches = " & ".join(f"({p})" for p in phrases)
    candidates = " | ".join(f"({p})" for p in loose) + f" | {_quote(HUGE_ROW_LEXEME)}"
    return CompiledQuery(
        tuple(phrases), tuple(lookups), matches, candidates, verify_all, query.phrases,
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


def idf(rows: int, hits: int) -> float:
    """FTS5's IDF of a part found in ``hits`` of ``rows`` rows."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0.0 else MIN_IDF


def bm25(freqs: list[float], ntokens: int, idfs: list[float], avgdl: float) -> float:
    """FTS5's bm25 of one row, with its sign (lower is better), term by term as FTS5 adds."""
    score = 0.0
    for freq, weight in zip(freqs, idfs):
        score += weight * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * ntokens / avgdl)))
    return -1.0 * score


def bm25_sql(parts: int) -> str:
    """The same sum in SQL over columns ``f0 .. fN`` and ``ntokens``, with parameters
    ``idf0 .. idfN`` and ``avgdl``: the same operations in the same order as ``bm25``."""
    terms = [
        f"%(idf{i})s::float8 * ((f{i} * {K1 + 1.0!r}::float8) / (f{i} + {K1!r}::float8 * "
        f"({1 - B!r}::float8 + {B!r}::float8 * ntokens::float8 / %(avgdl)s::float8)))"
        for i in range(parts)
    ]
    return "-1.0::float8 * (0.0::float8 + " + " + ".join(terms) + ")"
