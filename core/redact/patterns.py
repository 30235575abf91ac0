"""Pass 2 patterns: where a secret is named by its context (context.py applies them).

Every pattern is linear: repeats are bounded or cannot overlap, and each anchored pattern runs
only at a trigger the locator found.
"""

from __future__ import annotations

import re

from .tokens import _ALNUM, _shape

# Trigger words, found in the lower-cased ASCII bytes of the text (one byte per character,
# so offsets match). Each is entered by a rare letter (c, u, g, p, b, k, i, y) so the scan
# skips most characters, and lookbehinds check the letters before it. A name trigger
# (secret, cred, auth, sig, pass, pwd, pw, key, token, cookie) counts only with something
# after its name that can introduce a value, so prose ("the key of") costs nothing more.
_NAME_REST = rb"[a-z0-9_.-]{0,64}"
# After the name: a closing quote or bracket (config[:password], $cfg['password']), a C array
# ([25]), a type (var x string =, x: String =), then the separator: = : => := ::= ?= .= += ==
# != > (XML), , (a quoted name then a quoted value), ( (a call), ) (the end of a reversed
# comparison), " - '" (YAML lists), a quote after spaces, or " value=" (.NET's
# <add key="Password" value="..."/>).
_VALUE_AHEAD = (
    rb"""(?=""" + _NAME_REST + rb"""(?:\\?["'])?\]?(?:\[\d{0,4}\])?"""
    rb"""(?:[ \t]*:?[ \t]*(?:string|str|&str|\[\]byte|bytes|char\*?)(?![a-z]))?"""
    rb"""[ \t]*(?:[:=>,()!]|[.?+]=|-[ \t]*\$?["']|@?["']|[ \t]value[ \t]*=))"""
)
# Password words also take a value after a plain space, in three shapes only, so that prose
# ("password reset flow") costs nothing more: a verb or "for <who>" before it ("the password
# is hunter2", "password for root: x"), a value that ends its line ("password hunter2", .netrc),
# or a value before the next .netrc keyword (machine h login u password p machine ...).
_WORD_AHEAD = (
    rb"(?=" + _NAME_REST + rb"[ \t]+(?:(?:is|was|for|of|on|set|changed|would|will|here|now|still"
    rb"|->?|=)[ \t]|[^\s]{1,200}[ \t]*(?:\r?\n|$)|[^\s]{1,200}[ \t]+(?:machine|account|macdef|default)"
    rb"[ \t]))"
)
_NAME_TRIGGERS = (rb"cr(?:[e3]t|ed)", rb"u(?<=au)th", rb"g(?<=sig)", rb"k(?:ey|(?<=tok)en|(?<=cook)ie)")
# "pass" takes a value after a space only as part of password, passwd, passphrase, passcode
# ("the tests pass now" is prose).
_PASSWORD_TRIGGER = (
    rb"p(?:ass(?:(?![a-z])" + _VALUE_AHEAD + rb"|(?=word|wd|phrase|code)(?:" + _VALUE_AHEAD
    + rb"|" + _WORD_AHEAD + rb"))|(?:wd|w(?![a-z]))(?:" + _VALUE_AHEAD + rb"|" + _WORD_AHEAD + rb"))"
)
# Every alternative starts with a literal: that lets the regex engine skip to candidates.
LOCATOR = re.compile(
    b"|".join(trigger + _VALUE_AHEAD for trigger in _NAME_TRIGGERS)
    + rb"|" + _PASSWORD_TRIGGER
    + rb"|b(?:earer(?=[ \t]+[a-z0-9._~+/-]{16})|undle_|(?=y[ \t]+['\"]))|://"
    rb"|-(?<![a-z0-9_.]-)(?:u(?=(?:ser)?[ \t=])|p(?=[^\s=-]|[ \t]+[^\s-])|a(?=[ \t]+[^\s-])"
    rb"|w(?=[^\s=-]|[ \t]+[^\s-]))|-(?=-(?:[a-z][a-z0-9-]{0,40}?)?"
    rb"(?:key|ken|pass|pwd|auth|cr[e3]t|sig|cred)[a-z0-9_-]*(?:=|[ \t]+[^\s-]))-"
)
# Where the anchored header patterns start, relative to their trigger ("uth" is 1 into
# "authorization"). Name triggers need no offset: the name is scanned in both directions.
TRIGGER_BACK = {b"uth": 1, b"kie": 3}
# Every context secret needs one of these near it, or "bearer" / a password word: texts
# without any skip pass 2.
SEPARATOR_HINTS = ("=", ":", "--", "- '", '- "', " -p", " -a", " -w", ">", '("', "('")
WORD_HINTS = ("earer", "EARER", "ass", "ASS", "pw", "PW", "Pw", "by '", 'by "', "BY '", 'BY "')

