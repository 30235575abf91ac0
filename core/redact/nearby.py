"""Unknown tokens: a high-entropy string a few words after a word like token, secret, key,
password, auth, credential ("secret <32 base64>", "api key is <32 hex>", "twilio auth token
a1f3...", "old_secret_please_rotate = 9Qw2...").

Pass 1 calls ``near_secret_word`` for each long run of token characters that no vendor rule
took. Only the 48 characters before the run are read, so the cost is bounded per run.
"""

from __future__ import annotations

import re

from . import rules

# The secret words; a preceding letter must not glue them to another word (monkey, donkey),
# except the compounds apikey, authtoken, clientsecret, ...
_KEYWORD = re.compile(
    r"(?P<prefix>[a-z]*)(?P<word>tokens?|secrets?|keys?|passwords?|passwd|pwd|passphrase|auth"
    r"|credentials?|creds|bearer|apikey)(?![a-z])",
)
_COMPOUND_PREFIXES = frozenset({"", "api", "auth", "access", "client", "app", "bot", "secret",
                                "private", "master", "session", "refresh", "id", "bearer", "x"})
# Words that may stand between the secret word and the value, as in "the api key for prod is
# <value>": little words, and at most one other word (prod, github, twilio, ...).
_FILLERS = frozenset(
    """is was are be were = : - -> => my the a an your our its it's this that here new old of
    for to as with value string set now key token secret""".split()
)
_GAP_WORD = re.compile(r"[^\s:=>\"'`(),\[\]{}]+")
_GAP_JUNK = re.compile(r"[\s:=>\"'`(),\[\]{}]*")
# Where the value may not be: inside a path, a domain, an e-mail address.
_PATH_BEFORE = "/.@\\"
_LOOKBACK = 48
_HASH_LENGTHS = (32, 40, 64, 128)
_HEX = re.compile(r"[0-9a-fA-F]+")


_WORD_END = re.compile(r"[^\s\"'`,;]*")


# A first, cheap look for the secret words in the lower-cased bytes before the value.
_ANY_KEYWORD = re.compile(rb"tok|secre|key|pass|pwd|auth|cred|bearer")


_OTHER_LABEL = re.compile(r"([a-z_][\w.-]*)[\"']?[ \t]*[:=]")
# Hashes that name their algorithm: SRI integrity (sha512-...), sha256:..., md5-...
_HASH_PREFIX = re.compile(r"(?:sha\d{1,3}|md5)[-:~]", re.IGNORECASE)


def near_secret_word(text: str, start: int, end: int, ascii_text: bytes) -> bool:
    """Whether ``text[start:end]`` is a high-entropy token a few words after a secret word.
    ``ascii_text`` is the text as one byte per character."""
    window_start = max(0, start - _LOOKBACK)
    if _ANY_KEYWORD.search(ascii_text[window_start:start].lower()) is None:
        return False
    if start and text[start - 1] in _PATH_BEFORE:
        return False
    if end < len(text) and text[end] in "./@" and end + 1 < len(text) and text[end + 1].isalnum():
        return False
    value = text[start:end].rstrip("=-_")
    if "." in value or _HASH_PREFIX.match(value) or value.startswith(("pk_live_", "pk_test_")):
        return False  # a domain, a version, a file name, a named hash, a publishable key
    if not rules.high_entropy(value) or rules.looks_like_identifier(value) or rules.is_uuid(value):
        return False
    word = text[start : _WORD_END.match(text, end, end + 64).end()]  # type: ignore[union-attr]
    if rules.has_filler(word) or rules.is_placeholder(value):
        return False  # xoxp-5723...-#### : a value someone blanked out
    before = text[window_start:start].lower()
    keyword = None
    for keyword in _KEYWORD.finditer(before):
        pass
    if keyword is None or keyword.group("prefix") not in _COMPOUND_PREFIXES:
        if keyword is None or not _camel_compound(text, window_start + keyword.start("word")):
            return False
    if not _names_a_secret(text, window_start + keyword.start("prefix"), window_start + keyword.end()):
        return False
    gap = before[keyword.end() :]
    if _OTHER_LABEL.search(gap) and not all(w in _FILLERS for w in _OTHER_LABEL.findall(gap)):
        return False  # secret = get_secret() "integrity": "<value>": another name labels it
    words = _GAP_WORD.findall(gap)
    others = [w for w in words if w not in _FILLERS]
    if gap.startswith(">") and others:
        return False  # <your-api-key> event <ULID>: the word closed a placeholder, not a label
    # A hex string of a hash's length (git SHAs, sha256) only right after the word.
    hash_like = _HEX.fullmatch(value) is not None and len(value) in _HASH_LENGTHS
    if hash_like and others:
        return False
    return len(words) <= 4 and len(others) <= 1 and "\n" not in gap.strip(" \t")


_NAME_CHAR = re.compile(r"[A-Za-z0-9_.-]")


def _names_a_secret(text: str, start: int, end: int) -> bool:
    """The identifier the secret word sits in (public_key, key_store_name, publicToken) must
    itself announce a secret (a lone word such as key, token, secret does), and not be a
    function called there (get_secret())."""
    while start > 0 and _NAME_CHAR.match(text[start - 1]):
        start -= 1
    while end < len(text) and _NAME_CHAR.match(text[end]):
        end += 1
    if text.startswith("(", end):
        return False
    name = text[start:end].strip(".-")
    return rules.name_strength(name) != rules.NOT_SECRET or rules.name_mentions_secret(name)


def _camel_compound(text: str, word_start: int) -> bool:
    """apiKey, authToken: the secret word starts with a capital after a lower-case letter."""
    return word_start > 0 and text[word_start].isupper() and text[word_start - 1].islower()
