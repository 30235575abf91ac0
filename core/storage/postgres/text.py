"""Text PostgreSQL cannot hold as is: a NUL character or a lone surrogate.

SQLite keeps both in an index row's text; a PostgreSQL ``text`` refuses them. Such a text is
stored as a marker and its JSON form, and read back exactly.
"""

from __future__ import annotations

import json

MARK = "\x01"  # a stored text starting with it is JSON (a real text starting with it is too)


def store_text(text: str) -> str:
    if text.isascii() and "\x00" not in text and not text.startswith(MARK):
        return text
    if "\x00" in text or text.startswith(MARK) or not _encodable(text):
        return MARK + json.dumps(text)
    return text


def load_text(stored: str) -> str:
    return json.loads(stored[1:]) if stored.startswith(MARK) else stored


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
