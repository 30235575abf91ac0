"""Query language, CJK segmentation and excerpts, checked against a real FTS5 table."""

from __future__ import annotations

import random
import re
import sqlite3
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core.errors import ValidationError
from backscroll.core.excerpt import ELLIPSIS, Excerpt, make_excerpt
from backscroll.core.query import (
    _FOLD_TABLE,
    MAX_QUERY_CHARS,
    MAX_QUERY_PARTS,
    MAX_QUERY_TOKENS,
    MIN_PREFIX_CHARS,
    ParsedQuery,
    fold,
    parse_query,
    tokens,
)
from backscroll.core.textseg import ZWSP, desegment, has_segmentable, segment

SCHEMA = (
    "CREATE VIRTUAL TABLE message_fts USING fts5(body, tokenize='unicode61 remove_diacritics 2')"
)
SEARCH = "SELECT rowid FROM message_fts WHERE message_fts MATCH ? ORDER BY rowid"

ZH = "人人生而自由,在尊严和权利上一律平等。"
JA = "すべての人間は、生まれながらにして自由であり"
KO = "모든 인간은 태어날 때부터 자유로우며"
ROWS = {
    1: "Deploy the Café service to production",
    2: "Một hai ba",
    3: "the production service was deployed",
    4: "a or b is the question",
    5: ZH,
    6: JA,
    7: KO,
    8: "用Python写代码",
    9: "AND OR NOT NEAR are words here",
    10: "C++ (parentheses) and col:value",
    11: "มนุษย์ทั้งหลายเกิดมามีอิสระ และสิทธิ",
}


def make_index(rows: dict[int, str]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(SCHEMA)
    conn.executemany(
        "INSERT INTO message_fts (rowid, body) VALUES (?, ?)",
        [(rowid, segment(text)) for rowid, text in rows.items()],
    )
    return conn


@pytest.fixture(scope="module")
def index() -> sqlite3.Connection:
    return make_index(ROWS)


def find(conn: sqlite3.Connection, text: str, match: str = "exact") -> set[int]:
    return {r[0] for r in conn.execute(SEARCH, (parse_query(text, match).fts,))}


def vocab(text: str) -> list[str]:
    """The tokens FTS5 stores for ``segment(text)``, in order."""
    conn = make_index({1: text})
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(message_fts, 'instance')")
    return [r[0] for r in conn.execute("SELECT term FROM v ORDER BY offset")]


# --- fuzz: every input is a ParsedQuery FTS5 accepts, or a ValidationError ------------------

PIECES = [
    "AND", "OR", "NOT", "NEAR", "NEAR(", "and", "or", '"', '""', "*", "^", ":", "-", "+", "(",
    ")", "{", "}", "[", "]", ",", "body:", "message_fts:", "rowid", "\x00", "\x01", "\x1b[31m",
    "\x7f", "\t", "\n", " ", "  ", "\u3000", "自由", "人", "すべて", "한국어", "ศักดิ์", "😀",
    "👍🏽", "\u0301", "e\u0301", "é", "đ", "a", "deploy", "Café", "\u200b", "\ufeff", "'", "\\",
    "%", "_", "NEAR/3", "a*", "^a", "x:y", "-x", "(a OR b)", "{body}: a",
]  # fmt: skip
# Checked at the end of every fuzz case: only quoted strings ANDed, maybe a final " *".
FTS_SHAPE = re.compile(r'"(?:[^"\x00]|"")*"(?: AND "(?:[^"\x00]|"")*")*(?: \*)?', re.S)

queries = st.lists(
    st.one_of(st.sampled_from(PIECES), st.text(max_size=6), st.characters()), max_size=40
).map("".join)


def check_query(conn: sqlite3.Connection, text: str, match: str) -> None:
    try:
        parsed = parse_query(text, match)
    except ValidationError as err:
        assert str(err).endswith(".") and len(str(err)) > 10
        return
    assert FTS_SHAPE.fullmatch(parsed.fts), parsed.fts
    long_enough = len(parsed.phrases[-1][-1]) >= MIN_PREFIX_CHARS if parsed.phrases else False
    assert parsed.prefix == (match == "prefix" and long_enough) and parsed.phrases and parsed.terms
    assert all(term == fold(term) and term for term in parsed.terms)
    conn.execute(SEARCH, (parsed.fts,)).fetchall()  # must not raise


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=queries, match=st.sampled_from(["exact", "prefix"]))
@pytest.mark.slow
def test_fuzz_queries_are_valid_fts5_or_refused(index: sqlite3.Connection, text: str, match: str):
    check_query(index, text, match)


