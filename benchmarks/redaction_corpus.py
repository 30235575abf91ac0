"""Build a redaction test corpus from other projects' public test vectors (not a test).

    .venv/bin/python benchmarks/redaction_corpus.py \\
        --gitleaks /work/.mirror/gitleaks+gitleaks/repo \\
        --detect-secrets /work/.mirror/Yelp+detect-secrets/repo \\
        [--out benchmarks/redaction_corpus.jsonl] [--seed 9]

Each path is a checkout or a bare git directory (read at HEAD), as the ``fetch`` tool leaves
it. The output, one JSON object a line, is gitignored and must never be committed: those
projects' vectors stay out of this repository. Each line:

    {"source": "gitleaks"|"detect-secrets", "rule": ..., "label": "true"|"false",
     "text": ..., "secrets": [...], "near_miss": bool}

``secrets`` (true vectors) are the parts that must not show after redaction: the random
pieces gitleaks generated, else the part its rule's regex captures; for detect-secrets the
expected secret when the test names it, else the longest credential-like word. A false
vector is a ``near_miss`` when it holds (16+ characters of) a true vector's secret of the same
source (detect-secrets' "the same key plus 'extra'" cases, gitleaks' negatives that are
another rule's key), when the unique-token pattern of its gitleaks rule (one built with
GenerateUniqueTokenRegex) matches it and only an allowlist, a stop word or an entropy floor
rejects it (Google's published sample keys), or when gitleaks wrapped it as a token's value
itself (GenerateSampleSecret: telegram_api_token = "<not a Telegram token>"). A scanner with
exact formats and allowlists rejects them; a redactor may well hide them. redaction_recall.py
reports them apart.

Vectors the readers cannot rebuild (a loop, an unknown call) are counted and skipped.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import redaction_goeval as goeval  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parent / "redaction_corpus.jsonl"


class Tree:
    """Files of a checkout or of a bare git directory at HEAD."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)
        self.bare = (self.path / "HEAD").is_file() and (self.path / "objects").is_dir()

    def list(self, folder: str) -> list[str]:
        if self.bare:
            out = subprocess.run(
                ["git", f"--git-dir={self.path}", "ls-tree", "--name-only", "HEAD", folder + "/"],
                check=True, capture_output=True, text=True,
            ).stdout
            return sorted(line for line in out.splitlines() if line)
        return sorted(str(p.relative_to(self.path)) for p in (self.path / folder).iterdir())

    def read(self, name: str) -> str:
        if self.bare:
            return subprocess.run(
                ["git", f"--git-dir={self.path}", "show", f"HEAD:{name}"],
                check=True, capture_output=True, text=True,
            ).stdout
        return (self.path / name).read_text(encoding="utf-8")


def record(source: str, rule: str, label: str, text: str, secrets: list[str]) -> dict[str, Any]:
    return {"source": source, "rule": rule, "label": label, "text": text, "secrets": secrets,
            "near_miss": False}


def mark_near_misses(records: list[dict[str, Any]]) -> None:
    """A false vector holding 16+ characters of a true vector's secret of the same source
    (the key plus "extra"; another rule's key, as gitleaks' rule-against-rule negatives)."""
    chunks: dict[str, set[str]] = {}
    for rec in records:
        if rec["label"] == "true":
            found = chunks.setdefault(rec["source"], set())
            found.update(s[:16] for s in rec["secrets"] if len(s) >= 16)
    for rec in records:
        if rec["label"] == "false" and not rec["near_miss"]:
            text = rec["text"]
            rec["near_miss"] = any(chunk in text for chunk in chunks.get(rec["source"], ()))


# --- gitleaks ---------------------------------------------------------------------------------

RULES = "cmd/generate/config/rules"
UTILS = "cmd/generate/config/utils"


