"""`claude-mem install` / `uninstall`: our hooks merged into each agent's own config file.

One module per IDE (`claude_code`, `codex`, `gemini_cli`, `cursor`, `windsurf`, and `plugin` for
a `claude --plugin-dir` folder) says which file holds what; `base` has the shared shapes and
the hook command, `merge` edits hook tables, `files` reads, diffs, backs up and writes, and
`flow` runs it all for the two commands; `http_hooks` makes Claude Code's http hooks. Our
entries are recognised by their command running `claude_mem/hooks/entry.py` (an http hook by
its URL's path, our hook route), so a re-install replaces them in place and an uninstall
removes exactly them. Standard library only; nothing here is imported by the hook path.
"""

from __future__ import annotations

# --ide values, in the order help lists them (cheap: the CLI parser reads this at startup)
IDES: tuple[str, ...] = ("claude-code", "codex", "cursor", "gemini-cli", "windsurf")
# --hook-transport values: Claude Code's per-tool-call hooks as http posts or commands
TRANSPORTS: tuple[str, ...] = ("http", "command")
