"""THE hook process: `python -I -S .../claude_mem/hooks/entry.py <platform> <event>`.

Hosts run this once per agent event, so it starts the interpreter with -I -S (no site-packages
scan, no user environment): it then finds our package from its own location and imports only
the standard library plus our stdlib-only modules, so any CPython >= 3.11 can run it. Before
the platform, `--worker-python PATH` names the venv's python for a worker the hook starts (when
another interpreter runs the hook); `--probe` alone answers whether this interpreter can run
hooks (hooks/probe.py). The event goes to the running worker whole when it can (hooks.forward),
else through the full path (hooks.runner). `claude-mem hook <platform> <event>` runs the same
main().
"""

import os
import sys

WORKER_PYTHON_FLAG = "--worker-python"
PROBE_FLAG = "--probe"


def main(argv: list[str] | None = None) -> int:
    """Run one hook (see hooks.runner); returns the exit code for the host."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == [WORKER_PYTHON_FLAG] and len(args) > 1:
        from claude_mem.worker import interpreter  # noqa: PLC0415 - after the path is set up

        interpreter.use(args[1])
        args = args[2:]
    if args == [PROBE_FLAG]:
        from claude_mem.hooks import probe  # noqa: PLC0415

        return probe.main()
    from claude_mem.hooks.forward import run  # noqa: PLC0415

    return run(args)


if __name__ == "__main__":
    # .../<site-packages or src>/claude_mem/hooks/entry.py → .../<site-packages or src>, first,
    # so this file always runs with the package it ships in, whatever else is on the path.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    code = main()
    # Nothing of a hook needs the interpreter's teardown once its output is out (no thread, no
    # atexit, logs written unbuffered), and it costs about as much as the hook's own imports.
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - contextlib is more import than the hook path should pay
            stream.flush()
        except (OSError, ValueError):
            pass  # the host stopped listening
    os._exit(code)
