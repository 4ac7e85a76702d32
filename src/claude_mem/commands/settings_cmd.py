"""`claude-mem settings`: list, get or set settings, validated like the worker does."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.add_parser("list", help="every setting with its value and where it came from")
    get = actions.add_parser("get", help="one setting's value")
    get.add_argument("key")
    put = actions.add_parser("set", help="change a setting in settings.json")
    put.add_argument("key")
    put.add_argument("value")


def run(args: argparse.Namespace) -> int:
    import sys

    from claude_mem import settings
    from claude_mem.pipeline import registry  # noqa: F401 - provider names are checked too

    if args.action == "set":
        try:
            settings.save({args.key: args.value})
        except settings.SettingsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        loaded = settings.load()
        settings.warn(loaded)
        print(f"{args.key} = {loaded.public()[args.key]}")
        return 0
    loaded = settings.load()
    settings.warn(loaded)
    shown = loaded.public()
    if args.action == "get":
        if args.key not in shown:
            print(f"{args.key}: unknown setting", file=sys.stderr)
            return 2
        print(shown[args.key])
        return 0
    for key, value in shown.items():
        print(f"{key}={value}  ({loaded.sources[key]})")
    return 0
