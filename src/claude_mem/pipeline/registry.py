"""Providers by name. Built-ins are declared as entry points in our own pyproject.toml, in the
group a third-party package would use, so both load through this one path."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

from claude_mem.pipeline.providers.base import Provider
from claude_mem.settings import Settings

GROUP = "claude_mem.providers"
Factory = Callable[[Settings], Provider]

_factories: dict[str, Factory] = {}


def register(name: str, factory: Factory) -> None:
    """Add (or replace) a provider factory; tests and plugins may call this directly."""
    _factories[name] = factory


def _load_entry_points() -> None:
    for ep in entry_points(group=GROUP):
        if ep.name not in _factories:
            _factories[ep.name] = ep.load()


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
