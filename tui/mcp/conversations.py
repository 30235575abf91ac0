"""The ``conversations_search`` tool's answer and description (``server.py`` serves it): which
past conversation was that? One result per conversation, matched when each word occurs
somewhere in it (core/convmatch.py), with the same visibility, redaction and caps as
``sessions_search``."""

from __future__ import annotations

from typing import Literal

from typing_extensions import NotRequired, TypedDict

from backscroll.core.search import LIMIT_MAX


class BestHit(TypedDict):
    messageId: str
    timestamp: int
    role: Literal["user", "assistant"]
    excerpt: str
    snippet: str
    score: float


class WordHit(TypedDict):
    word: str
    hits: int
    best: str


class ConversationItem(TypedDict):
    sessionKey: str
    sessionId: str
    agent: str
    title: str | None
    source: str
    messages: int
    lastActivity: int
    hits: int
    resume: str | None
    words: list[WordHit]
    best: BestHit
    host: NotRequired[str | None]
    archived: bool


class ConversationsAnswer(TypedDict):
    conversations: list[ConversationItem]
    indexing: NotRequired[bool]
    warning: NotRequired[str]
    truncated: NotRequired[bool]
    rankedNewest: NotRequired[int]
    searchedSince: NotRequired[int]


def description(data_note: str) -> str:
    return f"""\
Find past conversations (sessions) by several things said in them, possibly in different \
messages: a conversation matches when each word or "quoted phrase" occurs somewhere in its \
user and assistant messages (sessions_search needs them all in one message). One result \
per conversation, best first: sessionKey, title, agent, source, last activity, "hits" (its \
messages holding any of the words), "words" (each word's number of messages and its best \
messageId, to see why it matched) and "best" (the message holding the most words, with an \
excerpt). Conversations where the words share a message rank first.

Query language as sessions_search: words and "double quotes"; nothing else is syntax. To \
read a conversation, call sessions_history with its sessionKey and a messageId (best or a \
word's best). Excerpts are redacted. "truncated": true means more conversations matched \
(raise limit, up to {LIMIT_MAX}); "rankedNewest" that only the conversations of the rarest \
word's newest matches were weighed; "indexing": true, retry in a few seconds.

""" + data_note
