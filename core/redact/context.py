"""Pass 2 of redaction: secrets named by their context (see engine.py for the whole).

One pattern (``LOCATOR``) finds trigger words in the lower-cased text; at each hit a handler
reads the name and the value with small anchored patterns and asks rules.py whether
the value is a secret. A handler returns the span of the secret (or None) and where the scan
resumes.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import commands as cmd
from . import patterns as pat
from . import rules
from .rules import is_mask
from .spans import Found, Scan, Span, found


def context_spans(text: str) -> list[Span]:
    if not any(hint in text for hint in pat.SEPARATOR_HINTS) and not any(
        hint in text for hint in pat.WORD_HINTS
    ):
        return []
    scan = Scan(text)
    spans: list[Span] = []
    resume = 0
    while (hit := pat.LOCATOR.search(scan.low, resume)) is not None:
        trigger = hit.group()
        start = hit.start() - pat.TRIGGER_BACK.get(trigger, 0)
        found, resume = _HANDLERS.get(trigger, _assignment)(scan, start, hit.end())
        resume = max(resume, hit.end())
        if found is not None and found[1] > found[0] and not is_mask(text[found[0] : found[1]]):
            if spans and found[0] < spans[-1][1]:
                continue  # overlaps what an earlier hit masked
            spans.append(found)
    return spans


# How far a handler looks along a line. Every look is bounded, so a hit costs at most this
# much and a text without newlines stays linear.
_REACH = 400


def _line_start(text: str, pos: int) -> int:
    """The start of ``pos``'s line, or ``pos - _REACH`` if that is nearer."""
    return text.rfind("\n", max(0, pos - _REACH), pos) + 1 or max(0, pos - _REACH)


def _line_end(text: str, pos: int) -> int:
    """The end of ``pos``'s line, or ``pos + _REACH`` if that is nearer."""
    found = text.find("\n", pos, pos + _REACH)
    return min(len(text), pos + _REACH) if found == -1 else found


_CLOSING = frozenset(" \t\r.,;:!?)]}>'\"`")


def _alone(text: str, end: int) -> bool:
    """Only closing punctuation follows ``end`` on its line."""
    for char in text[end : end + 40]:
        if char == "\n":
            return True
        if char not in _CLOSING:
            return False
    return end + 40 >= len(text)


# --- NAME <sep> value --------------------------------------------------------------------------


def _assignment(scan: Scan, start: int, end: int) -> Found:
    """A secret named by a name the hit lies in: DB_PASSWORD=..., "apiKey": ..., --api-key
    ..., ?token=..., <password>...</password>, password "x", the password is x."""
    text, names = scan.text, scan.names
    reach = 2 * pat.MAX_NAME
    name_start = names.rfind(b" ", max(0, start - reach), start) + 1
    name_end = names.find(b" ", end, end + reach)
    if name_end == -1:
        name_end = len(names) if end + reach >= len(names) else names.find(b" ", end)
        name_end = len(names) if name_end == -1 else name_end
    if (name_start == 0 and start > reach) or name_end - name_start > reach:
        return None, name_end  # a run this long is data, not a name
    name = text[name_start:name_end]
    if not rules.name_strength(name) and not rules.name_mentions_secret(name):
        return None, name_end  # token_count, credentialId, author: read on past it
    if name.startswith("-"):
        return _flag(text, name, name_end)
    # The character after the name (and its spaces) says which forms can apply: a word after
    # a space is prose ("password is ..."), anything else an assignment, a quote or a call.
    after = text[name_end : name_end + 12].lstrip(" \t")
    forms = _PROSE_FORMS if after[:1].isalnum() else _FORMS
    for form in forms:
        found = form(text, name, name_start, name_end)
        if found is not None:
            return found
    return None, name_end


_COMPARISON = ("==", "===", "!=", "!==")