def test_fuzz_random_operator_soup(index: sqlite3.Connection) -> None:
    rng = random.Random(20240611)
    alphabet = PIECES + [chr(c) for c in range(0, 0x80)] + ["\ud800", "\udfff", "\U0010ffff"]
    accepted = refused = 0
    for _ in range(4000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 25)))
        for match in ("exact", "prefix"):
            try:
                parse_query(text, match)
                accepted += 1
            except ValidationError:
                refused += 1
            check_query(index, text, match)
    assert accepted > 1000 and refused > 100  # both branches really exercised


def test_long_queries_are_searched_up_to_the_limits_then_refused(index: sqlite3.Connection
                                                                  ) -> None:
    assert find(index, " ".join(["a"] * MAX_QUERY_PARTS)) == {4}
    assert find(index, "人" * MAX_QUERY_TOKENS, "prefix") == set()  # one phrase of 64 tokens
    many_words = ("a " * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS]
    with pytest.raises(ValidationError, match="2048 words and phrases; at most 32"):
        parse_query(many_words)
    with pytest.raises(ValidationError, match="4096 words .* at most 64"):
        parse_query("人" * MAX_QUERY_CHARS)
    with pytest.raises(ValidationError, match="4097 characters"):
        parse_query("a" * (MAX_QUERY_CHARS + 1))


@pytest.mark.parametrize(
    "text", ["", " ", "\n\t ", "***", '"" ::', "()", "^*:-+", '"', "😀", "\x00", "\x01\x02", "_"]
)
def test_queries_without_a_token_are_refused(text: str) -> None:
    with pytest.raises(ValidationError) as err:
        parse_query(text)
    assert str(err.value).startswith("The query ")


def test_bad_match_mode_is_refused() -> None:
    with pytest.raises(ValidationError, match="'exact' or 'prefix'"):
        parse_query("deploy", "fuzzy")


def test_parsed_query_shape() -> None:
    q = parse_query('Deploy 自由 "the Café"', "prefix")
    assert q == ParsedQuery(
        fts='"Deploy" AND "自\u200b由" AND "the Café" *',
        terms=("deploy", "自", "由", "the", "cafe"),
        prefix=True,
        phrases=(("deploy",), ("自", "由"), ("the", "cafe")),
        parts=('"Deploy"', '"自\u200b由"', '"the Café" *'),
    )
    # a one-character last token stays a whole word (CJK characters are single tokens)
    assert parse_query("deploy c", "prefix").fts == '"deploy" AND "c"'
    assert not parse_query("自由", "prefix").prefix
    with pytest.raises(AttributeError):  # immutable
        q.fts = "x"  # type: ignore[misc]
    # A word made only of symbols is dropped; prefix goes to the last real word.
    assert parse_query("dep ***", "prefix").fts == '"dep" *'
    # Inner structure survives as text; quotes inside parts cannot exist, NUL becomes a space.
    assert parse_query("a\x00b").fts == '"a b"'
    assert parse_query('x"y').phrases == (("x",), ("y",))


# --- semantics on a real index ---------------------------------------------------------------


