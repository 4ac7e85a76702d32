"""Providers by name. Built-ins are declared as entry points in our own pyproject.toml, in the
group a third-party package would use, so both load through this one path. What a provider
declares beyond the required contract is read here too (`traits`, `corpus_answerer`), with the
defaults a provider that omits it gets, so no other code needs to know which provider it has.

Importing this module makes settings check provider names (CLAUDE_MEM_PROVIDER, the fallback
list) against the installed ones, wherever settings are read or written after it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from claude_mem import settings as settings_module
from claude_mem.pipeline.providers.base import CorpusAnswerer, Provider, Traits
from claude_mem.settings import Settings

if TYPE_CHECKING:
    from importlib.metadata import EntryPoints

GROUP = "claude_mem.providers"
Factory = Callable[[Settings], Provider]

_factories: dict[str, Factory] = {}


def register(name: str, factory: Factory) -> None:
    """Add (or replace) a provider factory; tests and plugins may call this directly."""
    _factories[name] = factory


def _entry_points() -> EntryPoints:
    # importlib.metadata costs tens of ms to import: only when a name must be looked up.
    from importlib.metadata import entry_points  # noqa: PLC0415

    return entry_points(group=GROUP)


def _load_entry_points() -> None:
    for ep in _entry_points():
        if ep.name not in _factories:
            _factories[ep.name] = ep.load()


@functools.cache
def _entry_point_names() -> frozenset[str]:
    # Listing entry points scans every installed package's metadata (a few ms): once a process.
    return frozenset(ep.name for ep in _entry_points())


def installed() -> list[str]:
    """Every provider name, registered or declared, without importing any provider."""
    return sorted(set(_factories) | _entry_point_names())


def unknown(name: str) -> list[str] | None:
    """None if `name` is an installed provider, else the installed names. Looks again once
    before saying no, so a plugin installed while the worker runs counts."""
    if name in _factories or name in _entry_point_names():
        return None
    _entry_point_names.cache_clear()
    names = installed()
    return None if name in names else names


def available() -> list[str]:
    _load_entry_points()
    return sorted(_factories)


def create(name: str, settings: Settings) -> Provider:
    """A provider instance by name; ValueError naming the known ones if there is none."""
    if name not in _factories:
        _load_entry_points()
    factory = _factories.get(name)
    if factory is None:
        raise ValueError(f"unknown provider {name!r}; available: {', '.join(available())}")
    return factory(settings)


def traits(provider: Provider) -> Traits:
    """The provider's declared `offline` and `caches_prompts`; what it leaves out defaults to
    the safe reading (a model that costs tokens, no prompt cache)."""
    default = Traits()
    return Traits(
        offline=bool(getattr(provider, "offline", default.offline)),
        caches_prompts=bool(getattr(provider, "caches_prompts", default.caches_prompts)),
    )


def corpus_answerer(provider: Provider) -> CorpusAnswerer:
    """The provider as one that answers corpus questions; ValueError if it has no `answer`."""
    if not isinstance(provider, CorpusAnswerer):
        raise ValueError(f"{provider.name} cannot answer corpus questions")
    return provider


settings_module.provider_lookup = unknown
