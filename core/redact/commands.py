"""Pass 2 handlers for headers, URLs, commands and manifests (context.py runs them).

Each handler gets the prepared text, the hit's start and end, and returns the span of the
secret it found (or None) and where the scan resumes.
"""

from __future__ import annotations

import re

from . import patterns as pat
from . import rules
from .rules import is_mask
from .spans import Found, Scan, Span, found


def bearer(scan: Scan, start: int, end: int) -> Found:
    """``Bearer <token>`` without a header name (curl -H "Bearer ...", logs, prose)."""
    match = pat.BARE_BEARER.match(scan.text, start)
    if match is None or (start and scan.text[start - 1].isalpha()):
        return None, end
    value = match.group("secret")
    return found(match, rules.looks_random(value) and not rules.is_placeholder(value), end)


def cookie(scan: Scan, start: int, end: int) -> Found:
    """``Cookie:`` / ``Set-Cookie:`` headers: all their name=value pairs."""
    match = pat.COOKIE_HEADER.match(scan.text, start)
    if match is None:
        return None, end
    return match.span("secret"), match.end()


def url_userinfo(scan: Scan, start: int, end: int) -> Found:
    """``scheme://user:password@host``: the password goes, the user stays; a key used as the
    whole userinfo (a Sentry DSN, https://<token>@github.com) goes too."""
    match = pat.URL_USERINFO.match(scan.text, start)
    if match is not None:
        return found(match, not rules.is_placeholder(match.group("secret")), end)
    match = pat.URL_KEY_USER.match(scan.text, start)
    if match is not None:
        value = match.group("secret")
        return found(match, rules.looks_like_key(value), end)
    return None, end


def curl_user(scan: Scan, start: int, end: int) -> Found:
    """curl ``-u user:password`` / ``--user user:password`` (the password may be quoted alone)."""
    text = scan.text
    if start and text[start - 1] == "-":
        start -= 1  # the hit "-u" was inside "--user"
    if start and text[start - 1] not in " \t\n\"'":
        return None, end
    match = pat.CURL_USER.match(text, start)
    if match is None:
        key = pat.CURL_KEY_USER.match(text, start)
        if key is not None:
            value = key.group("secret")
            return found(key, rules.looks_random(value) and not rules.is_placeholder(value), end)
        return None, end
    user, password = match.group("user"), match.group("secret")
    # test:test, www-data:www-data, 1000:1000 (docker -u uid:gid) are not credentials.
    credential = not (
        rules.is_placeholder(password)
        or password.lower() == user.lower()
        or (user.isdigit() and password.isdigit())
    )
    return found(match, credential, end)


def bundler(scan: Scan, start: int, end: int) -> Found:
    """``BUNDLE_<HOST>=user:password``, Bundler's per-host credentials."""
    if start and scan.names[start - 1] == 0x61:  # inside a longer name
        return None, end
    match = pat.BUNDLER_CREDENTIAL.match(scan.text, start)
    if match is None:
        return None, end
    return found(match, not rules.is_placeholder(match.group("secret")), end)


_WORD = re.compile(r"\S+")
_FLAG_HINTS = ("mysql", "mariadb", "sshpass", "login", "redis-cli", "keydb-cli", "ldap")


def _only_options(words: list[str]) -> bool:
    """Options and their values only (-h db -uroot, --port 3306): no other word between a
    command and its flag, so "mysql is down, so mkdir -p x" names no mysql flag."""
    after_option = False
    for word in words:
        if word.startswith("-"):
            after_option = "=" not in word
        elif after_option:
            after_option = False
        else:
            return False
    return True


def _flag_command(window: str, flag: str) -> str | None:
    """The command a password flag belongs to: the nearest of the flag's commands before it
    (after a prompt, a wrapper such as sudo, or words of a sentence), with only options
    between. ``docker login`` and its kin count as ``login``."""
    commands = pat.PASSWORD_FLAGS[flag]
    words = [w.group() for w in _WORD.finditer(window)][-12:]
    for at in range(len(words) - 1, -1, -1):
        name = words[at].strip("`'\"(").rsplit("/", 1)[-1]
        if name == "login" and (at == 0 or words[at - 1].rsplit("/", 1)[-1] not in pat.LOGIN_TOOLS):
            continue
        if name in commands and _only_options(words[at + 1 :]):
            return name
    return None


