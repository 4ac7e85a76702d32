"""`claude-mem hook <platform> <event>`: run one hook, reading the host's payload on stdin.

The installed hooks call hooks/entry.py directly (faster: no CLI, no argparse); this is the same
main() for people and scripts.
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "platform", help="claude-code, codex, cursor, gemini-cli (antigravity), windsurf or raw"
    )
    parser.add_argument("event", help="the host's event name, e.g. post-tool-use or PostToolUse")


def run(args: argparse.Namespace) -> int:
    from claude_mem.hooks.entry import main

    return main([args.platform, args.event])
