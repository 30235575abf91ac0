"""Generated vectors for the families issue 22 added (read by redaction_recall.py; not a test).

The tests hold one template per form (tests/redaction_vectors.py); here each family is written
in several shapes those templates do not use (other prompts, quoting, line endings, key types,
field orders, glue in session keys), so the recall measured is not the tests' own. Each record
has the shape redaction_corpus.py writes, with the family as its ``source``; look-alikes of
each family are ``false`` records that must stay unchanged.
"""

from __future__ import annotations

import base64
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.redaction_vectors import TOKENS, b64_, hex_, password, token, word  # noqa: E402

PROMPTS = ["$ ", "# ", "> ", "user@host:~$ ", "PS C:\\> ", "", "I ran ", "then try ", "(venv) $ "]
KEY_KINDS = ["github", "anthropic", "aws_key_id", "slack", "gitlab", "npm", "stripe", "pypi", "sk",
             "google", "webhook_secret"]


def _record(family: str, label: str, text: str, secrets: list[str]) -> dict[str, Any]:
    return {"source": family, "rule": family, "label": label, "text": text, "secrets": secrets,
            "near_miss": False}


def _quoted(rng: random.Random, value: str) -> str:
    return rng.choice(["{}", "'{}'", '"{}"']).format(value)


def _flags(rng: random.Random) -> tuple[str, str]:
    pw = password(rng)
    shapes = [
        f"docker login -u {word(rng)} -p {_quoted(rng, pw)} registry.example.com",
        f"podman login --tls-verify=false -u {word(rng)} -p {pw} quay.io",
        f"redis-cli -h {word(rng)}.internal -p 6379 -a {_quoted(rng, pw)} INFO",
        f"ldapwhoami -H ldap://{word(rng)} -D cn=admin,dc=x -w {_quoted(rng, pw)}",
        f"ldapmodify -x -D cn=admin,dc=x -w{pw} -f change.ldif",
        f"mysql -h {word(rng)} -P 3306 -uroot -p{_quoted(rng, pw)} {word(rng)}",
        f"sudo mysqldump -u backup -p{pw} --all-databases > all.sql",
        f"sshpass -p {_quoted(rng, pw)} scp dump.sql {word(rng)}@host:",
    ]
    return rng.choice(PROMPTS) + rng.choice(shapes), pw


def _key_tail(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY",
                       "ENCRYPTED PRIVATE KEY", "DSA PRIVATE KEY"])
    body = b64_(rng, rng.choice([96, 240, 600]))
    newline = rng.choice(["\n", "\r\n"])
    lines = newline.join(body[i : i + 64] for i in range(0, len(body), 64))
    lead = rng.choice(["", "and the rest of it:\n", "  "])
    return f"{lead}{lines}{newline}-----END {kind}-----{newline}", lines


def _armour(rng: random.Random) -> tuple[str, str]:
    if rng.random() < 0.5:
        body = "\n".join(hex_(rng, 32) for _ in range(8))
        return (f"#\n# 2048 bit OpenVPN static key\n#\n-----BEGIN OpenVPN Static key V1-----\n{body}\n"
                "-----END OpenVPN Static key V1-----", body)
    body = b64_(rng, 180)
    lines = "\n".join(body[i : i + 70] for i in range(0, len(body), 70))
    return (f'---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: "{word(rng)}"\n{lines}\n'
            "---- END SSH2 ENCRYPTED PRIVATE KEY ----", lines)


def _putty(rng: random.Random) -> tuple[str, str]:
    body = b64_(rng, rng.choice([96, 400]))
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    version = rng.choice(["2", "3"])
    count = lines.count("\n") + 1
    return (f"PuTTY-User-Key-File-{version}: ssh-ed25519\nEncryption: none\nComment: {word(rng)}\n"
            f"Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAI\nAAAAC3NzaC1lZDI1\nPrivate-Lines: {count}\n"
            f"{lines}\nPrivate-MAC: {hex_(rng, 64)}\n", lines)


