"""THE hook process: `python -I -S .../claude_mem/hooks/entry.py <platform> <event>`.

Hosts run this once per agent event, so it starts the interpreter with -I -S (no site-packages
scan, no user environment): it then finds our package from its own location and imports only
the standard library plus our stdlib-only modules. `claude-mem hook <platform> <event>` runs the
same main().
"""

import os
import sys


def main(argv: list[str] | None = None) -> int:
    """Run one hook (see hooks.runner); returns the exit code for the host."""
    from claude_mem.hooks.runner import run  # noqa: PLC0415 - after the path is set up

    return run(sys.argv[1:] if argv is None else list(argv))


if __name__ == "__main__":
    # .../<site-packages or src>/claude_mem/hooks/entry.py → .../<site-packages or src>, first,
    # so this file always runs with the package it ships in, whatever else is on the path.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    sys.exit(main())
