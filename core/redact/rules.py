"""The judgement of redaction: does this name announce a secret, is this value one?

Patterns live in tokens.py (pass 1) and patterns.py (pass 2); the engine that
applies them is engine.py with context.py. docs/redaction.md explains each decision.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter

_DIGIT, _UPPER, _LOWER = re.compile(r"\d"), re.compile(r"[A-Z]"), re.compile(r"[a-z]")

def is_mask(value: str) -> bool:
    """A mask this module wrote (``***``, ``abcdef…wxyz``): never a secret again."""
    return value == "***" or (len(value) == 11 and value[6] == "…")


# --- values that stand in for a secret ---------------------------------------------------------

# A value made only of words, one of them from this list, stands in for a secret:
# "REDACTED_API_KEY", "test-key", "sk-secret", "changeme", "none", "EXAMPLE".
_PLACEHOLDER_WORDS = frozenset(
    {"null", "none", "nil", "true", "false", "undefined", "redacted", "hidden", "masked",
     "secret", "password", "passwd", "token", "key", "apikey", "changeme", "example",
     "placeholder", "dummy", "fake", "mock", "sample", "test", "todo", "insert", "here", "pass"}
)
_WORD_SEPARATORS = re.compile(r"[-_.' ]")
_REFERENCE = re.compile(r"\$[{(A-Za-z_]|%\w+%$|%s$|\{\{|@\w+@$")
# <token>, [PASSWORD], {api_key}, (secret): a name in brackets, unless what is inside looks
# random ({Xk3v9Qp2Lm7R} is a password someone wrapped in braces).
_BRACKETED = re.compile(r"[<\[{(](?P<inner>.*)[>\]})]$", re.DOTALL)
_PLAIN = re.compile(r"[^\W\d_]+(?:[-_.' ][^\W\d_]+)*")
_PUNCTUATION = re.compile(r"[^\w.-]")
_KEY_CHARS = re.compile(r"[A-Za-z0-9_+/=%-]{16,}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_CAMEL_WORDS = re.compile(r"(?:[A-Z][a-z]+)+")
# os.environ[...], get_token(), self.api_key: code that fetches a secret, not the secret. Each
# part is a word (letters, then digits at most at its end), so a1b2.c3d4 is not code.
_IDENTIFIER = r"[A-Za-z_$][A-Za-z_$]*\d*"
_CODE = re.compile(rf"{_IDENTIFIER}(?:(?:\.|::|->){_IDENTIFIER})*(?:[(\[].*)?", re.DOTALL)


def is_repetitive(value: str) -> bool:
    """Filler, not a secret: ***, ..., abab, TESTTEST..., or one character making up most of
    it (xxxx, XXXX-XXXX, 0000, ghp_xxxx..., AKIAZZZZ..., glc_1111...)."""
    distinct = len(set(value))
    if distinct == 1 or (distinct == 2 and len(value) > 3):
        return True
    if len(value) >= 12 and any(value == value[:n] * (len(value) // n) + value[: len(value) % n]
                                for n in (3, 4)):
        return True  # TESTTESTTEST..., abcabcabc...
    return Counter(value).most_common(1)[0][1] * 2 > len(value)


# Stand-ins written into a value: <prefix>XXXX_YOUR_TOKEN, xoxp-...-####, and in a
# named value also some-fake-value, my-dummy-token (real keys can hold "fake" by chance, and test
# data marks its keys so: sk-ant-...-fake-...).
_FILLER_PARTS = ("xxxx", "XXXX", "####", "...")
_STAND_IN_WORDS = ("fake", "dummy")
# "your" as a word of the value (<your-token>, PUT_YOUR_KEY_HERE, yourToken), not as four
# letters a random key happens to hold (...vryouRHJ...).
_YOUR = re.compile(r"(?<![A-Za-z])(?:your|YOUR|Your)(?![a-z])")


def has_filler(value: str) -> bool:
    return any(part in value for part in _FILLER_PARTS) or _YOUR.search(value) is not None


def is_placeholder(value: str) -> bool:
    """Doc placeholders and references to a secret kept elsewhere (${VAR}, <token>, [PASSWORD],
    {{ secrets.X }}, $(cat file), %s, ...): there is nothing to hide."""
    lowered = value.lower()
    return (
        (plain_words(value) and not _PLACEHOLDER_WORDS.isdisjoint(_WORD_SEPARATORS.split(lowered)))
        or has_filler(value)
        or any(word in value for word in _STAND_IN_WORDS)
        or value.endswith("EXAMPLE")  # AWS's documentation keys: AKIA...EXAMPLE
        or not any(c.isalnum() for c in value)  # ***, ,.:-!?: no password is only symbols
        or _REFERENCE.match(value) is not None
        or _bracketed_name(value)
        or is_repetitive(value)
    )


def _bracketed_name(value: str) -> bool:
    match = _BRACKETED.match(value)
    if match is None:
        return False
    inner = match.group("inner")
    return not looks_random(inner) or code_like(inner)


def plain_words(value: str) -> bool:
    """Letters only, optionally joined by - _ . ' or spaces: prose or an identifier."""
    return _PLAIN.fullmatch(value) is not None


