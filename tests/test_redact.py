"""Redaction (SPEC 6): every secret test vector is masked, every look-alike is left alone."""

from __future__ import annotations

import string
import uuid

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from backscroll.core.redact import REDACTION_VERSION, contains_secret, redact

from .conftest import DATA

needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="shared test data not found")


def mask(secret: str) -> str:
    """The mask format, written out independently of the module."""
    return secret[:6] + "…" + secret[-4:] if len(secret) >= 18 else "***"


def rows(name: str) -> list[tuple[str, str]]:
    """(provider, string) rows of a test-vector file; a literal \\n in a key is a newline."""
    if not DATA.is_dir():
        return []
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()[1:]
    out = []
    for line in lines:
        provider, text = line.split("\t", 1)
        out.append((provider, text.replace("\\n", "\n") if provider == "private-key" else text))
    return out


TRUE_ROWS = rows("secrets_true.tsv")
FALSE_ROWS = rows("secrets_false.tsv")

# The distinctive secret of each line of secrets_true.tsv, in file order, written by hand.
SECRETS: list[tuple[str, str]] = [
    ("aws-access-key-id", "AKIALALEMEL33243OLIB"),
    ("aws-access-key-id", "AKIAWGXZ9OPDOWUJMZGI"),
    ("aws-secret-access-key", "v2QPKHl7LcdVYsjaR4LgQiZ1zw3MAnMyiondXC63"),
    ("aws-bedrock-api-key", "ABSKQmVkcm9ja0FQSUtleS1" + "EXAMPLE" * 15 + "EXM="),
    ("github-pat", "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"),
    ("github-pat", "ghp_9ovSHEBCq0drG42yjoam76iNybtqLN25CgSf"),
    ("github-app-token", (
        "ghs_RWGUZ6kS8_Ut7PbtR72k2miJwwYtxkpe8mOpT8feAWYZcwz43PxBVGCNATnycaQV9"
        "VUlPJe1uST5Xen7d3uZ5lilVlEVvT9AbxnhURdT3OzPtCvXydIrvE4LrDO"
    )),
    ("gitlab-pat", "glpat-W6fYSu70dPEo5w_SwbHWgQ"),
    ("gitlab-pat-routable", "glpat-3fZ1p5y4XWcCvMGVlfakeW86MQp1Oml3Ymg0Cw.01.1203afake"),
    ("slack-bot-token", "xoxb-781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD"),
    ("slack-bot-token", "xoxb-4614724432022-5152386766518-O5WzjWGLG0wcCm2WPrjEmnys"),
    ("slack-user-token",
     "xoxp-41684372915-1320496754-45609968301-e708ba56e1517a99f6b5fb07349476ef"),
    ("slack-app-token", (
        "xapp-1-A052FGTS2DL-5171572773297-610b6a11f4b7eb819e87b767d80e6575a3634"
        "791acb9a9ead051da879eb5b55e"
    )),
    ("slack-legacy-token", "xoxs-416843729158-132049654-5609968301-e708ba56e1"),
    ("slack-webhook-url", "T0DCUJB1Q/B0DD08H5G/bJtrpFi1fO1JMCcwLx8uZyAg"),
    ("stripe-secret-key-live", "sk_live_ReTllpYQYfIZu2Jnf2lAPFjD"),
    ("stripe-restricted-key-live", "rk_live_5TcWfjKmJgpql9hjpRnwRXbT"),
    ("stripe-secret-key-test", (
        "sk_test_51OuEMLAlTWGaDypq4P5cuDHbuKeG4tAGPYHJpEXQ7zE8mKK3jkhTFPvCxnSS"
        "K5zB5EQZrJsYdsatNmAHGgb0vSKD00GTMSWRHs"
    )),
    ("openai-api-key", (
        "sk-proj-SevzWEV_NmNnMndQ5gn6PjFcX_9ay5SEKse8AL0EuYAB0cIgFW7Equ3vCbUbYShvii"
        "6L3rBw3WT3BlbkFJdD9FqO9Z3BoBu9F-KFR6YJtvW6fUfqg2o2Lfel3diT3OCRmBB24hjcd_uLEjgr9tCqnnerVw8A"
    )),
    ("openai-api-key", (
        "sk-admin-JWARXiHjpLXSh6W_0pFGb3sW7yr0cKheXXtWGMY0Q8kbBNqsxLskJy0LCOT3Blbk"
        "FJgTJWgjMvdi6YlPvdXRqmSlZ4dLK-nFxUG2d9Tgaz5Q6weGVNBaLuUmMV4A"
    )),
    ("openai-api-key", "sk-proj-mpjtr05CFsJqs4TAeKlCT3BlbkFJsh1KtN0SUjTPeJiagE8K"),
    ("openai-api-key", "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"),
    ("anthropic-api-key", (
        "sk-ant-api03-abc123xyz-456def789ghij-klmnopqrstuvwx-3456yza789bcde-1234"
        "fghijklmnopby56aaaogaopaaaabc123xyzAA"
    )),
    ("anthropic-admin-api-key", (
        "sk-ant-admin01-abc12fake-456def789ghij-klmnopqrstuvwx-3456yza789b"
        "cde-12fakehijklmnopby56aaaogaopaaaabc123xyzAA"
    )),
    ("gcp-api-key", "AIzaSyNHxIf32IQ1a1yjl3ZJIqKZqzLAK1XhDk-"),
    ("gcp-api-key", "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe"),
    ("jwt", (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lI"
        "iwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    )),
    ("jwt", (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lI"
        "iwiaWF0IjoxNTE2MjM5MDIyfQ"
    )),
    ("jwt", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ0ZXN0LXVzZXIifQ."),
    ("authorization-bearer", (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VybmFtZTpib2IifQ.H"
        "cfCW67Uda-0gz54ZWTqmtgJnZeNem0Q757eTa9EZuw"
    )),
    ("authorization-bearer", "cfcabd11c7ed9a41b1a3e063c32d5114"),
    ("authorization-bearer", "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"),
    ("authorization-basic", (
        "djJlNEpYa0NJUHZ5a2FWT0VRXzRqZmZUdDkwYTp2emNBZGFzZWpmlWZiUDc2VUJjNDNN"
        "VDExclVh"
    )),
    ("url-with-password", "whywouldyouusehttpforpasswords"),
    ("url-with-password", "d3adb33f"),
    ("curl-user-password", "P@ssw0rd$1"),
    ("curl-user-password", "pRf7vG2h1L8nQkW9"),
    ("env-assignment", "8ae31cacf141669ddfb5da"),
    ("env-assignment", "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"),
    ("env-assignment", "cafebabe:deadbeef"),
    ("generic-secret", "6da89121079f83b2eb6acccf8219ea982c3d79bccc3e9c6a85856480661f8fde"),
    ("generic-secret", "m{{h}o)p${e]nob(ody[finds>-_$#thisone}}"),
    ("generic-secret", "c3VwZXIgbG9uZyBzdHJpbmcgc2hvdWxkIGNhdXNlIGVub3VnaCBlbnRyb3B5"),
    ("npm-token", "npm_hK0FJXBYCkejhEMY4Kp6bOOZn1DlfBOmtbJY"),
    ("pypi-token", (
        "pypi-AgEIcHlwaS5vcmcCJDQyM2M0Yjg4LWUyNDnnnnhhMy1hNigyLWI2ZWUyMTMwYzI2MgACKls"
        "zLCJhOWQwMWE0MS01Nzk4LTQyOWYtOTk4MS1lYzE5NTJhM2E3YzgiXQAABiBeGtDnnnnnV32VpiyeU-YUDKplSv0E5ngm"
        "wsnHaV2jGg"
    )),
    ("pypi-token", (
        "pypi-AgENdGVzdC5weXBpLm9yZwIkN2YxOWZhOWEtY2FjYS00MGZhLTj2MGEtODFjMnE2MjdmMzY0"
        "AAIqWzMsImJlM2FiOWI5LTRmYUTnNEg4ZS04Mjk0LWFlY2Y2NWYzNGYzNyJdAAAGIMb5Hb8nVvhcAizcVVzA-bKKnwN7"
        "Pe0RmgPRCvrPwyJf"
    )),
    ("huggingface-token", "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"),
    ("huggingface-org-token", "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"),
    ("twilio-auth-token", "daf7b3d34b9787f1212316eea62ba186"),
    ("sendgrid-api-key", "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"),
    ("telegram-bot-token", "110201543:AAHdqTcvCH1vGWJxfSe1ofSAs0K5PALDsaw"),
    ("telegram-bot-token", "869511423:BctOM4-oBANUkq653PAPbo4HLs3DCd9NCDe"),
    ("discord-bot-token", "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"),
    ("private-key", (
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDAC4AWkdwKYSd8\n"
        "Ks14IReLcYgADhoXk56ZzXI="
    )),
    ("private-key", "lQWGBGSVV4YBDAClvRnxezIRy2Yv7SFlzC0iFiRF/O/jePSw+XYhvcrTaqSYTGic\n=8xQN"),
    ("private-key", "super secret private key here"),
]


def fragments(secret: str) -> list[str]:
    """What must never show: a short secret whole; of a long one, the middle that the mask
    does not keep, and every 8 characters of that middle."""
    if len(secret) < 18:
        return [secret]
    middle = secret[6:-4]
    return [middle] + [middle[i : i + 8] for i in range(len(middle) - 7)]


def assert_hidden(secret: str, output: str) -> None:
    leaked = [fragment for fragment in fragments(secret) if fragment in output]
    assert leaked == []


@needs_data
def test_the_secret_table_matches_the_true_file() -> None:
    assert [provider for provider, _ in TRUE_ROWS] == [provider for provider, _ in SECRETS]
    for (_, line), (_, secret) in zip(TRUE_ROWS, SECRETS, strict=True):
        assert line.count(secret) == 1


@needs_data
@pytest.mark.parametrize("index", range(len(SECRETS)), ids=[p for p, _ in SECRETS])
def test_true_line_is_masked_and_keeps_its_label(index: int) -> None:
    _, line = TRUE_ROWS[index]
    _, secret = SECRETS[index]
    output = redact(line)
    assert_hidden(secret, output)
    # Exactly the secret is replaced: the key name, the header, the URL around it stay.
    assert output == line.replace(secret, mask(secret))
    assert contains_secret(line)


@needs_data
def test_false_lines_come_out_unchanged() -> None:
    changed = [(provider, text, redact(text)) for provider, text in FALSE_ROWS]
    assert [row for row in changed if row[1] != row[2]] == []
    assert len(FALSE_ROWS) == 35
    assert not any(contains_secret(text) for _, text in FALSE_ROWS)


# --- the mask format and the labels -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DB_PASSWORD=hunter2", "DB_PASSWORD=***"),
        ("DB_PASSWORD=abcdefghij1234567", "DB_PASSWORD=***"),  # 17 characters
        ("DB_PASSWORD=abcdefghij12345678", "DB_PASSWORD=abcdef…5678"),  # 18
        ("sk-abcdefghij0123456789wxyz", "sk-abc…wxyz"),
        ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig-sw5c",
         "Authorization: Bearer eyJhbG…sw5c"),
        ('{"apiKey": "a1b2c3d4e5", "user": "bob"}', '{"apiKey": "***", "user": "bob"}'),
        ('{"password":"correct horse battery staple"}', '{"password":"correc…aple"}'),
        ("token: 9f8e7d6c5b4a", "token: ***"),
        ("export GITHUB_TOKEN='abc123'", "export GITHUB_TOKEN='***'"),
        ("mytool --api-key k3y-v4lue-123 --verbose", "mytool --api-key *** --verbose"),
        ("mytool --password=Secr3t! --token t0k3n", "mytool --password=*** --token ***"),
        ("https://x.example/cb?access_token=ya29a0AfH6SMBx&state=ok&sig=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5",
         "https://x.example/cb?access_token=***&state=ok&sig=Zm9vYm…Nzg5"),
        ("GET /maps?key=abc123&sig=x9&q=cafe#top", "GET /maps?key=***&sig=***&q=cafe#top"),
        ("postgres://app:s3cr3t@db:5432/app", "postgres://app:***@db:5432/app"),
        ("Cookie: session=f3a9c2e1d4b5; theme=dark", "Cookie: sessio…dark"),
        ("set-cookie: sid=abc123; Path=/", "set-cookie: sid=ab…th=/"),  # 18 characters
        ("Cookie: sid=abc123;Path=/", "Cookie: ***"),
        ("curl -u admin:hunter22 https://x", "curl -u admin:*** https://x"),
        ('db:\n  password: "pa55word"\n', 'db:\n  password: "***"\n'),
        ("twilio token - 'daf7b3d34b9787f1'", "twilio token - '***'"),
        ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5\n",
         "-----BEGIN EC PRIVATE KEY-----\nMHcCAQ…VJk5\n"),  # cut off before END: masked to the end
    ],
)
def test_mask_format_and_labels(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The key of the matter: the token budget is small.",
        "max_tokens: 4096, input_tokens=1200, tokenizer: cl100k_base",
        '{"sessionKey": "agent:main:main", "key": "agent:main:subagent:1"}',
        'token = os.environ["TOKEN"]; api_key = get_api_key(); self.secret = secret',
        "def login(password: str, token: Optional[str] = None) -> None:",
        "API_KEY=${API_KEY} TOKEN=$TOKEN PASSWORD=<password> SECRET=[SECRET] KEY={{ secrets.KEY }}",
        '"password": "", "token": "...", "apiKey": "XXXXXXXXXXXXXXXX", "secret": "your-secret"',
        "docker run -u 1000:1000 img; date -u +%H:%M:%S; git push -u origin main",
        "PWD=/home/alice/src pass=true bypass=1 author=alice",
        "the Bearer of bad news; Authorization: required for every call",
        ("-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n"
         "-----END PUBLIC KEY-----"),
        "commit 9d14621e59f22c2b6d030d92d37ffe5ae1e60452 (203db13e-70c7-462b-9a3d-bf32640cb0be)",
        "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "pip install scikit-learn; the sk-learn-style api; task-management-service-backend",
        "人人生而自由，在尊严和权利上一律平等。密码：请看文档。",
    ],
)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert redact(text) == text
    assert not contains_secret(text)


