"""What a piece of code is: its symbols (name, kind, signature, doc) and a short excerpt.

A unit that reads or edits code keeps these so that a plain description of what a function
does finds the unit that changed it (the doc line says it in words; the signature and the
excerpt carry the identifiers). Inputs are an Edit's new string, a Write's content or a
Read's text, so they are often fragments and may carry `cat -n` line numbers; both are
handled. Python is read with `ast` (a fragment is dedented, its leading partial block dropped
and its tail cut until it parses) and by line patterns for what `ast` could not reach; the
other languages by line patterns, with the comment above a declaration as its doc. Work is
bounded: at most SCAN_CHARS of the text and lines of at most LINE_CHARS are looked at.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass
from pathlib import PurePosixPath

from claude_mem.pipeline.local.text import FACT_CHARS, clip

__all__ = ["Symbol", "code_excerpt", "code_symbols", "symbol_facts", "without_line_numbers"]

SCAN_CHARS = 200_000  # of one piece of code
LINE_CHARS = 500  # longer lines are data (minified code, tables), not declarations
SIGNATURE_CHARS = 120
DOC_CHARS = 160
MAX_SYMBOLS = 12
MAX_FACTS = 6
PARSE_ATTEMPTS = 4  # tail cuts tried on a Python fragment that does not parse

_SUFFIX_LANGUAGE = {
    **dict.fromkeys(("py", "pyi", "pyw"), "python"),
    **dict.fromkeys(("js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts"), "js"),
    "go": "go",
    "rs": "rust",
    **dict.fromkeys(("java", "kt", "kts", "scala"), "java"),
    **dict.fromkeys(("c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx", "m", "mm"), "c"),
    **dict.fromkeys(("sh", "bash", "zsh", "ksh"), "shell"),
}


@dataclass(frozen=True, slots=True)
class Symbol:
    """One declaration: `name` qualified by its class or receiver (`Invoice.total`),
    `signature` what follows the name on one line (`(lines) -> Decimal`), `doc` the first
    sentence of its docstring or leading comment ('' when it has none)."""

    name: str
    kind: str  # function, method, class, interface, struct, enum, trait, type, const
    signature: str = ""
    doc: str = ""


# --- line numbers ----------------------------------------------------------------------------

_NUMBERED = re.compile(r"^ *\d{1,7}(?:\t|→)")


def without_line_numbers(code: str) -> str:
    """`code` without the `     1\\t` / `1→` prefixes a Read adds to every line (only when
    nearly every line has one, so code that starts with a number keeps it)."""
    lines = code[:SCAN_CHARS].splitlines()
    filled = [line for line in lines if line.strip()]
    numbered = sum(1 for line in filled if _NUMBERED.match(line))
    if not filled or numbered * 5 < len(filled) * 4:
        return code[:SCAN_CHARS]
    return "\n".join(_NUMBERED.sub("", line, count=1) for line in lines)


# --- shared wording ----------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)[.!?](?=\s|$)")


def _first_sentence(text: str) -> str:
    """The first sentence of the first paragraph, on one line, bounded."""
    paragraph = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    line = " ".join(paragraph.split())
    end = _SENTENCE_END.search(line)
    return clip(line[: end.end()] if end else line, DOC_CHARS)


def _signature(text: str) -> str:
    return clip(text, SIGNATURE_CHARS)


# --- Python, by ast ------------------------------------------------------------------------------

_BLOCK_START = re.compile(r"^(?:@|(?:async[ \t]+)?def[ \t]|class[ \t])")


def _python_tree(code: str) -> tuple[ast.Module, list[str], int] | None:
    """A parse of `code`, or of the largest piece of it that parses: dedented, from its first
    top-level def/class/decorator when the head is a partial block, with its tail cut at the
    line a syntax error names. Returns the tree, the lines it was parsed from and the index
    of its first line in `code`."""
    lines = textwrap.dedent(code).splitlines()
    starts = [0, *[i for i, line in enumerate(lines) if _BLOCK_START.match(line)][:1]]
    for start in dict.fromkeys(starts):
        piece = lines[start:]
        for _ in range(PARSE_ATTEMPTS):
            try:
                return ast.parse("\n".join(piece)), lines, start
            except (SyntaxError, ValueError) as exc:  # ValueError: a NUL byte
                bad = getattr(exc, "lineno", None) or len(piece)
                cut = min(bad, len(piece)) - 1
                if cut <= 0:
                    break
                piece = piece[:cut]
    return None


_Found = list[tuple[int, Symbol]]  # (line index in the code, symbol)
# A method's own instance or class is implied by its name (also in a fragment's method).
_RECEIVER = re.compile(r"^(?:self|cls)(?:, (?:/, )?|$)")
_Def = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef


def _python_ast_symbols(code: str) -> _Found:
    parsed = _python_tree(code)
    if parsed is None:
        return []
    tree, lines, start = parsed
    found: _Found = []

    def visit(body: list[ast.stmt], owner: str) -> None:
        for node in body:
            if not isinstance(node, _Def):
                continue
            name = f"{owner}{node.name}"
            doc = _python_doc(node, lines, start)
            line = start + node.lineno - 1
            if isinstance(node, ast.ClassDef):
                bases = ", ".join(ast.unparse(base) for base in node.bases)
                found.append(
                    (line, Symbol(name, "class", _signature(f"({bases})" if bases else ""), doc))
                )
                visit(node.body, f"{name}.")
                continue
            params = _RECEIVER.sub("", ast.unparse(node.args), count=1)
            returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
            signature = _signature(f"({params}){returns}")
            found.append((line, Symbol(name, "method" if owner else "function", signature, doc)))

    visit(tree.body, "")
    return found


def _python_doc(node: _Def, lines: list[str], start: int) -> str:
    """The docstring's first sentence, else the comment above the definition (its
    decorators), else a comment opening its body."""
    docstring = ast.get_docstring(node)
    if docstring:
        return _first_sentence(docstring)
    first = start + min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
    above = _comment_above(lines, first, ("#",))
    if above or not node.body:
        return above
    body = start + node.body[0].lineno - 1
    return _comment_above(lines, body, ("#",))


# --- every language, by line patterns ---------------------------------------------------------

_KEYWORDS = frozenset(
    re.findall(
        r"\w+",
        "if for while switch catch return else elif do try with match case new delete throw"
        " sizeof typeof await yield assert print super this self",
    )
)
_PARAMS = r"\((?P<params>[^()]*(?:\([^()]*\)[^()]*)*)\)"

# (kind, pattern); a pattern names `name`, and may name `params`, `rest` and `owner`.
_PATTERNS: dict[str, list[tuple[str, re.Pattern[str]]]] = {
    "python": [
        ("class", re.compile(r"^\s*class\s+(?P<name>\w+)\s*(?P<params>\([^)]*\))?\s*:")),
        (
            "function",
            re.compile(
                r"^\s*(?:async\s+)?def\s+(?P<name>\w+)\s*" + _PARAMS + r"\s*(?P<rest>->[^:]+)?:"
            ),
        ),
    ],
    "js": [
        (
            "class",
            re.compile(
                r"^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+(?P<name>[\w$]+)"
                r"(?P<rest>\s+(?:extends|implements)\s+[\w$.<>, ]+)?"
            ),
        ),
        ("interface", re.compile(r"^\s*(?:export\s+)?interface\s+(?P<name>[\w$]+)")),
        ("enum", re.compile(r"^\s*(?:export\s+)?(?:const\s+)?enum\s+(?P<name>[\w$]+)")),
        ("type", re.compile(r"^(?:export\s+)?type\s+(?P<name>[\w$]+)\s*(?:<[^=]*>)?\s*=")),
        (
            "function",
            re.compile(
                r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*(?P<name>[\w$]+)"
                r"\s*(?:<[^(]*>)?\s*" + _PARAMS + r"(?:\s*:\s*(?P<rest>[^{=]+?))?\s*(?:\{|$)"
            ),
        ),
        (
            "function",
            re.compile(
                r"^(?:export\s+)?(?:const|let|var)\s+(?P<name>[\w$]+)\s*(?::[^=]+)?=\s*"
                r"(?:async\s+)?(?:function\s*\*?\s*[\w$]*\s*)?" + _PARAMS + r"(?:\s*:\s*"
                r"(?P<rest>[^=]+?))?\s*(?:=>|\{)"
            ),
        ),
        ("const", re.compile(r"^(?:export\s+)?const\s+(?P<name>[A-Za-z_$][\w$]*)\s*(?::[^=]+)?=")),
        (
            "method",
            re.compile(
                r"^\s+(?:(?:public|private|protected|static|async|readonly|override|abstract|get|set)"
                r"\s+)*(?P<name>[\w$]+)\s*(?:<[^(]*>)?\s*"
                + _PARAMS
                + r"(?:\s*:\s*(?P<rest>[^{]+?))?\s*\{"
            ),
        ),
    ],
    "go": [
        (
            "function",
            re.compile(
                r"^func\s+(?:\(\s*\w*\s*\*?(?P<owner>\w+)[^)]*\)\s*)?(?P<name>\w+)\s*"
                r"(?:\[[^\]]*\])?\s*" + _PARAMS + r"\s*(?P<rest>[^{]*)"
            ),
        ),
        ("struct", re.compile(r"^type\s+(?P<name>\w+)\s+struct\b")),
        ("interface", re.compile(r"^type\s+(?P<name>\w+)\s+interface\b")),
        ("type", re.compile(r"^type\s+(?P<name>\w+)\s+(?!struct|interface)\w")),
    ],
    "rust": [
        ("impl", re.compile(r"^\s*impl(?:<[^>]*>)?\s+(?:[\w:<>]+\s+for\s+)?(?P<name>\w+)")),
        (
            "function",
            re.compile(
                r"^\s*(?:pub(?:\([\w:]+\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?"
                r"(?:extern\s+\"\w+\"\s+)?fn\s+(?P<name>\w+)\s*(?:<[^(]*>)?\s*"
                + _PARAMS
                + r"\s*(?P<rest>->[^{;]+)?"
            ),
        ),
        ("struct", re.compile(r"^\s*(?:pub(?:\([\w:]+\))?\s+)?struct\s+(?P<name>\w+)")),
        ("enum", re.compile(r"^\s*(?:pub(?:\([\w:]+\))?\s+)?enum\s+(?P<name>\w+)")),
        ("trait", re.compile(r"^\s*(?:pub(?:\([\w:]+\))?\s+)?trait\s+(?P<name>\w+)")),
    ],
    "java": [
        (
            "class",
            re.compile(
                r"^\s*(?:(?:public|private|protected|internal|abstract|final|static|sealed|open"
                r"|data|inner|enum|annotation)\s+)*(?:class|object)\s+(?P<name>\w+)"
            ),
        ),
        (
            "interface",
            re.compile(
                r"^\s*(?:(?:public|private|protected|sealed|fun)\s+)*interface\s+(?P<name>\w+)"
            ),
        ),
        ("enum", re.compile(r"^\s*(?:(?:public|private|protected)\s+)*enum\s+(?P<name>\w+)")),
        (
            "function",
            re.compile(
                r"^\s*(?:(?:public|private|protected|internal|override|open|suspend|inline"
                r"|operator|abstract|final)\s+)*fun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?(?P<name>\w+)"
                r"\s*" + _PARAMS + r"(?:\s*:\s*(?P<rest>[^{=]+?))?\s*(?:\{|=|$)"
            ),
        ),
        (
            "method",
            re.compile(
                r"^\s+(?:(?:public|private|protected|static|final|abstract|synchronized|native"
                r"|default)\s+)*(?:<[^>]*>\s+)?(?P<type>[\w.<>\[\]?, ]+?)\s+(?P<name>\w+)\s*"
                + _PARAMS
                + r"\s*(?:throws\s+[\w., ]+)?\s*(?:\{|;)?\s*$"
            ),
        ),
    ],
    "c": [
        (
            "class",
            re.compile(r"^\s*(?:template\s*<[^>]*>\s*)?class\s+(?P<name>\w+)(?![^{;]*;\s*$)"),
        ),
        ("struct", re.compile(r"^\s*(?:typedef\s+)?struct\s+(?P<name>\w+)\s*\{")),
        ("enum", re.compile(r"^\s*(?:typedef\s+)?enum\s+(?:class\s+)?(?P<name>\w+)\s*\{")),
        (
            "function",
            re.compile(
                r"^(?:(?:static|inline|extern|constexpr|virtual|explicit|const|unsigned|signed"
                r"|struct)\s+)*(?P<type>[\w:<>,*& ]*?[\w>*&])\s+[*&]*(?:(?P<owner>\w+)::)?"
                r"(?P<name>~?\w+)\s*" + _PARAMS + r"\s*(?P<rest>const)?\s*(?:\{|;)?\s*$"
            ),
        ),
        (
            "method",
            re.compile(
                r"^\s+(?:(?:static|inline|virtual|explicit|constexpr|const)\s+)*"
                r"(?P<type>[\w:<>,*& ]*?[\w>*&])\s+[*&]*(?P<name>~?\w+)\s*"
                + _PARAMS
                + r"\s*(?P<rest>const)?\s*(?:override\s*)?(?:\{|;)?\s*$"
            ),
        ),
    ],
    "shell": [
        (
            "function",
            re.compile(
                r"^\s*(?:function\s+(?P<name>[\w:.-]+)\s*(?:\(\s*\))?|(?P<bare>[\w:.-]+)\s*\(\s*\))\s*\{?"
            ),
        ),
    ],
}
# Pattern sets tried for a language; an unknown one gets those that rarely misread others.
_PATTERN_LANGUAGES = {"": ("python", "js", "go", "rust")}
_CONTAINERS = frozenset(("class", "interface", "impl", "struct", "trait", "enum"))
_OWNED = frozenset(("function", "method"))  # kinds that become methods inside a container
_COMMENTS = {
    "python": ("#",),
    "shell": ("#",),
    "js": ("//", "*", "/*"),
    "go": ("//",),
    "rust": ("///", "//!", "//", "*", "/*"),
    "java": ("//", "*", "/*"),
    "c": ("///", "//", "*", "/*"),
}
_PY_DOCSTRING = re.compile(r"^\s*[rbuRBU]{0,2}(?:\"\"\"|''')\s*(.*?)(?:\"\"\"|'''|$)")


def _comment_above(lines: list[str], index: int, markers: tuple[str, ...]) -> str:
    """The first sentence of the comment block that ends just above `lines[index]`."""
    block: list[str] = []
    i = index - 1
    while i >= 0 and len(block) < 20:
        line = lines[i].strip()
        if line.startswith("@") and not block:  # decorators/annotations between doc and decl
            i -= 1
            continue
        marker = next((m for m in markers if line.startswith(m)), None)
        if marker is None or line.startswith(("#!", "#include", "#define", "#if", "#pragma")):
            break
        text = line.removeprefix(marker).removesuffix("*/").strip(" */!")
        block.append(text)
        i -= 1
    return _first_sentence("\n".join(reversed(block))) if block else ""


def _pattern_symbols(language: str, lines: list[str]) -> _Found:
    """Declarations found line by line, methods named after the container they sit in."""
    found: _Found = []
    containers: list[tuple[int, str]] = []  # (indent, name)
    markers = _COMMENTS.get(language, ("#", "//"))
    for index, line in enumerate(lines):
        if len(line) > LINE_CHARS or not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        while containers and containers[-1][0] >= indent:
            containers.pop()
        for kind, pattern in _PATTERNS[language]:
            match = pattern.match(line)
            if match is None:
                continue
            groups = match.groupdict()
            name = groups.get("name") or groups.get("bare") or ""
            if not name or name in _KEYWORDS or groups.get("type", "") in _KEYWORDS:
                continue
            owner = groups.get("owner") or (containers[-1][1] if containers else "")
            if kind == "method" and not containers and language not in {"c"}:
                break  # an indented call-like line outside any class is a statement
            symbol_kind = "method" if kind in _OWNED and owner else kind
            if symbol_kind == "method" and language == "c" and not owner:
                symbol_kind = "function"
            qualified = f"{owner}.{name}" if symbol_kind == "method" and owner else name
            signature = _pattern_signature(language, groups)
            doc = _pattern_doc(language, lines, index, markers)
            if kind != "impl":
                found.append((index, Symbol(qualified, symbol_kind, signature, doc)))
            if kind in _CONTAINERS:
                containers.append((indent, name))
            break
        if len(found) >= MAX_SYMBOLS * 4:
            break
    return found


def _pattern_signature(language: str, groups: dict[str, str | None]) -> str:
    params = groups.get("params")
    rest = (groups.get("rest") or "").strip()
    if params is None:
        return _signature(rest)
    if language == "python":
        shown = params if params.startswith("(") else f"({_RECEIVER.sub('', params, count=1)})"
        return _signature(f"{shown} {rest}".strip() if rest else shown)
    if language in {"java", "c"} and groups.get("type"):
        rest = f"-> {groups['type']}" if not rest else f"{rest} -> {groups['type']}"
    elif language in {"js", "java"} and rest:
        rest = f"-> {rest}"
    return _signature(f"({params}) {rest}".strip() if rest else f"({params})")


def _pattern_doc(language: str, lines: list[str], index: int, markers: tuple[str, ...]) -> str:
    if language == "python":
        for following in lines[index + 1 : index + 3]:
            docstring = _PY_DOCSTRING.match(following)
            if docstring:
                return _first_sentence(docstring[1])
            if following.strip():
                break
    return _comment_above(lines, index, markers)


# --- public API ------------------------------------------------------------------------------


def language_of(path: str) -> str:
    """The language a path's suffix names ('' when unknown)."""
    return _SUFFIX_LANGUAGE.get(PurePosixPath(path).suffix.lower().lstrip("."), "")