def gitleaks(tree: Tree, rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    utils = goeval.Utils.load([tree.read(f"{UTILS}/generate.go"), tree.read(f"{UTILS}/patterns.go")], rng)
    files = [name for name in tree.list(RULES) if name.endswith(".go") and not name.endswith("_test.go")]
    sources = {name: goeval.tokenize(tree.read(name)) for name in files}
    shared: dict[str, Any] = {}
    for tokens in sources.values():
        shared.update(goeval.package_values(tokens, rng))
    records: list[dict[str, Any]] = []
    skipped = 0
    for name, tokens in sources.items():
        for body in goeval.functions(tokens).values():
            evaluator = goeval.Evaluator(rng, shared, utils)
            cases = evaluator.run_function(body)
            if cases is None:
                continue
            skipped += cases.skipped
            rule = cases.rule
            pattern = _compile(rule.regex)
            true_texts = {tp.text for tp in cases.tps}
            for tp in cases.tps:
                secrets = _gitleaks_secrets(tp, pattern, rule.secret_group)
                if not secrets:
                    skipped += 1
                    continue
                records.append(record("gitleaks", rule.rule_id, "true", tp.text, secrets))
            for fp in cases.fps:
                if fp.text not in true_texts:  # a path-only negative (same text, other file)
                    rec = record("gitleaks", rule.rule_id, "false", fp.text, [])
                    # The rule's unique-token pattern (GenerateUniqueTokenRegex) matches: only an
                    # allowlist, a stop word or an entropy floor rejects the value (Google's
                    # published sample keys).
                    rec["near_miss"] = (rule.unique_token and pattern is not None
                                        and pattern.search(fp.text) is not None)
                    # A negative that gitleaks itself wrapped as "<name>_api_token = <value>":
                    # not this vendor's format, but a value under a token's name all the same.
                    rec["near_miss"] = rec["near_miss"] or fp.wrapped
                    records.append(rec)
    return records, skipped


def _compile(pattern: str | None) -> re.Pattern[str] | None:
    if not pattern:
        return None
    try:
        return re.compile(goeval.go_regex_to_python(pattern))
    except re.error:
        return None


def _gitleaks_secrets(tp: goeval.Generated, pattern: re.Pattern[str] | None, group: int) -> list[str]:
    pieces = [p for p in tp.pieces if len(p) >= 8]
    if pieces:
        return pieces
    if pattern is None:
        return [max(tp.pieces, key=len)] if tp.pieces else []
    match = pattern.search(tp.text)
    if match is None:
        return [max(tp.pieces, key=len)] if tp.pieces else []
    if group and match.lastindex and group <= match.lastindex and match.group(group):
        return [secret_part(match.group(group))]
    for value in match.groups():
        if value:
            return [secret_part(value)]
    return [secret_part(match.group())]


_PEM = re.compile(r"-----BEGIN[^\n]*-----\s*(?P<body>.*?)\s*(?:-----END|$)", re.S)
# A URL's path after the words that name the endpoint (services/, api/webhooks/, soap/v3/).
_URL = re.compile(r"^(?:[a-z]+://[^/\s]+|[a-z0-9-]+(?:\.[a-z0-9-]+)+)/(?:[A-Za-z]+\d*/)*(?P<path>\S+)$")
_LABEL = re.compile(r"""^[\w.-]+:[ \t]*(?:[|>][-+]?\s*)?["']?(?P<value>.*?)["']?$""", re.S)
_USER_PASSWORD = re.compile(r"""^["'{]*[^\s:"']+["'}]*:["'{]*(?P<password>[^\s:"']+?)["'}]*$""")


def secret_part(matched: str) -> str:
    """What of a rule's match is the secret by this project's rules (SPEC 6: the label stays,
    the user of user:password stays): a PEM block's body, a URL's path, the value after a
    YAML label, the password after a user."""
    for pattern, group in ((_PEM, "body"), (_URL, "path"), (_LABEL, "value"), (_USER_PASSWORD, "password")):
        match = pattern.search(matched)
        if match and match.group(group):
            return match.group(group)
    return matched


# --- detect-secrets ---------------------------------------------------------------------------

TESTS = "tests/plugins"
# Public IP addresses are not credentials; base_test.py tests the plugin machinery.
LEFT_OUT = ("ip_public_test.py", "base_test.py")
TEXT_COLUMNS = ("payload", "line", "file_content", "content")


class PyEval:
    """Evaluates the literal parts of a test module: constants, str.format, %, +, *, slices,
    textwrap.dedent. Anything else raises ``goeval.Unsupported``."""

    def __init__(self, module: ast.Module) -> None:
        self.names: dict[str, Any] = {}
        self.functions = {n.name: n for n in module.body if isinstance(n, ast.FunctionDef)}
        for node in module.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    try:
                        self.names[target.id] = self.eval(node.value)
                    except goeval.Unsupported:
                        pass

    def eval(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            raise goeval.Unsupported(node.id)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.eval(e) for e in node.elts]
        if isinstance(node, ast.BinOp):
            left, right = self.eval(node.left), self.eval(node.right)
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Mult):
                return left * right
            if isinstance(node.op, ast.Mod):
                return left % right
            raise goeval.Unsupported("operator")
        if isinstance(node, ast.Subscript):
            value = self.eval(node.value)
            if isinstance(node.slice, ast.Slice):
                lower = self.eval(node.slice.lower) if node.slice.lower else None
                upper = self.eval(node.slice.upper) if node.slice.upper else None
                return value[lower:upper]
            return value[self.eval(node.slice)]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.eval(node.operand)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise goeval.Unsupported(type(node).__name__)

    def call(self, node: ast.Call) -> Any:
        func = node.func
        args = [self.eval(a) for a in node.args]
        kwargs = {k.arg: self.eval(k.value) for k in node.keywords if k.arg}
        if isinstance(func, ast.Attribute):
            if func.attr == "format":
                return self.eval(func.value).format(*args, **kwargs)
            if func.attr == "dedent":
                return textwrap.dedent(args[0])
            if func.attr == "encode":
                return self.eval(func.value).encode()
            if func.attr == "b64encode":
                import base64

                return base64.b64encode(args[0])
        if isinstance(func, ast.Name):
            if func.id == "str":
                return str(args[0])
            if func.id == "randint":
                return args[0]
            if func.id == "parse_test_cases":  # keyword_test: (extension, [(line, expected)])
                return [[ext, line, expected] for ext, cases in args[0] for line, expected in cases]
        raise goeval.Unsupported("call")


