"""Reading, diffing, backing up and writing the IDEs' JSON files.

Rules: a file that is not valid JSON (or not a JSON object) is never touched: ConfigError
names it. A file is written only if its parsed content changes, so a re-install leaves it
alone (formatting included). Before a change, a copy goes to one folder, the data dir's
`backups/config/` (named after the file's path, `…__settings.json.bak-YYYYmmddTHHMMSS-µs`), and
only the last KEEP_BACKUPS of each file are kept: never beside the file, so nothing piles up in
$HOME. Writes are atomic (temporary file + rename in the same
folder), keep the file's mode, and go through a symlink to its target (dotfile managers).
New output is indented like the existing file (2 spaces by default), key order kept.
"""

from __future__ import annotations

import copy
import difflib
import glob
import json
import os
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from claude_mem import locations, paths
from claude_mem.install.base import ConfigError, Doc, ShapeError, Target, TextTarget

KEEP_BACKUPS = 5


@dataclass(frozen=True)
class FileChange:
    """One file before and after (None: absent / to be deleted)."""

    path: Path
    before: str | None
    after: str | None
    what: str
    private: bool = False  # created 0600 (Target.private)

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff, `/dev/null` standing for a missing side."""
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=str(self.path) if self.before is not None else "/dev/null",
            tofile=str(self.path) if self.after is not None else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def parse(text: str | None, path: Path) -> Doc:
    """The file's JSON object; an absent or blank file is `{}`."""
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ConfigError(
            f"{path} is not valid JSON ({exc}); fix or move it, then run this again "
            "(it was left untouched)"
        ) from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{path} does not hold a JSON object; it was left untouched")
    return value


def _indent(text: str | None) -> int | str:
    for line in (text or "").splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            lead = line[: len(line) - len(stripped)]
            return "\t" if lead.startswith("\t") else len(lead)
    return 2


def render(doc: Doc, like: str | None = None) -> str:
    return json.dumps(doc, indent=_indent(like), ensure_ascii=False) + "\n"


def plan(target: Target | TextTarget, action: str) -> FileChange:
    """What `action` ("install" or "uninstall") does to `target` (nothing is written)."""
    before = read_text(target.path)
    if isinstance(target, TextTarget):
        try:
            return FileChange(target.path, before, target.edit(before, action), target.what)
        except ShapeError as exc:
            raise ConfigError(f"{target.path}: {exc}; it was left untouched") from exc
    original = parse(before, target.path)
    doc = copy.deepcopy(original)
    try:
        if action == "install":
            if before is None:
                doc = {**copy.deepcopy(dict(target.scaffold)), **doc}
            target.install(doc)
        else:
            target.uninstall(doc)
    except ShapeError as exc:
        raise ConfigError(f"{target.path}: {exc}; it was left untouched") from exc
    if doc == original:
        return FileChange(target.path, before, before, target.what, target.private)
    leftover = all(key in target.scaffold and doc[key] == target.scaffold[key] for key in doc)
    if action == "uninstall" and leftover:
        return FileChange(target.path, before, None, target.what, target.private)
    return FileChange(target.path, before, render(doc, before), target.what, target.private)


def _stamp() -> str:
    """Sortable to the microsecond, so names order as the backups were made."""
    now = time.time()
    return f"{time.strftime('%Y%m%dT%H%M%S', time.localtime(now))}-{int(now % 1 * 1e6):06d}"


def backup_dir() -> Path:
    return paths.backups_dir() / "config"


def backup_name(path: Path) -> str:
    """`home__dev__.claude__settings.json`: the config's absolute path, readable and unique."""
    return "__".join(path.absolute().parts[1:]) or path.name


def backups_of(path: Path) -> list[Path]:
    """The kept copies of the config file `path`, oldest first."""
    folder = backup_dir()
    return sorted(folder.glob(f"{glob.escape(backup_name(path))}.bak-*")) if folder.is_dir() else []


def backup(source: Path, config: Path | None = None) -> Path:
    """Copy `source` (the file behind the config `config`) into backup_dir(); prune the oldest."""
    folder = paths.ensure_dir(backup_dir())
    base = folder / f"{backup_name(config or source)}.bak-{_stamp()}"
    dest, n = base, 1
    while dest.exists():
        n += 1
        dest = base.with_name(f"{base.name}-{n}")
    shutil.copyfile(source, dest)
    os.chmod(dest, 0o600)  # the data dir's rule; configs can hold API keys
    for old in backups_of(config or source)[:-KEEP_BACKUPS]:
        old.unlink(missing_ok=True)
    return dest


def _default_mode() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomic(path: Path, text: str, *, private: bool = False) -> None:
    """Replace `path` with `text` at once, keeping its mode (new files: 0666 minus umask, or
    0600 when `private`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = paths.FILE_MODE if private else _default_mode()
    locations.replace_file(path, text, mode)


def apply(change: FileChange) -> Path | None:
    """Carry out one change (backup first); the backup's path, if one was made."""
    if not change.changed:
        return None
    real = Path(os.path.realpath(change.path))
    saved = backup(real, change.path) if change.before is not None and real.exists() else None
    if change.after is None:
        real.unlink(missing_ok=True)
    else:
        write_atomic(real, change.after, private=change.private)
    return saved
