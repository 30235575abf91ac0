"""The key and agent id checks (``core/keys.py``) are whole-string tests, made for speed (an
import checks a few keys per session); they must refuse exactly what the per-character
rules refuse, with the same sentence."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from backscroll.core.errors import ValidationError
from backscroll.core.keys import check_agent_id, normalize_key

# keys near the rules' edges: spaces, controls, format characters, fullwidth, accents
_CHARS = st.sampled_from(list("agentmain:-_.x ") + ["\t", "\n", "\x00", "\u200b", "\u00a0",
                                                    "é", "Ａ", "\u3000", "\x7f", "/", "\\"])


def _rule(key: str) -> bool:
    """The rule as first written: every character printable ASCII and not a space."""
    canonical = unicodedata.normalize("NFKC", key).strip().lower()
    return not any(not (c.isascii() and c.isprintable()) or c.isspace() for c in canonical)


def _outcome(check, value: str) -> str:  # noqa: ANN001
    try:
        return "ok " + check(value)
    except ValidationError as err:
        return str(err)


@settings(max_examples=400)
@given(st.text(_CHARS, max_size=12))
def test_a_key_is_refused_exactly_when_a_character_breaks_the_rule(rest: str) -> None:
    key = f"agent:main:{rest}"
    outcome = _outcome(normalize_key, key)
    refused = "has a space, a control character or a non-ASCII character" in outcome
    assert refused == (not _rule(key))
    if outcome.startswith("ok "):
        assert outcome == "ok " + unicodedata.normalize("NFKC", key).strip().lower()


@settings(max_examples=400)
@given(st.text(_CHARS, min_size=1, max_size=12))
def test_an_agent_id_with_an_unprintable_character_is_refused(agent: str) -> None:
    canonical = unicodedata.normalize("NFKC", agent).strip().lower()
    outcome = _outcome(check_agent_id, agent)
    if canonical and any(not c.isprintable() for c in canonical):
        assert "contains a control or invisible character" in outcome