# A name: letters, digits, _ . - (config.api_key, --api-key, X-Amz-Signature).
NAME_SHAPE = _shape(_ALNUM + "_.-")
MAX_NAME = 64
# A rejected bare value longer than this is skipped whole rather than searched for names.
MAX_REREAD = 64

# A bare value runs to whitespace, a quote or a backslash, and through & , ; unless one starts
# the next pair (&next=, ;Server=, ,id=) or ends the value (a comma before a space or the end).
_BARE = r"""(?:[^\s"'`\\&,;]|[&,;](?![A-Za-z_][\w.\[\]-]{0,64}=|[\s&,;]|$))+"""
# A value: double-quoted (JSON escapes allowed; @"..." in Objective-C), single-quoted (also
# bash $'...'), backticks, \"escaped\" (JSON inside a string), or bare up to whitespace, a
# quote or a backslash (Tr0ub4dor&3xyz, A,.:-!, see _BARE). Quoted values are bounded.
_VALUE = (
    r"""(?:[$@]?"(?P<dq>(?:[^"\\\n]|\\.){1,4000})"|\$?'(?P<sq>[^'\n]{1,4000})'"""
    r"""|`(?P<bq>[^`\n]{1,4000})`|\\"(?P<eq>[^"\\\n]{1,4000})\\"|(?P<bare>""" + _BARE + "))"
)
_QUOTED_VALUE = (
    r"""(?:[$@]?"(?P<dq>(?:[^"\\\n]|\\.){1,4000})"|\$?'(?P<sq>[^'\n]{1,4000})'"""
    r"""|`(?P<bq>[^`\n]{1,4000})`|\\"(?P<eq>[^"\\\n]{1,4000})\\")"""
)
# After a name: its closing quote ("apiKey": ..., or \"apiKey\": inside a JSON string) or
# bracket, a C array or a type, then the separator.
_AFTER_NAME = (
    r"""(?P<close>\\?["']?\]?(?:\[\d{0,4}\])?)"""
    r"""(?:[ \t]*:?[ \t]*(?:string|str|String|&str|\[\]byte|bytes|char\*?)(?![A-Za-z]))?"""
    r"""(?P<pre>[ \t]*)"""
)
ASSIGNMENT = re.compile(
    _AFTER_NAME
    + r"""(?P<sep>=>|:{1,3}=|[?.+]=|={1,3}(?!=)|!==?|:(?![:/])|(?<=[ \t])-(?=[ \t]*\$?["']))"""
    r"""(?P<post>[ \t]*)""" + _VALUE
)
# Forms that only take a quoted value: "NAME", "value" (setProperty), name("value"),
# name.assign("value"), name "value" (SQL PASSWORD 'x', C), key="Password" value="x".
QUOTED_FORM = re.compile(
    _AFTER_NAME
    + r"""(?P<sep>,[ \t]*|\(|\.assign\(|[ \t]+|[ \t]+value[ \t]*=[ \t]*)(?P<post>)""" + _QUOTED_VALUE
)
# A command-line flag takes its value after = or after spaces (--token abc).
FLAG_VALUE = re.compile(r"(?P<close>)(?P<pre>)(?P<sep>=|[ \t]+)(?P<post>)" + _VALUE)
# A comparison written the other way round: if ("value" == password).
REVERSED_COMPARISON = re.compile(r"""(?P<q>["'])(?P<secret>[^"'\n]{1,200})(?P=q)[ \t]*[!=]==?[ \t]*\Z""")
# <password>value</password>: the text of an element named like a secret.
XML_TEXT = re.compile(r">[ \t\r\n]*(?P<secret>[^<>\s](?:[^<>\n]{0,400}[^<>\s])?)[ \t\r\n]*</")
# Prose and .netrc: "the password is X", "password for root: X", "pw was 'X'", "password X"
# (.netrc: no words between, which the handler checks). The words between are a short
# grammar: an optional "for <who>", then a verb or a colon (in lower case, as prose has them).
_COPULA = r"(?:is|was|=|-|->|set[ \t]+to|changed[ \t]+to|would[ \t]+be|will[ \t]+be)"
PROSE_VALUE = re.compile(
    r"""(?P<gap>(?:[ \t]+(?:for|of|on)[ \t]+[^\s:="'`]{1,40})?(?:[ \t]+(?:here|now|still))?"""
    r"""(?:[ \t]*:|[ \t]+""" + _COPULA + r"""(?=[ \t]))(?:[ \t]+(?:now|still))?|)"""
    r"""[ \t]+(?P<q>["'`]?)(?P<secret>[^\s"'`]{0,199}[^\s"'`.,:;!?)])(?P=q)"""
)