def _assigned(text: str, name: str, name_start: int, name_end: int) -> Found | None:
    match = pat.ASSIGNMENT.match(text, name_end)
    if match is None:
        return None
    group = match.lastgroup or ""  # the value's group closes last: dq, sq, bq, eq or bare
    value_start, value_end = match.span(group)
    value = match.group(group)
    sep = match.group("sep")
    if is_mask(value):
        return None, match.end()
    if group == "dq" and not match.group("close") and _ends_quoted_word(text, name_start):
        return None, value_start  # value="abc+dPw=">: the quote closes a string, opens none
    alone = _alone(text, value_end)
    if group == "bq" and " " in value:
        return None, value_start  # `cat /run/secret`: a shell command, not a literal
    if group != "bare":
        style = "quoted"
    elif sep in _COMPARISON:
        return None, name_end  # password == other_variable
    else:
        in_query = name_start > 0 and text[name_start - 1] in "?&"
        spaced = bool(match.group("pre") or match.group("post"))
        if sep == "=" and not spaced and not match.group("close"):
            style = "query" if in_query else "tight"
        else:
            style = "colon" if sep == ":" else "spaced"
        if value and value[-1] in ")]}":
            value = _trim_closers(value)
        if style == "colon" and rules.plain_words(value) and not alone:
            rest = _yaml_rest(text, name, name_start, value_start)
            if rest and not rules.is_prose_word(value):
                value, style = rest, "quoted"  # the whole rest of a YAML line is its value
        value_end = value_start + len(value)
        alone = _alone(text, value_end)
    if value and rules.assignment_is_secret(name, value, style, alone):
        return (value_start, value_end), max(value_end, match.end() if group != "bare" else value_end)
    # A rejected value may hold the next candidate (--flag "client_secret": ...), so the scan
    # goes on inside it; only a long bare value is skipped whole, which keeps chains like
    # key=key=key=... linear.
    long_bare = group == "bare" and len(value) > pat.MAX_REREAD
    return None, (match.end() if long_bare else value_start)


def _ends_quoted_word(text: str, name_start: int) -> bool:
    """The name is the tail of one unbroken word inside an open double-quoted string (an odd
    number of quotes before it on its line, no space since the last): a base64 value ending
    in ``Pw=`` is not an assignment, and the quote after it closes the string."""
    line = text[_line_start(text, name_start) : name_start]
    opened = line.rfind('"')
    if opened == -1 or any(char.isspace() for char in line[opened:]):
        return False
    return (line.count('"') - line.count('\\"')) % 2 == 1


_YAML_KEY_LINE = re.compile(r"[ \t]*(?:-[ \t]+)?[\"']?\Z")


def _yaml_rest(text: str, name: str, name_start: int, value_start: int) -> str | None:
    """``aws_secret_access_key: value with spaces`` as a YAML line: the value is the rest of
    the line. Only for compound names (snake, kebab or camel case) that start their line."""
    if not re.search(r"[_-]|[a-z][A-Z]", name.strip("-_")):
        return None
    line_start = _line_start(text, name_start)
    if not _YAML_KEY_LINE.match(text[line_start:name_start]):
        return None
    rest = text[value_start : _line_end(text, value_start)]
    rest = rest.split(" #", 1)[0].rstrip()
    return rest if len(rest) <= 200 else None


def _xml_text(text: str, name: str, name_start: int, name_end: int) -> Found | None:
    """<password>value</password>, also over lines."""
    if not (name_start and text[name_start - 1] == "<" and text.startswith(">", name_end)):
        return None
    match = pat.XML_TEXT.match(text, name_end)
    if match is None:
        return None, name_end + 1
    value = match.group("secret")
    if rules.assignment_is_secret(name, value, "quoted"):
        return match.span("secret"), match.end()
    return None, name_end + 1


def _quoted(text: str, name: str, name_start: int, name_end: int) -> Found | None:
    """Forms with a quoted value and no assignment sign: "NAME", "value" (setProperty),
    secret("value"), password 'x' (SQL, C), key="Password" value="x" (.NET, NuGet)."""
    match = pat.QUOTED_FORM.match(text, name_end)
    if match is None:
        return None
    group = match.lastgroup or ""
    value = match.group(group)
    sep = match.group("sep").strip()
    closed = match.group("close").strip("]")
    if sep == ",":
        if not closed:
            return None  # token, "x": a list, not a pair
        style = "spaced"
    elif sep.endswith("("):
        style = "spaced"
    elif sep.startswith("value"):
        if not closed:
            return None
        style = "quoted"
    else:  # password "x"
        style = "colon"
    span = match.span(group)
    if rules.assignment_is_secret(name, value, style, _alone(text, match.end())):
        return span, match.end()
    return None, span[0]


def _reversed(text: str, name: str, name_start: int, name_end: int) -> Found | None:
    """if ("value" == password): a literal compared with a secret's name."""
    window_start = max(0, name_start - 300)
    before = text[window_start:name_start].rstrip(" \t(\"'")
    if not before.endswith("=") or not (
        rules.name_strength(name) == rules.STRONG or rules.name_mentions_secret(name)
    ):
        return None
    match = pat.REVERSED_COMPARISON.search(text, window_start, window_start + len(before))
    if match is None or rules.is_placeholder(match.group("secret")):
        return None
    return (match.start("secret"), match.end("secret")), name_end


