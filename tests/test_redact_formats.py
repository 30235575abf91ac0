"""Every documented secret format, rebuilt from its facts by tests/redaction_vectors.py: each
vendor token is masked by its own rule, each context form hides its secret, and each
look-alike comes out unchanged. docs/redaction.md, the rules and the generators must agree."""

from __future__ import annotations

import random
import re
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core.redact import contains_secret, redact
from backscroll.core.redact import tokens as redact_tokens

from . import redaction_vectors as vectors

DOCS = Path(__file__).resolve().parent.parent / "docs" / "redaction.md"
SAMPLES = 25  # random vectors per format in the seeded tests
TOKEN_KINDS = [kind for kind, _, _ in redact_tokens.TOKEN_RULES]


def hidden(secret: str, output: str) -> bool:
    """No 8 characters of what the mask never keeps show (the whole of a short secret)."""
    if len(secret) < 18:
        return secret not in output
    middle = secret[6:-4]
    return all(middle[i : i + 8] not in output for i in range(max(1, len(middle) - 7)))


def documented_ids() -> set[str]:
    """The ids in the first column of the format and look-alike tables of the docs."""
    return set(re.findall(r"^\| `([a-z0-9_-]+)`", DOCS.read_text(encoding="utf-8"), re.MULTILINE))


def test_every_token_rule_has_a_generator_and_no_more() -> None:
    assert sorted(vectors.TOKENS) == sorted(TOKEN_KINDS)
    assert len(TOKEN_KINDS) == len(set(TOKEN_KINDS))


def test_the_docs_list_every_format_and_look_alike_and_nothing_else() -> None:
    generated = set(vectors.TOKENS) | set(vectors.CONTEXTS) | set(vectors.LOOK_ALIKES)
    documented = documented_ids()
    assert sorted(generated - documented) == []  # generated but not documented
    assert sorted(documented - generated) == []  # documented but not generated


@pytest.mark.parametrize("kind", TOKEN_KINDS)
def test_generated_token_is_masked_by_its_own_rule(kind: str) -> None:
    rng = random.Random(f"token:{kind}")
    for _ in range(SAMPLES):
        token = vectors.TOKENS[kind](rng)
        # The token's own rule names it: removing the rule fails here.
        assert [m.lastgroup for m in redact_tokens.TOKEN.finditer(token)] == [kind], token
        secret = vectors.token_secret(kind, token)
        for sentence in vectors.NEUTRAL:
            text = sentence.format(s=token)
            output = redact(text)
            assert hidden(secret, output), (text, output)
            assert redact(output) == output
            assert contains_secret(text)


def test_the_fast_token_search_finds_what_the_combined_pattern_finds() -> None:
    rng = random.Random("find_tokens")
    texts = [sentence.format(s=make(rng)) for make in vectors.TOKENS.values() for sentence in vectors.NEUTRAL]
    texts += [vectors.LOOK_ALIKES[form](rng) for form in vectors.LOOK_ALIKES]
    texts += ["+" + vectors.TOKENS["aws_secret"](rng), "-- " + vectors.TOKENS["teams_webhook"](rng)]
    for text in texts:
        expected = [(m.span(), m.lastgroup) for m in redact_tokens.TOKEN.finditer(text)]
        assert [(m.span(), m.lastgroup) for m in redact_tokens.find_tokens(text)] == expected, text


@pytest.mark.parametrize("form", vectors.CONTEXTS)
def test_generated_context_secret_is_masked(form: str) -> None:
    rng = random.Random(f"context:{form}")
    for _ in range(SAMPLES):
        text, secrets = vectors.context(form, rng)
        output = redact(text)
        assert all(hidden(secret, output) for secret in secrets), (text, output)
        assert redact(output) == output


@pytest.mark.parametrize("form", sorted(vectors.LOOK_ALIKES))
def test_generated_look_alike_is_unchanged(form: str) -> None:
    rng = random.Random(f"look-alike:{form}")
    for _ in range(SAMPLES):
        text = vectors.LOOK_ALIKES[form](rng)
        assert redact(text) == text
        assert not contains_secret(text)


# --- properties -------------------------------------------------------------------------------

CJK = "人人生而自由在尊严和权利上一律平等すべての人間は모든인간은"
# Words and punctuation around a vector; a separator always stands between them and it.
SURROUNDING = st.text(alphabet=st.sampled_from(string.ascii_letters + " .,!?()\n" + CJK), max_size=60)
SEPARATOR = st.sampled_from([" ", "\n", " — ", ": ", " (", "\t"])


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    kind=st.sampled_from(TOKEN_KINDS),
    seed=st.integers(0, 2**32),
    before=SURROUNDING,
    after=SURROUNDING,
    left=SEPARATOR,
    right=st.sampled_from([" ", "\n", ". ", ", ", ")"]),
)
def test_a_token_in_any_text_is_hidden(
    kind: str, seed: int, before: str, after: str, left: str, right: str
) -> None:
    token = vectors.TOKENS[kind](random.Random(seed))
    text = before + left + token + right + after
    output = redact(text)
    assert hidden(vectors.token_secret(kind, token), output)
    assert redact(output) == output


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    forms=st.lists(st.sampled_from(sorted(vectors.LOOK_ALIKES)), min_size=1, max_size=5),
    seed=st.integers(0, 2**32),
    joiner=st.sampled_from(["\n", " ", "; ", "\n\n"]),
)
def test_look_alikes_together_are_unchanged(forms: list[str], seed: int, joiner: str) -> None:
    rng = random.Random(seed)
    text = joiner.join(vectors.LOOK_ALIKES[form](rng) for form in forms)
    assert redact(text) == text


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    forms=st.lists(st.sampled_from(vectors.CONTEXTS), min_size=1, max_size=4),
    seed=st.integers(0, 2**32),
)
def test_context_secrets_on_separate_lines_are_all_hidden(forms: list[str], seed: int) -> None:
    rng = random.Random(seed)
    made = [vectors.context(form, rng) for form in forms]
    text = "\n".join(vector_text for vector_text, _ in made)
    output = redact(text)
    assert all(hidden(secret, output) for _, secrets in made for secret in secrets)
    assert redact(output) == output
