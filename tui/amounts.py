"""Tokens, cost and durations as people read them (the CLI's ``usage`` and ``history``, the
browser's facts panel and usage view): one way of writing each, without Rich.

An unknown amount (None: no message recorded it) is written ``-``, never ``0``.
"""

from __future__ import annotations

from backscroll.core.facts import Facts, Usage

from .plain import plural, shown

UNKNOWN = "-"


def tokens_text(n: int | None) -> str:
    """``950``, ``12.3k``, ``4.56M``: three significant figures are plenty for a glance."""
    if n is None:
        return UNKNOWN
    for size, unit in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if n >= size:
            value = n / size
            return f"{value:.3g}{unit}" if value < 1000 else f"{value:,.0f}{unit}"
    return str(n)


def cost_text(cost: float | None) -> str:
    """Dollars as the transcripts' providers report them: cents (``$12.30``), and four
    places below a cent (``$0.0042``)."""
    if cost is None:
        return UNKNOWN
    if cost == 0:
        return "$0"
    return f"${cost:.4f}" if cost < 0.01 else f"${cost:,.2f}"


def duration_text(ms: int | None) -> str:
    """How long something took, as people read it: ``120 ms``, ``3.4 s``, ``2m 05s``,
    ``3h 01m``, ``2d 4h`` (a tool call's row and a session's facts alike); ``-`` unknown."""
    if ms is None:
        return UNKNOWN
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(ms // 1000, 60)
    if minutes < 60:
        return f"{minutes}m {seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h {minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h"


def usage_text(usage: Usage) -> str:
    """``12.3k in · 4.5k out · 1.2M cache read · 30k cache write · $0.75``: what is known."""
    parts = [f"{tokens_text(n)} {label}" for n, label in
             zip(usage[:4], ("in", "out", "cache read", "cache write")) if n is not None]
    if usage.cost is not None:
        parts.append(cost_text(usage.cost))
    return " · ".join(parts) if parts else "no usage recorded"


def facts_summary(facts: Facts | None) -> str:
    """A session's facts on one line: models · tokens · cost · duration · calls · files."""
    if facts is None:
        return "facts: not computed yet (the session is waiting to be indexed)"
    parts = [", ".join(shown(m) for m in facts.models) or "no model named",
             usage_text(facts.usage), duration_text(facts.duration_ms),
             plural(facts.tool_calls, "tool call")
             + (f" ({facts.failed_calls:,} failed)" if facts.failed_calls else "")]
    if facts.files:
        parts.append(plural(len(facts.files), "file") + ("+" if facts.files_capped else "")
                     + " edited")
    return " · ".join(parts)


def facts_lines(facts: Facts | None) -> list[str]:
    """A session's facts as a few short lines (terminal-safe: paths redacted, one line each)."""
    if facts is None:
        return ["facts: not computed yet (the session is waiting to be indexed)"]
    calls = plural(facts.tool_calls, "tool call")
    if facts.failed_calls:
        calls += f" ({facts.failed_calls:,} failed)"
    lines = [
        "models: " + (", ".join(shown(m) for m in facts.models) or UNKNOWN),
        "tokens: " + usage_text(facts.usage),
        f"duration: {duration_text(facts.duration_ms)} · {calls}",
    ]
    if facts.files:
        more = " and more" if facts.files_capped else ""
        lines.append(f"files edited or written ({len(facts.files):,}{more}):")
        lines += [f"  {shown(path)}" for path in facts.files]
    return lines