def code_like(value: str) -> bool:
    """A dotted name, a call or a subscript (a lone word is not code: it may be a password)."""
    has_code_mark = "." in value or "(" in value or "[" in value or "::" in value or "->" in value
    return has_code_mark and _CODE.fullmatch(value) is not None


def char_kinds(value: str) -> int:
    """How many of lower case, upper case, digits, other characters the value mixes."""
    return (
        (_LOWER.search(value) is not None)
        + (_UPPER.search(value) is not None)
        + (_DIGIT.search(value) is not None)
        + (_PUNCTUATION.search(value) is not None)
    )


def looks_random(value: str) -> bool:
    """8+ characters mixing at least two of lower case, upper case, digits, punctuation."""
    return len(value) >= 8 and not plain_words(value) and char_kinds(value) >= 2


def looks_like_key(value: str) -> bool:
    """One random 16+ character token (hex, base64, URL-encoded), never a UUID, a word in
    CamelCase (ClearTextPassword) or a value with structure such as agent:main:main."""
    if not _KEY_CHARS.fullmatch(value) or _UUID.fullmatch(value) or _CAMEL_WORDS.fullmatch(value):
        return False
    return char_kinds(value.replace("_", "").replace("-", "")) >= 2


def shannon_entropy(value: str) -> float:
    """Bits per character of the value's own character distribution."""
    counts = Counter(value)
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


_HEX = re.compile(r"[0-9a-fA-F]+")


def high_entropy(value: str) -> bool:
    """A random-looking token: 16+ characters, digits and letters (or 20+ letters of both
    cases), and Shannon entropy of at least 3.0 bits per character for hex (at most 4
    possible) or 3.5 for anything richer.
    Random 32-character hex has ~3.7, random base64 ~4.7; English words and repeats less."""
    if len(value) < 16 or is_repetitive(value):
        return False
    upper, lower = _UPPER.search(value) is not None, _LOWER.search(value) is not None
    if _DIGIT.search(value) is None:
        if not (upper and lower and len(value) >= 20):
            return False  # letters only: a word, unless long and of both cases
    elif not (upper or lower):
        return False  # a number
    threshold = 3.0 if _HEX.fullmatch(value) else 3.5
    return shannon_entropy(value) >= min(threshold, math.log2(len(value)) * 0.8)


_IDENTIFIER_PART = re.compile(r"(?:[a-z]{2,}|[A-Z][a-z]{2,}|[A-Z]{2,}(?![a-z]))+\d*")


def looks_like_identifier(value: str) -> bool:
    """Words joined in snake, kebab, dotted or camel case, digits only at a word's end
    (rpc_Node3_Key, ClearTextPassword): a name in code, not a random token."""
    return all(_IDENTIFIER_PART.fullmatch(part) for part in re.split(r"[_.-]+", value.strip("_.-")))


def is_uuid(value: str) -> bool:
    return _UUID.fullmatch(value) is not None


# --- prose: words that follow "password is" / "password:" in a sentence -----------------------

PROSE_WORDS = frozenset(
    """a an the this that these those it its my your our their his her no not none null nil
    i me we us you he she they them him
    and or but so if then than as at by for from in into of on to with without is was were are
    be been being has have had do does did can could will would should must may might now
    still also just only here there same different ok okay fine good bad right wrong correct
    incorrect invalid valid required optional mandatory missing empty blank set unset stored
    saved hashed encrypted hidden visible masked shown changed reset expired strong weak long
    short too very secure insecure sent used needed case sensitive provided given known unknown
    what which who whom whose whatever something anything nothing generated random simple easy
    hard secret kept checked managed configured defined specified updated printed logged
    displayed typed entered prompted asked shared leaked compromised exposed rotated revoked
    protected safe unsafe please see check use enter type ask read below above after before
    again later first last new old default initial temporary temp current previous same
    str string int bool bytes any optional object number text boolean char void unknown
    null undefined true false yes field prompt length policy manager reset hash salt""".split()
)
_PROSE_SUFFIXES = ("ed", "ing", "ly", "able", "ible", "tion", "sion", "ment", "ness")


