"""Generated redaction test vectors: random strings in every documented format.

No vector of another project is copied here: each format is rebuilt from its facts (prefix,
length, alphabet) with a seeded ``random.Random``, and put in realistic sentences, commands
and config lines. ``TOKENS`` has one entry per vendor format of pass 1 (the keys are the
``kind`` names of ``redact.tokens.TOKEN_RULES``), ``CONTEXT_FORMS`` one per context form of pass 2,
``LOOK_ALIKES`` the strings that must stay. docs/redaction.md lists the same ids; the tests
check that the three agree.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
import uuid
from collections.abc import Callable

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
HEX = "0123456789abcdef"
ALNUM = LOWER + UPPER + DIGITS
LOWER_ALNUM = LOWER + DIGITS
UPPER_ALNUM = UPPER + DIGITS
URL_SAFE = ALNUM + "_-"
B64 = ALNUM + "+/"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"

Part = str | tuple[str, int]


# Words that mark a value as a stand-in (redact.rules: some-fake-value, <your-token>, xxxx): a
# real key that holds one by chance is let through, a documented trade-off; generated keys
# never hold one, so a test's outcome does not hang on the draw.
_STAND_IN = re.compile(r"fake|dummy|your|xxxx|####", re.IGNORECASE)


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    """n random characters; every kind of character the alphabet has (lower, upper, digit)
    appears at least once, as in a real random key of that length."""
    while True:
        chars = [rng.choice(alphabet) for _ in range(n)]
        kinds = [k for k in (LOWER, UPPER, DIGITS) if any(c in alphabet for c in k)]
        if n >= 2 * len(kinds):
            for kind, at in zip(kinds, rng.sample(range(n), len(kinds))):
                chars[at] = rng.choice([c for c in kind if c in alphabet])
        drawn = "".join(chars)
        if not _STAND_IN.search(drawn):
            return drawn


def build(rng: random.Random, parts: list[Part]) -> str:
    return "".join(p if isinstance(p, str) else rand(rng, *p) for p in parts)


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": rand(rng, DIGITS, 10), "name": rng.choice(["Ada", "Linus", "Grace"]),
              "iat": rng.randrange(1_500_000_000, 1_800_000_000)}
    return f"{header}.{_b64url(json.dumps(claims).encode())}.{rand(rng, URL_SAFE, 43)}"


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _fixed(parts: list[Part]) -> Callable[[random.Random], str]:
    return lambda rng: build(rng, parts)


def _azure(rng: random.Random) -> str:
    # 3 characters, a digit, "Q~", 31-34 more (no "..", which reads as an ellipsis)
    body = build(rng, [(ALNUM, 3), (DIGITS, 1), "Q~", (ALNUM + "_~.-", 31), (ALNUM, 1)])
    return body.replace("..", ".a")


def _aws_secret(rng: random.Random) -> str:
    # 40 base64 characters; real keys always have letters beyond f, several of each case
    return rand(rng, "ghijklmnopqrstuvwxyz" + UPPER, 6) + rand(rng, B64, 34)


# One generator per token kind (redact.tokens.TOKEN_RULES). Facts from gitleaks' rules,
# detect-secrets' plugins, trufflehog's detectors and the vendors' documentation.
TOKENS: dict[str, Callable[[random.Random], str]] = {
    "anthropic": _fixed(["sk-ant-api03-", (URL_SAFE, 93), "AA"]),
    "sk": _fixed(["sk-proj-", (ALNUM, 20), "T3BlbkFJ", (ALNUM, 20)]),
    "perplexity": _fixed(["pplx-", (ALNUM, 48)]),
    "huggingface": _fixed(["hf_", (LOWER + UPPER, 34)]),
    "github": _fixed(["ghp_", (ALNUM, 36)]),
    "gitlab": _fixed(["glpat-", (URL_SAFE, 20)]),
    "npm": _fixed(["npm_", (ALNUM, 36)]),
    "pypi": _fixed(["pypi-AgEIcHlwaS5vcmc", (URL_SAFE, 70)]),
    "rubygems": _fixed(["rubygems_", (HEX, 48)]),
    "clojars": _fixed(["CLOJARS_", (LOWER_ALNUM, 60)]),
    "artifactory": _fixed(["AKCp", (ALNUM, 69)]),
    "sourcegraph": _fixed(["sgp_", (HEX, 16), "_", (HEX, 40)]),
    "sonar": _fixed(["squ_", (LOWER_ALNUM, 40)]),
    "readme": _fixed(["rdme_", (LOWER_ALNUM, 70)]),
    "postman": _fixed(["PMAK-", (HEX, 24), "-", (HEX, 34)]),
    "prefect": _fixed(["pnu_", (ALNUM, 36)]),
    "pulumi": _fixed(["pul-", (HEX, 40)]),
    "infracost": _fixed(["ico-", (ALNUM, 32)]),
    "aws_key_id": _fixed(["AKIA", (UPPER + "234567", 16)]),
    "aws_bedrock": _fixed(["ABSK", (B64, 132)]),
    "aws_secret": _aws_secret,
    "aws_session": lambda rng: rng.choice(["FwoGZXIvYXdzE", "IQoJb3JpZ2luX2Vj"]) + rand(rng, B64, 300),
    "google": _fixed(["AIza", (URL_SAFE, 35)]),
    "azure_ad": lambda rng: _azure(rng),
    "alibaba": _fixed(["LTAI", (ALNUM, 20)]),
    "digitalocean": _fixed(["dop_v1_", (HEX, 64)]),
    "databricks": _fixed(["dapi", (HEX, 32)]),
    "cloudflare_ca": _fixed(["v1.0-", (HEX, 24), "-", (HEX, 146)]),
    "heroku": _fixed(["HRKU-AA", (URL_SAFE, 58)]),
    "flyio": _fixed(["fo1_", (URL_SAFE, 43)]),
    "planetscale": _fixed(["pscale_pw_", (ALNUM, 43)]),
    "scalingo": _fixed(["tk-us-", (URL_SAFE, 48)]),
    "openshift": _fixed(["sha256~", (URL_SAFE, 43)]),
    "terraform": _fixed([(ALNUM, 14), ".atlasv1.", (URL_SAFE, 67)]),
    "vault": _fixed(["hvs.", (URL_SAFE, 95)]),
    "vault_legacy": _fixed(["s.", (ALNUM, 24)]),
    "harness": _fixed(["pat.", (URL_SAFE, 22), ".", (ALNUM, 24), ".", (ALNUM, 20)]),
    "doppler": _fixed(["dp.pt.", (ALNUM, 43)]),
    "tailscale": _fixed(["tskey-auth-k", (ALNUM, 11), "-", (ALNUM, 32)]),
    "defined_networking": _fixed(["dnkey-", (LOWER_ALNUM, 26), "-", (LOWER_ALNUM, 52)]),
    "yandex": _fixed(["AQVN", (URL_SAFE, 36)]),
    "stripe": _fixed(["sk_live_", (ALNUM, 24)]),
    "webhook_secret": _fixed(["whsec_", (ALNUM, 32)]),
    "square": _fixed(["sq0csp-", (URL_SAFE, 43)]),
    "shopify": _fixed(["shpat_", (HEX, 32)]),
    "shippo": _fixed(["shippo_live_", (HEX, 40)]),
    "duffel": _fixed(["duffel_test_", (URL_SAFE, 43)]),
    "easypost": _fixed(["EZAK", (ALNUM, 54)]),
    "flutterwave": _fixed(["FLWSECK_TEST-", (HEX, 32), "-X"]),
    "plaid": lambda rng: "access-sandbox-" + _uuid(rng),
    "gocardless": _fixed(["live_", (ALNUM, 40)]),
    "lob": _fixed(["live_", (HEX, 35)]),
    "slack": _fixed(["xoxb-", (DIGITS, 12), "-", (DIGITS, 13), "-", (ALNUM, 24)]),
    "slack_config": _fixed(["xoxe.xoxp-1-", (UPPER_ALNUM + LOWER, 163)]),
    "slack_app": _fixed(["xapp-1-A0", (UPPER_ALNUM, 9), "-", (DIGITS, 13), "-", (HEX, 64)]),
    "slack_webhook": _fixed(["https://hooks.slack.com/services/T", (UPPER_ALNUM, 8), "/B",
                             (UPPER_ALNUM, 10), "/", (ALNUM, 24)]),
    "discord_webhook": _fixed(["https://discord.com/api/webhooks/", (DIGITS, 18), "/", (URL_SAFE, 68)]),
    "teams_webhook": lambda rng: (
        f"https://acme.webhook.office.com/webhookb2/{_uuid(rng)}@{_uuid(rng)}/IncomingWebhook/"
        f"{rand(rng, LOWER_ALNUM, 32)}/{_uuid(rng)}"
    ),
    "softlayer": _fixed(["https://api.softlayer.com/soap/v3/", (LOWER_ALNUM, 64)]),
    "zapier_webhook": _fixed(["https://hooks.zapier.com/hooks/catch/", (DIGITS, 7), "/", (LOWER_ALNUM, 7)]),
    "telegram": _fixed([(DIGITS, 9), ":AA", (URL_SAFE, 33)]),
    "discord": _fixed(["M", (ALNUM, 23), ".", (URL_SAFE, 6), ".", (URL_SAFE, 27)]),
    "twilio": _fixed(["SK", (HEX, 32)]),
    "sendgrid": _fixed(["SG.", (URL_SAFE, 22), ".", (URL_SAFE, 43)]),
    "sendinblue": _fixed(["xkeysib-", (HEX, 64), "-", (ALNUM, 16)]),
    "mailgun": _fixed(["key-", (HEX, 32)]),
    "mailchimp": _fixed([(HEX, 32), "-us", (DIGITS, 2)]),
    "typeform": _fixed(["tfp_", (URL_SAFE, 59)]),
    "sentry": _fixed(["sntryu_", (HEX, 64)]),
    "grafana": _fixed(["glsa_", (ALNUM, 32), "_", (HEX, 8)]),
    "new_relic": _fixed(["NRAK-", (UPPER_ALNUM, 27)]),
    "dynatrace": _fixed(["dt0c01.", (UPPER_ALNUM, 24), ".", (ALNUM, 64)]),
    "atlassian": _fixed(["ATATT3", (URL_SAFE, 186)]),
    "linear": _fixed(["lin_api_", (ALNUM, 40)]),
    "notion": _fixed(["ntn_", (DIGITS, 11), (ALNUM, 35)]),
    "frameio": _fixed(["fio-u-", (URL_SAFE, 64)]),
    "settlemint": _fixed(["sm_pat_", (ALNUM, 16)]),
    "clickhouse": _fixed(["4b1d", (ALNUM, 38)]),
    "airtable": _fixed(["pat", (ALNUM, 14), ".", (HEX, 64)]),
    "adobe": _fixed(["p8e-", (ALNUM, 32)]),
    "intra42": _fixed(["s-s4t2ud-", (HEX, 64)]),
    "octopus": _fixed(["API-", (UPPER_ALNUM, 26)]),
    "authress": _fixed(["sc_", (LOWER_ALNUM, 12), ".", (LOWER_ALNUM, 5), ".acc_", (LOWER_ALNUM, 20), ".",
                        (URL_SAFE, 60)]),
    "maxmind": _fixed([(ALNUM, 6), "_", (ALNUM, 29), "_mmk"]),
    "mapbox": _fixed(["pk.eyJ", (URL_SAFE, 60), ".", (URL_SAFE, 22)]),
    "dropbox": _fixed(["sl.", (URL_SAFE, 135)]),
    "facebook": _fixed(["EAAC", (ALNUM, 120)]),
    "twitter_bearer": _fixed(["A" * 22, (ALNUM, 90)]),
    "onepassword": _fixed(["A3-", (UPPER_ALNUM, 6), "-", (UPPER_ALNUM, 11), "-", (UPPER_ALNUM, 5), "-",
                           (UPPER_ALNUM, 5), "-", (UPPER_ALNUM, 5)]),
    "age": _fixed(["AGE-SECRET-KEY-1", (BECH32, 58)]),
    "jwt": _jwt,
    "jwt_base64": lambda rng: base64.b64encode(_jwt(rng).encode()).decode(),
}

# For tokens that are URLs, where the secret starts: the host and the fixed path stay.
URL_TOKENS = {
    "slack_webhook": "https://hooks.slack.com/services/",
    "discord_webhook": "https://discord.com/api/webhooks/",
    "teams_webhook": "https://acme.webhook.office.com/webhookb2/",
    "softlayer": "https://api.softlayer.com/soap/v3/",
    "zapier_webhook": "https://hooks.zapier.com/hooks/catch/",
}


def token_secret(kind: str, text: str) -> str:
    """The part of a generated token that must not show."""
    return text.removeprefix(URL_TOKENS.get(kind, ""))


# Sentences with no secret word in them, so that only the token's own rule can find it.
NEUTRAL = (
    "I pasted {s} into the settings page yesterday.",
    "value was {s}",
    "$ deploy --target prod {s}",
    '{{"id": 7, "value": "{s}"}}',
    "see {s} (copied from the dashboard)",
    "- {s}",
    "`{s}`",
)


def word(rng: random.Random, n: int = 8) -> str:
    return rand(rng, LOWER, n)


def password(rng: random.Random) -> str:
    """A password people type: letters with digits and a symbol, 9-14 characters."""
    letters = rand(rng, LOWER, rng.randint(5, 8))
    return letters + rand(rng, DIGITS, 2) + rng.choice("!@#%*") + rand(rng, UPPER, 2)


def token(rng: random.Random) -> str:
    return rand(rng, ALNUM, rng.choice([24, 32, 40]))


def lone_word(rng: random.Random) -> str:
    """A password made of one invented word (letmein, swordfish): no digit, no symbol."""
    first, *rest = rng.sample("bcdfghjklmnprstvz", 3)
    ending = rng.choice(["ix", "ova", "um"])
    return rng.choice(["", "re", "un"]) + first + rng.choice("aeiou") + "".join(rest) + ending


def _words(rng: random.Random, n: int) -> str:
    return " ".join(lone_word(rng) for _ in range(n))


def hex_(rng: random.Random, n: int) -> str:
    return rand(rng, HEX, n)


def b64_(rng: random.Random, n: int) -> str:
    return base64.b64encode(rng.randbytes(n)).decode()


Vector = tuple[str, list[str]]  # (text, the secrets in it)


def _value_end(rng: random.Random) -> str:
    return password(rng) + "&" + rand(rng, LOWER_ALNUM, 4)  # runs on through "&"


def _bundler_credential(rng: random.Random) -> str:
    return word(rng) + ":" + hex_(rng, 16)


def _key_lines(rng: random.Random, lines: int) -> str:
    """Lines of a key's base64 body, 64 characters each (the last one shorter)."""
    body = b64_(rng, 48 * lines - 10)
    return "\n".join(body[i : i + 64] for i in range(0, len(body), 64))


