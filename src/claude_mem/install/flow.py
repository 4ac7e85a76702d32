"""The install and uninstall commands end to end: plan every file, show or apply, then the worker.

Nothing is written before every file has been read and checked, so one broken config stops
the run with all files untouched. `--print` only shows the diffs.
"""

from __future__ import annotations

import importlib
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TextIO

from claude_mem import __version__
from claude_mem.install import claude_code, files, hook_python, http_hooks, mcp, plugin
from claude_mem.install.base import ConfigError, HookCommand, Scope, Target, TextTarget
from claude_mem.install.http_hooks import HttpHooks

START_WAIT_S = 10.0
VIEWER = "the viewer: `claude-mem viewer --open` signs a browser in"
MODULES = {
    "claude-code": "claude_code",
    "codex": "codex",
    "cursor": "cursor",
    "gemini-cli": "gemini_cli",
    "windsurf": "windsurf",
}


@dataclass(frozen=True)
class Options:
    action: str  # "install" | "uninstall"
    ide: str = "claude-code"
    project: bool = False
    dry_run: bool = False
    plugin_dir: Path | None = None
    worker: bool = True  # install: start it; uninstall: stop it
    hook_transport: str = "http"  # Claude Code's per-tool-call hooks: http | command


def ide_module(ide: str) -> ModuleType:
    return importlib.import_module(f"claude_mem.install.{MODULES[ide]}")


@dataclass(frozen=True)
class Plan:
    label: str
    targets: Sequence[Target | TextTarget]
    notes: list[str]
    events: tuple[str, ...]


def _http(opts: Options) -> HttpHooks | None:
    """Claude Code's http hooks for this install, or None (command hooks, other hosts)."""
    claude = opts.plugin_dir is not None or opts.ide == "claude-code"
    if opts.action != "install" or opts.hook_transport != "http" or not claude:
        return None
    return http_hooks.current(create_token=not opts.dry_run)


def _plan(
    opts: Options, scope: Scope, command: HookCommand, with_mcp: bool, http: HttpHooks | None
) -> Plan:
    if opts.plugin_dir is not None:
        folder = opts.plugin_dir.expanduser().absolute()
        targets = plugin.targets(folder, command, with_mcp, http)
        events = tuple(hook.event for hook in claude_code.HOOKS)
        return Plan(f"{plugin.LABEL} in {folder}", targets, [], events)
    module = ide_module(opts.ide)
    where = f"project {scope.project}" if scope.project is not None else "user settings"
    targets = (
        claude_code.targets(scope, command, with_mcp, http)
        if http is not None
        else module.targets(scope, command, with_mcp)
    )
    return Plan(
        f"{module.LABEL} ({where})",
        targets,
        module.notes(scope, command, opts.action, with_mcp),
        tuple(hook.event for hook in module.HOOKS),
    )


def _command(opts: Options, scope: Scope) -> tuple[HookCommand, str]:
    """This install's hook command, and why its hooks run the interpreter they do: an install
    (re)chooses it, keeping the one the files it writes already run while that still fits, so
    `--print` and a re-install with nothing changed agree with the last install."""
    command = HookCommand.current()
    if opts.action != "install":
        return command, ""
    files_written = _plan(opts, scope, command, with_mcp=False, http=None).targets
    running = sorted(
        python
        for target in files_written
        for python, entry in hook_python.commands_in(str(target.path))
        if entry == command.entry
    )
    command, choice = hook_python.chosen(command, running[0] if running else "")
    return command, choice.why


def _hooks_run(command: HookCommand, why: str) -> str:
    line = shlex.join(command.argv("", "")[:-2])  # the platform and event come last
    return f"hooks run: {line} <platform> <event>" + (f" ({why})" if why else "")


def _undo_hint(opts: Options) -> str:
    words = ["claude-mem", "uninstall" if opts.action == "install" else "install"]
    if opts.plugin_dir is not None:
        words += ["--plugin-dir", str(opts.plugin_dir.expanduser().absolute())]
    else:
        words += ["--ide", opts.ide] + (["--project"] if opts.project else [])
    return shlex.join(words)