def test_words_are_anded(index: sqlite3.Connection) -> None:
    assert find(index, "service production") == {1, 3}
    assert find(index, "deploy production") == {1}
    assert find(index, "deploy nowhere") == set()


def test_phrase_order_matters(index: sqlite3.Connection) -> None:
    assert find(index, '"production service"') == {3}
    assert find(index, '"service production"') == set()
    assert find(index, '"service to production"') == {1}
    assert find(index, '"service to production') == {1}  # unbalanced: runs to the end


def test_folding(index: sqlite3.Connection) -> None:
    assert find(index, "cafe") == {1}
    assert find(index, "CAFÉ") == {1}
    assert find(index, "mot") == {2}
    assert find(index, "MỘT") == {2}
    assert fold("Café") == "cafe" and fold("một") == "mot" and fold("İstanbul") == "istanbul"
    # Like unicode61: đ/ø/ł are letters of their own, Greek keeps its accents, ς is σ.
    assert fold("Đồng Øre Łódź") == "đong øre łodz"
    assert fold("Άλφα ΟΔΟΣ") == "άλφα οδοσ"
    conn = make_index({1: "Würde", 2: "được", 3: "αξιοπρέπεια", 4: "ΟΔΟΣ"})
    assert find(conn, "wurde") == {1} and find(conn, "WÜRDE") == {1}
    assert find(conn, "duoc") == set() and find(conn, "ĐƯỢC") == {2}
    assert find(conn, "αξιοπρεπεια") == set() and find(conn, "Αξιοπρέπεια") == {3}
    assert find(conn, "οδος") == {4}


def _fold_by_runs(text: str) -> str:
    """fold as it was written first: each run of precomposed Latin letters decomposed, then
    the table applied to the whole text (the oracle for the one-character map)."""
    text = text.lower()
    if text.isascii():
        return text
    text = re.sub("[\u00c0-\u024f\u1e00-\u1eff]+",
                  lambda m: unicodedata.normalize("NFD", m.group()), text)
    return text.translate(_FOLD_TABLE)


# Latin letters with and without marks, loose combining marks, the variant letters the table
# folds, Greek, Vietnamese stacked marks, CJK, Hangul (which must not be decomposed).
_FOLD_ALPHABET = st.sampled_from(
    [*"aeiouAEIOU xyzİıß", *map(chr, range(0xC0, 0x250, 3)), *map(chr, range(0x1E00, 0x1F00, 5)),
     *map(chr, range(0x300, 0x332)), *"ſµςϐϵϑϰϖϱϕΆάΟΔΣ", "ộ", "ệ", "ǖ", "数", "据", "한", "국",
     "\u200b", "-", ".", "😀"]
)


def test_fold_is_a_map_of_characters() -> None:
    """Every precomposed Latin letter and every code point of the table folds as decomposing
    and then stripping did."""
    for cp in [*range(0xC0, 0x250), *range(0x1E00, 0x1F00), *range(0x300, 0x370), *_FOLD_TABLE]:
        assert fold(chr(cp)) == _fold_by_runs(chr(cp)), hex(cp)


@given(st.lists(_FOLD_ALPHABET, max_size=40).map("".join))
def test_fold_matches_folding_by_runs(text: str) -> None:
    assert fold(text) == _fold_by_runs(text)


def test_prefix_mode(index: sqlite3.Connection) -> None:
    assert find(index, "dep", "prefix") == {1, 3}
    assert find(index, "dep") == set()
    assert find(index, "deploy") == {1}
    assert find(index, "deploy", "prefix") == {1, 3}  # prefix also matches the word itself
    assert find(index, '"production ser', "prefix") == {3}  # last token of the last phrase
    assert find(index, "production ser", "prefix") == {1, 3}
    assert find(index, "ser production", "prefix") == set()  # only the LAST word