def _hex_lines(rng: random.Random) -> str:
    return "\n".join(hex_(rng, 32) for _ in range(4))


def _env_file(rng: random.Random) -> str:
    """A .env file in base64, as it is decoded on a server."""
    env = f"API_TOKEN={token(rng)}\nDB_PASSWORD={password(rng)}\n"
    return base64.b64encode(env.encode()).decode()


_PUTTY = ("PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: deploy\nPublic-Lines: 2\n"
          "AAAAB3NzaC1yc2EAAAADAQABAAABAQC7\nAAAAB3NzaC1yc2EAAAADAQ\nPrivate-Lines: 3\n{s}\n"
          "Private-MAC: 9f3c1a0b2d4e6f8a9c1b3d5e7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a\n")


# Pass 2 forms: a secret named by what surrounds it, as (template, maker of the secret {s}).
CONTEXT_FORMS: dict[str, tuple[str, Callable[[random.Random], str]]] = {
    "ctx-env": ("DB_PASSWORD={s}", password),
    "ctx-json": ('{{"apiKey": "{s}", "user": "bob"}}', token),
    "ctx-yaml": ("db:\n  password: {s}\n", password),
    "ctx-yaml-word": ("password: {s}", lone_word),
    "ctx-yaml-rest": ("aws_secret_access_key: {s}", lambda r: _words(r, 3)),
    "ctx-toml": ('[database]\npassword = "{s}"', password),
    "ctx-ini": ("[db]\npassword = {s}\nhost = db", password),
    "ctx-ruby": ("config[:password] => '{s}'", password),
    "ctx-php": ("$db = ['password' => '{s}'];", password),
    "ctx-xml": ("<password>{s}</password>", password),
    "ctx-xml-lines": ("<apiToken>\n    {s}\n</apiToken>", token),
    "ctx-dotnet": ('<add key="ApiKey" value="{s}" />', token),
    "ctx-go-typed": ('var apiToken string = "{s}"', token),
    "ctx-make": ("API_TOKEN ?= {s}", token),
    "ctx-php-concat": ('$apiToken .= "{s}";', token),
    "ctx-setproperty": ('System.setProperty("API_TOKEN", "{s}")', token),
    "ctx-call": ('std::string secret("{s}");', token),
    "ctx-compare": ('if (password == "{s}") {{', password),
    "ctx-compare-reversed": ('if ("{s}" === password) {{', password),
    "ctx-flag": ("tool --password={s} --verbose", password),
    "ctx-flag-space": ("tool --api-key {s} --verbose", token),
    "ctx-mysql": ("mysql -h db -uroot -p{s} app", password),
    "ctx-mysql-quoted": ("mysqldump -uroot -p'{s}' app > dump.sql", password),
    "ctx-sshpass": ("sshpass -p '{s}' ssh deploy@host", password),
    "ctx-pgpassword": ("PGPASSWORD={s} psql -h db -U app", password),
    "ctx-netrc": ("machine api.example.com login bob password {s}", password),
    "ctx-netrc-lines": ("machine git.example.com\n  login bob\n  password {s}\n", password),
    "ctx-sql-identified": ("CREATE USER 'app'@'%' IDENTIFIED BY '{s}';", password),
    "ctx-sql-password": ("ALTER ROLE app WITH LOGIN PASSWORD '{s}';", password),
    "ctx-connection-string": ("Server=db;Database=app;User Id=sa;Password={s};", password),
    "ctx-prose": ("ok, the password is {s} for now", password),
    "ctx-prose-word": ("The wifi password is {s}.", lone_word),
    "ctx-prose-colon": ("my password: {s}", lone_word),
    "ctx-prose-for": ("the password for root is {s}.", password),
    "ctx-prose-pw": ("pw is {s}", password),
    "ctx-url": ("postgres://app:{s}@db:5432/app", token),
    "ctx-url-key": ("dsn = https://{s}@o4504.ingest.sentry.io/42", lambda r: hex_(r, 32)),
    "ctx-curl": ("curl -u admin:{s} https://api.example.com", password),
    "ctx-curl-key": ("curl https://api.example.com/v1/charges -u {s}:", token),
    "ctx-authorization": ("Authorization: Bearer {s}", token),
    "ctx-basic": ('-H "Authorization: Basic {s}"', lambda r: b64_(r, 30)),
    "ctx-bearer": ("use Bearer {s} for the call", token),
    "ctx-cookie": ("Cookie: session={s}; theme=dark", token),
    "ctx-query": ("https://x.example/cb?access_token={s}&state=ok", token),
    "ctx-value-end": ("password={s}", _value_end),
    "ctx-bundler": ("BUNDLE_GEMS__EXAMPLE__COM={s}", _bundler_credential),
    "ctx-k8s": ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: {s}\n"
                "  host: ZGIuZXhhbXBsZS5jb20=\n", lambda r: b64_(r, 18)),
    "ctx-pem": ("-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----", lambda r: b64_(r, 48)),
    "ctx-nearby-secret": ("the secret {s} goes in the vault", lambda r: b64_(r, 24)),
    "ctx-nearby-api-key": ("their api key is {s}", lambda r: hex_(r, 32)),
    "ctx-nearby-auth-token": ("twilio auth token {s}", lambda r: hex_(r, 32)),
    "ctx-kebab-name": ("db-password={s}", password),
    "ctx-docker-login": ("$ docker login -u deploy -p {s} registry.example.com", password),
    "ctx-redis-cli": ("then run redis-cli -h cache -a {s} ping to check", password),
    "ctx-ldap": ("$ ldapsearch -x -D cn=admin,dc=example,dc=org -w {s} -b dc=example,dc=org", password),
    "ctx-mysql-prompt": ("$ mysql -h db -uroot -p{s} app", password),
    "ctx-mysql-sentence": ("I connected with mysql -uroot -p{s} and it worked", password),
    "ctx-sshpass-word": ("then use sshpass -p {s} ssh deploy@host", password),
    "ctx-pem-tail": ("{s}\n-----END RSA PRIVATE KEY-----", lambda r: _key_lines(r, 3)),
    "ctx-pem-armour": ("-----BEGIN OpenVPN Static key V1-----\n{s}\n-----END OpenVPN Static key V1-----",
                       _hex_lines),
    "ctx-putty": (_PUTTY, lambda r: _key_lines(r, 3)),
    "ctx-base64-env": ("echo {s} | base64 -d > .env", _env_file),
    "ctx-wifi": ("WIFI:T:WPA;S:HomeNet;P:{s};;", password),
    "ctx-expect": ('expect "*assword:*"\nsend "{s}\\r"\nexpect eof', password),
}


