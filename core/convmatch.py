"""Conversation matching (SPEC 19): a conversation matches when every part of the query (a
word or a phrase) occurs somewhere in it, in the visible, active-branch user and assistant
text the index holds (docs/query-language.md, "Conversations"). ``sessions_search`` keeps
its rule (every part in one message); this is grouped mode's (core/grouped.py).

In one agent database, inside the search's read snapshot:

1. Each part is matched on its own, as ``sessions_search`` matches a one-part query
   (``AgentReader.match``: the caller's scope, the filters, the rank window): its visible
   matches (every one, or the newest ``RANK_WINDOW``) and the statistics BM25 weighs it with.
   A part without a match ends the search: no conversation can hold every part.
2. Candidates: the conversations of the rarest part's matches, newest first, at most
   ``CANDIDATES_MAX``. Every other part, rarest first, keeps the candidates that hold it:
   known from its own matches when every one was read; else, for a candidate not among them,
   asked of the conversation (its first match of the part, one indexed lookup inside the
   session). A common word therefore costs a lookup per candidate, never a scan of its
   matches, and the work is bounded by the candidates (docs/performance.md).
3. Ranking (``_rank``): a conversation's key is ``together``, the most parts one of its
   messages holds (every part: the message-level match), so a conversation where the words
   share a message ranks above one where they are spread out; then its score, BM25 with the
   conversation as the document: a part's frequency is the number of the conversation's
   messages holding it, the length its number of messages, the weights the parts' own
   (rank.py, over the visible messages); then its best hit's recency and id. The best hit,
   where it opens, is the message holding the most parts, best scored by rank.py (``recent``
   order: the newest of them; conversations come newest best hit first). Why BM25 over the
   conversation rather than a fusion of its messages' scores: the known-item benchmark
   (benchmarks/bench_retrieval.py, docs/performance.md) finds the remembered conversation
   first more often with it; a fusion favours long conversations, which hold a short
   message with any given word by chance. Messages are counted among the matches read in
   1. (all of a part's, unless it has more than the rank window; a part checked inside the
   conversation counts once).
4. For the conversations that can reach the answer (the best ``limit + 1``), each part's
   hits: its matching messages in the conversation and its best one.

Bounds, said in the answer as ``rankedNewest``: when the rarest part has more matches than
the rank window, or its matches lie in more than ``CANDIDATES_MAX`` conversations, only the
conversations of its newest matches are candidates.
"""

from __future__ import annotations

import heapq
from typing import NamedTuple

from .conversation import HITS_MAX
from .query import ParsedQuery, part_query, part_text
from .rank import K1, B, Scorer, holding
from .redact import redact
from .search import (
    RANK_WINDOW,
    Scopes,
    SearchRequest,
    SearchResponse,
    newest_first,
)
from .storage import (
    AgentReader,
    CorpusStats,
    Matches,
    MatchRow,
    SessionFilter,
    SessionRow,
)

# Conversations checked for the other parts per database: each check of a common part is one
# indexed lookup (~40 us on SQLite at 1M messages), so this bounds a query's work.
CANDIDATES_MAX = 200


class WordHits(NamedTuple):
    """One part of the query in a conversation: its matching messages, and its best one."""

    word: str  # the part as typed (redacted)
    hits: int  # messages holding it (up to HITS_MAX)
    best: str  # the message holding it best (redacted id)

    def as_json(self) -> dict[str, object]:
        return {"word": self.word, "hits": self.hits, "best": self.best}


class Found(NamedTuple):
    """A matching conversation of one database: its best hit and how it ranks."""

    row: MatchRow  # the best hit
    score: float  # the conversation's BM25
    together: int  # the most parts one message holds
    session: SessionRow
    agent: str
    hits: int  # messages holding any part (up to HITS_MAX): what ``n`` / ``N`` walk
    words: tuple[WordHits, ...]


class _Ranked(NamedTuple):
    row: MatchRow
    score: float
    together: int
    best_of_part: tuple[MatchRow | None, ...]


def rank_key(together: int, score: float, row: MatchRow) -> tuple:
    """Most parts in one message first, then the conversation's score, then its best hit:
    newest, then id."""
    return (-together, -score, -row.rowid, row.entry_id)


def match_conversations(
    db: AgentReader,
    request: SearchRequest,
    parsed: ParsedQuery,
    scopes: Scopes,
    response: SearchResponse,
    found: list[Found],
) -> bool:
    """Add the best ``request.limit + 1`` conversations of ``db`` matching ``parsed`` to
    ``found``; return whether more than the limit matched."""
    visible, within = scopes
    filters = request.filters()
    matched: list[Matches] = []
    for k in range(len(parsed.phrases)):
        one = db.match(part_query(parsed, k), visible.scope, window=RANK_WINDOW,
                       limit=request.limit + 1, order="best", filters=filters, within=within)
        if one.searched_since is not None:  # a long phrase of common words: newest only
            response.searched_since = max(response.searched_since or 0, one.searched_since)
        if not one.rows:
            return False
        matched.append(one)
    pks, bounded = _candidates(db, request, parsed, matched)
    if bounded:
        response.ranked_window = RANK_WINDOW
    if not pks:
        return False
    sessions = {s.pk: s for s in db.session_cards(SessionFilter(sorted(pks)))}
    ranked = _rank(parsed, matched, sessions, len(visible.scope.pks), request.order)
    if request.order == "recent":
        order = newest_first([(r.row, r.score) for r in ranked.values()], request.limit + 1,
                             db.sessions_by_pk)
        best = [ranked[row.session_pk] for row, _score in order]
    else:
        best = heapq.nsmallest(request.limit + 1, ranked.values(),
                               key=lambda r: rank_key(r.together, r.score, r.row))
    for r in best:
        hits, words = _word_hits(db, request, parsed, r)
        found.append(Found(r.row, r.score, r.together, sessions[r.row.session_pk], db.agent_id,
                           hits, words))
    return len(ranked) > request.limit or bounded