def test_masks_are_final() -> None:
    """Redacted text passes again unchanged, including masks next to labels."""
    for text in ["DB_PASSWORD=***", "Authorization: Bearer eyJhbG…sw5c", "x=sk-abc…wxyz",
                 "https://u:***@h", 'k = "m{{h}o…ne}}"', "Cookie: sessio…dark"]:
        assert redact(text) == text


def test_the_redaction_version_is_part_of_the_indexer_version() -> None:
    # a rule change re-indexes every session only if the indexer version carries it
    from backscroll.core.indexer import EXTRACTION_VERSION, INDEXER_VERSION

    assert INDEXER_VERSION == EXTRACTION_VERSION * 1000 + REDACTION_VERSION
    assert 1 <= REDACTION_VERSION < 1000


def test_whole_text_redaction_handles_many_secrets_and_lines() -> None:
    text = (
        "first line\nDB_PASSWORD=8ae31cacf141669ddfb5da and "
        "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\n-----BEGIN RSA PRIVATE KEY-----\n"
        "super secret private key here\n-----END RSA PRIVATE KEY-----\nlast line"
    )
    assert redact(text) == (
        "first line\nDB_PASSWORD=8ae31c…b5da and ghp_wW…INUx\n-----BEGIN RSA PRIVATE KEY-----\n"
        "super …here\n-----END RSA PRIVATE KEY-----\nlast line"
    )


