"""`claude-mem restore PATH`: replace the memory database with a backup.

Refused while the worker runs (stop it first). The database being replaced is kept as
backups/pre-restore-<time>.db, so a restore can itself be undone.
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="a backup made by `claude-mem backup` (or the worker)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def run(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from claude_mem.backup import BackupError, restore
    from claude_mem.settings import load as load_settings
    from claude_mem.store.stats import describe

    redact = load_settings().get_bool("CLAUDE_MEM_REDACT_SECRETS")
    try:
        safety, counts = restore(Path(args.path), redact_secrets=redact)
    except BackupError as exc:
        print(f"claude-mem restore: {exc}")
        return 2
    if args.json:
        print(json.dumps({"restored": args.path, "safety_copy": safety and str(safety),
                          "counts": counts}))  # fmt: skip
        return 0
    print(f"restored {args.path}: {describe(counts)}")
    if safety is not None:
        print(f"the previous database is kept as {safety}")
    return 0
