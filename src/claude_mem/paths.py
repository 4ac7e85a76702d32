"""Where state lives: one env var relocates all of it, so tests and parallel installs never collide.

Stdlib only: the hook path imports this module.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

DATA_DIR_ENV = "CLAUDE_MEM_DATA_DIR"
# Never the original project's ~/.claude-mem, so both tools can run side by side.
DEFAULT_DATA_DIR = "~/.claude-mem-py"
DIR_MODE = 0o700
FILE_MODE = 0o600
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)


class DataDirError(NotADirectoryError):
    """The data dir (or a folder above it) exists but is not a directory: nothing can work."""


def data_dir() -> Path:
    """The data directory (not created; see ensure_data_dir)."""
    raw = os.environ.get(DATA_DIR_ENV, "").strip() or DEFAULT_DATA_DIR
    return Path(os.path.expanduser(raw)).absolute()


def data_dir_id(directory: str | None = None) -> str:
    """A short digest of the resolved data dir (or of `directory`, already resolved): how a
    worker says whose memory it serves without publishing the path on its unauthenticated
    health route."""
    where = directory if directory is not None else str(data_dir().resolve())
    return _sha256_hex(where.encode())[:16]


def _sha256_hex(data: bytes) -> str:
    """SHA-256 without `hashlib`: every session-start hook asks, and hashlib loads OpenSSL,
    which costs several times CPython's own module (`python -X importtime`; the SessionStart
    row of bench/hook_bench.py)."""
    for name in ("_sha256", "_sha2"):  # CPython 3.11; 3.12 and later
        try:
            module = __import__(name)
        except ImportError:
            continue
        return str(module.sha256(data).hexdigest())
    import hashlib  # noqa: PLC0415 - interpreters without CPython's module

    return hashlib.sha256(data).hexdigest()


def check_data_dir() -> Path:
    """The data dir; DataDirError if it, or the nearest existing folder above it, is a file."""
    path = data_dir()
    existing = path
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        where = "" if existing == path else f" ({existing} is not a directory)"
        raise DataDirError(f"data dir {path} is not a directory{where}")
    return path


def ensure_dir(path: Path) -> Path:
    """Create a private directory (0700) with its parents; tighten it if it already exists."""
    try:
        path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        check_data_dir()  # the usual cause, named as such
        raise DataDirError(f"{path} is not a directory") from None
    if path.stat().st_mode & 0o077:
        path.chmod(DIR_MODE)
    return path


def ensure_data_dir() -> Path:
    return ensure_dir(check_data_dir())


def db_path() -> Path:
    return data_dir() / "claude-mem.db"


def settings_path() -> Path:
    return data_dir() / "settings.json"


def logs_dir() -> Path:
    return data_dir() / "logs"


def backups_dir() -> Path:
    return data_dir() / "backups"


def state_dir() -> Path:
    return data_dir() / "state"


def write_private_file(path: Path, data: str | bytes) -> None:
    """Atomically replace `path` with `data`, mode 0600: readers never see half a file.

    The temporary file sits beside the target so the rename stays on one filesystem; on any
    failure (a full disk included) the old file is left untouched and the temporary removed.
    """
    ensure_dir(path.parent)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def touch_private_file(path: Path) -> None:
    """Create `path` empty, mode 0600, if missing: SQLite then gives -wal/-shm files 0600 too."""
    ensure_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE)
    os.close(fd)
    if path.stat().st_mode & 0o077:
        path.chmod(FILE_MODE)


def open_regular(path: str) -> int | None:
    """A read-only descriptor of `path` when it is a regular file, else None: a file a host
    names (a transcript) is opened without blocking, so a FIFO or a device put at the path can
    never hang a hook or the worker. The caller closes it."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None