def detect_secrets(tree: Tree) -> tuple[list[dict[str, Any]], int]:
    records: list[dict[str, Any]] = []
    skipped = 0
    for name in tree.list(TESTS):
        if not name.endswith("_test.py") or name.rsplit("/", 1)[-1] in LEFT_OUT:
            continue
        rule = name.rsplit("/", 1)[-1].removesuffix("_test.py")
        module = ast.parse(tree.read(name))
        evaluator = PyEval(module)
        for cls_params, func in _test_functions(module):
            for names, values in _parametrizations(func, evaluator):
                try:
                    rows = _rows(names, values, cls_params, evaluator, func.name)
                except goeval.Unsupported:
                    skipped += 1
                    continue
                for text, label, secret in rows:
                    secrets = secret if isinstance(secret, list) else [secret] if secret else []
                    if label and not secrets:
                        secrets = [_guess_secret(text, rule)]
                    records.append(record("detect-secrets", rule, "true" if label else "false",
                                          text, [s for s in secrets if s]))
    # one text may appear in several parametrizations: true wins, duplicates go
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for rec in records:
        key = (rec["rule"], rec["text"])
        if key not in seen or (rec["label"] == "true" and seen[key]["label"] == "false"):
            seen[key] = rec
    return list(seen.values()), skipped


def _test_functions(module: ast.Module) -> list[tuple[Any, ast.FunctionDef]]:
    out: list[tuple[Any, ast.FunctionDef]] = []

    def walk(body: list[ast.stmt], cls_params: Any) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                walk(node.body, _class_params(node) or cls_params)
            elif isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                out.append((cls_params, node))

    walk(module.body, None)
    return out


def _class_params(node: ast.ClassDef) -> Any:
    for decorator in node.decorator_list:
        if _is_parametrize(decorator):
            return decorator
    return None


