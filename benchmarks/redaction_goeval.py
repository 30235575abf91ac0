"""Just enough Go to read gitleaks' rule files (helper of redaction_corpus.py, not a test).

gitleaks' ``cmd/generate/config/rules/*.go`` build each rule's true and false positives with
string literals, ``+``, ``fmt.Sprintf``, ``append`` and generators (``secrets.NewSecret`` makes
a random string from a regex, ``utils.GenerateSampleSecrets`` wraps a secret in ~25 config and
code lines). This module tokenizes a rule file, runs the statements of each rule function
that build ``r``, ``tps`` and ``fps``, and evaluates those calls in Python. An expression it
cannot evaluate raises ``Unsupported``; the caller counts and skips that vector.

Random strings come from a regex (``regex_sample``), so every run of the corpus script with the
same seed gives the same corpus.
"""

from __future__ import annotations

import base64
import random
import re
import re._parser as sre_parse  # type: ignore[import-not-found]
from dataclasses import dataclass, field
from typing import Any


class Unsupported(Exception):
    """An expression outside the subset this evaluator knows."""


# --- tokens -----------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""(?P<ws>[ \t\r]+)|(?P<comment>//[^\n]*|/\*[\s\S]*?\*/)|(?P<nl>\n)"""
    r"""|(?P<raw>`[^`]*`)|(?P<str>"(?:[^"\\\n]|\\.)*")|(?P<rune>'(?:[^'\\\n]|\\.)+')"""
    r"""|(?P<num>\d+(?:\.\d+)?)|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)"""
    r"""|(?P<op>\.\.\.|:=|==|!=|&&|\|\||<-|\+=|[-+*/%&|^<>=!.,;:(){}\[\]])"""
)


@dataclass
class Tok:
    kind: str
    text: str


def tokenize(source: str) -> list[Tok]:
    tokens: list[Tok] = []
    pos = 0
    while pos < len(source):
        match = _TOKEN.match(source, pos)
        if match is None:
            raise Unsupported(f"cannot tokenize at {source[pos:pos + 20]!r}")
        pos = match.end()
        kind = match.lastgroup or ""
        if kind in ("ws",):
            continue
        if kind == "comment":
            if "\n" in match.group():
                tokens.append(Tok("nl", "\n"))
            continue
        tokens.append(Tok(kind, match.group()))
    return tokens


def go_string(tok: Tok) -> str:
    if tok.kind == "raw":
        return tok.text[1:-1].replace("\r", "")
    body = tok.text[1:-1]
    return re.sub(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)", _unescape, body)


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1)
    simple = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "\a",
              "b": "\b", "f": "\f", "v": "\v"}
    if code in simple:
        return simple[code]
    if code[0] in "xuU":
        return chr(int(code[1:], 16))
    if code.isdigit():
        return chr(int(code, 8))
    return "\\" + code


# --- Go regex (RE2) -> Python ------------------------------------------------------------------

_POSIX = {"alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "digit": "0-9", "lower": "a-z", "upper": "A-Z",
          "space": r"\s", "xdigit": "0-9a-fA-F", "word": r"\w", "punct": r"!-/:-@\[-`{-~"}


def go_regex_to_python(pattern: str) -> str:
    """RE2 syntax -> Python ``re``: POSIX classes, ``\\z``, and flags set in the middle of a
    group (``a(?i)b``, which Python refuses) become scoped groups ``a(?i:b)``."""
    pattern = re.sub(r"\[:(\w+):\]", lambda m: _POSIX[m.group(1)], pattern)
    pattern = pattern.replace(r"\z", r"\Z").replace("(?P<", "(?P<")
    out: list[str] = []
    # Stack of open groups; each holds how many scoped flag groups to close at its end.
    stack: list[int] = [0]
    i = 0
    in_class = False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
            out.append(ch)
            i += 1
            continue
        if ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            if i < len(pattern) and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < len(pattern) and pattern[i] == "]":
                out.append("\\]")
                i += 1
            continue
        flags = re.match(r"\(\?([a-zA-Z-]+)\)", pattern[i:])
        if flags:
            at_start = not "".join(out)
            if at_start and "-" not in flags.group(1):
                out.append(flags.group())
            else:
                out.append(f"(?{flags.group(1)}:")
                stack[-1] += 1
            i += flags.end()
            continue
        if ch == "(":
            stack.append(0)
            out.append(ch)
        elif ch == ")":
            out.append(")" * stack.pop())
            out.append(ch)
        elif ch == "|" and stack[-1]:
            # An alternation ends the flag's scope in RE2 too (it applies to the branch).
            out.append(")" * stack[-1])
            stack[-1] = 0
            out.append(ch)
        else:
            out.append(ch)
        i += 1
    out.append(")" * stack[0])
    return "".join(out)