def test_operators_are_literal_words(index: sqlite3.Connection) -> None:
    # "OR" is the word "or": row 4 is the only one holding a, or and b.
    assert find(index, "a OR b") == {4}
    assert find(index, "service OR nothing") == set()
    assert find(index, "NOT deploy") == set()
    assert find(index, "AND OR NOT NEAR") == {9}
    assert find(index, "NEAR(are words)") == {9}
    assert find(index, "-deploy") == {1}  # not a negation
    assert find(index, "body:deploy") == set()  # not a column filter: the word "body"
    assert find(index, "col:value") == {10}  # the phrase "col value"
    assert find(index, "C++ (parentheses)") == {10}
    assert find(index, "deplo*") == set()  # "*" is not a prefix operator
    assert find(index, "^deploy") == {1}


def _substrings(sentence: str, n: int) -> set[str]:
    runs = re.findall(r"[^\s,。、]+", sentence)
    return {run[i : i + n] for run in runs for i in range(len(run) - n + 1)}


@pytest.mark.parametrize("rowid", [5, 6, 7])
def test_cjk_substrings(index: sqlite3.Connection, rowid: int) -> None:
    sentence = ROWS[rowid]
    for n in (1, 2, 3):
        subs = _substrings(sentence, n)
        assert subs
        for sub in subs:
            assert rowid in find(index, sub), sub
            assert rowid in find(index, sub, "prefix"), sub
    # A phrase of single characters ignores what separates them (FTS5 phrase semantics), so
    # "non-substring" means: not a substring once spaces and punctuation are gone.
    joined = re.sub(r"[\s,。、]", "", sentence)
    chars = sorted(set(joined))
    rng = random.Random(rowid)
    missing = 0
    for _ in range(200):
        cand = "".join(rng.sample(chars, 2))
        if cand not in joined:
            missing += 1
            assert rowid not in find(index, cand), cand
    assert missing > 50


def test_cjk_next_to_latin_and_thai(index: sqlite3.Connection) -> None:
    assert find(index, "写代码") == {8}
    assert find(index, "Python写") == {8}
    assert find(index, "python") == {8}
    assert find(index, "代") == {8}
    assert find(index, "สิทธิ") == {11}
    assert find(index, "อิสระ") == {11}
    assert find(index, "ระอิ") == set()