def p_flag(scan: Scan, start: int, end: int) -> Found:
    """A short flag whose value is a password for the command it follows: ``mysql -uroot
    -pS3cret``, ``sshpass -p 'x'``, ``docker login -p x``, ``redis-cli -a x``, ``ldapsearch -w
    x`` (mkdir -p, ssh -p 22, docker run -p 80:80, ls -a, curl -w stay)."""
    text = scan.text
    if not start or text[start - 1] not in " \t":
        return None, end
    window = text[max(0, start - 200) : start]
    if not any(hint in window for hint in _FLAG_HINTS):
        return None, end
    window = window[max(window.rfind(c) for c in "\n;|&(`") + 1 :]
    match = pat.SHORT_FLAG_VALUE.match(text, start)
    if match is None:
        return None, end  # -P (mysql's port), -W (ldap's prompt)
    command = _flag_command(window, match.group("flag"))
    if command is None:
        return None, end
    glued, spaced = pat.PASSWORD_FLAGS[match.group("flag")][command]
    if not (spaced if match.group("space") else glued):
        return None, end  # mysql -p db: a prompt for the password, then the database
    group = match.lastgroup or ""
    value = match.group(group)
    if is_mask(value) or rules.is_placeholder(value):
        return None, end
    return match.span(group), match.end()


def sql_by(scan: Scan, start: int, end: int) -> Found:
    """SQL ``IDENTIFIED BY 'x'`` (also ``IDENTIFIED WITH plugin BY 'x'``)."""
    text = scan.text
    if pat.SQL_IDENTIFIED.search(text, max(0, start - 60), start) is None:
        return None, end
    match = pat.SQL_BY_VALUE.match(text, start)
    if match is None:
        return None, end
    return found(match, not rules.is_placeholder(match.group("secret")), end)


# --- Kubernetes Secret manifests ---------------------------------------------------------------


def k8s_spans(text: str) -> list[Span]:
    """Every value under ``data:`` / ``stringData:`` of a document that says ``kind: Secret``
    (documents are split at ``---``)."""
    if "ecret" not in text or "ata:" not in text:
        return []
    spans: list[Span] = []
    starts = [0] + [m.end() for m in re.finditer(r"(?m)^---[ \t]*$", text)]
    ends = [m.start() for m in re.finditer(r"(?m)^---[ \t]*$", text)] + [len(text)]
    for doc_start, doc_end in zip(starts, ends):
        if not pat.K8S_KIND.search(text, doc_start, doc_end):
            continue
        for data in pat.K8S_DATA.finditer(text, doc_start, doc_end):
            block_end = _block_end(text, data.end(), doc_end, len(data.group("indent")))
            for entry in pat.K8S_ENTRY.finditer(text, data.end(), block_end):
                group = "block" if entry.group("block") else "value"
                value = entry.group(group)
                stripped = value.strip()
                # Under 10 base64 characters (7 bytes) a value is a user name, a port, a flag.
                if len(stripped) >= 10 and not rules.is_placeholder(stripped) and not is_mask(stripped):
                    start, stop = entry.span(group)
                    spans.append((start + len(value) - len(value.lstrip()), start + len(value.rstrip())))
    return sorted(set(spans))


_LINE_INDENT = re.compile(r"^(?P<indent>[ \t]*)\S", re.MULTILINE)


def _block_end(text: str, start: int, end: int, indent: int) -> int:
    """Where the indented block after ``data:`` ends: the first line indented no deeper."""
    for line in _LINE_INDENT.finditer(text, start, end):
        if len(line.group("indent")) <= indent:
            return line.start()
    return end
