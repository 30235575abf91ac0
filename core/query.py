"""The search query language, compiled to a safe FTS5 MATCH expression.

People type words, not FTS5 syntax. The whole grammar (docs/query-language.md)::

    query  := part*            parts are ANDed
    part   := word | phrase
    word   := run of non-whitespace characters without '"'
    phrase := '"' any characters but '"' ( '"' | end of query )

Nothing else is syntax: AND/OR/NOT/NEAR, ``*``, ``^``, ``:``, ``-``, ``+``, parentheses and
column names are ordinary text. Every part reaches FTS5 as a quoted string, so FTS5 only ever
sees ``"..." AND "..."`` (plus a trailing ``*`` in prefix mode) and tokenizes each string with
the index's own tokenizer. A part with no letter or digit would be an empty phrase (which makes
an AND match nothing), so it is dropped; a query left with no part is refused.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Callable, Iterator, NamedTuple

from .errors import ValidationError
from .textseg import (
    BLOCK_CLASS,
    JOIN_CLASS,
    MARK_CLASS,
    SEG_CLASS,
    LazyPattern,
    desegment,
    segment,
)

MAX_QUERY_CHARS = 4096
# Beyond these a query is refused: each part is counted and scored on its own, and FTS5's
# work grows with every token (docs/performance.md).
MAX_QUERY_PARTS = 32
MAX_QUERY_TOKENS = 64
MATCH_MODES = ("exact", "prefix")
MIN_PREFIX_CHARS = 2


class ParsedQuery(NamedTuple):
    fts: str  # the FTS5 MATCH expression
    terms: tuple[str, ...]  # distinct folded tokens, in query order (for highlighting)
    prefix: bool  # the last token of the last phrase also matches as a prefix
    phrases: tuple[tuple[str, ...], ...]  # folded tokens of each ANDed part, in order
    parts: tuple[str, ...] = ()  # the MATCH expression of each part (``fts`` is them ANDed)


# --- folding: what unicode61 remove_diacritics 2 does to a token ---------------------------
# Measured on SQLite 3.40 (every code point run through the tokenizer): it lower-cases, strips
# diacritics from precomposed *Latin* letters only (Greek ά, Cyrillic й keep theirs; đ ø ł are
# letters of their own), drops these combining marks wherever they are (they count as token
# characters), and folds a few Greek/Latin variant letters.
_SQLITE_DIACRITICS = (
    0x300, 0x301, 0x302, 0x303, 0x304, 0x306, 0x307, 0x308, 0x309, 0x30A, 0x30B, 0x30C, 0x30F,
    0x311, 0x31B, 0x323, 0x324, 0x325, 0x326, 0x327, 0x328, 0x32D, 0x32E, 0x330, 0x331,
)  # fmt: skip
_FOLD_TABLE: dict[int, str | None] = {cp: None for cp in _SQLITE_DIACRITICS}
_FOLD_TABLE.update({ord(a): b for a, b in zip("ſµςϐϵϑϰϖϱϕ", "sμσβεθκπρφ")})
# Folding is a map of single characters: a precomposed Latin letter becomes its canonical
# decomposition less the diacritics above (é -> e), every other character what the table
# says. Only the characters it changes are listed, and replaced one match at a time: five
# times cheaper than decomposing Latin runs and then translate(), which looks every
# character up (rank.py folds every non-ASCII candidate of a search). Built on first use (a
# millisecond: an ASCII search never needs it).
_FOLDER: list[Callable[[str], str]] = []


def _folder() -> Callable[[str], str]:
    chars: dict[str, str] = {}
    for cp in (*range(0xC0, 0x250), *range(0x1E00, 0x1F00)):
        folded = unicodedata.normalize("NFD", chr(cp)).translate(_FOLD_TABLE)
        if folded != chr(cp):
            chars[chr(cp)] = folded
    chars.update({chr(cp): to or "" for cp, to in _FOLD_TABLE.items()})
    pattern = re.compile("[" + "".join(re.escape(c) for c in sorted(chars)) + "]")
    one = chars.__getitem__
    return lambda text: pattern.sub(lambda m: one(m.group()), text)


def fold(text: str) -> str:
    """Case-fold and strip diacritics like unicode61 ``remove_diacritics 2`` (close enough to
    compare words for highlighting: ``fold("Café") == "cafe"``, ``fold("một") == "mot"``)."""
    text = text.lower()
    if text.isascii():
        return text
    if not _FOLDER:
        _FOLDER.append(_folder())
    return _FOLDER[0](text)


# --- tokens: unicode61's token characters, with segmentable clusters on their own ----------
# unicode61 token characters: letters, digits (\w minus "_"), private use, the diacritics
# above, and the emoji skin-tone modifiers (its Unicode tables predate them). Characters of
# scripts written without spaces are one token per cluster, as the index sees them after
# textseg.segment.
_DIACRITIC_CLASS = "".join(f"\\U{cp:08x}" for cp in _SQLITE_DIACRITICS)
_PRIVATE_USE = "\\U0000e000-\\U0000f8ff\\U000f0000-\\U000ffffd\\U00100000-\\U0010fffd"
_SKIN_TONES = "\\U0001f3fb-\\U0001f3ff"
_TOKEN = LazyPattern(
    f"(?P<cluster>[{SEG_CLASS}][{JOIN_CLASS}]+)|[{SEG_CLASS}]"
    f"|(?:[^\\W_{BLOCK_CLASS}]|[{_DIACRITIC_CLASS}{_PRIVATE_USE}{_SKIN_TONES}])+"
)
_ASCII_TOKEN = re.compile("[A-Za-z0-9]+")  # the same tokens, for ASCII text
# A token character of folded text (the diacritics are gone), for patterns that look for a
# word between token boundaries (rank.py counts words this way).
TOKEN_CHAR = f"[^\\W_]|[{_PRIVATE_USE}{_SKIN_TONES}]"
# A character outside ASCII that tokens are made of (before folding): text without any has
# the same tokens as its ASCII characters alone (rank.py counts such text the cheap way).
NON_ASCII_TOKEN_CHAR = f"(?![\\x00-\\x7f])(?:{TOKEN_CHAR}|[{_DIACRITIC_CLASS}])"
# unicode61 splits at a Thai vowel sign or a variation selector (they are separators), so the
# token of a cluster is its base (plus Hangul jamo tails): the marks go.
_MARK = LazyPattern(f"[{MARK_CLASS}]")


def tokens(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, folded)`` for each token of ``text`` (unsegmented), as FTS5 sees them."""
    if text.isascii():
        for m in _ASCII_TOKEN.finditer(text):
            yield m.start(), m.end(), m.group().lower()
        return
    for m in _TOKEN.finditer(text):
        word = m.group()
        if word.isascii():
            folded = word.lower()
        elif m.lastgroup == "cluster":
            folded = fold(_MARK.sub("", word))
        else:
            folded = fold(word)
        if folded:  # a lone diacritic folds to nothing: not a token
            yield m.start(), m.end(), folded


