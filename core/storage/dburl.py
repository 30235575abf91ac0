"""Database URLs: which ones backscroll accepts, and the one way a password is hidden.

A URL's password must never reach output, errors or logs. ``mask_url`` is how a URL is shown
(``postgresql://alice:***@db.example/backscroll``); ``mask_secrets`` cleans any text (a driver
message, for instance) of the password, whether it appears raw, percent-encoded, or as a
``password=`` query parameter.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from ..errors import ValidationError

SCHEMES = ("postgresql", "postgres")
MASK = "***"
_PASSWORD_PARAMS = ("password", "sslpassword")


def check_url(url: str) -> str:
    """A PostgreSQL URL, or one sentence saying what is wrong with it (password masked)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        raise ValidationError(f"{mask_url(url)} is not a database URL") from None
    if parts.scheme not in SCHEMES:
        raise ValidationError(
            f"{mask_url(url)} is not a PostgreSQL URL: use postgresql://USER@HOST/DATABASE "
            "(or leave BACKSCROLL_DATABASE_URL unset for the embedded SQLite files)"
        )
    if _cut_userinfo(url, parts.netloc):
        raise ValidationError(
            f"cannot use the database URL {mask_url(url)}: a / # ? or @ in a user name or "
            "password must be percent-encoded (%2F %23 %3F %40)"
        )
    try:
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        raise ValidationError(
            f"cannot use the database URL {mask_url(url)}: its port is not a number"
        ) from None
    return url.strip()


def mask_url(url: str) -> str:
    """The URL with its password (userinfo or query parameter) replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _mask_loosely(url)
    if _cut_userinfo(url, parts.netloc):
        return _mask_loosely(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:{MASK}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k in _PASSWORD_PARAMS for k, _ in pairs):
            pairs = [(k, MASK if k in _PASSWORD_PARAMS else v) for k, v in pairs]
            query = urlencode(pairs, safe="*")
    if netloc == parts.netloc and query == parts.query:
        return url  # nothing to hide: as given (a rebuilt sqlite:///x would read sqlite:/x)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def passwords(url: str) -> list[str]:
    """Every form in which the URL's password could appear in a message."""
    found: list[str] = []
    try:
        parts = urlsplit(url)
        raw = [parts.netloc.rsplit("@", 1)[0].split(":", 1)[1]] if (
            "@" in parts.netloc and ":" in parts.netloc.rsplit("@", 1)[0]
        ) else []
        raw += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k in _PASSWORD_PARAMS]
        cut = _cut_userinfo(url, parts.netloc)
    except ValueError:
        raw, cut = [], True
    if cut and _loose_password(url):
        raw.append(_loose_password(url))
    for secret in raw:
        for form in (secret, unquote(secret)):
            if form and form not in found:
                found.append(form)
    return sorted(found, key=len, reverse=True)


# A password this short is masked only where it stands whole, not inside a run of letters and
# digits: masked everywhere, the password "x" turned "timeout expired" into "timeout e***pired".
_SHORT_SECRET = 8
_ALNUM = re.compile(r"[^\W_]")  # a letter or a digit, in any script


def mask_secrets(text: str, url: str) -> str:
    """``text`` with the URL shown masked and its password nowhere."""
    text = text.replace(url, mask_url(url))
    for secret in passwords(url):
        if len(secret) >= _SHORT_SECRET:
            text = text.replace(secret, MASK)
        else:  # a run of letters may not go on past an end that is a letter ("pa$$word": masked)
            before = r"(?<![^\W_])" if _ALNUM.match(secret[0]) else ""
            after = r"(?![^\W_])" if _ALNUM.match(secret[-1]) else ""
            text = re.sub(before + re.escape(secret) + after, MASK, text)
    return re.sub(r"(password\s*=\s*)('[^']*'|\S+)", rf"\1{MASK}", text, flags=re.IGNORECASE)


def _loose_password(url: str) -> str:
    """The password as a person wrote it, unescaped: everything between the first ``:`` after
    ``//`` and the last ``@`` (``/``, ``#``, ``?`` in a password cut the user info short for
    a URL parser, which then shows the rest as a path or a fragment)."""
    start, at = url.find("//"), url.rfind("@")
    colon = url.find(":", start + 2, at) if 0 <= start < at else -1
    return url[colon + 1:at] if colon >= 0 else ""


def _cut_userinfo(url: str, netloc: str) -> bool:
    """An ``@`` after the part a parser took as user info and host: a password with ``/``,
    ``#`` or ``?`` written unescaped."""
    return "@" in url[url.find(netloc) + len(netloc):] if "//" in url else False


def _mask_loosely(url: str) -> str:
    """For a string too broken to parse: hide whatever sits between ``:`` and the last ``@``,
    and the value of every password parameter."""
    secret = _loose_password(url)
    if secret:
        at = url.rfind("@")
        url = url[:at - len(secret)] + MASK + url[at:]
    return re.sub(rf"([?&](?:{'|'.join(_PASSWORD_PARAMS)})=)[^&#]*", rf"\1{MASK}", url)
