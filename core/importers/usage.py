"""The model's usage of one API response in OpenClaw's shape, which every importer writes on
the assistant message that carries it: ``message.usage = {input, output, cacheRead,
cacheWrite, totalTokens, cost: {input, output, cacheRead, cacheWrite, total}}``.

One rule for every format: only what the format records is written. A count the format does
not keep is left out, never written as 0 (unknown is not zero), and ``cost`` is there only
when the format records a cost. ``input`` is the input read afresh: the tokens read from the
prompt cache are ``cacheRead``, not also ``input`` (Anthropic's way; a format that counts
cached tokens inside its input, as OpenAI and Gemini do, subtracts them before calling
``openclaw_usage``). ``output`` includes reasoning tokens (they are billed as output).
"""

from __future__ import annotations

import math
from typing import Any

from ..facts import token_count

_TOKENS = ("input", "output", "cacheRead", "cacheWrite")


# A token count as a format wrote it (an int, or a float with no fraction, under 10**15),
# else None: the rule the facts read a stored message by (core/facts.py).
count = token_count


def amount(value: Any) -> float | int | None:
    """A cost as a format wrote it (a finite number, not negative), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value if value >= 0 else None


def openclaw_usage(
    *,
    input: Any = None,
    output: Any = None,
    cache_read: Any = None,
    cache_write: Any = None,
    total: Any = None,
    cost: Any = None,
    cost_input: Any = None,
    cost_output: Any = None,
    cost_cache_read: Any = None,
    cost_cache_write: Any = None,
) -> dict[str, Any] | None:
    """``message.usage`` of one API response from the numbers its format records (raw values:
    anything that is not a count or an amount counts as not recorded), or None when it
    records none. ``totalTokens`` is ``total`` when given, else the sum of the counts known;
    ``cost.total`` is ``cost`` when given, else the sum of the parts known."""
    tokens = dict(zip(_TOKENS, map(count, (input, output, cache_read, cache_write))))
    usage: dict[str, Any] = {k: v for k, v in tokens.items() if v is not None}
    whole = count(total)
    if whole is None and usage:
        whole = sum(usage.values())
    if whole is not None:
        usage["totalTokens"] = whole
    parts = dict(zip(_TOKENS, map(amount, (cost_input, cost_output, cost_cache_read,
                                           cost_cache_write))))
    priced: dict[str, Any] = {k: v for k, v in parts.items() if v is not None}
    paid = amount(cost)
    if paid is None and priced:
        paid = sum(priced.values())
    if paid is not None:
        priced["total"] = paid
        usage["cost"] = priced
    return usage or None


def minus(whole: Any, part: Any) -> int | None:
    """``whole`` less ``part`` (input tokens less the cached ones that formats count inside
    them), or None when ``whole`` is unknown; an unknown part is taken as none of it."""
    whole_n, part_n = count(whole), count(part)
    if whole_n is None:
        return None
    return max(whole_n - (part_n or 0), 0)


def plus(*values: Any) -> int | None:
    """The sum of the counts known among ``values`` (output and reasoning tokens kept apart by
    a format), or None when none is known."""
    known = [n for n in map(count, values) if n is not None]
    return sum(known) if known else None


def increment(now: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Any] | None:
    """What ``now`` (a response's usage so far, as a later line of a response written over
    several lines records it) adds to ``before`` (what its earlier lines carried): each
    number less the one before (never below 0), the keys ``now`` has; None when it adds
    nothing. The lines' usages then sum to the response's, however the lines were read."""
    if not before:
        return now
    added = _less(now, before)
    return added if any(_numbers(added)) else None


def _less(now: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in now.items():
        earlier = before.get(key)
        if isinstance(value, dict):
            out[key] = _less(value, earlier if isinstance(earlier, dict) else {})
        elif amount(earlier) is not None:
            less = max(value - earlier, 0)
            out[key] = round(less, 12) if isinstance(less, float) else less
        else:
            out[key] = value
    return out


def _numbers(usage: dict[str, Any]) -> list[float]:
    return [n for v in usage.values() for n in (_numbers(v) if isinstance(v, dict) else [v])]


def with_usage(message: dict[str, Any], usage: dict[str, Any] | None) -> dict[str, Any]:
    """``message`` with ``usage`` set, when there is one."""
    if usage:
        message["usage"] = usage
    return message