# --- random strings from a regex -------------------------------------------------------------


def regex_sample(pattern: str, rng: random.Random) -> str:
    """A random string the (Go) regex matches, like gitleaks' reggen: unbounded repeats take
    their minimum plus a little."""
    parsed = sre_parse.parse(go_regex_to_python(pattern))
    out: list[str] = []
    _emit(list(parsed), rng, out, ignore_case=bool(parsed.state.flags & re.IGNORECASE))
    return "".join(out)


_CATEGORY = {
    sre_parse.CATEGORY_DIGIT: "0123456789",
    sre_parse.CATEGORY_WORD: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
    sre_parse.CATEGORY_SPACE: " ",
}


def _emit(items: list[Any], rng: random.Random, out: list[str], ignore_case: bool) -> None:
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "NOT_LITERAL":
            out.append(rng.choice([c for c in "abcdefghijk0123" if ord(c) != arg]))
        elif name == "ANY":
            out.append(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789"))
        elif name == "IN":
            out.append(_pick_class(arg, rng, ignore_case))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = arg
            if high == sre_parse.MAXREPEAT:
                high = low + rng.randint(0, 8)
            for _ in range(rng.randint(low, high)):
                _emit(list(sub), rng, out, ignore_case)
        elif name == "SUBPATTERN":
            _group, add_flags, del_flags, sub = arg
            case = (ignore_case or bool(add_flags & re.IGNORECASE)) and not del_flags & re.IGNORECASE
            _emit(list(sub), rng, out, case)
        elif name == "BRANCH":
            _emit(list(rng.choice(arg[1])), rng, out, ignore_case)
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        else:
            raise Unsupported(f"regex op {name}")


def _pick_class(items: list[Any], rng: random.Random, ignore_case: bool) -> str:
    chars: list[str] = []
    negate = False
    for op, arg in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            chars.append(chr(arg))
        elif name == "RANGE":
            chars.extend(chr(c) for c in range(arg[0], arg[1] + 1))
        elif name == "CATEGORY":
            chars.extend(_CATEGORY.get(arg, ""))
    if negate:
        pool = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" if c not in chars]
        return rng.choice(pool)
    choice = rng.choice(chars)
    if ignore_case and choice.isalpha():
        choice = rng.choice([choice.lower(), choice.upper()])
    return choice


# --- gitleaks' helpers, read from the checkout ------------------------------------------------


@dataclass
class Utils:
    """What gitleaks' ``cmd/generate/config/utils`` package provides, read from the checkout at
    run time (nothing of it is copied here): its string constants, its one-line pattern
    helpers (``Hex``, ``AlphaNumeric``, ...) and the sample forms of ``GenerateSampleSecrets``."""

    consts: dict[str, str]
    helpers: dict[str, tuple[list[str], list[Tok]]]
    sample_forms: list[str]

    @classmethod
    def load(cls, sources: list[str], rng: random.Random) -> Utils:
        consts: dict[str, str] = {}
        helpers: dict[str, tuple[list[str], list[Tok]]] = {}
        forms: list[str] = []
        for source in sources:
            tokens = tokenize(source)
            for name, value in package_values(tokens, rng).items():
                if isinstance(value, str):
                    consts[name] = value
            for name, (params, body) in function_signatures(tokens).items():
                statements = split_statements(body)
                if len(statements) == 1 and statements[0][0].text == "return":
                    helpers[name] = (params, statements[0][1:])
                if name == "GenerateSampleSecrets":
                    forms = _sample_forms(body)
        return cls(consts, helpers, forms)

    def samples(self, identifier: str, secret: str) -> list[str]:
        return [form.replace("{i}", identifier).replace("{I}", identifier.upper())
                .replace("{s}", secret) for form in self.sample_forms]

    def semi_generic_regex(self, identifiers: list[str], secret: str, case_insensitive: bool) -> str:
        c = self.consts
        idents = c["identifierPrefix"] + "|".join(identifiers) + c["identifierSuffix"]
        if case_insensitive:
            head = c["caseInsensitive"] + idents
        else:
            head = c["identifierCaseInsensitivePrefix"] + idents + c["identifierCaseInsensitiveSuffix"]
        return head + c["operator"] + c["secretPrefix"] + secret + c["secretSuffix"]

    def unique_token_regex(self, secret: str, case_insensitive: bool) -> str:
        c = self.consts
        flag = c["caseInsensitive"] if case_insensitive else ""
        return flag + c["secretPrefixUnique"] + secret + c["secretSuffix"]


def _sample_forms(body: list[Tok]) -> list[str]:
    """The values of the ``samples := map[string]string{...}`` literal."""
    start = next(i for i, t in enumerate(body) if t.text == "samples")
    brace = next(i for i in range(start, len(body)) if body[i].text == "{")
    forms = []
    for element in split_args(body[brace + 1 : _matching(body, brace)]):
        colon = _index(element, ":")
        if colon > 0 and element[colon + 1].kind in ("str", "raw"):
            forms.append(go_string(element[colon + 1]))
    return forms


# --- evaluation -------------------------------------------------------------------------------


@dataclass
class Rule:
    rule_id: str = ""
    regex: str | None = None
    secret_group: int = 0
    unique_token: bool = False  # built by GenerateUniqueTokenRegex: the token's own format


@dataclass
class Generated:
    """A string plus the random pieces (from NewSecret) inside it."""

    text: str
    pieces: list[str] = field(default_factory=list)
    wrapped: bool = False  # made by GenerateSampleSecret(s): the value under a token name

    def __add__(self, other: Any) -> Generated:
        other = as_generated(other)
        return Generated(self.text + other.text, self.pieces + other.pieces)


def as_generated(value: Any) -> Generated:
    if isinstance(value, Generated):
        return value
    if isinstance(value, str):
        return Generated(value)
    raise Unsupported(f"not a string: {type(value).__name__}")


@dataclass
class RuleCases:
    rule: Rule
    tps: list[Generated]
    fps: list[Generated]
    skipped: int


class Evaluator:
    """Evaluates the rule functions of one file. ``skipped`` counts vectors it gave up on."""

    def __init__(self, rng: random.Random, package_values: dict[str, Any], utils: Utils | None) -> None:
        self.rng = rng
        self.package_values = package_values
        self.utils = utils
        self.skipped = 0

    # statements

    def run_function(self, tokens: list[Tok]) -> RuleCases | None:
        env: dict[str, Any] = {}
        self.skipped = 0
        for statement in split_statements(tokens):
            self._statement(statement, env)
        rule = env.get("r")
        if not isinstance(rule, Rule) or not rule.rule_id:
            return None
        return RuleCases(rule, env.get("__tps", []), env.get("__fps", []), self.skipped)

    def _statement(self, toks: list[Tok], env: dict[str, Any]) -> None:
        if not toks:
            return
        head = toks[0].text
        if head == "return":
            self._return(toks[1:], env)
            return
        if head in ("for", "if", "switch", "go", "defer"):
            if any(t.text in ("tps", "fps") for t in toks):
                self.skipped += 1
            return
        if head == "var" and len(toks) >= 2 and toks[1].text == "(":
            for inner in split_statements(toks[2 : _matching(toks, 1)]):
                self._statement([Tok("ident", "var")] + inner, env)
            return
        if head == "var" and len(toks) >= 2:
            name = toks[1].text
            eq = _index(toks, "=")
            env[name] = self._expr_safe(toks[eq + 1 :], env) if eq > 0 else []
            return
        for op in (":=", "=", "+="):
            at = _index(toks, op)
            if at == 1 and toks[0].kind == "ident":
                name = toks[0].text
                value = self._expr_safe(toks[2:], env, name in ("tps", "fps"))
                if op == "+=" and name in env:
                    value = env[name] + value
                env[name] = value
                return
            if at == 3 and toks[0].text == "r" and toks[1].text == ".":
                rule = env.get("r")
                if isinstance(rule, Rule):
                    self._rule_field(rule, toks[2].text, toks[4:], env)
                return

    def _return(self, toks: list[Tok], env: dict[str, Any]) -> None:
        if len(toks) > 3 and toks[0].text == "utils" and toks[2].text in ("Validate", "ValidateWithPaths"):
            args = split_args(toks[4:-1])
            tps = self._expr_safe(args[1], env, True) if len(args) > 1 else []
            fps = self._expr_safe(args[2], env, True) if len(args) > 2 else []
            env["__tps"] = self._strings(tps)
            env["__fps"] = self._strings(fps)

    def _strings(self, value: Any) -> list[Generated]:
        if value is None:
            return []
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, (str, Generated)):
            value = [value]
        out: list[Generated] = []
        for item in value:
            try:
                out.append(as_generated(item))
            except Unsupported:
                self.skipped += 1
        return out

    def _expr_safe(self, toks: list[Tok], env: dict[str, Any], count: bool = False) -> Any:
        try:
            return self.expr(toks, env)
        except Unsupported:
            if count:
                self.skipped += 1
            return []

    def _rule_field(self, rule: Rule, name: str, toks: list[Tok], env: dict[str, Any]) -> None:
        try:
            if name == "RuleID":
                rule.rule_id = as_generated(self.expr(toks, env)).text
            elif name == "Regex":
                rule.regex = as_generated(self.expr(toks, env)).text
                rule.unique_token = any(t.text == "GenerateUniqueTokenRegex" for t in toks)
            elif name == "SecretGroup":
                rule.secret_group = int(self.expr(toks, env))
        except (Unsupported, ValueError, TypeError):
            pass

    # expressions

    def expr(self, toks: list[Tok], env: dict[str, Any]) -> Any:
        toks = _strip_nl(toks)
        if not toks:
            raise Unsupported("empty expression")
        parts = split_top(toks, "+")
        if len(parts) > 1:
            values = [self.expr(p, env) for p in parts]
            if all(isinstance(v, (int, float)) for v in values):
                return sum(values)
            total = as_generated(values[0])
            for value in values[1:]:
                total = total + value
            return total
        return self.primary(toks, env)

    def primary(self, toks: list[Tok], env: dict[str, Any]) -> Any:
        first = toks[0]
        if len(toks) == 1:
            if first.kind in ("str", "raw"):
                return go_string(first)
            if first.kind == "num":
                return int(first.text) if first.text.isdigit() else float(first.text)
            if first.kind == "ident":
                if first.text in env:
                    return env[first.text]
                if first.text in self.package_values:
                    return self.package_values[first.text]
                if first.text in ("nil",):
                    return None
                if first.text in ("true", "false"):
                    return first.text == "true"
            raise Unsupported(f"unknown name {first.text}")
        if first.text == "&":
            return self.primary(toks[1:], env)
        if first.text == "(" and _matching(toks, 0) == len(toks) - 1:
            return self.expr(toks[1:-1], env)
        # composite literals: []string{...}, map[string]string{...}, config.Rule{...}
        brace = _index(toks, "{")
        if brace > 0 and toks[-1].text == "}" and _matching(toks, brace) == len(toks) - 1:
            return self.composite(toks[:brace], toks[brace + 1 : -1], env)
        # calls: a.b.c(args)
        paren = _index(toks, "(")
        if paren > 0 and toks[-1].text == ")" and _matching(toks, paren) == len(toks) - 1:
            name = "".join(t.text for t in toks[:paren])
            args = split_args(toks[paren + 1 : -1])
            return self.call(name, args, env)
        raise Unsupported("expression " + " ".join(t.text for t in toks[:8]))

    def composite(self, type_toks: list[Tok], body: list[Tok], env: dict[str, Any]) -> Any:
        type_name = "".join(t.text for t in type_toks)
        elements = split_args(body)
        if type_name == "config.Rule":
            rule = Rule()
            for element in elements:
                element = _strip_nl(element)
                if len(element) > 2 and element[1].text == ":":
                    self._rule_field(rule, element[0].text, element[2:], env)
            return rule
        if type_name.startswith("map["):
            out: dict[str, Any] = {}
            for element in elements:
                element = _strip_nl(element)
                colon = _index_top(element, ":")
                if colon < 0:
                    continue
                try:
                    key = as_generated(self.expr(element[:colon], env)).text
                    out[key] = self.expr(element[colon + 1 :], env)
                except Unsupported:
                    self.skipped += 1
            return out
        if type_name.startswith("[]"):
            items: list[Any] = []
            for element in elements:
                try:
                    items.append(self.expr(element, env))
                except Unsupported:
                    self.skipped += 1
            return items
        return None  # allowlists and other structs: not needed

    def call(self, name: str, args: list[list[Tok]], env: dict[str, Any]) -> Any:
        if name == "append":
            base = list(self.expr(args[0], env) or [])
            for arg in args[1:]:
                arg = _strip_nl(arg)
                if arg and arg[-1].text == "...":
                    try:
                        base.extend(self.expr(arg[:-1], env) or [])
                    except Unsupported:
                        self.skipped += 1
                else:
                    try:
                        base.append(self.expr(arg, env))
                    except Unsupported:
                        self.skipped += 1
            return base
        values = [self.expr(a, env) for a in args]
        text = [as_generated(v).text if isinstance(v, (str, Generated)) else v for v in values]
        if name == "regexp.MustCompile":
            return values[0]
        if name == "secrets.NewSecret":
            piece = regex_sample(text[0], self.rng)
            return Generated(piece, [piece])
        if name == "newPlausibleSecret":
            while True:
                piece = regex_sample(text[0], self.rng)
                if re.search("[1-9]", piece):
                    return Generated(piece, [piece])
        utils = self.utils
        if utils is None:
            raise Unsupported("no utils package")
        if name in ("utils.GenerateSampleSecrets", "utils.GenerateSampleSecret"):
            secret = as_generated(values[1])
            if name.endswith("s"):
                lines = utils.samples(text[0], secret.text)
            else:  # the single sample: "<id>_api_token = \"<secret>\""
                lines = [f'{text[0]}_api_token = "{secret.text}"']
            cases = [Generated(line, list(secret.pieces) or [secret.text], wrapped=True) for line in lines]
            return cases if name.endswith("s") else cases[0]
        short = name.removeprefix("utils.")
        if short in utils.helpers:
            params, body = utils.helpers[short]
            return self.expr(body, dict(zip(params, values)))
        if name == "utils.GenerateSemiGenericRegex":
            return utils.semi_generic_regex(list(text[0]), text[1], bool(text[2]))
        if name == "utils.GenerateUniqueTokenRegex":
            return utils.unique_token_regex(text[0], bool(text[1]))
        if name == "utils.MergeRegexps":
            return "|".join(as_generated(v).text for v in values)
        if name == "fmt.Sprintf":
            return self.sprintf(values)
        if name == "strings.Repeat":
            return as_generated(values[0]).text * int(values[1])
        if name in ("strings.ToUpper", "strings.ToLower"):
            value = as_generated(values[0])
            return value.text.upper() if name.endswith("Upper") else value.text.lower()
        if name in ("string", "[]byte"):
            return values[0]
        encoders = {
            "StdEncoding": base64.b64encode,
            "URLEncoding": base64.urlsafe_b64encode,
        }
        for prefix in ("b64.", "base64."):
            for raw in ("", "Raw"):
                for kind, encode in encoders.items():
                    if name == f"{prefix}{raw}{kind}.EncodeToString":
                        value = as_generated(values[0])
                        encoded = encode(value.text.encode()).decode()
                        encoded = encoded.rstrip("=") if raw else encoded
                        return Generated(encoded, [encoded] if value.pieces else [])
        raise Unsupported(f"call {name}")

    def sprintf(self, values: list[Any]) -> Generated:
        fmt = as_generated(values[0]).text
        args = list(values[1:])
        out = Generated("")
        pos = 0
        for match in re.finditer(r"%[-+# 0-9.]*[sdvqx%]", fmt):
            out = out + fmt[pos : match.start()]
            pos = match.end()
            verb = match.group()[-1]
            if verb == "%":
                out = out + "%"
                continue
            arg = args.pop(0)
            if verb == "q":
                out = out + ('"' + as_generated(arg).text + '"')
            elif isinstance(arg, (str, Generated)):
                out = out + arg
            else:
                out = out + str(arg)
        return out + fmt[pos:]


