"""The provider contract is complete: code outside `pipeline/providers/` never spells a
provider's name or tests for a provider's class, it reads what a provider declares
(`registry.traits`, `registry.corpus_answerer`), and a provider that declares nothing gets the
safe defaults.

The consumer's and the corpus route's behaviour with a plugin provider installed through a
real entry point is tested in test_pipeline_consumer.py and test_corpus.py.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from claude_mem.pipeline import registry
from claude_mem.pipeline.providers.base import Traits
from claude_mem.settings import load as load_settings

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "claude_mem"
PROVIDERS = SRC / "pipeline" / "providers"
# Where naming a provider is the point: the settings' defaults and the demo's settings; and
# where the word is not a provider's: Gemini CLI marks the model's chat messages so, and
# `local` is also a search scope's name (the vocabulary declares it once).
NAMING_ALLOWED = (
    SRC / "settings.py", SRC / "demo" / "run.py", SRC / "transcripts" / "gemini.py",
    SRC / "vocabulary.py",
)  # fmt: skip


def builtin_names() -> frozenset[str]:
    """The providers our own pyproject declares in the entry-point group."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    return frozenset(project["entry-points"][registry.GROUP])


def _imported_provider_module(node: ast.AST) -> str | None:
    """A built-in provider's module (anything in the package but `base`) that `node` imports."""
    package = "claude_mem.pipeline.providers"
    if isinstance(node, ast.ImportFrom) and node.module:
        if node.module == package:
            return next((f"{package}.{a.name}" for a in node.names if a.name != "base"), None)
        if node.module.startswith(f"{package}.") and node.module != f"{package}.base":
            return node.module
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.startswith(f"{package}.") and alias.name != f"{package}.base":
                return alias.name
    return None


def _class_test(node: ast.AST) -> str | None:
    """`isinstance(x, SomeProvider)`, `issubclass(…)` or `type(x) is SomeProvider`."""
    names: list[ast.expr] = []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            second = node.args[1]
            names = list(second.elts) if isinstance(second, ast.Tuple) else [second]
    elif isinstance(node, ast.Compare) and any(isinstance(o, ast.Is | ast.IsNot) for o in node.ops):
        names = [node.left, *node.comparators]
    for name in names:
        spelled = ast.unparse(name)
        if spelled.split(".")[-1].endswith("Provider"):
            return spelled
    return None


def provider_naming(source: str, names: frozenset[str]) -> list[str]:
    """Where `source` spells a provider's name (a dict key aside: the hosts' tables share
    names with providers), imports a built-in provider's module, or tests for a provider class."""
    tree = ast.parse(source)
    keys = {id(key) for node in ast.walk(tree) if isinstance(node, ast.Dict) for key in node.keys}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in names and id(node) not in keys:
            found.append(f"line {node.lineno}: names {node.value!r}")
        if module := _imported_provider_module(node):
            found.append(f"line {getattr(node, 'lineno', 0)}: imports {module}")
        if spelled := _class_test(node):
            found.append(f"line {getattr(node, 'lineno', 0)}: tests for the class {spelled}")
    return found


def test_no_code_outside_the_providers_names_a_provider() -> None:
    names = builtin_names()
    offenders = {}
    for path in sorted(SRC.rglob("*.py")):
        if path.is_relative_to(PROVIDERS) or path in NAMING_ALLOWED:
            continue
        found = provider_naming(path.read_text("utf-8"), names)
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert not offenders, f"read the provider's declared traits instead: {offenders}"


NAMING = [
    'if name == "local":\n    pass',
    'skip = provider.name != "anthropic"',
    'if name in ("openai-compatible", "gemini"):\n    pass',
    'match name:\n    case "claude-agent-sdk":\n        pass',
    'answer = Answer(corpus, question, text, "local")',
    "from claude_mem.pipeline.providers.local import LocalProvider",
    "from claude_mem.pipeline.providers import anthropic",
    "import claude_mem.pipeline.providers.claude_cli",
    "ok = isinstance(p, LLMProvider)",
    "ok = isinstance(p, (int, claude_cli.ClaudeCliProvider))",
    "same = type(p) is AnthropicProvider",
]
NOT_NAMING = [
    'platform = {"gemini": "gemini_cli"}',  # a dict key: hosts share names with providers
    'if scope == "project":\n    pass',
    "from claude_mem.pipeline.providers.base import Provider, ProviderError",
    "ok = isinstance(exc, ProviderError) and exc.kind == 'auth'",
    "answerer = registry.corpus_answerer(provider)",
]


@pytest.mark.parametrize("source", NAMING)
def test_the_rule_sees_a_provider_named(source: str) -> None:
    assert provider_naming(source, builtin_names())


@pytest.mark.parametrize("source", NOT_NAMING)
def test_the_rule_accepts_code_that_names_none(source: str) -> None:
    assert provider_naming(source, builtin_names()) == []


# --- declared traits and their defaults ------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "traits"),
    [
        ("local", Traits(offline=True, caches_prompts=False)),
        ("anthropic", Traits(offline=False, caches_prompts=True)),
        ("openai-compatible", Traits(offline=False, caches_prompts=False)),
        ("gemini", Traits(offline=False, caches_prompts=False)),
        ("claude-agent-sdk", Traits(offline=False, caches_prompts=True)),
    ],
)
def test_builtins_declare_their_traits_and_answer_corpus_questions(
    name: str, traits: Traits
) -> None:
    provider = registry.create(name, load_settings())
    assert registry.traits(provider) == traits
    answerer: object = registry.corpus_answerer(provider)
    assert answerer is provider


def test_a_plugin_that_declares_nothing_gets_the_safe_defaults(
    provider_plugin: ModuleType,
) -> None:
    metered = registry.create("fixture-metered", load_settings())
    assert not hasattr(metered, "offline")
    assert registry.traits(metered) == Traits(offline=False, caches_prompts=False)
    with pytest.raises(ValueError, match=r"^fixture-metered cannot answer corpus questions$"):
        registry.corpus_answerer(metered)
    offline = registry.create("fixture-offline", load_settings())
    assert registry.traits(offline) == Traits(offline=True, caches_prompts=False)
    answerer: object = registry.corpus_answerer(offline)
    assert answerer is offline
