"""What pass 2's scan (context.py) and its handlers (commands.py, context.py) share: a span, a
handler's answer, and the prepared text. Both import it, neither imports the other's types.
"""

from __future__ import annotations

import functools
import re

from . import patterns as pat

Span = tuple[int, int]
# A handler's answer: the span of the secret it found (or None), and where the scan resumes.
Found = tuple[Span | None, int]


class Scan:
    """A text prepared for pass 2: views of the same length, so offsets are shared."""

    def __init__(self, text: str) -> None:
        self.text = text
        # Lower-cased ASCII, one byte per character ("?" for anything else).
        self.low = text.encode("ascii", "replace").lower()

    @functools.cached_property
    def names(self) -> bytes:
        """"a" where a name character is, " " elsewhere."""
        return self.low.translate(pat.NAME_SHAPE)


def found(match: re.Match[str], secret: bool, end: int) -> Found:
    """A secret resumes the scan after it; a rejected candidate right after its trigger, so
    that nothing it read is skipped unexamined."""
    return (match.span("secret"), match.end()) if secret else (None, end)