def _is_parametrize(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr == "parametrize"


def _parametrizations(func: ast.FunctionDef, evaluator: PyEval) -> list[tuple[list[str], Any]]:
    out = []
    for decorator in func.decorator_list:
        if _is_parametrize(decorator):
            assert isinstance(decorator, ast.Call)
            names = [n.strip() for n in evaluator.eval(decorator.args[0]).split(",")]
            out.append((names, decorator.args[1]))
    return out


def _rows(names: list[str], values_node: ast.AST, cls_params: Any, evaluator: PyEval,
          func_name: str) -> list[tuple[str, bool, Any]]:
    values = evaluator.eval(values_node)
    rows: list[tuple[str, bool, Any]] = []
    if names == ["format", "should_be_caught"] and cls_params is not None:
        # high_entropy_strings_test: each (non_secret, secret) pair in each quoting format
        for _plugin, non_secret, secret in _class_rows(cls_params, evaluator):
            for fmt, caught in values:
                text = fmt.format(non_secret=non_secret, secret=secret)
                used = secret if "{secret}" in fmt else non_secret
                rows.append((text, bool(caught), used if caught else None))
        return rows
    columns = [n for n in names if n in TEXT_COLUMNS]
    if not columns:
        return rows
    if names == ["content", "expected_output"] and "secret" not in func_name:
        return rows  # find_account, find_username: user names, not secrets
    for value in values:
        row = dict(zip(names, value if len(names) > 1 else [value]))
        text = row[columns[0]]
        if not isinstance(text, str):
            continue
        if "expected_secret" in row:
            rows.append((text, bool(row["expected_secret"]), row["expected_secret"] or None))
        elif "expected_output" in row:
            expected = [s for s in row["expected_output"] if isinstance(s, str)]
            rows.append((text, bool(expected), expected or None))
        elif "should_flag" in row:
            rows.append((text, bool(row["should_flag"]), None))
        else:
            rows.append((text, True, None))
    return rows


def _class_rows(decorator: Any, evaluator: PyEval) -> list[list[Any]]:
    out = []
    for element in decorator.args[1].elts:
        values = []
        for part in element.elts:
            try:
                values.append(evaluator.eval(part))
            except goeval.Unsupported:
                values.append(None)  # the plugin class
        out.append(values)
    return out


_NAME_AFTER = re.compile(r"[:=](?![=]|$)")
_PRIVATE_BODY = re.compile(r"-----BEGIN[^\n]*-----\n(.*?)(?:\n-----END|$)", re.S)
_USERINFO = re.compile(r"://[^:/\s]+:([^@\s]+)@")


def _guess_secret(text: str, rule: str) -> str:
    """The part of a true vector that must not show: a private key's body, a URL's password,
    else the longest word between separators."""
    if rule == "private_key":
        match = _PRIVATE_BODY.search(text)
        return match.group(1) if match else text
    match = _USERINFO.search(text)
    if rule in ("basic_auth", "cloudant") and match:
        return match.group(1)
    # Words, leaving out names (a word right before ":" or "="): X-JFrog-Art-Api: <key>.
    separators = r"""\s"'`=:,;()<>@{}\[\]\\!""" + ("/" if "://" in text else "")
    words = [m.group() for m in re.finditer(f"[^{separators}]+", text)
             if not _NAME_AFTER.match(text, m.end())]
    return max(words, key=len) if words else text


# --- main -------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gitleaks", help="gitleaks checkout or bare git dir")
    parser.add_argument("--detect-secrets", help="detect-secrets checkout or bare git dir")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--seed", type=int, default=9)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    records: list[dict[str, Any]] = []
    if args.gitleaks:
        found, skipped = gitleaks(Tree(args.gitleaks), rng)
        records += found
        print(f"gitleaks: {len(found)} vectors, {skipped} skipped (not rebuildable)")
    if args.detect_secrets:
        found, skipped = detect_secrets(Tree(args.detect_secrets))
        records += found
        print(f"detect-secrets: {len(found)} vectors, {skipped} skipped (not rebuildable)")
    mark_near_misses(records)
    with args.out.open("w", encoding="utf-8") as out:
        for rec in records:
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} vectors to {args.out}")


if __name__ == "__main__":
    main()