def test_multilingual_rows_are_found(data_dir: Path) -> None:
    lines = (data_dir / "multilingual.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == ["language", "sentence", "query"]
    rows = [line.split("\t") for line in lines[1:] if line.strip()]
    conn = make_index({i: sentence for i, (_lang, sentence, _q) in enumerate(rows, 1)})
    missed = []
    for i, (lang, sentence, query) in enumerate(rows, 1):
        for match in ("exact", "prefix"):
            if i not in find(conn, query, match):
                missed.append((lang, query, match))
        excerpt = make_excerpt(sentence, parse_query(query))
        if not excerpt.highlights:
            missed.append((lang, query, "highlight"))
    assert missed == []
    assert {lang for lang, _s, _q in rows} >= {"zh-Hans", "ja", "ko", "th", "vi", "el", "ru"}


# --- textseg ---------------------------------------------------------------------------------

SEG_HEAVY = st.text(
    alphabet=st.one_of(
        st.sampled_from(
            list("人自由すべカ한국ศักดิ์ສບາຍខ្មែរမြန်မာ葛ᄀ\u1161\u11a8")
            + [ZWSP, " ", "\n", "a", "Z", "1", ",", "。", "\u0301", "\u3099", "\ufe0f", "\U000e0100"]
            + ["\U00020000", "\U0001b001", "ｶ", "ﾞ"]
        ),
        st.characters(),
    ),
    max_size=60,
)


@settings(max_examples=3000, deadline=None)
@given(text=st.one_of(SEG_HEAVY, st.text()))
@pytest.mark.slow
def test_segment_round_trip(text: str) -> None:
    seg = segment(text)
    assert desegment(seg) == text
    assert seg.replace(ZWSP, "") == text.replace(ZWSP, "")  # it only ever adds U+200B
    assert segment(text) == seg


def test_segment_examples() -> None:
    assert segment("自") == "自"
    assert segment("a自b") == "a\u200b自\u200bb"
    assert segment("自 由") == "自 由"  # whitespace already separates
    assert segment("自\u200b由") == "自\u200b\u200b\u200b由"  # an original U+200B is kept apart
    assert desegment("自\u200b\u200b\u200b由") == "自\u200b由"
    assert segment("ศักดิ์") == "ศั\u200bก\u200bดิ์"  # marks stay with their base
    ascii_text = "plain ascii " * 40
    assert segment(ascii_text) is ascii_text and segment("Café") == "Café"
    assert has_segmentable("x自") and not has_segmentable("Café") and not has_segmentable("")


def test_segmented_tokens() -> None:
    assert vocab("自") == ["自"]  # a 1-character CJK token
    assert vocab(ZH[:6]) == list("人人生而自由")
    assert vocab("用Python写") == ["用", "python", "写"]
    assert vocab("한국어 문장") == ["한", "국", "어", "문", "장"]
    assert vocab("Café") == ["cafe"]


def test_segment_returns_text_without_segmentable_runs_untouched() -> None:
    # The fast path most messages take: the
    # very same string back, not a copy.
    for text in ["the quick brown fox " * 40, "café déjà vu, Ελληνικά, русский"]:
        assert segment(text) is text
    assert segment("自由") != "自由"


# --- excerpts ----------------------------------------------------------------------------------


def assert_highlights_are_terms(ex: Excerpt, q: ParsedQuery) -> None:
    last = q.phrases[-1][-1]
    spans = list(ex.highlights)
    assert spans == sorted(spans)
    for (s, e), nxt in zip(spans, spans[1:] + [(len(ex.text), len(ex.text))]):
        assert 0 <= s < e <= nxt[0] <= len(ex.text)
        # one token, folded as the index folds it (a mark after a CJK character stays in its
        # highlight but is no part of the token)
        [(_, _, got)] = tokens(ex.text[s:e])
        assert got in q.terms or (q.prefix and got.startswith(last)), (got, q.terms)


WORDS = st.sampled_from(["deploy", "deployment", "Café", "cafe", "自由", "一", "lorem", "x"])
bodies = st.lists(
    st.one_of(WORDS, st.text(max_size=30), st.just(" "), st.just("\n\n")), max_size=60
).map("".join)


@settings(max_examples=600, deadline=None)
@given(
    body=bodies,
    repeat=st.sampled_from([1, 1, 2, 50, 2000]),
    query=st.lists(WORDS, min_size=1, max_size=3).map(" ".join),
    match=st.sampled_from(["exact", "prefix"]),
    max_chars=st.sampled_from([1, 2, 10, 80, 300]),
)
@pytest.mark.slow
def test_excerpt_bounds(body: str, repeat: int, query: str, match: str, max_chars: int) -> None:
    q = parse_query(query, match)
    ex = make_excerpt(body * repeat, q, max_chars)
    assert len(ex.text) <= max_chars + 1
    assert "\n" not in ex.text and "  " not in ex.text
    assert_highlights_are_terms(ex, q)
    if max_chars == 300:
        assert len(ex.text) <= 301


def test_excerpt_finds_the_end_of_a_huge_message() -> None:
    body = "lorem ipsum dolor sit amet " * 4000 + "then we finally deployed the café"
    assert len(body) > 100_000
    q = parse_query("cafe deploy", "prefix")
    ex = make_excerpt(body, q)
    assert ex.text.startswith(ELLIPSIS) and ex.text.endswith("deployed the café")
    assert len(ex.text) <= 301
    assert [ex.text[s:e] for s, e in ex.highlights] == ["deployed", "café"]
    assert ex.text[1] != " " and body[body.index(ex.text[1:40]) - 1] == " "  # word boundary


def test_excerpt_prefers_the_spot_with_most_terms() -> None:
    filler = " ".join(f"w{i:04d}" for i in range(400))
    body = f"alpha {filler} alpha beta gamma {filler} gamma"
    q = parse_query("alpha beta gamma")
    ex = make_excerpt(body, q, 120)
    assert [ex.text[s:e] for s, e in ex.highlights] == ["alpha", "beta", "gamma"]
    assert ex.text.startswith(ELLIPSIS) and ex.text.endswith(ELLIPSIS)
    assert len(ex.text) <= 121
    # Cut at word boundaries: every visible word is whole.
    assert all(re.fullmatch(r"w\d{4}|alpha|beta|gamma", w) for w in ex.text.strip(ELLIPSIS).split())


def test_excerpt_short_text_and_fallback() -> None:
    q = parse_query("zzz")
    assert make_excerpt("short\n\n text\twith\x1b[0m  spaces ", q) == Excerpt(
        "short text with [0m spaces", ()
    )
    ex = make_excerpt("word " * 200, q, 50)  # no match in Python: the start of the text
    assert ex.text.startswith("word") and ex.text.endswith(ELLIPSIS) and ex.highlights == ()
    assert len(ex.text) <= 51
    assert make_excerpt("", q) == Excerpt("", ())


def test_excerpt_cjk_and_phrases() -> None:
    ex = make_excerpt(ZH * 30, parse_query("自由"), 40)
    assert len(ex.text) <= 41
    assert ex.highlights and all(ex.text[s:e] in ("自", "由") for s, e in ex.highlights)
    pairs = {ex.text[s : s + 2] for s, _ in ex.highlights[::2]}
    assert pairs == {"自由"}  # the phrase, not every lone 由
    ex = make_excerpt("由 here, 自由 there", parse_query("自由"))
    assert [ex.text[s:e] for s, e in ex.highlights] == ["自", "由"]
    ex = make_excerpt("production service; service production", parse_query('"service production"'))
    assert ex.highlights == ((20, 27), (28, 38))


def test_tokens_match_fts5() -> None:
    text = "Hello, wörld_x 用Python写 ศักดิ์ Café e\u0301 don't"
    assert [t for _, _, t in tokens(text)] == vocab(text)


COMMON_SCRIPTS = st.lists(
    st.sampled_from(
        list("abcXYZ09 _-'.,;:!?\"()\n\t") + list("éüøđłßÆœçñ")
        + ["e\u0301", "İ", "ſ", "ΣΟΔΟΣ", "άέ", "Ёж", "自由人", "すべカー", "한국", "ᄀ\u1161\u11a8"]
        + ["ศักดิ์", "ສບາຍ", "ខ្មែរ", "မြန်မာ", "葛\U000e0100", "😀", "👍🏽", "\u200b", "١٢٣"]
        + ["עברית", "हिन्दी", "ｆｕｌｌ", "①", "\U00020000"]
    ),
    max_size=15,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=COMMON_SCRIPTS)
@pytest.mark.slow
def test_python_tokens_agree_with_fts5(text: str) -> None:
    """Highlighting relies on it: same tokens, same folding, for the scripts people use."""
    assert [t for _, _, t in tokens(text)] == vocab(text)


def test_each_part_is_a_query_of_its_own_and_reads_as_typed() -> None:
    from backscroll.core.query import part_query, part_text

    parsed = parse_query('billing-api "roll back" 自由 v2.21', "prefix")
    assert [part_text(parsed, k) for k in range(4)] == ["billing-api", "roll back", "自由", "v2.21"]
    for k, alone in enumerate(['billing-api', '"roll back"', "自由"]):
        assert part_query(parsed, k) == parse_query(alone)
    last = part_query(parsed, 3)
    assert last.prefix and last == parse_query("v2.21", "prefix")
    assert part_text(parse_query('say "a ""b'), 1) == "a"