# --- token-list helpers -----------------------------------------------------------------------

_OPEN = {"(": ")", "[": "]", "{": "}"}


def _matching(toks: list[Tok], start: int) -> int:
    depth = 0
    for i in range(start, len(toks)):
        text = toks[i].text if toks[i].kind == "op" else ""
        if text in _OPEN:
            depth += 1
        elif text in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return i
    return -1


def _index(toks: list[Tok], text: str) -> int:
    depth = 0
    for i, tok in enumerate(toks):
        if tok.kind != "op":
            continue
        if tok.text == text and depth == 0:
            return i
        if tok.text in _OPEN:
            depth += 1
        elif tok.text in (")", "]", "}"):
            depth -= 1
    return -1


def _index_top(toks: list[Tok], text: str) -> int:
    return _index(toks, text)


def split_top(toks: list[Tok], sep: str) -> list[list[Tok]]:
    parts: list[list[Tok]] = [[]]
    depth = 0
    for tok in toks:
        if tok.kind == "op" and tok.text in _OPEN:
            depth += 1
        elif tok.kind == "op" and tok.text in (")", "]", "}"):
            depth -= 1
        if depth == 0 and tok.kind == "op" and tok.text == sep:
            parts.append([])
        else:
            parts[-1].append(tok)
    return [p for p in parts if _strip_nl(p)] if sep == "," else parts