# --- properties -------------------------------------------------------------------------------

CJK = "人人生而自由在尊严和权利上一律平等他们赋有理性和良心すべての人間は모든인간은"
PUNCTUATION = " .,;:!?()[]{}\"'=-_/@#\n"
SURROUNDING = st.text(
    alphabet=st.sampled_from(string.ascii_letters + string.digits + PUNCTUATION + CJK), max_size=80
)
SEPARATORS = st.sampled_from([" ", "\n", "\n\n", " \t", " — "])


@needs_data
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.integers(0, len(SECRETS) - 1),
    before=SURROUNDING,
    after=SURROUNDING,
    left=SEPARATORS,
    right=SEPARATORS,
)
def test_embedded_secret_is_still_masked(
    index: int, before: str, after: str, left: str, right: str
) -> None:
    _, line = TRUE_ROWS[index]
    _, secret = SECRETS[index]
    # The random text must not itself contain what the check looks for.
    assume(not any(fragment in before or fragment in after for fragment in fragments(secret)))
    text = before + left + line + right + after
    output = redact(text)
    assert_hidden(secret, output)
    assert redact(output) == output


@needs_data
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(
        st.one_of(SURROUNDING, st.sampled_from([text for _, text in TRUE_ROWS + FALSE_ROWS])),
        max_size=6,
    )
)
def test_redaction_is_idempotent(pieces: list[str]) -> None:
    once = redact(" ".join(pieces))
    assert redact(once) == once