def _candidates(db: AgentReader, request: SearchRequest, parsed: ParsedQuery,
                matched: list[Matches]) -> tuple[list[int], bool]:
    """The conversations holding every part (step 2), newest first by the rarest part's
    matches; and whether they were bounded (the rarest part's newest matches only)."""
    def rarity(k: int) -> tuple[float, int]:
        stats = matched[k].stats
        return holding(stats.parts[0], stats.rows), k

    order = sorted(range(len(matched)), key=rarity)
    first = matched[order[0]]
    sessions = list(dict.fromkeys(row.session_pk for row in first.rows))  # newest first
    bounded = first.windowed or len(sessions) > CANDIDATES_MAX
    pks = sessions[:CANDIDATES_MAX]
    filters = request.filters()
    for k in order[1:]:
        known = {row.session_pk for row in matched[k].rows}
        if matched[k].windowed:  # not every match was read: ask the others
            one = part_query(parsed, k)
            pks = [pk for pk in pks if pk in known or db.session_hit_ids(one, pk, 1, filters)]
        else:
            pks = [pk for pk in pks if pk in known]
        if not pks:
            break
    return pks, bounded


def _rank(parsed: ParsedQuery, matched: list[Matches], sessions: dict[int, SessionRow],
          conversations: int, order: str) -> dict[int, _Ranked]:
    """Each candidate's best hit, score and ``together`` (step 3), by session."""
    parts = len(matched)
    stats = matched[0].stats
    scorer = Scorer(parsed, CorpusStats(stats.rows, stats.chars,
                                        tuple(m.stats.parts[0] for m in matched)))
    average = stats.rows / max(conversations, 1)  # messages in a visible conversation
    messages: dict[int, dict[int, tuple[MatchRow, list[bool]]]] = {}
    for k, one in enumerate(matched):
        for row in one.rows:
            if row.session_pk in sessions:
                _row, held = messages.setdefault(row.session_pk, {}).setdefault(
                    row.rowid, (row, [False] * parts))
                held[k] = True  # the index matched the part in it
    ranked: dict[int, _Ranked] = {}
    for pk, session in sessions.items():
        rows = messages.get(pk, {})
        best_terms = [0.0] * parts
        best_rows: list[MatchRow | None] = [None] * parts
        hit: tuple[tuple, MatchRow, int] | None = None
        for row, held in rows.values():
            terms = scorer.part_scores(row.body, held)
            holds = sum(1 for term in terms if term > 0)
            key = ((-holds, -row.ts, row.entry_id) if order == "recent"
                   else (-holds, -sum(terms), -row.rowid, row.entry_id))
            if hit is None or key < hit[0]:
                hit = (key, row, holds)
            for k, term in enumerate(terms):
                kept = best_rows[k]
                if term > best_terms[k] or (term == best_terms[k] and term > 0 and kept
                                            and row.rowid > kept.rowid):
                    best_terms[k], best_rows[k] = term, row
        if hit is None:  # (never: a candidate holds a match of the rarest part, read in 1.)
            continue
        # Conversation-level BM25: a part's frequency is the number of its messages holding
        # it (those read; a part checked inside the conversation counts once), its length
        # its number of messages.
        held_by = [sum(1 for _row, held in rows.values() if held[k]) or 1 for k in range(parts)]
        norm = K1 * (1 - B + B * max(session.messages, 1) / (average or 1.0))
        score = sum(weight * n * (K1 + 1) / (n + norm)
                    for weight, n in zip(scorer.weights, held_by))
        _key, row, holds = hit
        ranked[pk] = _Ranked(row, score, holds, tuple(best_rows))
    return ranked


def _word_hits(db: AgentReader, request: SearchRequest, parsed: ParsedQuery,
               ranked: _Ranked) -> tuple[int, tuple[WordHits, ...]]:
    """Messages holding any part, and each part's hits and best message (step 4)."""
    filters = request.filters()
    pk = ranked.row.session_pk
    seen: set[str] = set()
    words = []
    for k in range(len(parsed.phrases)):
        ids = db.session_hit_ids(part_query(parsed, k), pk, HITS_MAX, filters)
        seen.update(ids)
        best = ranked.best_of_part[k]
        best_id = best.entry_id if best is not None else (ids[-1] if ids else "")
        words.append(WordHits(redact(part_text(parsed, k)), len(ids), redact(best_id)))
    return min(len(seen), HITS_MAX), tuple(words)