def is_prose_word(value: str) -> bool:
    """A common English word, or one that reads like one (required, missing, carefully)."""
    lowered = value.lower()
    return lowered in PROSE_WORDS or (
        len(lowered) > 4 and lowered.isalpha() and lowered.endswith(_PROSE_SUFFIXES)
    )


# --- names that announce a secret -------------------------------------------------------------

NOT_SECRET, WEAK, STRONG = 0, 1, 2
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")  # camelCase, snake_case, SCREAMING_CASE
_STRONG_WORDS = frozenset({"pass", "pwd", "pw", "auth", "oauth", "creds", "credentials"})
_STRONG_ENDINGS = ("password", "passwd", "passphrase", "passcode", "token", "apikey",
                   "secretkey", "accesskey", "privatekey")
_PASSWORD_WORDS = frozenset({"password", "passwd", "passphrase", "passcode", "pass", "pwd", "pw"})
_KEY_QUALIFIERS = frozenset(
    {"api", "access", "secret", "private", "client", "master", "signing", "encryption",
     "license", "app", "auth", "account", "service"}
)
# Trailing words that describe the form of the value, not what it is: SUPER_SECRET_VALUE,
# TOKEN_B64 ("b" once the digits are dropped), KEY_BASE64.
_FORM_WORDS = frozenset({"value", "val", "str", "string", "text", "data", "raw", "plain",
                         "b", "base", "hex", "encoded"})
# Trailing words that make a secret word describe something else: secret_name, token_count,
# credentialId, auth_provider, password_policy, key_file. After one of these the name is
# metadata, whatever came before it.
_METADATA_WORDS = frozenset(
    """name names id ids count counts type types kind length len size file files path paths dir
    url uri urls endpoint endpoints host hostname expiry expires expiration ttl field fields label
    labels policy prefix suffix provider providers manager service store storage env var variable
    variables version format pattern regex mode method methods scheme header headers param params
    parameter arg args option options config settings setting prompt input placeholder hint
    message error errors reset required min max rule rules strength validator validation check
    enabled disabled flag status state timeout created updated at by user username login email
    budget limit limits usage used usages index idx type endpoint ref reference source sources
    location loc lifetime age url_template template helper helpers class cls fn func callback
    handler list map dict set table column col def definition schema spec""".split()
)
# Public keys, tokens that protect a form rather than grant access (CSRF, Rails'
# authenticity_token), library names that merely end in "token" (io.jsonwebtoken), and names
# that say their value is a stand-in (fakeToken, invalid_password, nonValidToken; not
# "test": STRIPE_TEST_KEY holds a real key).
_NOT_SECRET_WORDS = frozenset({"public", "publishable", "csrf", "xsrf", "authenticity",
                               "antiforgery", "nonce", "jsonwebtoken", "cancellationtoken",
                               "fake", "dummy", "mock", "example", "sample", "placeholder",
                               "invalid", "bogus", "non"})
_INDEX_KEY_QUALIFIERS = frozenset(
    """primary foreign sort partition range cache idempotency object row unique index lookup hot
    natural schema sequence bucket routing shard composite dedup dedupe group message event
    react list item map dict entry""".split()
)
# secret, clientsecret, s3cr3t, SEECRET, secrete; not "secrets", a collection or a store.
_TOLERANT_SECRET = re.compile(r"s[e3]+cr[e3]te?$")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


def _word_strength(word: str, before: str) -> int:
    if word in _STRONG_WORDS or word.endswith(_STRONG_ENDINGS) or _TOLERANT_SECRET.search(word):
        return STRONG
    if word.endswith("key"):
        qualified = before in _KEY_QUALIFIERS or word[:-3] in _KEY_QUALIFIERS
        return STRONG if qualified else WEAK
    return WEAK if word in ("sig", "signature", "credential") else NOT_SECRET


