"""The worker's background embedder: rows without a vector get one, a few at a time.

It runs in its own thread (model inference is CPU-bound and would stall the event loop),
loads the model lazily — only once the store holds something to embed or search, or a search
asks — so the worker answers at once and an empty one stays small (bench/worker_start_bench.py
measures it idle and with the model), and polls the store every couple of
seconds — the pipeline commits observations on its own schedule, and polling keeps the
embedder independent of it (`notify()` shortens the wait). Search covers rows not yet
embedded through full text, so falling behind costs recall, never correctness.

Two kinds of failure are told apart at their source. Loading the model touches no database:
if it fails (files missing or corrupt, onnxruntime cannot load them) embedding stops for the
worker's life, and `state` says "failed" with the reason (/api/health, `status`, `doctor`, the
viewer). Everything after that is the store — a writer holding the lock through a large
import, a busy disk — and passes: it is retried with backoff (BACKOFF_START_S doubling to
BACKOFF_MAX_S, forever), logged once per streak, with `state` "retrying" meanwhile.

Vectors of one database have one writer at a time, `EmbeddingLock`: the worker's embedder holds
it while it runs, `claude-mem reindex` without a worker holds it while it embeds (a worker
started meanwhile waits, state "locked"). With a worker, `reindex` asks it instead
(`request_reindex`, POST /api/embedding/reindex): the job runs in this thread, between batches,
so nothing embeds the same rows twice or deletes vectors under the other.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from claude_mem import log
from claude_mem.search.embed import Embedder, load_embedder, release_freed_memory
from claude_mem.search.embedding_health import backlog
from claude_mem.search.query_cache import QueryCache
from claude_mem.store import vectors as store
from claude_mem.store.db import WouldBlock
from claude_mem.store.search_queries import KINDS, Kind

if TYPE_CHECKING:
    import numpy as np

    from claude_mem.search.vectors import VectorIndex
    from claude_mem.store import Database

POLL_S = 2.0
RESYNC_S = 30.0  # how often the in-memory index is checked against the store (deletes)
BACKOFF_START_S = 0.5  # first wait after a failed store operation; doubles per failure
BACKOFF_MAX_S = 30.0
# Rows per step: a reindex job or new rows wait at most one batch (a stop only the model runs
# in hand: embed_batch).
BATCH_ROWS = 256
LOCK_POLL_S = 1.0  # how often a worker waiting for `claude-mem reindex` checks its lock
QUERY_CACHE = 128  # query embeddings kept (query_cache)
BACKGROUND_NICE = 10
QUIET_S = 0.5  # well above the gaps inside a burst, which a pipeline commit can stretch

# What `state` says (status(), health()).
WAITING = "waiting"  # nothing to embed yet: the model is not loaded
LOADING = "loading"
READY = "ready"
RETRYING = "retrying"  # the store failed (locked, busy): retried with backoff
FAILED = "failed"  # the model cannot load: embedding stopped, search uses full text
LOCKED = "locked"  # `claude-mem reindex` holds the embedding lock: waiting for it


class EmbeddingLock:
    """The one writer of a database's vectors (an flock beside it, with the holder's pid).

    Two writers would embed the same rows twice, and one's reindex would delete vectors the
    other's in-memory index still holds."""

    def __init__(self, db_path: Path) -> None:
        self.path = Path(db_path).with_name("embedding.lock")
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take it without waiting; False when another process holds it."""
        import fcntl  # noqa: PLC0415 - POSIX only

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def holder(self) -> str:
        """The pid written by whoever holds it, for messages ("?" if unreadable)."""
        try:
            return self.path.read_text().strip() or "?"
        except OSError:
            return "?"

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing drops the flock


@dataclass
class Reindex:
    """One `claude-mem reindex` run by the worker: what it covers and how far it got."""

    kinds: tuple[Kind, ...]
    resume: bool
    state: str = "queued"  # queued → running → done; failed if the model cannot load
    total: int = 0  # records to embed when it started (grows if new ones arrive)
    done: int = 0
    model_id: str | None = None
    error: str | None = None

    @property
    def finished(self) -> bool:
        return self.state in ("done", "failed")

    def advanced(self, kind: str, embedded: int) -> None:
        """A batch of `kind` was stored; any other kind means this job's kinds are done."""
        if kind not in self.kinds:
            self.state = "done"
            return
        self.done += embedded
        self.total = max(self.total, self.done)

    def snapshot(self) -> dict[str, Any]:
        return {**asdict(self), "kinds": list(self.kinds)}


