"""`claude-mem mcp`: serve the memory tools to an agent over stdio (MCP)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options: the agent starts it; the worker address comes from settings."""


def run(args: argparse.Namespace) -> int:
    from claude_mem.mcp.front import main

    return main()