@settings(max_examples=300)
@given(st.text(max_size=200))
def test_redaction_is_idempotent_on_any_text(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


_AN_ID = "e3e70682-c209-4cac-629f-6fbed82c07cd"
# Words, less those that name a secret ("pw", "pass", "token"...): the value after such a word
# is masked, rightly, whatever it looks like.
WORDS = st.from_regex(r"[a-z]{1,12}", fullmatch=True).map(
    lambda w: w.capitalize() if len(w) % 3 == 0 else w
).filter(lambda w: redact(f"{w} {_AN_ID}") == f"{w} {_AN_ID}")


@settings(max_examples=300)
@given(
    ids=st.lists(
        st.one_of(
            st.uuids().map(str),
            st.binary(min_size=20, max_size=20).map(bytes.hex),  # git SHA-1
            st.binary(min_size=32, max_size=32).map(bytes.hex),  # SHA-256
            WORDS,
        ),
        min_size=1,
        max_size=12,
    ),
    joiner=st.sampled_from([" ", ", ", "\n", " / ", ": "]),
)
def test_ids_hashes_and_words_are_unchanged(ids: list[str], joiner: str) -> None:
    text = joiner.join(ids)
    assert redact(text) == text


def test_uuid_values_under_plain_names_are_unchanged() -> None:
    for _ in range(50):
        text = f'"id": "{uuid.uuid4()}", "requestId": "{uuid.uuid4()}", "key": "{uuid.uuid4()}"'
        assert redact(text) == text


# --- pathological input -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "a=" * 100_000,
        "key=" * 100_000,
        ("key=" * 50 + " ") * 1_000,
        "token " * 100_000,
        "password: " * 50_000,
        '"' * 1_000_000,
        "x" * 1_000_000,
        "A1" * 500_000,
        "sk-" * 300_000,
        "eyJ" * 300_000,
        "eyJabcdefghijk." * 60_000,
        "://a:" * 100_000,
        " -u " * 100_000,
        "--token " * 100_000,
        "-----BEGIN PRIVATE KEY-----" * 30_000,
        "-----BEGIN PRIVATE KEY-----\n" + "MIIE\n" * 200_000,
        "Cookie: " + "a=b; " * 100_000,
        "Authorization: Bearer " * 40_000,
        "token='" + "a" * 1_000_000,
        ("人人生而自由 key 密码 " * 50_000),
    ],
    ids=lambda text: repr(text[:16]),
)
def test_pathological_input_finishes(text: str) -> None:
    output = redact(text)
    assert isinstance(output, str)
    assert redact(output) == output