def run(
    opts: Options,
    *,
    scope: Scope | None = None,
    command: HookCommand | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Carry out `opts`; the exit code (1 when a file could not be read, checked or written)."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        why = ""
        scope = scope or Scope.current(opts.project)
        if command is None:
            command, why = _command(opts, scope)
        # Uninstall always looks for our MCP entry: a previous version may have written one.
        with_mcp = opts.action == "uninstall" or mcp.available()
        http = _http(opts)
        plan = _plan(opts, scope, command, with_mcp, http)
        changes = [files.plan(target, opts.action) for target in plan.targets]
    except ConfigError as exc:
        print(f"claude-mem {opts.action}: {exc}", file=err)
        return 1

    if opts.dry_run:
        print(f"claude-mem {opts.action} --print: {plan.label}; nothing is written", file=out)
        for change in changes:
            if change.changed:
                out.write(change.diff())
            elif change.before is not None:
                print(f"(no change to {change.path})", file=out)
        if opts.action == "install":
            print(_hooks_run(command, why), file=out)
        return 0

    print(f"claude-mem {__version__} {opts.action}: {plan.label}", file=out)
    for change in changes:
        if change.before is None and change.after is None:
            continue  # a file that neither exists nor should: nothing to say
        try:
            saved = files.apply(change)
        except OSError as exc:
            print(f"claude-mem {opts.action}: cannot write {change.path}: {exc}", file=err)
            return 1
        backup = f" (backup: {saved})" if saved is not None else ""
        print(f"  {_state(change):<9} {change.path} [{change.what}]{backup}", file=out)
    for note in plan.notes:
        print(f"note: {note}", file=out)
    if opts.action == "install":
        print(f"hooks: {', '.join(plan.events)}", file=out)
        if http is not None:
            print(f"http hooks: {', '.join(sorted(http_hooks.EVENTS))} post to "
                  f"{http.url('')}<event>", file=out)  # fmt: skip
        port = _after_install(opts, command, why, out, err)
        if http is not None and port not in (None, http.port):
            print(f"the worker listens on port {port}: rewriting the http hooks' URLs", file=out)
            return run(opts, scope=scope, command=command, out=out, err=err)
    else:
        _after_uninstall(opts, out)
    print(f"undo: {_undo_hint(opts)}", file=out)
    return 0


def _state(change: files.FileChange) -> str:
    if not change.changed:
        return "unchanged"
    if change.before is None:
        return "created"
    return "removed" if change.after is None else "updated"


def _after_install(
    opts: Options, command: HookCommand, why: str, out: TextIO, err: TextIO
) -> int | None:
    """Install marker (the hooks' version check reads it), then the worker and how to sign in
    to its viewer (a bare URL shows "not signed in"); the port of the worker it found or
    started."""
    from claude_mem.commands.autostart import ensure_worker, started_line  # noqa: PLC0415
    from claude_mem.hooks import version_check  # noqa: PLC0415

    try:
        version_check.write_install_marker()
    except OSError as exc:
        print(f"warning: cannot write the install marker: {exc}", file=err)
    print(_hooks_run(command, why), file=out)
    try:
        if not opts.worker:
            print(f"worker: not started (the first session starts it); {VIEWER}", file=out)
            return None
        info, started = ensure_worker(START_WAIT_S)
    except Exception as exc:  # a broken settings file, an unusable data dir: doctor explains
        print(f"worker: not started ({type(exc).__name__}: {exc}); see `claude-mem doctor`",
              file=err)  # fmt: skip
        return None
    if info is None:
        print(f"worker: not healthy within {START_WAIT_S:.0f} s; hooks retry on demand; "
              "see `claude-mem doctor`", file=err)  # fmt: skip
        return None
    what = started_line(info) if started else f"already running (pid {info.pid}, port {info.port})"
    print(f"worker: {what}; {VIEWER}", file=out)
    return info.port


def _after_uninstall(opts: Options, out: TextIO) -> None:
    from claude_mem import paths  # noqa: PLC0415

    if opts.worker:
        from claude_mem.worker import lifecycle  # noqa: PLC0415

        info = lifecycle.read_pid_info()
        if lifecycle.stop():
            pid = info["pid"] if info else "?"
            print(f"worker: stopped (pid {pid}); `--keep-worker` leaves it running", file=out)
    data = paths.data_dir()
    print(f"your memory stays in {data}; to delete it: rm -rf {shlex.quote(str(data))}", file=out)
