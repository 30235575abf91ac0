"""Redaction stays linear on adversarial input: time grows about tenfold from 100 KB to 1 MB.

Each input repeats a fragment that sends the passes down their costliest path (a trigger word
with a separator, a value that never ends, a prefix without its token). A quadratic pattern
or handler would make the 1 MB case about 100 times slower than the 100 KB one; the bound here
is 40 times. CPU time (not wall time) is measured, so that other processes on the machine do
not make the test flaky; the small case is the best of three runs, so a slow one cannot make
the ratio look good.
"""

from __future__ import annotations

import time

import pytest

from backscroll.core.redact import redact

FRAGMENTS = [
    "password=",
    "a",
    "key ",
    "key=",
    "password: ",
    "token ",
    " -p",
    "mysql -p",
    "<password>",
    "IDENTIFIED BY '",
    "machine x login y password ",
    "the password is ",
    "secret aB3dE5fG7hJ9kL1mN3pQ ",
    "aB3Q~",
    "a1.",
    "password=a&",
    "password=a,",
    '"password": "',
    "Authorization: Bearer ",
    "://a:",
    "kind: Secret\ndata:\n  k: dmFsdWU=\n",
    "eyJ",
    'if ("a" == password) ',
    "sk-ant-api03-",
    # issue 22's forms: blocks, decoded base64, Wi-Fi codes, expect, short password flags, keys
    "-----END PRIVATE KEY-----\n",
    "QUFBQUFBQUFBQUFBQUFB\n-----END EC PRIVATE KEY-----",
    "---- BEGIN SSH2 PRIVATE KEY ----\n",
    "Private-Lines: 9\nQUFBQUFB\n",
    "echo QUFBQUFBQUFBQUFBQUFB | base64 -d > ",
    "base64 -d <<< QUFBQUFBQUFBQUFBQUFB",
    "WIFI:T:WPA;",
    'expect "password:" send "',
    "mysql -h db ",
    "docker login -p ",
    "redis-cli -a ",
    "ldapsearch -w ",
    "agent:main:cron-ghp_",
    "xoxb-123456789012-",
]
SMALL, LARGE = 100_000, 1_000_000
MAX_RATIO = 40  # linear is 10 (a little more as memory grows); quadratic would be 100
MAX_SECONDS = 30.0  # for 1 MB of the worst fragment: generous, only catches a hang


def cpu_seconds(text: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        output = redact(text)
        best = min(best, time.process_time() - start)
    assert isinstance(output, str)
    return best


def repeated(fragment: str, size: int) -> str:
    return (fragment * (size // len(fragment) + 1))[:size]


@pytest.mark.parametrize("fragment", FRAGMENTS, ids=repr)
@pytest.mark.slow
def test_time_grows_linearly_from_100kb_to_1mb(fragment: str) -> None:
    small = cpu_seconds(repeated(fragment, SMALL), runs=3)
    large = cpu_seconds(repeated(fragment, LARGE), runs=1)
    assert large < MAX_SECONDS
    # Below 20 ms the clock's resolution, not the algorithm, decides the ratio.
    assert large < max(small, 0.02) * MAX_RATIO, (small, large)


def test_a_redacted_adversarial_text_is_final() -> None:
    text = "".join(repeated(fragment, 2_000) for fragment in FRAGMENTS)
    once = redact(text)
    assert redact(once) == once