@pytest.mark.parametrize(
    "text, secret",
    [
        ("mysql --password hunter2", "hunter2"),
        ("psql --password 'correct horse battery staple'", "horse battery"),
        ("tool --passphrase s3cretphrase9 --verbose", "s3cretphrase9"),
        ("deploy --api-key abcdefghijklmnopqrstuvwxyz", "ghijklmnopqrst"),
    ],
)
def test_a_flag_value_after_a_space_is_masked(text: str, secret: str) -> None:
    assert secret not in redact(text)
    assert redact(text).split()[1].startswith("--")  # the flag itself stays


@pytest.mark.parametrize("text", ["run --token $TOKEN", "git --password-stdin --x", "ls --key-file ./a"])
def test_flag_placeholders_and_flag_chains_stay(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize("text", [
    "API_KEY=<your-api-key> event RT2GZSKYPD8J86G8KR4NY6PVMD processed",
    "set <secret> then run job 01HZX3K7Q2M4N8P6R9T5V7W2YB",
])
def test_a_word_after_a_placeholder_that_names_a_secret_is_not_its_value(text: str) -> None:
    # the secret word closes a <placeholder>; what follows a word later is not its value
    assert redact(text) == text


def test_a_value_right_after_a_tag_that_names_a_secret_is_masked() -> None:
    assert redact("<apiKey>Zx9Qw2Lp8Rt5Vb3Nm7Kd4Hs6Jf1Gc0Xy</apiKey>") != (
        "<apiKey>Zx9Qw2Lp8Rt5Vb3Nm7Kd4Hs6Jf1Gc0Xy</apiKey>")