class EmbeddingFailed(RuntimeError):
    """The model could not load in this worker: nothing can be embedded until a restart."""


class Backoff:
    """Waits between retries of a failing store operation: BACKOFF_START_S doubling to
    BACKOFF_MAX_S, for as long as it fails. One log line when a streak starts, one when it
    ends: a lock held through a long import must not fill the log."""

    def __init__(self) -> None:
        self.failures = 0
        self._delay = 0.0

    def failed(self, error: str) -> float:
        """Count a failure; the seconds to wait before the next try."""
        self.failures += 1
        self._delay = min(BACKOFF_MAX_S, self._delay * 2) if self._delay else BACKOFF_START_S
        if self.failures == 1:
            log.warn("embed", "store unavailable; embedding retries with backoff", error=error)
        return self._delay

    def succeeded(self) -> None:
        if self.failures:
            log.info("embed", "store available again; embedding resumes", failures=self.failures)
        self.failures, self._delay = 0, 0.0


def _store_error(exc: BaseException) -> bool:
    """A database problem (locked, busy, I/O), never the model's: it passes, so retry."""
    return isinstance(exc, sqlite3.Error | WouldBlock)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class Batch(NamedTuple):
    """One stored batch: the ids that got a vector, their rows, how many were copies of an
    identical text's vector (the model not run for them), and the lowest id looked at."""

    ids: list[int]
    matrix: np.ndarray
    copied: int
    lowest: int


def embed_batch(
    db: Database,
    embedder: Embedder,
    kind: str,
    below: int | None = None,
    stop: threading.Event | None = None,
) -> Batch | None:
    """Embed and store up to BATCH_ROWS rows of `kind` (under id `below`, if given) that have
    no vector from this model, or None when none is missing. A text this model already
    embedded (the same hash) is copied, and identical texts in the batch are embedded once.
    Each batch commits, so an interrupted run resumes where it stopped; once `stop` is set
    the model runs no further (`Embedder.embed_until`) and the rows it made are stored, the
    others left for the next run."""
    import numpy as np  # noqa: PLC0415 - loaded with the model

    conn = db.read()
    rows = store.missing(conn, kind, embedder.model_id, BATCH_ROWS, below)
    if not rows:
        return None
    digests = [store.text_hash(text) for _, text in rows]
    known = store.shared(conn, embedder.model_id, digests)
    texts = {digest: text for (_, text), digest in zip(rows, digests, strict=True)}
    fresh = [digest for digest in texts if digest not in known]
    vectors, computed = embedder.embed_until([texts[d] for d in fresh], stop)
    made = {d: vector for d, vector, ok in zip(fresh, vectors, computed, strict=True) if ok}
    ready = [
        (row_id, digest, made[digest] if digest in made else np.frombuffer(known[digest], "<f4"))
        for (row_id, _), digest in zip(rows, digests, strict=True)
        if digest in made or digest in known
    ]
    stored: list[int] = []
    kept: list[np.ndarray] = []
    with db.write() as conn:
        for row_id, digest, vector in ready:
            if store.upsert(conn, kind, row_id, embedder.model_id, vector, digest=digest):
                stored.append(row_id)
                kept.append(vector)
    matrix = np.stack(kept) if kept else np.zeros((0, embedder.dim))
    return Batch(
        stored,
        matrix.astype(np.float32, copy=False),
        len(rows) - len(fresh),
        min(row_id for row_id, _ in rows),
    )


