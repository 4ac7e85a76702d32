"""An in-memory vector index: one matrix, brute-force dot products.

At the expected sizes (10^3–10^5 rows) a numpy matmul is fast enough (bench/search_bench.py)
and needs no extension or ANN library. Rows live in a growable buffer so
adding a batch doesn't copy the whole matrix; a lock guards it because route handlers run in
threads while the background embedder adds rows.

Up to `QUANTIZE_ABOVE` rows the matrix is float32 and scores are exact. Above it, rows are
stored as int8 with a per-row scale (max |x| / 127): a quarter of the memory (100k × 384 is
37 MiB instead of 147 MiB, which is what keeps the worker under its RSS floor with the model
loaded) at the same speed (the scan is memory-bound; int8 chunks are widened to float32 in a
cache-sized buffer). Scores then stay close to exact and the top hits agree with an exact
scan (recall in bench/embedding_bench.py); hybrid ranking uses only ranks.

A quantised scan is also shortlisted first: every row keeps a 1-bit sign code (48 bytes for
384 dimensions, column-major), the Hamming distance to the query's code ranks all rows
cheaply, and only the nearest `SHORTLIST × k` rows are scored exactly, so a large scan costs
less (bench/search_bench.py). Recall against an exact float32 scan, int8 rows and shortlist
together, is measured by bench/embedding_bench.py on real MiniLM vectors of stdlib docstrings
and noisy copies of them, and by bench/search_bench.py on synthetic clusters (the hardest case
for sign codes).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import numpy as np

_MIN_CAPACITY = 1024
_DICT_FILTER_MAX = 4096  # above this many allowed ids, a vectorised isin beats dict lookups
QUANTIZE_ABOVE = 20_000  # rows; above this the matrix is stored as int8 (module docstring)
_CHUNK = 2048  # rows widened to float32 at a time in a quantised scan
SHORTLIST = 20  # × k rows scored exactly after the sign-code shortlist (module docstring)


def _sign_codes(matrix: np.ndarray) -> np.ndarray:
    """(words, rows) uint64: bit i of a row's code is whether dimension i is positive."""
    bits = np.packbits(np.asarray(matrix) > 0, axis=1)
    pad = (-bits.shape[1]) % 8
    if pad:
        bits = np.pad(bits, ((0, 0), (0, pad)))
    return np.ascontiguousarray(bits.view(np.uint64).T)


