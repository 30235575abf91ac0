"""Secrets we had not seen (issue 9): password forms, generic secrets without a separator,
values that run to their natural end, and the look-alikes that must stay. Exact outputs, so
the mask format and the labels are checked too."""

from __future__ import annotations

import pytest

from backscroll.core.redact import contains_secret, redact


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # commands
        ("mysql -uroot -pS3cret app", "mysql -uroot -p*** app"),
        ("mysqldump -u root -p'my pass 1' app > a.sql", "mysqldump -u root -p'***' app > a.sql"),
        ("sshpass -p 'hunter22' ssh deploy@host", "sshpass -p '***' ssh deploy@host"),
        ("PGPASSWORD=s3cr3t psql -h db", "PGPASSWORD=*** psql -h db"),
        ("tool --password=Secr3t! --verbose", "tool --password=*** --verbose"),
        # config languages
        ("machine api.example.com login bob password p4ss", "machine api.example.com login bob password ***"),
        ("machine h login u password p", "machine h login u password ***"),
        ("config[:password] => 'abc123'", "config[:password] => '***'"),
        ("$cfg['password'] = 'abc123';", "$cfg['password'] = '***';"),
        ("<password>hunter22</password>", "<password>***</password>"),
        ('<add key="ApiKey" value="k3y-v4lue-123" />', '<add key="ApiKey" value="***" />'),
        ("password: letmein", "password: ***"),
        ('[db]\npassword = "letmein"', '[db]\npassword = "***"'),
        ("aws_secret_access_key: value with spaces", "aws_secret_access_key: ***"),
        ("aws_secret_access_key: purple monkey dishwasher", "aws_secret_access_key: purple…sher"),
        # SQL and connection strings
        ("CREATE USER app IDENTIFIED BY 'pw123';", "CREATE USER app IDENTIFIED BY '***';"),
        ("ALTER ROLE app WITH PASSWORD 'letmein';", "ALTER ROLE app WITH PASSWORD '***';"),
        ("Server=db;User Id=sa;Password=Pa55w0rd;", "Server=db;User Id=sa;Password=***;"),
        # prose
        ("the password is hunter2", "the password is ***"),
        ("The wifi password is swordfish.", "The wifi password is ***."),
        ("my password: letmein", "my password: ***"),
        ("pw is hunter2", "pw is ***"),
        ("the password for root is t0ps3cret, ok?", "the password for root is ***, ok?"),
        # code
        ('var apiToken string = "abcd1234efgh"', 'var apiToken string = "***"'),
        ('System.setProperty("API_TOKEN", "abcd1234efgh")', 'System.setProperty("API_TOKEN", "***")'),
        ('if ("hunter22" == password) {', 'if ("***" == password) {'),
        ("API_TOKEN ?= abcd1234efgh", "API_TOKEN ?= ***"),
        # values run to their natural end
        ("password=Tr0ub4dor&3xyz", "password=***"),
        ("https://x.example/?a=1&password=p4ss&b=2", "https://x.example/?a=1&password=***&b=2"),
        # generic secrets without a separator, near a secret word
        ("secret c2VjcmV0IHZhbHVlIGZvciB0ZXN0aW5nIDEyMzQ1Ng==", "secret c2Vjcm…Ng=="),
        ("api key is 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "api key is 9f8e7d…b1a0"),
        ("twilio auth token 5e0c1f7a9b3d2e4f6a8c0b2d4f6e8a1c", "twilio auth token 5e0c1f…8a1c"),
        # vendor tokens named in the issue
        ("key SK0123456789abcdef0123456789abcdef", "key SK0123…cdef"),
        ("https://o1.ingest.sentry.io dsn https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/2",
         "https://o1.ingest.sentry.io dsn https://012345…cdef@o1.ingest.sentry.io/2"),
    ],
)
def test_unseen_secret_forms_are_masked(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert contains_secret(text)
    assert redact(expected) == expected


@pytest.mark.parametrize(
    "text",
    [
        "mkdir -p /tmp/x && ssh -p 22 host && docker run -p 8080:80 img",
        "mysql -p app",  # -p then a space: mysql asks for the password, app is the database
        "the tests pass now, and the password field is required",
        "Reset your password: see the docs. The password is required.",
        "def login(password: str, token: Optional[str] = None) -> None:",
        "password: str",
        "the key change is in 9d14621e59f22c2b6d030d92d37ffe5ae1e60452",
        '"integrity": "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kx'
        'vUdBeoGlODJ6+SfaPg=="',
        "event 01ARZ3NDEKTSV4RRFFQ69G5FAV and pk_live_4Tq9Vx2Lm8Rw3Zp7Ks5Nb1Hd",
        "API_KEY=<your-api-key> TOKEN=${TOKEN} KEY=$API_KEY PASSWORD=changeme",
        "aws_access_key_id = AKIAQ7R2T4V6XEXAMPLE",
        'const banner = "V2VsY29tZSB0byB0aGUgZGFzaGJvYXJkLCBhZGE=";',
        "/home/ada/.config/app/settings.json and https://example.com/api/v2?page=2&sort=desc",
        'api_key = os.environ["API_KEY"]; secret = get_secret()',
        '<input type="hidden" name="authenticity_token" value="q3Lr8TzX2vNp5KwY9mBc4HdFg7Js1AuE">',
        # a base64 value that happens to end in "Pw=", then another string on the line
        '<input name="authenticity_token" value="A88oQA0bJntUSXPeAz+sp3dPw4tvtdc="> '
        'const banner = "V2VsY29tZSB0byB0aGUgZGFzaGJvYXJk";',
        "token_count: 4096, secret_name: prod-db, public_key = 'AAAAC3NzaC1lZDI1NTE5AAAAIOMq'",
        "machine learning login flow",
        "pass: 人人生而自由，在尊严和权利上一律平等。",
    ],
)
def test_look_alikes_are_unchanged(text: str) -> None:
    assert redact(text) == text
    assert not contains_secret(text)


# Issue 22: the forms its red team found unmasked, each as it was reported.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$ docker login -u bob -p Xk9vQ2mLp7Rt ghcr.io", "$ docker login -u bob -p *** ghcr.io"),
        ("$ redis-cli -h cache -a Xk9vQ2mLp7Rt ping", "$ redis-cli -h cache -a *** ping"),
        ("$ ldapsearch -x -D cn=admin -w Xk9vQ2mLp7Rt", "$ ldapsearch -x -D cn=admin -w ***"),
        ("$ mysql -uroot -pXk9vQ2mLp7Rt app", "$ mysql -uroot -p*** app"),
        ("I ran mysql -uroot -pXk9vQ2mLp7Rt and it worked", "I ran mysql -uroot -p*** and it worked"),
        ("use sshpass -p Xk9vQ2mLp7Rt ssh host", "use sshpass -p *** ssh host"),
        ("db-password=Xk9vQ2mLp7Rt", "db-password=***"),
        ("Cz1QmPnq8c3JbT0uXo9dE2aW5tYrLk4v\nVx7NcF0gT6hJ3kP1qZ8mB5wA2rE9uY4t\n-----END RSA PRIVATE KEY-----",
         "Cz1QmP…uY4t\n-----END RSA PRIVATE KEY-----"),  # the second half of a key, alone
        ("Cz1QmPnq8c3JbT0uXo9dE2aW5tYrLk4v\nAB==\r\n-----END PRIVATE KEY-----\r\n",
         "Cz1QmP…AB==\r\n-----END PRIVATE KEY-----\r\n"),  # a short last line, CRLF
        ("-----BEGIN PRIVATE KEY-----\nqwertyuiopasdfghjklzxcvbnmQWERTY\n-----END PRIVATE KEY-----",
         "-----BEGIN PRIVATE KEY-----\nqwerty…ERTY\n-----END PRIVATE KEY-----"),  # letters only: a key
        ("-----BEGIN OpenVPN Static key V1-----\n5f2c0e9a1b3d4c6e8f7a9b0c1d2e3f4a\n-----END OpenVPN "
         "Static key V1-----",
         "-----BEGIN OpenVPN Static key V1-----\n5f2c0e…3f4a\n-----END OpenVPN Static key V1-----"),
        ("Private-Lines: 1\nAAAAIQCx9k3mQ7pZ2nL8vR4tY6wE1sD5fG0h\nPrivate-MAC: 3f2a",
         "Private-Lines: 1\nAAAAIQ…fG0h\nPrivate-MAC: 3f2a"),
        ("echo QVBJX0tFWT1zM2NyM3Q= | base64 -d > .env", "echo QVBJX0…M3Q= | base64 -d > .env"),
        ("WIFI:T:WPA;S:HomeNet;P:Xk9vQ2mLp7Rt;;", "WIFI:T:WPA;S:HomeNet;P:***;;"),
        ('expect "Password:"\nsend "Xk9vQ2mLp7Rt\\r"', 'expect "Password:"\nsend "***\\r"'),
        ("POST https://hooks.zapier.com/hooks/catch/1234567/abc3dfg/",
         "POST https://hooks.zapier.com/hooks/catch/***/"),
        ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_…LaSw"),
        ("agent:main:cron-akias5u76hbtyv2mqaq3-2", "agent:main:cron-akias5…qaq3-2"),
    ],
)
def test_issue_22_forms_are_masked(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert redact(expected) == expected