def code_symbols(path: str, code: str, *, limit: int = MAX_SYMBOLS) -> list[Symbol]:
    """The symbols `code` declares, in order, at most `limit`; the language comes from
    `path` (with none or an unknown suffix, Python is tried, then every line pattern)."""
    text = without_line_numbers(code)
    language = language_of(path)
    lines = text.splitlines()
    found: _Found = []
    if language in {"python", ""}:
        found += _python_ast_symbols(text)
    for pattern_language in _PATTERN_LANGUAGES.get(language, (language,)):
        found += _pattern_symbols(pattern_language, lines)
    found.sort(key=lambda item: item[0])  # stable: at one line, the ast's reading wins
    by_name: dict[str, Symbol] = {}
    for _, symbol in found:
        by_name.setdefault(symbol.name, symbol)
    return list(by_name.values())[:limit]


_FACT_PREFIX = {"function": "", "method": ""}


def symbol_facts(path: str, code: str, limit: int = MAX_FACTS) -> list[str]:
    """One fact a symbol: `invoice.total(lines) -> Decimal — Sum the line amounts exactly.`
    (the file's stem first, then kind words for non-functions; each at most FACT_CHARS)."""
    stem = PurePosixPath(path).stem if path else ""
    facts: list[str] = []
    for symbol in code_symbols(path, code, limit=limit):
        module = f"{stem}." if stem and not symbol.name.startswith(f"{stem}.") else ""
        if symbol.name == stem:
            module = ""
        kind = _FACT_PREFIX.get(symbol.kind, f"{symbol.kind} ")
        fact = f"{kind}{module}{symbol.name}{symbol.signature}"
        if symbol.doc:
            fact += f" — {symbol.doc}"
        facts.append(clip(fact, FACT_CHARS))
    return facts


