"""Terminal-safe text without Rich: what the command line prints even on its fastest path
(``search --json``'s errors), and what ``text.py`` builds on.

Transcript text is data: control characters (ANSI escapes included) are made visible one
character for one, so highlight offsets computed by the core stay valid.
"""

from __future__ import annotations

from backscroll.core.redact import redact

# One character in, one character out: offsets of highlights stay valid.
_VISIBLE = {c: chr(0x2400 + c) for c in range(32)}  # ␀ … ␟ (control pictures)
_VISIBLE[127] = "\u2421"  # ␡
_VISIBLE.update({c: "\ufffd" for c in range(0x80, 0xA0)})  # C1 controls (0x9b is a CSI)
# Bidi embeddings, overrides and isolates: a terminal that applies them would show the text
# after one in another order than it was written ("Trojan Source"); marks (U+200E/F) stay.
_VISIBLE.update({c: "\ufffd" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))})
_KEEP_LAYOUT = dict(_VISIBLE)
del _KEEP_LAYOUT[ord("\n")], _KEEP_LAYOUT[ord("\t")]
_ONE_LINE = dict(_VISIBLE)
_ONE_LINE[ord("\n")] = " "
_ONE_LINE[ord("\t")] = " "


def printable(text: str, one_line: bool = False) -> str:
    """``text`` with every control character made visible (same length, so offsets hold)."""
    return str(text).translate(_ONE_LINE if one_line else _KEEP_LAYOUT)


def shown(value: object) -> str:
    """A key, id, label or sentence that names them, as shown on a terminal: redacted (a token
    can sit in any of them) and on one line with control characters made visible."""
    return printable(redact(str(value)), one_line=True)


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"