# Anchored at the hit; re.I because the hit was found in lower-cased text.
AUTH_HEADER = re.compile(
    r"""authorization["']?[ \t]*[:=][ \t]*["']?"""
    r"""(?:(?P<scheme>bearer|basic|token|bot|digest|negotiate|apikey|api-token|api-key|sso-key"""
    r"""|key|ssws|pvetoken|splunk|gitlab)[ \t]+)?"""
    r"""(?P<secret><[^<>\n]{1,100}>|[^\s"',;]+)""",
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
# A key as the whole userinfo: https://<key>@o1.ingest.sentry.io/1, https://<token>@github.com.
URL_KEY_USER = re.compile(r"""://(?P<secret>[A-Za-z0-9_.~+%-]{16,200})@""")
# The user is a plain login or e-mail, so "date -u +%H:%M" and "python -u E:\\x.py" stay.
CURL_USER = re.compile(
    r"""(?:--user|-u)(?:[ \t]+|=)["']?(?P<user>[A-Za-z0-9_.@{}-]{0,100})["']?:["']?"""
    r"""(?P<secret>[^\s"'\\/][^\s"']{0,200})"""
)
# curl -u "<key>:": an API key as the user and no password (Stripe, Mailgun and others).
CURL_KEY_USER = re.compile(
    r"""(?:--user|-u)(?:[ \t]+|=)(?P<q>["']?)(?P<secret>[^\s"':]{8,200}):(?P=q)(?:\s|$)"""
)
# Bundler keeps per-host credentials in BUNDLE_<HOST>, dots spelled "__"
# (BUNDLE_GEMS__EXAMPLE__COM=user:password); BUNDLE_BUILD__<gem> is build configuration.
BUNDLER_CREDENTIAL = re.compile(
    r"""BUNDLE_(?!BUILD__)[A-Z0-9]+(?:_[A-Z0-9]+)*__[A-Z0-9_]+["']?[ \t]*[:=][ \t]*["']?"""
    r"""(?P<secret>[^\s"']+)"""
)
# The commands whose short flag is a password (mysql -pS3cret, sshpass -p 'x', docker login -p x,
# redis-cli -a x, ldapsearch -w x), and whether the value may be glued to the flag and may
# follow it after a space. mysql's "-p db" is a prompt for the password, then the database.
_MYSQL = ("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck", "mysqlsh",
          "mariadb", "mariadb-dump")
_LDAP = ("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd",
         "ldapmodrdn", "ldapcompare", "ldapexop", "ldapurl")
# "<tool> login" takes -p like docker's (helm's is "helm registry login").
LOGIN_TOOLS = frozenset({"docker", "podman", "buildah", "skopeo", "nerdctl", "oras", "registry",
                         "finch"})
PASSWORD_FLAGS: dict[str, dict[str, tuple[bool, bool]]] = {
    "p": {**{c: (True, False) for c in _MYSQL}, "sshpass": (True, True), "login": (True, True)},
    "a": {"redis-cli": (False, True), "keydb-cli": (False, True)},
    "w": {c: (True, True) for c in _LDAP},
}
SHORT_FLAG_VALUE = re.compile(r"""-(?P<flag>[paw])(?P<space>[ \t]*)"""
                              r"""(?:"(?P<dq>[^"\n]{1,400})"|'(?P<sq>[^'\n]{1,400})'|(?P<bare>[^\s"'`;|&]+))""")
# SQL: IDENTIFIED BY 'x', IDENTIFIED WITH plugin BY 'x'.
SQL_IDENTIFIED = re.compile(r"identified(?:[ \t]+with[ \t]+\w+)?[ \t]+\Z", re.IGNORECASE)
SQL_BY_VALUE = re.compile(r"""by[ \t]+(?P<q>['"])(?P<secret>[^'"\n]{1,400})(?P=q)""", re.IGNORECASE)
# A Kubernetes Secret manifest: kind: Secret, and a data: or stringData: block.
K8S_KIND = re.compile(r"""^[ \t]*kind:[ \t]*["']?secret["']?[ \t]*$""", re.IGNORECASE | re.MULTILINE)
K8S_DATA = re.compile(r"""^(?P<indent>[ \t]*)(?:data|stringData):[ \t]*$""", re.MULTILINE)
K8S_ENTRY = re.compile(
    r"""^[ \t]+[\w.-]+:[ \t]*(?:(?:\||>)[-+]?[ \t]*\n(?P<block>(?:[ \t]+\S[^\n]*\n?)+)"""
    r"""|["']?(?P<value>[^\s"'#][^\s"']*)["']?)""",
    re.MULTILINE,
)
