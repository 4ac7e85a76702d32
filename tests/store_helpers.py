"""Builders shared by the store tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from claude_mem.records import Observation
from claude_mem.search.embed import Embedder
from claude_mem.store import Database
from claude_mem.store.observations import insert_observation
from claude_mem.store.sessions import ensure_session

if TYPE_CHECKING:
    import threading

    import numpy as np

T = TypeVar("T")


def found(row: T | None) -> T:
    """A row the test knows exists (a lookup returns None for a missing one)."""
    assert row is not None
    return row


def session(
    db: Database, host_id: str = "s-1", project: str = "proj", platform: str = "claude-code"
) -> int:
    with db.write() as conn:
        return ensure_session(conn, platform=platform, host_session_id=host_id, project=project)


def observation(db: Database, session_id: int, **fields: Any) -> int:
    values: dict[str, Any] = {"project": "proj", "type": "discovery", "title": "t"}
    values.update(fields)
    with db.write() as conn:
        obs_id, _ = insert_observation(conn, Observation(session_id=session_id, **values))
    return obs_id


class CountingEmbedder(Embedder):
    """The real model, counting its calls and recording every text it is run on; `during`
    runs inside each call (what another writer does while a batch is being embedded)."""

    def __init__(self, inner: Embedder, during: Callable[[], None] = lambda: None) -> None:
        self._inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.calls = 0
        self.texts: list[str] = []
        self._during = during

    def embed_until(
        self, texts: list[str], stop: threading.Event | None
    ) -> tuple[np.ndarray, np.ndarray]:
        self.calls += 1
        self.texts.extend(texts)
        self._during()
        return self._inner.embed_until(texts, stop)