# --- parsing ---------------------------------------------------------------------------------
# FTS5 reads the expression as a C string (an embedded NUL ends it mid-quote), and a lone
# surrogate cannot be encoded for SQLite. Neither is a token character, so inside the quoted
# string a space is the same thing to the tokenizer.
_UNSENDABLE = re.compile("[\x00\ud800-\udfff]")


def _parts(text: str) -> list[str]:
    """Words and phrases: even chunks between quotes are outside them, odd ones inside."""
    parts: list[str] = []
    for i, chunk in enumerate(text.split('"')):
        if i % 2:
            parts.append(chunk)  # a phrase; an unbalanced quote runs to the end
        else:
            parts.extend(chunk.split())
    return parts


def parse_query(text: str, match: str = "exact") -> ParsedQuery:
    """Compile what a person typed; raise ValidationError if there is nothing to search for."""
    if match not in MATCH_MODES:
        raise ValidationError(f"The match mode must be 'exact' or 'prefix', not {match!r}.")
    if not isinstance(text, str):
        raise ValidationError("The query must be text.")
    if len(text) > MAX_QUERY_CHARS:
        raise ValidationError(
            f"The query is {len(text)} characters long; the limit is {MAX_QUERY_CHARS}."
        )
    if not text.strip():
        raise ValidationError("The query is empty: type at least one word to search for.")

    phrases: list[tuple[str, ...]] = []
    exprs: list[str] = []
    for part in _parts(text):
        folded = tuple(tok for _, _, tok in tokens(part))
        if not folded:
            continue  # only punctuation/symbols: unicode61 indexes none of it
        phrases.append(folded)
        # Segmented like the index, so "自由" is the phrase 自 由; quoted, so nothing in it is
        # syntax. (A part never holds '"', but doubling keeps the quoting right regardless.)
        quoted = _UNSENDABLE.sub(" ", segment(part)).replace('"', '""')
        exprs.append(f'"{quoted}"')
    if not exprs:
        raise ValidationError(
            "The query has nothing to search for: it needs a letter or digit "
            "(punctuation and symbols are not indexed)."
        )
    if len(phrases) > MAX_QUERY_PARTS:
        raise ValidationError(
            f"The query has {len(phrases)} words and phrases; at most {MAX_QUERY_PARTS} are "
            "searched together: keep the few that matter."
        )
    token_count = sum(len(phrase) for phrase in phrases)
    if token_count > MAX_QUERY_TOKENS:
        raise ValidationError(
            f"The query has {token_count} words (a CJK character counts as one); at most "
            f"{MAX_QUERY_TOKENS} are searched together: keep the few that matter."
        )
    # A one-character last token stays a whole word: as a prefix it would match most of the
    # vocabulary (slow, and useless while typing); the next keystroke makes it a prefix.
    prefix = match == "prefix" and len(phrases[-1][-1]) >= MIN_PREFIX_CHARS
    if prefix:
        exprs[-1] += " *"  # FTS5: the phrase's last token matches as a prefix
    terms = tuple(dict.fromkeys(tok for phrase in phrases for tok in phrase))
    return ParsedQuery(" AND ".join(exprs), terms, prefix, tuple(phrases), tuple(exprs))


def part_query(query: ParsedQuery, k: int) -> ParsedQuery:
    """Part ``k`` of ``query`` (a word or phrase) as a query of its own: what a conversation
    search matches one part at a time (core/convmatch.py). The prefix rule stays the last
    part's."""
    phrase = query.phrases[k]
    prefix = query.prefix and k == len(query.phrases) - 1
    return ParsedQuery(query.parts[k], tuple(dict.fromkeys(phrase)), prefix, (phrase,),
                       (query.parts[k],))


def part_text(query: ParsedQuery, k: int) -> str:
    """Part ``k`` as it was typed (a phrase without its quotes), to show what matched."""
    expr = query.parts[k].removesuffix(" *")
    return desegment(expr[1:-1].replace('""', '"')).strip()
