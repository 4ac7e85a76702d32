"""Where state lives, as plain `str` paths: one env var relocates all of it, so tests and
parallel installs never collide.

The rules live here, built with os.path: the hook path imports this module, and `pathlib`
(with `urllib.parse`, `re` and `enum` behind it) would cost every hook process more than its
own work. `claude_mem.paths` gives the rest of the code the same locations as `Path` objects.
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import PathLike

    StrPath = str | PathLike[str]

DATA_DIR_ENV = "CLAUDE_MEM_DATA_DIR"
# Never the original project's ~/.claude-mem, so both tools can run side by side.
DEFAULT_DATA_DIR = "~/.claude-mem-py"
DIR_MODE = 0o700
FILE_MODE = 0o600
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
# The errors for which pathlib's exists() and is_dir() answer False instead of raising.
_ABSENT = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


class DataDirError(NotADirectoryError):
    """The data dir (or a folder above it) exists but is not a directory: nothing can work."""


def _spelled_as_pathlib(path: str) -> str:
    """`path` as `str(Path(path))` spells it: no empty or `.` parts, no trailing slash (`..`
    stays), so both modules name a location identically."""
    root = "//" if path[:2] == "//" and path[2:3] != "/" else "/" if path[:1] == "/" else ""
    parts = [part for part in path.split("/") if part and part != "."]
    return root + "/".join(parts) or "."


def data_dir() -> str:
    """The data directory, absolute (not created; see ensure_data_dir)."""
    raw = os.path.expanduser(os.environ.get(DATA_DIR_ENV, "").strip() or DEFAULT_DATA_DIR)
    return _spelled_as_pathlib(raw if os.path.isabs(raw) else os.path.join(os.getcwd(), raw))


def data_dir_id(directory: str | None = None) -> str:
    """A short digest of the resolved data dir (or of `directory`, already resolved): how a
    worker says whose memory it serves without publishing the path on its unauthenticated
    health route."""
    where = directory if directory is not None else os.path.realpath(data_dir())
    return sha256_hex(where.encode())[:16]


def sha256_hex(data: bytes) -> str:
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


def _mode(path: str) -> int | None:
    """st_mode, or None where pathlib's exists() says False; other errors raise, as there."""
    try:
        return os.stat(path).st_mode
    except OSError as exc:
        if exc.errno in _ABSENT:
            return None
        raise
    except ValueError:
        return None


def check_data_dir() -> str:
    """The data dir; DataDirError if it, or the nearest existing folder above it, is a file."""
    path = data_dir()
    existing = path
    while (found := _mode(existing)) is None and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    if found is not None and not stat.S_ISDIR(found):
        where = "" if existing == path else f" ({existing} is not a directory)"
        raise DataDirError(f"data dir {path} is not a directory{where}")
    return path


def ensure_dir(path: StrPath) -> None:
    """Create a private directory (0700) with its parents; tighten it if it already exists."""
    try:
        os.makedirs(path, DIR_MODE, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        check_data_dir()  # the usual cause, named as such
        raise DataDirError(f"{os.fspath(path)} is not a directory") from None
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, DIR_MODE)


def ensure_data_dir() -> str:
    path = check_data_dir()
    ensure_dir(path)
    return path


def db_path() -> str:
    return data_file("claude-mem.db")


def settings_path() -> str:
    return data_file("settings.json")


def logs_dir() -> str:
    return data_file("logs")


def backups_dir() -> str:
    return data_file("backups")


def state_dir() -> str:
    return data_file("state")


def state_file(name: str) -> str:
    return os.path.join(state_dir(), name)


def data_file(name: str) -> str:
    """A file of ours directly in the data dir (pid, lock, token, spool, markers)."""
    return os.path.join(data_dir(), name)


def write_private_file(path: StrPath, data: str | bytes, *, durable: bool = True) -> None:
    """Atomically replace `path` with `data`, mode 0600, in a private (0700) folder."""
    ensure_dir(os.path.dirname(os.fspath(path)) or ".")
    replace_file(path, data, FILE_MODE, durable=durable)


def replace_file(path: StrPath, data: str | bytes, mode: int, *, durable: bool = True) -> None:
    """Atomically replace `path` with `data` (UTF-8 when text), the file then `mode`: readers
    never see half a file.

    The temporary file sits beside the target so the rename stays on one filesystem; on any
    failure (a full disk included) the old file is left untouched and the temporary removed.
    `durable=False` skips the fsync, for state a crash may lose (a cache): a write then costs
    no disk flush, and readers still see the old file or the new one, never half of either.
    """
    folder, name = os.path.split(os.fspath(path))
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:  # noqa: SIM105 - contextlib is more import than the hook path should pay
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def touch_private_file(path: StrPath) -> None:
    """Create `path` empty, mode 0600, if missing: SQLite then gives -wal/-shm files 0600 too."""
    ensure_dir(os.path.dirname(os.fspath(path)) or ".")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE)
    os.close(fd)
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, FILE_MODE)


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
