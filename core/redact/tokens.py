"""Pass 1 rules: tokens that name themselves by a vendor prefix or a fixed shape.

Each format is a fact (prefix, length, alphabet, a fixed infix) taken from the rules of
gitleaks, detect-secrets or trufflehog or from the vendor's documentation; the patterns are
written here, and docs/redaction.md lists every one with its source. A token is a whole word:
nothing from [A-Za-z0-9_-] (nor the "…" of a mask) may touch it on either side.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable, Iterator

try:  # the standard library's own regex parser, to read each rule's first characters
    import re._parser as _sre  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - a future Python that moves it: try every rule anywhere
    _sre = None

_DIGIT, _UPPER, _LOWER = re.compile(r"\d"), re.compile(r"[A-Z]"), re.compile(r"[a-z]")


def has_digit(token: str) -> bool:
    return _DIGIT.search(token) is not None


def has_upper(token: str) -> bool:
    return _UPPER.search(token) is not None


def has_lower(token: str) -> bool:
    return _LOWER.search(token) is not None


def upper_lower_digit(token: str) -> bool:
    return has_upper(token) and has_digit(token) and has_lower(token)


def _letter_and_digit(token: str) -> bool:
    return has_digit(token) and (has_lower(token) or has_upper(token))


def _slack(token: str) -> bool:
    """Digits (the team and user ids) and, after the prefix, letters: xoxb- followed by words
    (a doc's example) or by digits only are not keys."""
    return has_digit(token) and (has_lower(token[5:]) or has_upper(token[5:]))


def _aws_secret(token: str) -> bool:
    """40 random base64 characters: several capitals and small letters and a digit, and
    letters beyond f (a mixed-case hex string is a hash or a Sourcegraph token, not AWS)."""
    upper = sum(c.isupper() for c in token)
    lower = sum(c.islower() for c in token)
    return upper >= 3 and lower >= 3 and has_digit(token) and _NOT_HEX.search(token) is not None


_NOT_HEX = re.compile(r"[g-zG-Z+/]")


def _b64decode(part: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        return None


def _jwt_header(token: str) -> bool:
    """The header decodes to mostly readable JSON text ({"alg":...}), not to noise."""
    header = _b64decode(token.split(".", 1)[0])
    if not header:
        return False
    readable = sum(32 <= b < 127 or b in (9, 10, 13) for b in header)
    return readable >= 0.8 * len(header)


def _base64_of_jwt(token: str) -> bool:
    """A JWT encoded once more in base64 ("eyJ" -> "ZXlK"): it decodes to eyJ... with a dot."""
    padded = token + "=" * (-len(token) % 4)
    try:
        decoded = base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
    except (binascii.Error, ValueError):
        return False
    return decoded.startswith(b"eyJ") and b"." in decoded


_ALNUM_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_B64 = "A-Za-z0-9+/"
_URL = "A-Za-z0-9_-"

# (kind, pattern, extra check). Each kind becomes one named group of TOKEN. The checks keep
# look-alikes out: kebab-case words, filler, hashes.
TOKEN_RULES: tuple[tuple[str, str, Callable[[str], bool] | None], ...] = (
    # --- AI providers ---
    # Anthropic keys carry a ~95-character body; shorter sk-ant- strings are doc placeholders.
    ("anthropic", r"sk-ant-[a-z]{2,8}\d\d-[A-Za-z0-9_-]{80,}", None),
    # OpenAI (sk-, sk-proj-, sk-admin-, ...) and the many APIs that copied the prefix. A digit
    # tells a key from kebab-case words (sk-learn-...); sk-ant- is left to the rule above.
    ("sk", r"sk-(?!ant-)[A-Za-z0-9_-]{20,}", has_digit),
    ("perplexity", r"pplx-[A-Za-z0-9]{40,}", None),
    ("huggingface", r"(?:hf|api_org)_[A-Za-z0-9]{30,40}", has_upper),
    # --- code hosting and packages ---
    ("github", r"gh[pousr]_[A-Za-z0-9_]{36,}|github_pat_[A-Za-z0-9_]{50,}", None),
    # GitLab: personal (routable ones end in .01.xxxxx), runner, deploy, feed, feature-flag,
    # SCIM, runner registration (GR1348941), CI job, incoming mail (25), pipeline trigger
    # (40), agent (50+), OAuth app secret (64), routable runner (glrt-t1_...), and the value
    # of the _gitlab_session cookie.
    ("gitlab",
     r"glpat-[A-Za-z0-9_-]{20,}(?:\.[a-z0-9]{2}\.?[a-z0-9]{5,})?"
     r"|glrt-t\d_[A-Za-z0-9_-]{27,300}\.[a-z0-9]{2}\.?[a-z0-9]{7}"
     r"|(?:gl(?:rt|dt|ft|ffct|soat)-|GR1348941)[A-Za-z0-9_-]{20,50}"
     r"|glcbt-(?:[0-9a-fA-F]{1,5}_)?[A-Za-z0-9_-]{20,50}|glimt-[A-Za-z0-9_-]{25}"
     r"|glptt-[A-Za-z0-9_-]{40}|glagent-[A-Za-z0-9_-]{50,1024}|gloas-[A-Za-z0-9_-]{64}"
     r"|(?<=_gitlab_session=)[0-9a-z]{32}", has_digit),
    ("npm", r"npm_[A-Za-z0-9]{36}", None),
    ("pypi", r"pypi-AgE[A-Za-z0-9_-]{40,}", None),
    ("rubygems", r"rubygems_[a-f0-9]{48}", None),
    ("clojars", r"CLOJARS_[A-Za-z0-9]{60}", None),
    ("artifactory", r"AKCp[A-Za-z0-9]{60,}|cmVmd[A-Za-z0-9]{59}", None),
    ("sourcegraph", r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}", None),
    ("sonar", r"sq[upa]_[A-Za-z0-9]{40}", None),
    ("readme", r"rdme_[a-z0-9]{70}", None),
    ("postman", r"PMAK-[A-Za-z0-9]{24}-[A-Za-z0-9]{34}", None),
    ("prefect", r"pnu_[A-Za-z0-9]{36}", None),
    ("pulumi", r"pul-[a-f0-9]{40}", None),
    ("infracost", r"ico-[A-Za-z0-9]{32}", None),
    # --- cloud ---
    # An access key id ending in EXAMPLE is AWS's documentation example (and an id is not the
    # credential: the secret access key is).
    ("aws_key_id", r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}", lambda t: not t.endswith("EXAMPLE")),
    ("aws_bedrock", r"ABSK[A-Za-z0-9+/]{40,}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t"
                    r"[A-Za-z0-9+/=%_-]*", None),
    # AWS STS session tokens: base64 of a binary blob that opens the same way ("\x16\n\x06\x19
    # ...aws" for the older ones, "!\n\torigin_ec" for today's), hundreds of characters.
    ("aws_session",
     r"(?:FwoGZXIvYXdzE|FQoGZXIvYXdzE|FQoDYXdzE|IQoJb3JpZ2luX2Vj)[A-Za-z0-9+/]{80,}={0,2}", None),
    ("google", r"AIza[A-Za-z0-9_-]{35}", None),
    ("alibaba", r"LTAI[A-Za-z0-9]{20}", None),
    ("digitalocean", r"do[por]_v1_[a-f0-9]{64}", None),
    ("databricks", r"dapi[a-f0-9]{32}(?:-\d)?", None),
    ("cloudflare_ca", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", None),
    ("heroku", r"HRKU-AA[A-Za-z0-9_-]{58}", None),
    ("flyio", r"fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}", None),
    ("planetscale", r"pscale_(?:pw|tkn|oauth)_[A-Za-z0-9_=.-]{32,64}", None),
    ("scalingo", r"tk-us-[A-Za-z0-9_-]{48}", None),
    ("openshift", r"sha256~[A-Za-z0-9_-]{43}", None),
    # HashiCorp Vault service, batch and recovery tokens, and the legacy s. form.
    ("vault", r"hv[sbr]\.[A-Za-z0-9_-]{90,300}", None),
    ("vault_legacy", r"s\.[A-Za-z0-9]{24}", upper_lower_digit),
    ("harness", r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", None),
    ("doppler", r"dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}", None),
    ("tailscale", r"tskey-[a-z]+-[A-Za-z0-9_]+-[A-Za-z0-9_]{16,}", None),
    ("defined_networking", r"dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}", None),
    ("yandex", r"AQVN[A-Za-z0-9_-]{35,38}|t1\.[A-Za-z0-9_-]{8,}={0,2}\.[A-Za-z0-9_-]{86}={0,2}", None),
    # --- payments and commerce ---
    ("stripe", r"[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,99}", None),
    # Webhook signing secrets (Stripe, Svix and the services built on it): whsec_ + base64.
    ("webhook_secret", r"whsec_[A-Za-z0-9+/]{24,88}={0,2}", lambda t: has_digit(t) or has_upper(t[6:])),
    ("square", r"(?:EAAA|sq0atp-)[A-Za-z0-9_-]{22,60}|sq0csp-[A-Za-z0-9_-]{43}", None),
    ("shopify", r"shp(?:ss|at|ca|pa)_[a-fA-F0-9]{32}", None),
    ("shippo", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", None),
    ("duffel", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}", None),
    ("easypost", r"EZ[AT]K[A-Za-z0-9]{54}", None),
    ("flutterwave", r"FLW(?:PUBK|SECK)_TEST-[A-Za-z0-9]{12,32}(?:-X)?", None),
    ("plaid", r"access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}"
              r"-[0-9a-f]{4}-[0-9a-f]{12}", None),
    ("gocardless", r"live_[A-Za-z0-9_=-]{40}", upper_lower_digit),
    ("lob", r"(?:live|test)_(?:pub_[a-f0-9]{31}|[a-f0-9]{35})", None),
    # --- messaging and mail ---
    ("slack", r"xox[abeoprs]-(?:\d-)?(?:\d{6,}-)*[A-Za-z0-9]{8,}(?:-[A-Za-z0-9]+)*", _slack),
    ("slack_config", r"xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9]{40,}", upper_lower_digit),
    ("slack_app", r"xapp-\d-[A-Za-z0-9-]{30,}", None),
    # A Slack webhook URL is a credential; the host stays, the path goes.
    ("slack_webhook", r"(?:(?<=hooks\.slack\.com/services/)|(?<=hooks\.slack\.com/workflows/)"
                      r"|(?<=hooks\.slack\.com/triggers/))[A-Za-z0-9_/]{20,}", has_digit),
    ("discord_webhook", r"(?<=/api/webhooks/)\d{17,20}/[A-Za-z0-9_-]{60,}", None),
    ("softlayer", r"(?:(?<=/soap/v3/)|(?<=/soap/v3\.1/))[a-z0-9]{64}", None),
    ("teams_webhook", r"(?<=\.webhook\.office\.com/webhookb2/)[A-Za-z0-9@/-]{60,}", None),
    # A Zapier "catch hook" URL is a credential (anyone holding it can trigger the Zap): the
    # account id and the hook key after /hooks/catch/ go.
    ("zapier_webhook", r"(?<=hooks\.zapier\.com/hooks/catch/)\d{3,12}/[A-Za-z0-9]{5,16}", None),
    ("twilio", r"(?:SK|AC)[0-9a-fA-F]{32}", _letter_and_digit),
    ("sendgrid", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}|SG\.[A-Za-z0-9=_.-]{66}", None),
    ("sendinblue", r"x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}", None),
    ("typeform", r"tfp_[A-Za-z0-9_.=-]{59}", None),
    # --- monitoring and project tools ---
    ("sentry", r"sntryu_[a-f0-9]{64}|sntrys_eyJ[A-Za-z0-9+/=]{40,}_[A-Za-z0-9+/]{43}", None),
    ("grafana", r"glc_[A-Za-z0-9+/]{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"
                r"|eyJrIjoi[A-Za-z0-9]{70,400}={0,3}", None),
    ("new_relic", r"NR(?:AK|AA|II|IQ|JS)-[A-Za-z0-9_-]{19,}|(?:[0-9a-f]{32}|eu01xx[0-9a-f]{26})FFFFNRAL"
                  r"|(?:AA[0-9a-f]{40}|eu01xx[0-9a-f]{36})-NRMA", has_digit),
    ("dynatrace", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", None),
    ("atlassian", r"ATATT3[A-Za-z0-9_=-]{150,}", None),
    ("linear", r"lin_api_[A-Za-z0-9]{40}", None),
    ("notion", r"ntn_\d{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}", has_digit),
    ("frameio", r"fio-u-[A-Za-z0-9_=-]{64}", None),
    ("settlemint", r"sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}", None),
    ("airtable", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", None),
    ("adobe", r"p8e-[A-Za-z0-9]{32}", None),
    ("intra42", r"s-s4t2(?:ud|af)-[a-fA-F0-9]{64}", None),
    ("octopus", r"API-[A-Z0-9]{26}", has_digit),
    ("authress", r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-]"
                 r"[A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}", None),
    ("mapbox", r"[ps]k\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}|pk\.[a-z0-9]{60}\.[a-z0-9]{22}"
               r"|sk\.[A-Za-z0-9.-]{80,240}", None),
    ("dropbox", r"sl\.[A-Za-z0-9_=-]{130,}|[a-z0-9]{11}AAAAAAAAAA[A-Za-z0-9_=-]{43}", None),
    # --- password managers and keys ---
    ("onepassword", r"ops_eyJ[A-Za-z0-9+/_-]{100,}={0,3}"
                    r"|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}", None),
    ("age", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", None),
    # --- shapes without a vendor prefix: after every prefixed format, so that a prefixed
    # token is named by its own rule ---
    # A bare AWS secret access key is 40 base64 characters with nothing to announce it: accept
    # only mixed case plus digits (never a git SHA or a word) not inside a path or a domain.
    ("aws_secret", r"(?<![+/.])[A-Za-z0-9+/]{40}(?![+/=]|\.[A-Za-z0-9])", _aws_secret),
    # Azure AD client secrets: 3 characters, a digit, "Q~", 31-34 more.
    ("azure_ad", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![~.])", None),
    ("mailgun", r"(?:pub)?key-[a-f0-9]{32}|[a-h0-9]{32}-[a-h0-9]{8}-[a-h0-9]{8}", has_digit),
    ("mailchimp", r"[0-9a-f]{32}-us\d{1,2}", None),
    ("maxmind", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk", None),
    ("telegram", r"(?:bot)?\d{8,10}:[A-Za-z0-9_-]{35}", upper_lower_digit),
    # Discord bot tokens: base64 of a numeric snowflake (M/N/O... for today's ids), a
    # timestamp (6), an HMAC (27+).
    ("discord", r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}", None),
    ("facebook", r"EAA[A-Z][A-Za-z0-9]{90,}|\d{15,16}(?:\||%7C)[A-Za-z0-9_-]{27,40}", None),
    ("twitter_bearer", r"A{22}[A-Za-z0-9%]{60,}", None),
    # Terraform Cloud: 14 characters, ".atlasv1.", 60-70 more.
    ("terraform", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", None),
    ("clickhouse", r"4b1d[A-Za-z0-9]{38}", None),
    # --- self-describing formats ---
    # JWTs: base64url JSON header (eyJ = '{"'), payload, optional (possibly empty) signature.
    ("jwt", r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*={0,2})?", _jwt_header),
    ("jwt_base64", r"ZXlK[A-Za-z0-9+/_-]{40,}={0,2}", _base64_of_jwt),
)

# Tokens whose case was lost, glued to other words: a session key is compared lower-cased
# (keys.normalize_key), and its words are joined by - _ : . (agent:main:cron-ghp_...-2). These
# prefixes stay distinctive lower-cased, so they are found in their own case or in lower case,
# touching anything but a letter or a digit; the body must hold digits (loose_token).
LOOSE_TOKEN = re.compile(
    r"(?<![A-Za-z0-9…])(?:sk-ant-[a-z]{2,8}\d\d-[A-Za-z0-9_-]{80,}|sk-(?:proj|admin|svcacct)-[A-Za-z0-9_-]{20,}"
    r"|gh[pousr]_[A-Za-z0-9_]{36,}|github_pat_[A-Za-z0-9_]{50,}|gl(?:pat|rt|dt|ft)-[A-Za-z0-9_-]{20,}"
    r"|npm_[A-Za-z0-9]{36}|pypi-(?:AgE|age)[A-Za-z0-9_-]{40,}"
    r"|(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}|(?:akia|asia|abia|acca)[a-z2-7]{16}"
    r"|[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,99}|xox[abeoprs]-(?:\d-)?\d{6,}-[A-Za-z0-9-]{7,}[A-Za-z0-9]"
    r"|xapp-\d-[A-Za-z0-9-]{30,}|(?:AIza|aiza)[A-Za-z0-9_-]{35}"
    r"|whsec_[A-Za-z0-9+/]{24,88})(?![A-Za-z0-9…])"
)
_AWS_IDS = ("akia", "asia", "abia", "acca")


def loose_token(token: str) -> bool:
    """Random, not words or filler: digits (two, or one in an AWS key id's base32) and a letter
    after the prefix (xoxp-<ids>-#### is a placeholder); not AWS's documentation key."""
    digits = sum(c.isdigit() for c in token[4:])
    return (
        digits >= (1 if token[:4].lower() in _AWS_IDS else 2)
        and (has_lower(token[5:]) or has_upper(token[5:]))
        and not token.lower().endswith("example")
    )


# "…" counts as part of a word so that no token starts or ends against a mask; nor may a token
# start after a dot (video_box.ico-7a38..., xoxe.xoxp-1-...).
TOKEN = re.compile(
    r"(?<![A-Za-z0-9_….-])(?:"
    + "|".join(f"(?P<{kind}>{pattern})" for kind, pattern, _ in TOKEN_RULES)
    + r")(?![A-Za-z0-9_…-])"
)
TOKEN_CHECKS: dict[str, Callable[[str], bool] | None] = {k: c for k, _, c in TOKEN_RULES}


# --- finding tokens fast: one small pattern per first character ----------------------------------

_ASCII = frozenset(chr(i) for i in range(128))
_CATEGORIES = {"CATEGORY_DIGIT": "0123456789", "CATEGORY_WORD": _ALNUM_CHARS + "_"}


def _first_chars(items: list) -> tuple[frozenset[str], bool]:  # type: ignore[type-arg]
    """The characters a parsed pattern can start with, and whether it can match nothing."""
    first: set[str] = set()
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            return frozenset(first | {chr(arg)}), False
        if name == "IN":
            chars: set[str] = set()
            for inner_op, inner in arg:
                inner_name = str(inner_op)
                if inner_name == "LITERAL":
                    chars.add(chr(inner))
                elif inner_name == "RANGE":
                    chars.update(chr(c) for c in range(inner[0], inner[1] + 1))
                elif inner_name == "CATEGORY" and str(inner) in _CATEGORIES:
                    chars.update(_CATEGORIES[str(inner)])
                else:  # a negation or another category: any character, to be safe
                    chars = set(_ASCII)
                    break
            return frozenset(first | chars), False
        if name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue  # zero width
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, _high, sub = arg
            sub_first, sub_empty = _first_chars(list(sub))
            first |= sub_first
            if low > 0 and not sub_empty:
                return frozenset(first), False
            continue
        if name == "SUBPATTERN":
            sub_first, sub_empty = _first_chars(list(arg[-1]))
            first |= sub_first
            if not sub_empty:
                return frozenset(first), False
            continue
        if name == "BRANCH":
            empty = False
            for branch in arg[1]:
                branch_first, branch_empty = _first_chars(list(branch))
                first |= branch_first
                empty = empty or branch_empty
            if not empty:
                return frozenset(first), False
            continue
        return frozenset(_ASCII), False  # anything else: any character, to be safe
    return frozenset(first), True


_BEFORE, _AFTER = r"(?<![A-Za-z0-9_….-])", r"(?![A-Za-z0-9_…-])"
_KIND_FIRST = {
    kind: _first_chars(list(_sre.parse(pattern)))[0] if _sre else _ASCII for kind, pattern, _ in TOKEN_RULES
}


@functools.lru_cache(maxsize=None)
def _pattern_for(kinds: tuple[str, ...]) -> re.Pattern[str] | None:
    if not kinds:
        return None
    rules = {kind: pattern for kind, pattern, _ in TOKEN_RULES}
    return re.compile("(?:" + "|".join(f"(?P<{k}>{rules[k]})" for k in kinds) + ")" + _AFTER)


# For each ASCII character, the rules a token starting with it can belong to, in TOKEN_RULES
# order (the first rule that matches names the token, as in TOKEN).
_BY_FIRST = {c: tuple(k for k, _, _ in TOKEN_RULES if c in _KIND_FIRST[k]) for c in _ASCII}
# Where a token may start: a character some rule begins with, after no word character.
_TOKEN_START = re.compile(
    _BEFORE + "[" + "".join(re.escape(c) for c in sorted(set().union(*_KIND_FIRST.values()))) + "]"
)


def find_tokens(text: str, start: int = 0, end: int | None = None) -> Iterator[re.Match[str]]:
    """The same matches as ``TOKEN.finditer(text, start, end)``: at each place a token may
    start, only the rules that can begin with that character are tried."""
    end = len(text) if end is None else end
    position = start
    while (candidate := _TOKEN_START.search(text, position, end)) is not None:
        at = candidate.start()
        pattern = _pattern_for(_BY_FIRST[text[at]])
        match = pattern.match(text, at, end) if pattern is not None else None
        if match is None:
            position = at + 1
            continue
        yield match
        position = max(match.end(), at + 1)


def _shape(chars: str) -> bytes:
    """A bytes.translate table: the given ASCII characters -> 'a', everything else -> ' '."""
    return bytes(0x61 if chr(i) in chars else 0x20 for i in range(256))


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
# Every token above contains a run of 16+ of these (AWS secrets count their + and /, Azure
# secrets their ~ and .) with an
# upper-case letter or a digit in it; paths and snake_case names are lower-case runs ...
RUN_SHAPE = _shape(_ALNUM + "_-+/~.")
LONG_RUN = b"a" * 16
UPPER_OR_DIGIT_SHAPE = _shape("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
# ... and lies whole inside a window of these (JWT dots, Telegram colons, webhook slashes,
# Azure's ~, Facebook's | and %7C, Teams' @).
WINDOW_SHAPE = _shape(_ALNUM + "_-+/=.:~|%@")
