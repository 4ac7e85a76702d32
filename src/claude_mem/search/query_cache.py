"""Recent query embeddings, least recently used dropped first.

A person paging results, the MCP tools asking the same thing twice and the prompt hook's
semantic context after a search all repeat a query: its embedding is one ONNX run saved. Keys
are the query text exactly as the search embeds it (clipped by the route). The vectors belong
to one model: asked for another model's, the cache empties itself first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


class QueryCache:
    """At most `size` vectors; thread-safe (route handlers run in threads)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.hits = 0
        self.misses = 0
        self.model: str | None = None  # whose vectors it holds
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def _use(self, model: str) -> None:
        """Hold `model`'s vectors only; caller holds the lock."""
        if model != self.model:
            self._vectors.clear()
            self.model = model

    def __len__(self) -> int:
        return len(self._vectors)

    def get(self, model: str, text: str) -> np.ndarray | None:
        with self._lock:
            self._use(model)
            vector = self._vectors.get(text)
            if vector is None:
                self.misses += 1
                return None
            self.hits += 1
            self._vectors.move_to_end(text)
            return vector

    def put(self, model: str, text: str, vector: np.ndarray) -> None:
        """Keep `model`'s `vector` (made read-only: every hit shares it) for `text`."""
        vector.flags.writeable = False
        with self._lock:
            self._use(model)
            self._vectors[text] = vector
            self._vectors.move_to_end(text)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