def _decoded_env(rng: random.Random) -> tuple[str, str]:
    env = f"SECRET_KEY={token(rng)}\nDATABASE_URL=postgres://app:{password(rng)}@db/app\n"
    blob = base64.b64encode(env.encode()).decode()
    shapes = [f"echo {blob} | base64 -d > .env", f"echo '{blob}' | base64 --decode > config/.env.production",
              f"printf %s {blob} | base64 -d | sudo tee /srv/app/.env", f"base64 -d <<< {blob} > .env",
              f"echo {blob} | base64 -d > settings.txt"]
    return rng.choice(shapes), blob


def _wifi(rng: random.Random) -> tuple[str, str]:
    pw = password(rng)
    name = word(rng)
    fields = [f"S:{name}", f"T:{rng.choice(['WPA', 'WPA2', 'WEP', 'SAE'])}", f"P:{pw}"]
    rng.shuffle(fields)
    return "scan this: WIFI:" + ";".join(fields) + rng.choice([";;", ";H:false;;"]), pw


def _expect(rng: random.Random) -> tuple[str, str]:
    pw = password(rng)
    shapes = [f'expect "Password:"\nsend "{pw}\\r"', f'expect -re "(P|p)assword: ?$"\nsend -- "{pw}\\r"',
              f'spawn ssh {word(rng)}@host\nexpect "*passphrase*" {{ send "{pw}\\n" }}',
              f'expect "Enter PIN:"\n  send "{pw}\\r"\nexpect eof']
    return rng.choice(shapes), pw


def _zapier(rng: random.Random) -> tuple[str, str]:
    secret = f"{rng.randrange(10**6, 10**8)}/{word(rng, 3)}{rng.randrange(1000, 9999)}"
    host = rng.choice(["https://hooks.zapier.com", "https://www.hooks.zapier.com", "hooks.zapier.com"])
    return f"curl -X POST {host}/hooks/catch/{secret}/ -d @event.json", secret


def _standalone(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["aws_session", "webhook_secret"])
    value = TOKENS[kind](rng)
    return rng.choice([f"{value}", f"here: {value}", f'"{value}"', f"- {value}\n"]), value


def _in_key(rng: random.Random) -> tuple[str, str]:
    value = TOKENS[rng.choice(KEY_KINDS)](rng).lower()
    key = rng.choice(["agent:main:{}", "agent:main:cron-{}", "agent:main:hook:{}:run-2",
                      "agent:ops:{}-retry", "agent:main:telegram:group_{}"]).format(value)
    return f"session {key} resumed", value


FAMILIES = {
    "cli-password": _flags, "key-tail": _key_tail, "key-armour": _armour, "putty": _putty,
    "base64-env": _decoded_env, "wifi": _wifi, "expect-send": _expect, "zapier": _zapier,
    "whsec-sts": _standalone, "token-in-key": _in_key,
}
LOOK_ALIKES = [
    "$ mkdir -p build && ssh -p 2222 deploy@host", "docker run -p 8080:80 -a stdout nginx",
    "ls -a ~ && curl -w '%{http_code}' https://x", "mysql -P 3306 -p app", "ldapsearch -W -x -b dc=x",
    "redis-cli -a", "docker login registry.example.com", "ldapsearch -x -w $LDAP_PW -b dc=x",
    'expect "continue connecting (yes/no)?"\nsend "yes\\r"', 'send "ls -la\\r"',
    "echo SGVsbG8sIHdvcmxkIQ== | base64 -d", "echo aGVsbG8gdGhlcmUgZnJpZW5kcw== | base64 --decode",
    "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----",
    "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----",
    "WIFI:T:nopass;S:CoffeeShop;P:;;", "WIFI:S:Home;T:WPA;P:<password>;;",
    "https://hooks.zapier.com/hooks/catch/", "agent:main:cron-nightly-backup-2", "agent:main:asia-pacific",
    "agent:main:ghp-review", "the whsec_ prefix marks a webhook secret",
]


def generated_records(seed: int = 22, per_family: int = 200) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    records = []
    for family, make in FAMILIES.items():
        for _ in range(per_family):
            text, secret = make(rng)  # the secret as the text holds it (with its line breaks)
            records.append(_record(family, "true", text, [secret]))
    records += [_record("look-alikes", "false", text, []) for text in LOOK_ALIKES]
    return records
