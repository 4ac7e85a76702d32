"""`claude-mem viewer [--open]`: print (and optionally open) a one-time link that signs this
browser in to the web viewer; the worker is started if it isn't running, and stderr says so."""

from __future__ import annotations

import argparse
import sys

START_WAIT_S = 10.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--open", action="store_true", help="also open the link in a browser")


def run(args: argparse.Namespace) -> int:
    from claude_mem.commands.autostart import ensure_worker, started_line
    from claude_mem.viewer.auth import LINK_TTL_S
    from claude_mem.viewer.link import LinkError, sign_in_link
    from claude_mem.worker import lifecycle

    info, started = ensure_worker(START_WAIT_S)
    if info is None:
        print(
            f"the worker did not become healthy within {START_WAIT_S:.0f} s; "
            f"see {lifecycle.stderr_log_path()} and `claude-mem logs`",
            file=sys.stderr,
        )
        return 1
    if started:
        print(f"claude-mem: {started_line(info)}", file=sys.stderr)
    try:
        url = sign_in_link(info.host, info.port)
    except LinkError as exc:
        print(f"claude-mem viewer: {exc}", file=sys.stderr)
        return 1
    minutes = int(LINK_TTL_S // 60)
    print(f"Viewer sign-in link (works once, for {minutes} minutes; keep it private):")
    print(f"  {url}")
    if args.open:
        import webbrowser

        if not webbrowser.open(url):
            print("no browser could be opened here: copy the link into one", file=sys.stderr)
    return 0
