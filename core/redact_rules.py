"""The redaction rules: what a secret looks like. The engine that applies them is redact.py.

Patterns here are data; the functions judge a candidate the patterns found (is this value a
placeholder? does this name announce a secret?). docs/redaction.md explains each decision.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

# --- Pass 1: tokens that name themselves ------------------------------------------------------


def _has_digit(token: str) -> bool:
    return _DIGIT.search(token) is not None


def _has_upper(token: str) -> bool:
    return _UPPER.search(token) is not None


def _upper_lower_digit(token: str) -> bool:
    return _has_upper(token) and _has_digit(token) and _LOWER.search(token) is not None


_DIGIT, _UPPER, _LOWER = re.compile(r"\d"), re.compile(r"[A-Z]"), re.compile(r"[a-z]")


# (kind, pattern, extra check). Each kind is one named group of TOKEN; a token is a whole word
# (nothing from [A-Za-z0-9_-] touches it on either side). The extra checks keep look-alikes out.
TOKEN_RULES: tuple[tuple[str, str, Callable[[str], bool] | None], ...] = (
    # Anthropic keys carry a ~95-character body; shorter sk-ant- strings are doc placeholders.
    ("anthropic", r"sk-ant-[a-z]{2,8}\d\d-[A-Za-z0-9_-]{80,}", None),
    # OpenAI (sk-, sk-proj-, sk-admin-, ...) and the many APIs that copied the prefix. A digit
    # tells a key from kebab-case words (sk-learn-...); sk-ant- is left to the rule above.
    ("sk", r"sk-(?!ant-)[A-Za-z0-9_-]{20,}", _has_digit),
    # Stripe secret and restricted keys; pk_ (publishable) keys are public by design.
    ("stripe", r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}", None),
    # GitHub: personal (ghp), OAuth (gho), user-to-server (ghu), server (ghs), refresh (ghr).
    ("github", r"gh[pousr]_[A-Za-z0-9_]{36,}|github_pat_[A-Za-z0-9_]{50,}", None),
    # GitLab personal/pipeline/runner/deploy tokens, optionally "routable" (.01.xxxxx suffix).
    ("gitlab", r"gl(?:pat|ptt|rt|dt)-[A-Za-z0-9_-]{20,}(?:\.[a-z0-9]{2}\.[a-z0-9]{5,})?", None),
    # Slack bot/app/user/legacy tokens start with a numeric team or user id.
    ("slack", r"xox[abprs]-\d{6,}-[A-Za-z0-9-]{8,}|xapp-\d-[A-Za-z0-9-]{30,}", None),
    # Slack configuration tokens: the real ones are random, the doc example is a sentence.
    ("slack_config", r"xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9]{40,}", _upper_lower_digit),
    # A Slack incoming-webhook URL is a credential; the host stays, the T/B/secret path goes.
    ("slack_webhook",
     r"(?<=hooks\.slack\.com/services/)T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{16,}", None),
    ("aws_key_id", r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}", None),
    ("aws_bedrock", r"ABSK[A-Za-z0-9+/]{40,}={0,2}", None),
    # A bare AWS secret access key is 40 base64 characters with nothing to announce it: accept
    # only mixed case plus digits (never a git SHA or a word) not inside a path or a domain.
    ("aws_secret", r"(?<![+/.])[A-Za-z0-9+/]{40}(?![+/=]|\.[A-Za-z0-9])", _upper_lower_digit),
    ("google", r"AIza[A-Za-z0-9_-]{35}", None),
    # Hugging Face user and org tokens are ~34 random mixed-case letters.
    ("huggingface", r"(?:hf|api_org)_[A-Za-z0-9]{30,40}", _has_upper),
    ("npm", r"npm_[A-Za-z0-9]{36}", None),
    # PyPI tokens are macaroons: base64 that always starts with AgE.
    ("pypi", r"pypi-AgE[A-Za-z0-9_-]{40,}", None),
    ("sendgrid", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}", None),
    # JWTs: base64url JSON header (eyJ = '{"'), payload, optional (possibly empty) signature.
    ("jwt", r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*)?", None),
    # Telegram bot tokens: bot id, colon, 35 random characters; in API URLs after "/bot".
    ("telegram", r"(?:bot)?\d{8,10}:[A-Za-z0-9_-]{35}", _upper_lower_digit),
    # Discord bot tokens: base64 of a numeric snowflake (starts M/N/O), timestamp, HMAC.
    ("discord", r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}", None),
)

# "…" counts as part of a word so that no token starts or ends against a mask.
TOKEN = re.compile(
    r"(?<![A-Za-z0-9_…-])(?:"
    + "|".join(f"(?P<{kind}>{pattern})" for kind, pattern, _ in TOKEN_RULES)
    + r")(?![A-Za-z0-9_…-])"
)
TOKEN_CHECKS: dict[str, Callable[[str], bool] | None] = {k: c for k, _, c in TOKEN_RULES}


def _shape(chars: str) -> bytes:
    """A bytes.translate table: the given ASCII characters -> 'a', everything else -> ' '."""
    return bytes(0x61 if chr(i) in chars else 0x20 for i in range(256))


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
# Every token above contains a run of 16+ of these (AWS secrets count their + and /) with an
# upper-case letter or a digit in it; paths and snake_case names are lower-case runs ...
RUN_SHAPE = _shape(_ALNUM + "_-+/")
LONG_RUN = b"a" * 16
UPPER_OR_DIGIT_SHAPE = _shape("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
# ... and lies whole inside a window of these (JWT dots, Telegram colons, webhook slashes).
WINDOW_SHAPE = _shape(_ALNUM + "_-+/=.:")

# --- Pass 2: secrets named by their context ---------------------------------------------------

# Trigger words, found in the lower-cased ASCII bytes of the text (one byte per character,
# so offsets match). Each is entered by a rare letter (c, u, g, p, b, k) so the scan skips
# most characters, and lookbehinds check the letters before it. A name trigger (secret,
# cred, auth, sig, pass, pwd, key, token, cookie) counts only with a separator after its
# name, so prose ("the key of") costs nothing more. The others: Bearer + a token, a Bundler
# credential, URL userinfo, curl -u/--user, a --flag naming a secret.
_SEPARATOR_AHEAD = rb"""(?=[a-z0-9_.-]{0,64}\\?["']?[ \t]*(?:[:=]|-[ \t]*\$?["']))"""
_NAME_TRIGGERS = (rb"cr(?:[e3]t|ed)", rb"u(?<=au)th", rb"g(?<=sig)", rb"p(?:ass|wd)",
                  rb"k(?:ey|(?<=tok)en|(?<=cook)ie)")
# Every alternative starts with a literal: that lets the regex engine skip to candidates.
LOCATOR = re.compile(
    b"|".join(trigger + _SEPARATOR_AHEAD for trigger in _NAME_TRIGGERS)
    + rb"|b(?:earer(?=[ \t]+[a-z0-9._~+/-]{16})|undle_)|://"
    rb"|-(?:u(?=(?:ser)?[ \t=])|-(?=(?:[a-z][a-z0-9-]{0,40}?)?"
    rb"(?:key|ken|pass|pwd|auth|cr[e3]t|sig|cred)[a-z0-9_-]*(?:=|[ \t]+[^\s-])))"
)
# Where the anchored header patterns start, relative to their trigger ("uth" is 1 into
# "authorization"). Name triggers need no offset: the name is scanned in both directions.
TRIGGER_BACK = {b"uth": 1, b"kie": 3}
# Every context secret needs one of these near it (or "bearer"): texts without any skip pass 2.
SEPARATOR_HINTS = ("=", ":", "--", "- '", '- "')

# A name: letters, digits, _ . - (config.api_key, --api-key, X-Amz-Signature).
NAME_SHAPE = _shape(_ALNUM + "_.-")
MAX_NAME = 64
# A rejected bare value longer than this is skipped whole rather than searched for names.
MAX_REREAD = 256

# A value: double-quoted (JSON escapes allowed), single-quoted (also bash $'...'), backticks,
# \"escaped\" (JSON inside a string), or bare up to whitespace, a quote, a backslash or a
# list/query separator. Quoted values are bounded.
_VALUE = (
    r"""(?:\$?"(?P<dq>(?:[^"\\\n]|\\.){1,4000})"|\$?'(?P<sq>[^'\n]{1,4000})'"""
    r"""|`(?P<bq>[^`\n]{1,4000})`|\\"(?P<eq>[^"\\\n]{1,4000})\\"|(?P<bare>[^\s"'`&,;\\]+))"""
)
# After a name: its closing quote ("apiKey": ..., or \"apiKey\": inside a JSON string), then
# =, :, =>, := or " - " before a quote.
ASSIGNMENT = re.compile(
    r"""(?P<close>\\?["']?)(?P<pre>[ \t]*)"""
    r"""(?P<sep>=>|:=|=(?!=)|:(?![:/])|(?<=[ \t])-(?=[ \t]*\$?["']))(?P<post>[ \t]*)""" + _VALUE
)
# A command-line flag takes its value after = or after spaces (--token abc).
FLAG_VALUE = re.compile(r"(?P<close>)(?P<pre>)(?P<sep>=|[ \t]+)(?P<post>)" + _VALUE)

# Anchored at the hit; re.I because the hit was found in lower-cased text.
AUTH_HEADER = re.compile(
    r"""authorization["']?[ \t]*[:=][ \t]*["']?"""
    r"""(?:(?P<scheme>bearer|basic|token|bot|digest|negotiate|apikey|sso-key)[ \t]+)?"""
    r"""(?P<secret>[^\s"',;]+)""",
    re.IGNORECASE,
)
BARE_BEARER = re.compile(r"bearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)", re.IGNORECASE)
# The header's name=value pairs go whole (cookie names are rarely worth keeping, values vary
# widely); Set-Cookie attributes without a value (HttpOnly) belong to the list.
_COOKIE_PAIR = r"""[^\s=;,"']+=[^\s;,"']*"""
COOKIE_HEADER = re.compile(
    rf"""cookie["']?[ \t]*:[ \t]*["']?(?P<secret>{_COOKIE_PAIR}"""
    rf"""(?:;[ \t]*(?:{_COOKIE_PAIR}|[A-Za-z]+(?![^\s;"'])))*)""",
    re.IGNORECASE,
)
URL_USERINFO = re.compile(
    r"""://(?P<user>[^\s:@/?#"'<>]{0,100}):(?P<secret>[^\s@/?#"'<>]{1,200})@"""
)
# The user is a plain login or e-mail, so "date -u +%H:%M" and "python -u E:\\x.py" stay.
CURL_USER = re.compile(
    r"""(?:--user|-u)(?:[ \t]+|=)["']?(?P<user>[A-Za-z0-9_.@-]{0,100}):["']?"""
    r"""(?P<secret>[^\s"'\\/][^\s"']{0,200})"""
)
# A PEM private key (RSA, EC, OPENSSH, ENCRYPTED, PGP ... BLOCK): the body goes, the armour
# lines stay. A block cut off before its END line is masked to the end of the text.
PEM_BLOCK = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----\s*"
    r"(?P<secret>(?!-----)\S[\s\S]*?)(?=\s*(?:-----END|\Z))"
)
# Bundler keeps per-host credentials in BUNDLE_<HOST>, dots spelled "__"
# (BUNDLE_GEMS__EXAMPLE__COM=user:password); BUNDLE_BUILD__<gem> is build configuration.
BUNDLER_CREDENTIAL = re.compile(
    r"""BUNDLE_(?!BUILD__)[A-Z0-9]+(?:_[A-Z0-9]+)*__[A-Z0-9_]+=["']?(?P<secret>[^\s"']+)"""
)

# --- Judging a candidate ----------------------------------------------------------------------

# A value made only of words, one of them from this list, stands in for a secret:
# "REDACTED_API_KEY", "test-key", "sk-secret", "changeme", "none".
_PLACEHOLDER_WORDS = frozenset(
    {"null", "none", "nil", "true", "false", "undefined", "redacted", "hidden", "masked",
     "secret", "password", "passwd", "token", "key", "apikey", "changeme", "example",
     "placeholder", "dummy", "fake", "mock", "sample", "test", "todo"}
)
_WORD_SEPARATORS = re.compile(r"[-_.' ]")
_REFERENCE = re.compile(r"\$[{(A-Za-z_]|%\w+%$|\{\{|<.*>$|\[.*\]$|\{.*\}$|\(.*\)$", re.DOTALL)
_PLAIN = re.compile(r"[^\W\d_]+(?:[-_.' ][^\W\d_]+)*")
_PUNCTUATION = re.compile(r"[^\w.-]")
_KEY_CHARS = re.compile(r"[A-Za-z0-9_+/=%-]{16,}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
# os.environ[...], get_token(), self.api_key: code that fetches a secret, not the secret. Each
# part is a word (letters, then digits at most at its end), so a1b2.c3d4 is not code.
_IDENTIFIER = r"[A-Za-z_$][A-Za-z_$]*\d*"
_CODE = re.compile(rf"{_IDENTIFIER}(?:\.{_IDENTIFIER})*(?:[(\[].*)?", re.DOTALL)


def is_repetitive(value: str) -> bool:
    """Filler, not a secret: ***, ..., abab, or mostly one filler character (xxxx,
    XXXX-XXXX, 0000, ghp_xxxx...)."""
    distinct = len(set(value))
    if distinct == 1 or (distinct == 2 and len(value) > 3):
        return True
    return max(map(value.count, "xX*0#.")) * 2 > len(value)


def is_placeholder(value: str) -> bool:
    """Doc placeholders and references to a secret kept elsewhere (${VAR}, <token>, [PASSWORD],
    {{ secrets.X }}, $(cat file), ...): there is nothing to hide."""
    lowered = value.lower()
    return (
        (plain_words(value) and not _PLACEHOLDER_WORDS.isdisjoint(_WORD_SEPARATORS.split(lowered)))
        or "your" in lowered
        or "xxxx" in lowered
        or "..." in value
        or _REFERENCE.match(value) is not None
        or is_repetitive(value)
    )


def plain_words(value: str) -> bool:
    """Letters only, optionally joined by - _ . ' or spaces: prose or an identifier."""
    return _PLAIN.fullmatch(value) is not None


def code_like(value: str) -> bool:
    """A dotted name, a call or a subscript (a lone word is not code: it may be a password)."""
    has_code_mark = "." in value or "(" in value or "[" in value
    return has_code_mark and _CODE.fullmatch(value) is not None


def looks_random(value: str) -> bool:
    """8+ characters mixing at least two of lower case, upper case, digits, punctuation."""
    if len(value) < 8 or plain_words(value):
        return False
    kinds = (
        (_LOWER.search(value) is not None)
        + (_UPPER.search(value) is not None)
        + (_DIGIT.search(value) is not None)
        + (_PUNCTUATION.search(value) is not None)
    )
    return kinds >= 2


def looks_like_key(value: str) -> bool:
    """One random 16+ character token (hex, base64, URL-encoded), never a UUID or a value
    with structure such as the session key agent:main:main."""
    if not _KEY_CHARS.fullmatch(value) or _UUID.fullmatch(value):
        return False
    kinds = (
        (_LOWER.search(value) is not None)
        + (_UPPER.search(value) is not None)
        + (_DIGIT.search(value) is not None)
    )
    return kinds >= 2


# --- Names that announce a secret -------------------------------------------------------------

NOT_SECRET, WEAK, STRONG = 0, 1, 2
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")  # camelCase, snake_case, SCREAMING_CASE
_STRONG_WORDS = frozenset({"pass", "pwd", "auth", "oauth", "creds", "credentials"})
_STRONG_ENDINGS = ("password", "passwd", "passphrase", "token", "apikey", "secretkey",
                   "accesskey", "privatekey")
_KEY_QUALIFIERS = frozenset(
    {"api", "access", "secret", "private", "client", "master", "signing", "encryption",
     "license", "app", "auth", "account", "service"}
)
# Trailing words that describe the form of the value, not what it is: SUPER_SECRET_VALUE,
# TOKEN_B64 ("b" once the digits are dropped), KEY_BASE64.
_FORM_WORDS = frozenset({"value", "val", "str", "string", "text", "data", "raw", "plain",
                         "b", "base", "hex", "encoded"})
# secret, clientsecret, s3cr3t, SEECRET; not "secrets", which names a collection or a store.
_TOLERANT_SECRET = re.compile(r"s[e3]+cr[e3]t$")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")


@functools.lru_cache(maxsize=4096)
def name_strength(name: str) -> int:
    """STRONG if the name's last word says secret (DB_PASSWORD, apiKey, client_secret,
    _authToken), WEAK if it only says key or signature (sessionKey, X-Amz-Signature). The
    last word decides: token_count, credentialId, secret_name, auth_provider are metadata."""
    words = [w.lower() for w in _WORD.findall(name)]
    while words and words[-1] in _FORM_WORDS:
        words.pop()
    if not words or "public" in words or "publishable" in words or words[0] == "no":
        return NOT_SECRET
    last = words[-1]
    before = words[-2] if len(words) > 1 else ""
    if last in _STRONG_WORDS or last.endswith(_STRONG_ENDINGS) or _TOLERANT_SECRET.search(last):
        return STRONG
    if last.endswith("key"):
        qualified = before in _KEY_QUALIFIERS or last[:-3] in _KEY_QUALIFIERS
        return STRONG if qualified else WEAK
    return WEAK if last in ("sig", "signature", "credential") else NOT_SECRET


def assignment_is_secret(name: str, value: str, style: str) -> bool:
    """Judge ``name <sep> value``. style: "quoted" (a literal), "tight" (KEY=value,
    --flag=value), "query" (?key=value&sig=...), "colon" (YAML, headers, ``--flag value``),
    "spaced" (code: ``token = x``)."""
    strength = name_strength(name)
    if strength == WEAK and (style == "query" or (style == "tight" and _ENV_NAME.fullmatch(name))):
        strength = STRONG  # ?key=..., &sig=... and env files' SOME_KEY=... are keys
    # sessionKey, X-Amz-Signature, "key": only a random token is a secret.
    if not strength or (strength == WEAK and not looks_like_key(value)):
        return False
    if is_placeholder(value) or value.startswith(("/", "~/", "./", "../")):
        return False
    if value.isdigit() and len(value) < 16:  # counts, ports, sizes
        return False
    if style != "quoted" and (code_like(value) or value.lower() == name.lower().strip("-_.")):
        return False  # api_key=api_key, token = os.environ["TOKEN"], token: Optional[str]
    if strength == WEAK or style in ("quoted", "tight", "query"):
        return True
    if style == "colon":
        return not plain_words(value)  # "token: expired" is prose, "password: hunter2" is not
    return looks_random(value)  # spaced: code, where a bare value is usually an expression