def split_args(toks: list[Tok]) -> list[list[Tok]]:
    return [_strip_nl(p) for p in split_top(toks, ",")]


def _strip_nl(toks: list[Tok]) -> list[Tok]:
    return [t for t in toks if t.kind != "nl"]


_ENDS_STATEMENT = ("ident", "str", "raw", "num", "rune")


def split_statements(toks: list[Tok]) -> list[list[Tok]]:
    """Go's automatic semicolons: a newline ends a statement after an identifier, a literal or
    a closing bracket, unless brackets are still open."""
    statements: list[list[Tok]] = [[]]
    depth = 0
    for tok in toks:
        if tok.kind == "op" and tok.text in _OPEN:
            depth += 1
        elif tok.kind == "op" and tok.text in (")", "]", "}"):
            depth -= 1
        current = statements[-1]
        if tok.kind == "nl" or (tok.kind == "op" and tok.text == ";"):
            if depth == 0 and current and (current[-1].kind in _ENDS_STATEMENT
                                           or current[-1].text in (")", "]", "}")):
                statements.append([])
            elif depth > 0 and current:
                current.append(Tok("nl", "\n"))  # kept, so that a var ( ... ) block splits
            continue
        current.append(tok)
    return [s for s in statements if s]


def package_values(tokens: list[Tok], rng: random.Random) -> dict[str, Any]:
    """Top-level ``var``/``const`` values, single or grouped in ``const ( ... )``."""
    values: dict[str, Any] = {}
    evaluator = Evaluator(rng, values, None)
    depth = 0
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if depth == 0 and tok.text in ("var", "const") and i + 1 < len(tokens):
            if tokens[i + 1].text == "(":
                end = _matching(tokens, i + 1)
                statements = split_statements(tokens[i + 2 : end])
            else:
                end = i + 1
                while end < len(tokens) and tokens[end].kind != "nl":
                    if tokens[end].text in _OPEN:
                        end = _matching(tokens, end)
                    end += 1
                statements = [tokens[i + 1 : end]]
            for statement in statements:
                eq = _index(statement, "=")
                if eq > 0 and statement[0].kind == "ident":
                    try:
                        values[statement[0].text] = evaluator.expr(statement[eq + 1 :], values)
                    except Unsupported:
                        pass
            i = end + 1
            continue
        if tok.kind == "op" and tok.text in _OPEN:
            depth += 1
        elif tok.kind == "op" and tok.text in (")", "]", "}"):
            depth -= 1
        i += 1
    return values