def _quantize(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(int8 rows, float32 per-row scales) with row ≈ int8 row × scale."""
    peak = np.abs(matrix).max(axis=1) if matrix.shape[1] else np.zeros(len(matrix))
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    rows = np.rint(matrix / scale[:, None]).clip(-127, 127).astype(np.int8)
    return rows, scale


def _words(dim: int) -> int:
    return (dim + 63) // 64


class VectorIndex:
    """Row ids → unit vectors; `query` ranks by cosine (a dot product on normalised rows)."""

    def __init__(self, dim: int | None = None) -> None:
        self._lock = threading.Lock()
        self._dim = dim
        self._ids = np.zeros(0, dtype=np.int64)
        self._matrix = np.zeros((0, dim or 0), dtype=np.float32)
        self._scale = np.ones(0, dtype=np.float32)  # per row; used when the matrix is int8
        self._codes = np.zeros((_words(dim or 0), 0), dtype=np.uint64)  # sign codes per row
        self._n = 0
        self._pos: dict[int, int] = {}

    @property
    def quantized(self) -> bool:
        return self._matrix.dtype == np.int8

    def _encode(self, matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.quantized:
            return _quantize(matrix)
        return matrix, np.ones(len(matrix), dtype=np.float32)

    @property
    def size(self) -> int:
        return self._n

    @property
    def dim(self) -> int | None:
        return self._dim

    def ids(self) -> list[int]:
        with self._lock:
            return [int(i) for i in self._ids[: self._n]]

    def _check(self, ids: Sequence[int], matrix: np.ndarray) -> np.ndarray:
        matrix = np.asarray(matrix, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(ids):
            raise ValueError(f"need one row per id: {len(ids)} ids, matrix {matrix.shape}")
        if len(ids) and self._dim is not None and matrix.shape[1] != self._dim:
            raise ValueError(f"dimension {matrix.shape[1]} != index dimension {self._dim}")
        return matrix

    def replace(self, ids: Sequence[int], matrix: np.ndarray) -> None:
        """Drop everything and hold exactly these rows (a reload from the store)."""
        ids = [int(i) for i in ids]
        with self._lock:
            if ids:
                self._dim = int(np.asarray(matrix).shape[1])
            matrix = self._check(ids, matrix)
            unique = dict(zip(ids, range(len(ids)), strict=True))  # last row wins
            rows = list(unique.values())
            n = len(rows)
            capacity = max(_MIN_CAPACITY, n)
            dtype = np.int8 if n > QUANTIZE_ABOVE else np.float32
            self._ids = np.zeros(capacity, dtype=np.int64)
            self._matrix = np.zeros((capacity, self._dim or 0), dtype=dtype)
            self._scale = np.ones(capacity, dtype=np.float32)
            self._codes = np.zeros((_words(self._dim or 0), capacity), dtype=np.uint64)
            self._ids[:n] = list(unique)
            for start in range(0, n, 8 * _CHUNK):  # quantise in slices: no full-size temporaries
                part = rows[start : start + 8 * _CHUNK]
                encoded, scale = self._encode(matrix[part])
                self._matrix[start : start + len(part)] = encoded
                self._scale[start : start + len(part)] = scale
                self._codes[:, start : start + len(part)] = _sign_codes(matrix[part])
            self._n = n
            self._pos = {i: p for p, i in enumerate(unique)}

    def clear(self) -> None:
        """Hold nothing (a reindex dropped this kind's vectors)."""
        self.replace([], np.zeros((0, self._dim or 0), dtype=np.float32))

    def add(self, ids: Sequence[int], matrix: np.ndarray) -> None:
        """Insert rows; an id already present has its vector replaced."""
        ids = [int(i) for i in ids]
        if not ids:
            return
        with self._lock:
            if self._dim is None or self._n == 0:
                self._dim = int(np.asarray(matrix).shape[1])
                if self._matrix.shape[1] != self._dim:
                    self._matrix = np.zeros((_MIN_CAPACITY, self._dim), dtype=np.float32)
                    self._ids = np.zeros(_MIN_CAPACITY, dtype=np.int64)
                    self._scale = np.ones(_MIN_CAPACITY, dtype=np.float32)
                    self._codes = np.zeros((_words(self._dim), _MIN_CAPACITY), dtype=np.uint64)
            matrix = self._check(ids, matrix)
            if not self.quantized and self._n + len(ids) > QUANTIZE_ABOVE:
                self._matrix, self._scale = _quantize(self._matrix)
            encoded, scales = self._encode(matrix)
            codes = _sign_codes(matrix).T
            for row_id, vector, scale, code in zip(ids, encoded, scales, codes, strict=True):
                at = self._pos.get(row_id)
                if at is None:
                    if self._n == len(self._ids):
                        self._grow()
                    at = self._n
                    self._n += 1
                    self._pos[row_id] = at
                    self._ids[at] = row_id
                self._matrix[at] = vector
                self._scale[at] = scale
                self._codes[:, at] = code

    def _grow(self) -> None:
        capacity = max(_MIN_CAPACITY, 2 * len(self._ids))
        ids = np.zeros(capacity, dtype=np.int64)
        matrix = np.zeros((capacity, self._matrix.shape[1]), dtype=self._matrix.dtype)
        scale = np.ones(capacity, dtype=np.float32)
        codes = np.zeros((self._codes.shape[0], capacity), dtype=np.uint64)
        ids[: self._n] = self._ids[: self._n]
        matrix[: self._n] = self._matrix[: self._n]
        scale[: self._n] = self._scale[: self._n]
        codes[:, : self._n] = self._codes[:, : self._n]
        self._ids, self._matrix, self._scale, self._codes = ids, matrix, scale, codes

    def remove(self, ids: Iterable[int]) -> int:
        """Drop rows (unknown ids are ignored); the last row fills each hole. Returns how many."""
        removed = 0
        with self._lock:
            for row_id in ids:
                at = self._pos.pop(int(row_id), None)
                if at is None:
                    continue
                last = self._n - 1
                if at != last:
                    moved = int(self._ids[last])
                    self._ids[at] = moved
                    self._matrix[at] = self._matrix[last]
                    self._scale[at] = self._scale[last]
                    self._codes[:, at] = self._codes[:, last]
                    self._pos[moved] = at
                self._n = last
                removed += 1
        return removed

    def _shortlist(
        self, positions: np.ndarray | None, n: int, query: np.ndarray, keep: int
    ) -> np.ndarray:
        """Positions of the ≥ `keep` rows (all `n`, or of `positions`) whose sign codes are
        nearest the query's, in position order; caller holds the lock."""
        code = _sign_codes(query[None, :])[:, 0]
        distance = np.zeros(n if positions is None else len(positions), dtype=np.uint16)
        for word, bits in zip(code, self._codes, strict=True):
            column = bits[:n] if positions is None else bits[positions]
            distance += np.bitwise_count(column ^ word)
        # The smallest distance reaching `keep` rows, from a histogram: cheaper than a partition.
        cutoff = int(np.searchsorted(np.cumsum(np.bincount(distance)), keep))
        near = np.flatnonzero(distance <= cutoff)
        return near if positions is None else positions[near]

    def _scores(self, positions: np.ndarray | None, n: int, query: np.ndarray) -> np.ndarray:
        """Dot products of rows (all `n`, or `positions`) with `query`; caller holds the lock."""
        if not self.quantized:
            product: np.ndarray = (
                self._matrix[:n] if positions is None else self._matrix[positions]
            ) @ query
            return product
        total = n if positions is None else len(positions)
        scores = np.empty(total, dtype=np.float32)
        buffer = np.empty((min(_CHUNK, total), self._matrix.shape[1]), dtype=np.float32)
        for start in range(0, total, _CHUNK):
            end = min(total, start + _CHUNK)
            rows = (
                self._matrix[start:end] if positions is None else self._matrix[positions[start:end]]
            )
            wide = buffer[: end - start]
            np.copyto(wide, rows, casting="unsafe")
            np.matmul(wide, query, out=scores[start:end])
        scores *= self._scale[:n] if positions is None else self._scale[positions]
        return scores

    def query(
        self, vector: np.ndarray, k: int, allowed: set[int] | None = None
    ) -> list[tuple[int, float]]:
        """The `k` best (id, cosine) pairs, best first; `allowed` restricts the candidates
        before ranking, so a narrow filter still gets k hits when k exist."""
        if k <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        with self._lock:
            n = self._n
            if n == 0 or (allowed is not None and not allowed):
                return []
            if query.shape[0] != self._matrix.shape[1]:
                raise ValueError(f"query dimension {query.shape[0]} != {self._matrix.shape[1]}")
            positions: np.ndarray | None = None
            if allowed is not None:
                if len(allowed) <= _DICT_FILTER_MAX:
                    positions = np.fromiter(
                        (p for i in allowed if (p := self._pos.get(i)) is not None),
                        dtype=np.int64,
                    )
                else:
                    wanted = np.fromiter(allowed, dtype=np.int64, count=len(allowed))
                    positions = np.flatnonzero(np.isin(self._ids[:n], wanted))
                if positions.size == 0:
                    return []
            scanned = n if positions is None else len(positions)
            if self.quantized and scanned > 2 * SHORTLIST * k:
                positions = self._shortlist(positions, n, query, SHORTLIST * k)
            ids = self._ids[:n] if positions is None else self._ids[positions]
            scores = self._scores(positions, n, query)
        if k < scores.shape[0]:
            top = np.argpartition(-scores, k - 1)[:k]
        else:
            top = np.arange(scores.shape[0])
        # Best first; equal scores in id order so results are deterministic.
        ranked = top[np.lexsort((ids[top], -scores[top]))]
        return list(zip(ids[ranked].tolist(), scores[ranked].tolist(), strict=True))