def context(form: str, rng: random.Random) -> Vector:
    """A generated text of a context form and the secret in it."""
    template, make = CONTEXT_FORMS[form]
    secret = make(rng)
    return template.format(s=secret), [secret]


CONTEXTS = sorted(CONTEXT_FORMS)


def _integrity(rng: random.Random) -> str:
    return f'"integrity": "sha512-{b64_(rng, 64)}"'


def _ulid(rng: random.Random) -> str:
    return rand(rng, "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 26)


# Strings that look like secrets and are not: they must come out byte-identical.
LOOK_ALIKES: dict[str, Callable[[random.Random], str]] = {
    "look-uuid": lambda r: f'"requestId": "{_uuid(r)}"',
    "look-uuid-key": lambda r: f'{{"key": "{_uuid(r)}"}}',
    "look-git-sha": lambda r: f"commit {hex_(r, 40)}",
    "look-git-sha-key": lambda r: f"the key change is in {hex_(r, 40)}",
    "look-sha256": lambda r: f"sha256: {hex_(r, 64)}",
    "look-integrity": _integrity,
    "look-ulid": lambda r: f"event {_ulid(r)} processed",
    "look-message-id": lambda r: f'"id": "msg_01{rand(r, ALNUM, 22)}"',
    "look-response-id": lambda r: f'"responseId":"resp_{hex_(r, 48)}"',
    "look-stripe-publishable": lambda r: f"pk_live_{rand(r, ALNUM, 24)}",
    "look-placeholder-angle": lambda r: "API_KEY=<your-api-key>",
    "look-placeholder-x": lambda r: "token: ghp_" + "x" * 36,
    "look-placeholder-example": lambda r: f"aws_access_key_id = AKIA{rand(r, UPPER_ALNUM, 9)}EXAMPLE",
    "look-placeholder-env": lambda r: "TOKEN=${TOKEN} KEY=$API_KEY PASSWORD=changeme",
    "look-path": lambda r: f"/home/{word(r)}/.config/{word(r)}/settings.json",
    "look-windows-path": lambda r: f"C:\\Users\\{word(r)}\\AppData\\Local\\{word(r)}\\cache",
    "look-url": lambda r: f"https://{word(r)}.example.com/api/v2/items?page=2&sort=desc",
    "look-base64-text": lambda r: 'const banner = "' + base64.b64encode(
        b"Welcome to the dashboard, " + word(r).encode()).decode() + '";',
    "look-prose": lambda r: "Reset your password, check the token budget, and note the key points.",
    "look-type-annotation": lambda r: "def login(password: str, token: Optional[str] = None) -> None:",
    "look-code-reference": lambda r: 'api_key = os.environ["API_KEY"]; secret = get_secret()',
    "look-pass-verb": lambda r: "the tests pass now, and the password field is required",
    "look-short-flags": lambda r: ("mkdir -p build && ssh -p 2222 host && docker run -p 8080:80 app"
                                   " && ls -a /tmp && curl -w '%{http_code}' x && mysql -P 3306 -p app"
                                   " && ldapsearch -W -x"),
    "look-expect-yes": lambda r: 'expect "continue connecting (yes/no)?"\nsend "yes\\r"',
    "look-base64-decode": lambda r: "echo " + base64.b64encode(f"Hello, {word(r)}!".encode()).decode()
                                    + " | base64 -d",
    "look-public-key-tail": lambda r: "its chain ends:\n" + _key_lines(r, 3) + "\n-----END CERTIFICATE-----",
    "look-csrf": lambda r: f'<input type="hidden" name="authenticity_token" value="{b64_(r, 32)}">',
}