def _name_words(name: str) -> list[str]:
    words = [w.lower() for w in _WORD.findall(name)]
    while words and words[-1] in _FORM_WORDS:
        words.pop()
    return words


@functools.lru_cache(maxsize=4096)
def name_strength(name: str) -> int:
    """STRONG if the name's last word says secret (DB_PASSWORD, apiKey, client_secret,
    _authToken), WEAK if it only says key or signature (sessionKey, X-Amz-Signature). The
    last word decides: token_count, credentialId, secret_name, auth_provider are metadata."""
    words = _name_words(name)
    if not words or words[0] == "no" or not _NOT_SECRET_WORDS.isdisjoint(words):
        return NOT_SECRET
    before = words[-2] if len(words) > 1 else ""
    if words[-1] == "key" and before in _INDEX_KEY_QUALIFIERS:
        return NOT_SECRET  # primaryKey, sort_key, cacheKey: a key into data, not a credential
    return _word_strength(words[-1], before)


@functools.lru_cache(maxsize=4096)
def name_mentions_secret(name: str) -> bool:
    """A secret word before a last word that is not metadata: db_password_old,
    old_secret_please_rotate, apikey_billing. Such a name masks only random values."""
    words = _name_words(name)
    if len(words) < 2 or words[-1] in _METADATA_WORDS or not _NOT_SECRET_WORDS.isdisjoint(words):
        return False
    for index in range(len(words) - 2, -1, -1):
        if words[index] in _METADATA_WORDS:
            return False
        if _word_strength(words[index], words[index - 1] if index else "") == STRONG:
            return True
    return False


@functools.lru_cache(maxsize=4096)
def is_password_name(name: str) -> bool:
    """The name's last word says password (DB_PASSWORD, passwd, pw, --pass)."""
    words = _name_words(name)
    return bool(words) and (words[-1] in _PASSWORD_WORDS or words[-1].endswith("password"))


_CODE_WORDS = frozenset(
    """none null nil true false undefined self this args kwargs input value val data os env
    config settings params request form body str string bytes int char getpass secret password
    passwd pwd pass token key required optional default new""".split()
)


def lone_word_password(value: str) -> bool:
    """A single word of 4+ letters that is not English prose or a code keyword: in
    ``password: letmein`` or ``the password is swordfish`` the word is the password."""
    return (
        value.isalpha()
        and len(value) >= 4
        and not is_prose_word(value)
        and value.lower() not in _CODE_WORDS
    )


def assignment_is_secret(name: str, value: str, style: str, alone: bool = False) -> bool:
    """Judge ``name <sep> value``. style: "quoted" (a literal), "tight" (KEY=value,
    --flag=value), "query" (?key=value&sig=...), "colon" (YAML, headers, ``--flag value``),
    "spaced" (code: ``token = x``). ``alone``: nothing but punctuation follows the value on
    its line, so a single word may be the password itself."""
    strength = name_strength(name)
    if strength == WEAK and style == "query":
        strength = STRONG  # ?key=..., &sig=... are keys
    if strength == WEAK and _ENV_NAME.fullmatch(name) and (style == "tight" or "_" in name.strip("_")):
        strength = STRONG  # env files' and constants' SOME_KEY=...: keys
    if not strength:
        # db_password_old = "...": a literal, or a random value, never code
        if not name_mentions_secret(name) or is_placeholder(value):
            return False
        return style == "quoted" or (looks_random(value) and not code_like(value))
    # sessionKey, X-Amz-Signature, "key": only a random token is a secret.
    if strength == WEAK and not looks_like_key(value):
        return False
    if is_placeholder(value) or value.startswith(("/", "~/", "./", "../")):
        return False
    if value.isdigit() and len(value) < 16:  # counts, ports, sizes
        return False
    if style != "quoted" and (code_like(value) or value.lower() == name.lower().strip("-_.$:")):
        return False  # api_key=api_key, token = os.environ["TOKEN"], token: Optional[str]
    if strength == WEAK or style in ("quoted", "tight", "query") or value.isdigit():
        return True
    if sum(not c.isascii() for c in value) * 2 > len(value):
        return False  # "pass: 人人生而自由，..." is a sentence, not a password
    if not plain_words(value):
        # colon: "token: 9f8e7d" is a value; spaced (code): a bare value must look random
        return style == "colon" or looks_random(value)
    # A plain word: prose ("token: expired") unless a password stands alone on its line.
    return alone and is_password_name(name) and lone_word_password(value)