def function_signatures(tokens: list[Tok]) -> dict[str, tuple[list[str], list[Tok]]]:
    """Top-level ``func Name(a, b type) result { body }``: name -> (parameter names, body)."""
    out: dict[str, tuple[list[str], list[Tok]]] = {}
    for name, (params, body) in _functions(tokens).items():
        names = [p[0].text for p in split_args(params) if p and p[0].kind == "ident"]
        out[name] = (names, body)
    return out


def functions(tokens: list[Tok]) -> dict[str, list[Tok]]:
    """Top-level ``func Name(...) ... { body }``: name -> body tokens."""
    return {name: body for name, (_params, body) in _functions(tokens).items()}


def _functions(tokens: list[Tok]) -> dict[str, tuple[list[Tok], list[Tok]]]:
    out: dict[str, tuple[list[Tok], list[Tok]]] = {}
    i = 0
    while i < len(tokens):
        if tokens[i].text == "func" and i + 2 < len(tokens) and tokens[i + 1].kind == "ident":
            name = tokens[i + 1].text
            params_end = _matching(tokens, i + 2)
            brace = params_end + 1
            while brace < len(tokens) and tokens[brace].text != "{":
                brace += 1
            end = _matching(tokens, brace)
            out[name] = (tokens[i + 3 : params_end], tokens[brace + 1 : end])
            i = end + 1
        else:
            i += 1
    return out