def code_excerpt(code: str, limit: int) -> str:
    """The first meaningful lines of `code` within `limit` chars, cut at a line boundary
    (line numbers, a leading shebang and the common indentation removed, runs of blank
    lines folded); '…' on its own line marks a cut."""
    head = code[: max(limit, 0) * 4 + 4_096]  # far more than `limit` needs
    kept: list[str] = []
    for raw in without_line_numbers(head).splitlines():
        line = raw.rstrip()
        if (not kept and (not line or line.startswith("#!"))) or (not line and not kept[-1]):
            continue
        kept.append(line)
    lines = textwrap.dedent("\n".join(kept)).strip("\n").splitlines()
    whole = "\n".join(lines)
    if len(whole) <= limit and len(head) == len(code):
        return whole
    shown: list[str] = []
    used = 2  # the closing "\n…"
    for line in lines:
        if used + len(line) + 1 > limit:
            break
        shown.append(line)
        used += len(line) + 1
    while shown and not shown[-1]:
        shown.pop()
    if not shown:
        return clip(lines[0], limit) if lines and limit > 0 else ""
    return "\n".join(shown) + "\n…"


EXCERPT_CHARS = 300  # of the new code a unit keeps


def code_facts(path: str, code: str) -> list[str]:
    """What a piece of new code is, as facts: its symbols with signature and doc, then a
    bounded excerpt of it (for code that defines nothing, the excerpt alone)."""
    if not code.strip():
        return []
    excerpt = code_excerpt(code, EXCERPT_CHARS)
    return [*symbol_facts(path, code), *([f"Code: {excerpt}"] if excerpt else [])]