def count_missing(db: Database, model_id: str, kinds: Iterable[str]) -> int:
    conn = db.read()
    return sum(store.count_missing(conn, kind, model_id) for kind in kinds)


class Embedding:
    """Owns one VectorIndex per kind, kept equal to the store's vectors for the current model."""

    def __init__(
        self,
        db: Database,
        model: str,
        *,
        loader: Callable[[str], Embedder | None] = load_embedder,
        poll_s: float | None = None,
        since_last_event: Callable[[], float] = lambda: float("inf"),
    ) -> None:
        """`since_last_event`: seconds since hooks last sent an event. Loading the model and
        embedding wait for QUIET_S of calm (each takes a core from a burst of hooks; search
        covers new rows through full text meanwhile)."""
        from claude_mem.search.vectors import VectorIndex  # noqa: PLC0415 - numpy once the store is open

        self.db = db
        self.model = model
        self._loader = loader
        self._poll_s = POLL_S if poll_s is None else poll_s
        self._since_last_event = since_last_event
        self._embedder: Embedder | None = None
        self._indexes = {kind: VectorIndex() for kind in KINDS}
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._loaded = threading.Event()
        self._asked = threading.Event()  # a search wanted vectors before the model was loaded
        self.state = WAITING
        self.error: str | None = None  # why embedding is retrying or has failed
        self._backoff = Backoff()
        self._lock = EmbeddingLock(db.path)
        self._job: Reindex | None = None
        self._jobs_lock = threading.Lock()
        self.query_cache = QueryCache(QUERY_CACHE)
        self._last_resync = 0.0
        self._trimmed = True  # whether freed memory went back to the OS since the last batch
        # Where each kind's walk down its backlog is (the lowest id it looked at): the next
        # batch starts there. New rows or a reindex start the walk again from the top.
        self._below: dict[str, int] = {}
        self._restart = threading.Event()

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="claude-mem-embed", daemon=True)
            self._thread.start()

    def notify(self) -> None:
        """New rows may exist: look now, from the newest, instead of at the next poll."""
        self._restart.set()
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        """End the thread once the model runs in hand are done (one small batch each, however
        large the backlog) and what the batch computed is stored."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def wait_loaded(self, timeout: float | None = None) -> bool:
        return self._loaded.wait(timeout)

    # -- what search uses -------------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        return self._loaded.is_set()

    @property
    def embedder(self) -> Embedder | None:
        return self._embedder

    def index(self, kind: Kind) -> VectorIndex:
        return self._indexes[kind]

    def query_vector(self, text: str) -> np.ndarray | None:
        """The query's embedding, or None while the model isn't loaded (search then falls back
        to full text). Recent queries are cached (`query_cache`). The embedder's session runs
        it beside any background batch, never behind one."""
        embedder = self._embedder
        if embedder is None or not self.loaded:
            self._asked.set()
            self._wake.set()
            return None
        vector = self.query_cache.get(embedder.model_id, text)
        if vector is None:
            vector = embedder.embed([text])[0]
            self.query_cache.put(embedder.model_id, text, vector)
        return vector

    # -- reindex --------------------------------------------------------------------------

    def request_reindex(self, kinds: tuple[str, ...], resume: bool) -> Reindex:
        """Queue a reindex for this thread (the job in progress, if there is one); raises
        EmbeddingFailed when the model could not load."""
        if self.state == FAILED:
            raise EmbeddingFailed(f"embedding stopped, the model did not load: {self.error}")
        with self._jobs_lock:
            if self._job is None or self._job.finished:
                self._job = Reindex(kinds=tuple(k for k in KINDS if k in kinds), resume=resume)
            job = self._job
        self._asked.set()  # load the model for it even if nothing else asked yet
        self._wake.set()
        return job

    @property
    def reindex(self) -> Reindex | None:
        """The last reindex asked of this worker, or None."""
        return self._job

    def _start_reindex(self) -> None:
        """Drop the vectors the queued job redoes and count what is left to embed."""
        job, embedder = self._job, self._embedder
        if job is None or job.state != "queued" or embedder is None:
            return
        with self.db.write() as conn:
            store.reset(conn, embedder.model_id, job.kinds, keep=job.resume)
        self._restart.set()
        if not job.resume:
            for kind in job.kinds:
                self._indexes[kind].clear()
        job.model_id = embedder.model_id
        job.total = count_missing(self.db, embedder.model_id, job.kinds)
        job.state = "running" if job.total else "done"
        log.info(
            "embed", "reindex started", kinds=list(job.kinds), resume=job.resume, total=job.total
        )

    def health(self) -> dict[str, Any]:
        """What the embedder is doing, without touching the store (/api/health)."""
        return {
            "model": self.model,
            "state": self.state,
            "error": self.error,
            "failures": self._backoff.failures,
        }

    def status(self) -> dict[str, Any]:
        embedder = self._embedder
        pending = backlog(self.db, embedder.model_id) if embedder else None
        return {
            **self.health(),
            "model_id": embedder.model_id if embedder else None,
            "dim": embedder.dim if embedder else None,
            "loaded": self.loaded,
            "embedded": {kind: index.size for kind, index in self._indexes.items()},
            "pending": pending,
        }

    # -- the thread ---------------------------------------------------------------------------

    def _busy(self) -> bool:
        return self._since_last_event() < QUIET_S

    def _needed(self) -> bool:
        return self._asked.is_set() or store.has_records(self.db.read())

    def _run(self) -> None:
        # Embedding takes a whole core while it runs; hooks waiting on ingest come first.
        # On Linux a thread id given to setpriority renices just this thread.
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICE)
        self._wait_until_needed()
        if not self._take_lock():
            return
        try:
            self._embed_while_running()
        finally:
            self._lock.release()

    def _embed_while_running(self) -> None:
        embedder = self._retrying(self._load, loading_model=True)
        if embedder is None:
            return
        self._retrying(lambda: self._prepare(embedder))
        while not self._stopping.is_set() and self.loaded:
            self._retrying(self._start_reindex)
            if self._busy():
                self._stopping.wait(QUIET_S / 5)
                continue
            worked = self._retrying(self._work)
            if worked is False:
                self._wake.wait(self._poll_s)
                self._wake.clear()

    def _take_lock(self) -> bool:
        """Wait for `claude-mem reindex` run without a worker to finish (it holds the lock);
        False if the worker stops first."""
        while not self._stopping.is_set():
            acquired = self._retrying(self._lock.acquire)  # an unwritable data dir passes too
            if acquired is None:
                return False
            if acquired:
                if self.state == LOCKED:
                    log.info("embed", "claude-mem reindex finished; embedding resumes")
                    self.state = WAITING
                return True
            if self.state != LOCKED:
                self.state = LOCKED
                log.info(
                    "embed", "claude-mem reindex is embedding; waiting", pid=self._lock.holder()
                )
            self._wake.wait(LOCK_POLL_S)
            self._wake.clear()
        return False

    def _wait_until_needed(self) -> None:
        """Until something is stored (or a search asks) and hooks are calm: an empty worker
        stays small."""
        with contextlib.suppress(Exception):  # a busy store: load now rather than never
            while not self._stopping.is_set() and (self._busy() or not self._needed()):
                self._wake.wait(QUIET_S / 5 if self._busy() else self._poll_s)
                self._wake.clear()

    def _retrying(self, action: Callable[[], Any], *, loading_model: bool = False) -> Any:
        """`action()`, tried again after each failure with backoff; None once stopping.
        While `loading_model`, a failure other than the store's is the model's: embedding
        stops (state FAILED) instead."""
        while not self._stopping.is_set() and self.state != FAILED:
            try:
                result = action()
            except Exception as exc:
                if loading_model and not _store_error(exc):
                    self._fail(exc)
                    return None
                self.state, self.error = RETRYING, _describe(exc)
                self._stopping.wait(self._backoff.failed(self.error))
                continue
            self._backoff.succeeded()
            if self.state == RETRYING:
                self.state = READY if self.loaded else LOADING
            self.error = None
            return result
        return None

    def _load(self) -> Embedder | None:
        """The model, loaded off the store: any failure but a database one is the model's."""
        self.state = LOADING
        started = time.monotonic()
        embedder = self._loader(self.model)
        if embedder is not None:
            log.info(
                "embed",
                "model loaded",
                model=embedder.model_id,
                seconds=round(time.monotonic() - started, 2),
            )
        return embedder

    def _fail(self, exc: BaseException) -> None:
        self.state, self.error = FAILED, _describe(exc)
        log.error("embed", "embedding model unavailable; search uses full text", error=self.error)
        job = self._job
        if job is not None and not job.finished:
            job.state, job.error = "failed", self.error

    def _work(self) -> bool:
        """One batch, and the periodic resync; whether there was work. Once the backlog is
        done, what its batches freed goes back to the OS."""
        worked = self.step()
        if time.monotonic() - self._last_resync > RESYNC_S:
            self.resync()
        if not worked and not self._trimmed:
            release_freed_memory()
        self._trimmed = not worked
        return worked

    def _prepare(self, embedder: Embedder) -> None:
        """Vectors from another model can't be compared with this one's: drop them (they are
        re-embedded as pending rows), then load what this model already made."""
        with self.db.write() as conn:
            dropped = store.delete_other_models(conn, embedder.model_id)
        if dropped:
            log.info(
                "embed", "model changed; re-embedding", model=embedder.model_id, dropped=dropped
            )
        self._embedder = embedder
        self._reload(embedder.model_id)
        self.state = READY
        self._loaded.set()
        log.info(
            "embed",
            "vectors loaded",
            model=embedder.model_id,
            vectors={kind: index.size for kind, index in self._indexes.items()},
        )

    def _reload(self, model_id: str) -> None:
        conn = self.db.read()
        for kind in KINDS:
            ids, matrix = store.load(conn, kind, model_id)
            self._indexes[kind].replace(ids, matrix)
        self._last_resync = time.monotonic()
        release_freed_memory()

    def step(self) -> bool:
        """Embed one batch of the first kind with pending rows (a running reindex's kinds
        first, then observations, summaries, prompts); returns whether there was work."""
        embedder = self._embedder
        if embedder is None:
            return False
        job = self._job if self._job is not None and self._job.state == "running" else None
        first = job.kinds if job is not None else ()
        for kind in (*first, *(k for k in KINDS if k not in first)):
            batch = self._next_batch(embedder, kind)
            if batch is None:
                continue
            self._indexes[kind].add(batch.ids, batch.matrix)
            if job is not None:
                job.advanced(kind, len(batch.ids))
            return True
        if job is not None:
            job.state = "done"
        return False

    def _next_batch(self, embedder: Embedder, kind: str) -> Batch | None:
        """The next batch of `kind`'s backlog, newest first: below the last one, so rows
        already embedded are not walked past again; from the top once the walk reaches the
        oldest row (rows made meanwhile, or whose vector a trigger dropped) or is restarted."""
        if self._restart.is_set():
            self._restart.clear()
            self._below.clear()
        below = self._below.pop(kind, None)
        batch = embed_batch(self.db, embedder, kind, below, self._stopping)
        if batch is None and below is not None:
            batch = embed_batch(self.db, embedder, kind, stop=self._stopping)
        if batch is not None:
            self._below[kind] = batch.lowest
        return batch

    def resync(self) -> None:
        """Drop index rows whose vectors the store deleted (row deleted or edited, triggers)
        and reload if another process (`claude-mem reindex`) rewrote vectors."""
        embedder = self._embedder
        if embedder is None:
            return
        self._last_resync = time.monotonic()
        conn = self.db.read()
        for kind in KINDS:
            index = self._indexes[kind]
            stored = set(store.ids(conn, kind, embedder.model_id))
            held = set(index.ids())
            if held - stored:
                index.remove(held - stored)
            if stored - held:
                ids, matrix = store.load(conn, kind, embedder.model_id)
                index.replace(ids, matrix)
