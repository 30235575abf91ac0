"""Conversation matching (SPEC 19): a conversation matches when every part of the query (a
word or a phrase) occurs somewhere in it, in the visible, active-branch user and assistant
text the index holds (docs/query-language.md, "Conversations"). ``sessions_search`` keeps
its rule (every part in one message); this is grouped mode's (core/grouped.py).

In one agent database, inside the search's read snapshot:

1. Each part is matched on its own, as ``sessions_search`` matches a one-part query
   (``AgentReader.match``: the caller's scope, the filters, the rank window): its visible
   matches (every one, or the newest ``RANK_WINDOW``) and the statistics BM25 weighs it with.
   A part without a match ends the search: no conversation can hold every part.
2. Candidates: the conversations of the rarest part's matches, newest first (at most
   ``CANDIDATES_MAX``, or ``NEWEST_CANDIDATES`` when even it has more matches than the rank
   window). Every other part, rarest first, keeps the candidates that hold it:
   known from its own matches when every one was read; else, for the candidates not among
   them, asked of those conversations in one walk of the part's index over them
   (``sessions_hit_ids``: the sessions named in the query, a few dozen to a statement). A
   common word therefore costs a walk over the candidates' messages, never a scan of its
   matches, and the work is bounded by the candidates (docs/performance.md).
3. Ranking (``_rank``): a conversation's key is ``together``, the most parts one of its
   messages holds (every part: the message-level match), so a conversation where the words
   share a message ranks above one where they are spread out; then its score, BM25 with the
   conversation as the document: a part's frequency is the number of the conversation's
   messages holding it, the length its number of messages, the weights the parts' own
   (rank.py, over the visible messages); then the newest message holding the most parts.
   Which parts a message holds is which the index matched in it, among the matches read in
   1. (every match of a part, unless it has more than the rank window): no text is read to
   rank. The best hit, where it opens, is the message holding the most parts, best scored
   by rank.py (``recent`` order: the newest of them; conversations come newest best hit
   first); only the answered conversations' messages are scored. Why BM25 over the
   conversation rather than a fusion of its messages' scores: the known-item benchmark
   (benchmarks/bench_retrieval.py, docs/performance.md) finds the remembered conversation
   first more often with it; a fusion favours long conversations, which hold a short
   message with any given word by chance. A part checked inside the conversation (step 2)
   and found in none of the messages read counts once.
4. For the conversations that can reach the answer (the best ``limit + 1``), each part's
   hits: its matching messages in the conversation and its best one.

Bounds, said in the answer as ``rankedNewest``: when the rarest part has more matches than
the rank window, only the ``NEWEST_CANDIDATES`` conversations of its newest matches are
candidates; when its matches lie in more than ``CANDIDATES_MAX`` conversations, the newest
``CANDIDATES_MAX``.
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

# Conversations checked for the other parts per database: a common part's check walks its
# index over the candidates' messages, so this bounds a query's work. When even the rarest
# part has more matches than the rank window (every part is common), the answer is ranked
# among the newest matches anyway: its newest NEWEST_CANDIDATES conversations are checked
# (twice the largest answer).
CANDIDATES_MAX = 200
NEWEST_CANDIDATES = 50


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
    edge: int  # the rowid of the newest message holding that many
    session: SessionRow
    agent: str
    hits: int  # messages holding any part (up to HITS_MAX): what ``n`` / ``N`` walk
    words: tuple[WordHits, ...]


class _Ranked(NamedTuple):
    edge: MatchRow  # the newest message holding the most parts
    score: float
    together: int
    messages: tuple[tuple[MatchRow, tuple[bool, ...]], ...]  # known, with the parts held


def rank_key(together: int, score: float, edge: int) -> tuple:
    """Most parts in one message first, then the conversation's score, then the newest
    message holding that many parts (its rowid)."""
    return (-together, -score, -edge)


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
                       limit=request.limit + 1, order="best", filters=filters, within=within,
                       texts=False)  # ranking reads no text; the answered read theirs
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
    stats = matched[0].stats
    scorer = Scorer(parsed, CorpusStats(stats.rows, stats.chars,
                                        tuple(m.stats.parts[0] for m in matched)))
    ranked = _rank(scorer, matched, sessions, len(visible.scope.pks))
    if request.order == "recent":
        order = newest_first([(r.edge, r.score) for r in ranked.values()], request.limit + 1,
                             db.sessions_by_pk)
        best = [ranked[row.session_pk] for row, _score in order]
    else:
        best = heapq.nsmallest(request.limit + 1, ranked.values(),
                               key=lambda r: rank_key(r.together, r.score, r.edge.rowid))
    best = _with_texts(db, best)
    labels = [redact(part_text(parsed, k)) for k in range(len(parsed.phrases))]
    answered = [r.edge.session_pk for r in best]
    common = {k: db.sessions_hit_ids(part_query(parsed, k), answered, HITS_MAX, filters)
              for k in range(len(parsed.phrases)) if matched[k].windowed}
    for r in best:
        row, best_of_part = _opened(scorer, r, request.order)
        hits, words = _word_hits(matched, common, labels, row.session_pk, best_of_part)
        found.append(Found(row, r.score, r.together, r.edge.rowid, sessions[row.session_pk],
                           db.agent_id, hits, words))
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
    most = NEWEST_CANDIDATES if first.windowed else CANDIDATES_MAX
    bounded = first.windowed or len(sessions) > most
    pks = sessions[:most]
    filters = request.filters()
    for k in order[1:]:
        known = {row.session_pk for row in matched[k].rows}
        if matched[k].windowed:  # not every match was read: ask the others, in one walk
            held = db.sessions_hit_ids(part_query(parsed, k), [p for p in pks if p not in known],
                                       1, filters)
            pks = [pk for pk in pks if pk in known or held[pk]]
        else:
            pks = [pk for pk in pks if pk in known]
        if not pks:
            break
    return pks, bounded


def _rank(scorer: Scorer, matched: list[Matches], sessions: dict[int, SessionRow],
          conversations: int) -> dict[int, _Ranked]:
    """Each candidate's ``together``, score and edge (step 3), by session: from which parts
    the index matched in each known message, no text read."""
    parts = len(matched)
    average = scorer.average_rows(conversations)
    messages: dict[int, dict[int, tuple[MatchRow, list[bool]]]] = {pk: {} for pk in sessions}
    for k, one in enumerate(matched):
        for row in one.rows:
            if row.session_pk in sessions:
                _row, held = messages[row.session_pk].setdefault(row.rowid, (row, [False] * parts))
                held[k] = True
    ranked: dict[int, _Ranked] = {}
    for pk, rows in messages.items():
        if not rows:  # (never: a candidate holds a match of the rarest part, read in 1.)
            continue
        known = tuple((row, tuple(held)) for row, held in rows.values())
        edge, holds = max(((row, sum(held)) for row, held in known),
                          key=lambda c: (c[1], c[0].rowid))
        # Conversation-level BM25: a part's frequency is the number of the conversation's
        # messages holding it (those read; a part checked inside the conversation counts
        # once), its length its number of messages.
        held_by = [sum(1 for _row, held in known if held[k]) or 1 for k in range(parts)]
        norm = K1 * (1 - B + B * max(sessions[pk].messages, 1) / (average or 1.0))
        score = sum(weight * n * (K1 + 1) / (n + norm)
                    for weight, n in zip(scorer.weights, held_by))
        ranked[pk] = _Ranked(edge, score, holds, known)
    return ranked


def _with_texts(db: AgentReader, answered: list[_Ranked]) -> list[_Ranked]:
    """The answered conversations with the text of the messages ``_opened`` scores: those
    holding the most parts, and, when none holds every part, all of its messages read."""
    def scored(r: _Ranked) -> list[MatchRow]:
        return [row for row, held in r.messages
                if sum(held) == r.together or r.together < len(held)]

    texts = {row.rowid: row.body for row in db.rows_with_text(
        [row.rowid for r in answered for row in scored(r)])}
    return [r._replace(messages=tuple((row._replace(body=texts[row.rowid]), held)
                                      for row, held in r.messages if row.rowid in texts))
            for r in answered]


def _opened(scorer: Scorer, ranked: _Ranked, order: str
            ) -> tuple[MatchRow, tuple[MatchRow | None, ...]]:
    """Where the conversation opens: of its messages holding the most parts, the best scored
    (``recent``: the newest); and each part's best message: the best hit when it holds the
    part, else the message with the part's best BM25 term. Only those messages are scored."""
    parts = len(scorer.weights)
    most = [(row, held) for row, held in ranked.messages if sum(held) == ranked.together]
    if order == "recent":
        hit = min(most, key=lambda c: (-c[0].ts, c[0].entry_id))[0]
    else:
        hit = min(most, key=lambda c: (-sum(scorer.part_scores(c[0].body, c[1])), -c[0].rowid,
                                       c[0].entry_id))[0]
    hit_held = next(held for row, held in most if row is hit)
    best_rows: list[MatchRow | None] = [hit if hit_held[k] else None for k in range(parts)]
    best_terms = [0.0] * parts
    for row, held in ranked.messages:
        missing = [k for k in range(parts) if held[k] and best_rows[k] is not hit]
        if not missing:
            continue
        terms = scorer.part_scores(row.body, held)
        for k in missing:
            kept = best_rows[k]
            if kept is None or terms[k] > best_terms[k] or (terms[k] == best_terms[k]
                                                            and row.rowid > kept.rowid):
                best_terms[k], best_rows[k] = terms[k], row
    return hit, tuple(best_rows)


def _word_hits(matched: list[Matches], common: dict[int, dict[int, list[str]]],
               labels: list[str], pk: int, best_of_part: tuple[MatchRow | None, ...]
               ) -> tuple[int, tuple[WordHits, ...]]:
    """Messages holding any part, and each part's hits and best message (step 4). A part
    whose every match was read (not windowed) has its hits among them; a commoner one's were
    asked of the answered conversations (``common``: part -> session -> ids)."""
    seen: set[str] = set()
    words = []
    for k, label in enumerate(labels):
        if k in common:
            ids = common[k][pk]
        else:
            ids = [row.entry_id for row in reversed(matched[k].rows) if row.session_pk == pk]
        seen.update(ids)
        best = best_of_part[k]
        best_id = best.entry_id if best is not None else (ids[-1] if ids else "")
        words.append(WordHits(label, len(ids), redact(best_id)))
    return min(len(seen), HITS_MAX), tuple(words)
