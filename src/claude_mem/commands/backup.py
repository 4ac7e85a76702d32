"""`claude-mem backup [PATH]`: a consistent copy of the memory database, even while in use.

Default PATH: backups/manual-<time>.db in the data dir; a folder puts the copy inside it.
The worker also keeps daily backups (CLAUDE_MEM_BACKUP_RETENTION of them).
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", help="file (or folder) to write; default backups/")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from claude_mem.backup import BackupError, backup
    from claude_mem.store.db import open_database
    from claude_mem.store.stats import describe

    try:
        with open_database() as db:
            made = backup(db, Path(args.path).expanduser() if args.path else None)
    except BackupError as exc:
        print(f"claude-mem backup: {exc}")
        return 2
    if args.json:
        print(json.dumps({"path": str(made.path), "bytes": made.bytes, "counts": made.counts}))
        return 0
    print(f"backup written to {made.path} ({made.bytes:,} bytes: {describe(made.counts)})")
    return 0
