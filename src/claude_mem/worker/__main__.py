"""`python -m claude_mem.worker run [--port N] [--host H]`: what launchers spawn."""

from __future__ import annotations

import argparse
import sys


def port_number(text: str) -> int:
    """A TCP port, 0 (any free port) to 65535."""
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port number (0-65535)")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m claude_mem.worker")
    parser.add_argument("action", choices=["run"])
    parser.add_argument(
        "--port", type=port_number, help="TCP port (default CLAUDE_MEM_WORKER_PORT)"
    )
    parser.add_argument("--host", help="loopback address (default CLAUDE_MEM_WORKER_HOST)")
    args = parser.parse_args(argv)
    from claude_mem.worker.main import run  # noqa: PLC0415 - argparse errors stay instant

    return run(port=args.port, host=args.host)


if __name__ == "__main__":
    sys.exit(main())