def _prose(text: str, name: str, name_start: int, name_end: int) -> Found | None:
    """The password is X, password for root: X, pw was X, and .netrc's ``password X``."""
    if not rules.is_password_name(name) or name.lower().endswith("pass"):
        return None  # "the tests pass now": only password, passwd, pw... take a value in prose
    match = pat.PROSE_VALUE.match(text, name_end)
    if match is None:
        return None
    value, end = match.group("secret"), match.end("secret")
    if not value.isascii() or is_mask(value) or rules.is_prose_word(value):
        return None, end
    if not match.group("gap").strip():
        # "password X" with nothing between: a .netrc line (machine h login u password p), or
        # the pair alone on its line with a value that cannot be prose.
        line_start = _line_start(text, name_start)
        line_end = _line_end(text, name_end)
        if _netrc_line(text[line_start:line_end]):
            # any value, even one character (machine h login u password p)
            secret = len(value) < 3 or not rules.is_placeholder(value)
            return (match.span("secret") if secret else None), end
        else:
            before, after = text[line_start:name_start], text[match.end() : line_end]
            secret = not before.strip() and not after.strip() and (
                rules.looks_random(value) or rules.lone_word_password(value) or value.isdigit()
            )
    elif value.isalpha():
        # a word is the password only where the sentence ends with it: "... is swordfish."
        secret = rules.lone_word_password(value) and (
            bool(match.group("q")) or _ends_sentence(text, match.end())
        )
    else:
        secret = not rules.code_like(value)
    if secret and not rules.is_placeholder(value):
        return match.span("secret"), end
    return None, end


def _ends_sentence(text: str, end: int) -> bool:
    rest = text[end : end + 2]
    return rest == "" or rest[0] in "\r\n" or (rest[0] in ".!?;,)" and (len(rest) == 1 or rest[1].isspace()))


def _netrc_line(line: str) -> bool:
    """A .netrc entry: machine <host> login <user> password <password> (or default ...)."""
    if "login" not in line and "machine" not in line and "default" not in line:
        return False
    words = line.split()
    return "login" in words or "machine" in words or "default" in words


_FORMS: tuple[Callable[[str, str, int, int], Found | None], ...] = (
    _xml_text, _assigned, _quoted, _reversed, _prose
)
# A word after the name: only prose, or an assignment after a type (var token string = ...).
_PROSE_FORMS: tuple[Callable[[str, str, int, int], Found | None], ...] = (_prose, _assigned)


def _flag(text: str, name: str, name_end: int) -> Found:
    """``--password X``, ``--token=X``: a secret flag's next word is its value."""
    match = pat.FLAG_VALUE.match(text, name_end)
    if match is None:
        return None, name_end
    group = match.lastgroup or ""
    value_start, value_end = match.span(group)
    value = match.group(group)
    if is_mask(value) or (group == "bare" and value.startswith("-")):
        return None, name_end  # --password-stdin --other: the next flag is no value
    if group == "bare" and value[-1] in ")]}":
        value = _trim_closers(value)
        value_end = value_start + len(value)
    if value and rules.assignment_is_secret(name, value, "tight"):
        return (value_start, value_end), value_end
    return None, value_start


_OPENER = {")": "(", "]": "[", "}": "{"}


def _trim_closers(value: str) -> str:
    """Drop closing brackets a bare value only picked up from its surroundings: f(token=abc)."""
    while value and value[-1] in ")]}" and value.count(value[-1]) > value.count(_OPENER[value[-1]]):
        value = value[:-1]
    return value


# --- the Authorization header, and the table of handlers ------------------------------------


def _auth(scan: Scan, start: int, end: int) -> Found:
    """``Authorization: <scheme> <credentials>``; any other name with "auth" is an assignment."""
    if not scan.low.startswith(b"authorization", start):
        return _assignment(scan, start, end)
    match = pat.AUTH_HEADER.match(scan.text, start)
    if match is None:
        return None, end
    value = match.group("secret")
    # With a scheme the next word is the credential; without one, prose must not be masked.
    secret = not rules.is_placeholder(value) and (
        match.group("scheme") is not None
        or not (rules.plain_words(value) or rules.code_like(value))
    )
    return found(match, secret, end)


_HANDLERS: dict[bytes, Callable[[Scan, int, int], Found]] = {
    b"uth": _auth,
    b"bearer": cmd.bearer,
    b"kie": cmd.cookie,
    b"://": cmd.url_userinfo,
    b"-u": cmd.curl_user,
    b"-p": cmd.p_flag,
    b"-a": cmd.p_flag,
    b"-w": cmd.p_flag,
    b"bundle_": cmd.bundler,
    b"b": cmd.sql_by,
}
