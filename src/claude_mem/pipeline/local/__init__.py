"""The built-in offline compressor: rules over recorded tool events, with no model and no I/O.

It exists so memory works with no API key, and it is deterministic (same events → same
drafts: no clock, no randomness), so a replay gives the same memory.

Rules in brief:
- One observation per meaningful event. Noise is skipped: todo lists and plans, an empty
  listing, a bare `cd`/`pwd`. Consecutive edits (Edit, MultiEdit, replace, a one-file
  patch) to the same file with the same type merge into one "Edited <file> (N edits)".
- Types. An edit/write/patch is `bugfix` when its prompt (or a comment it adds) speaks of a
  fix, bug, error, crash, failure or regression; `refactor` for rename/refactor/extract/
  move/cleanup; `feature` for add/implement/new/support; `bugfix` again when an earlier
  command in the batch failed; else `change`. A git commit is `change` (so is a shell
  command that plainly changes state: rm, mv, installs, git checkout...). Reads, searches,
  listings, web, test runs and failed commands are `discovery`.
- Titles name the file (relative path) and what happened, ≤ 120 chars. Failures say what
  failed ("`npm run build` failed: Cannot find module 'x'"); test runs give the counts.
- Drafts carry no file lists: the consumer stores the evidence (`pipeline.tools.evidence`) of
  exactly the events a draft names in `source_event_ids`. Describers ask the same functions
  for the files their titles name.
- Raw tool output is quoted sparingly: ≤ 200 chars in a narrative and ≤ 300 chars of output
  lines across the facts (the whole output is stored with the raw event anyway).

Modules: `compress` (events → drafts; its `DESCRIBERS` table names one describer per tool
kind) and `summary` are the entry points; one module per kind of event describes it
(`edits`, `lookups`, `web`, `tools`, `shell_notes`, `git`, `test_runs`), over shared pieces
(`note`, `classify`, `shell`, `code_text`, `responses`, `text`); `merge` joins consecutive
edits. The provider itself is `providers.local`.
"""

from claude_mem.pipeline.local.compress import compress_events
from claude_mem.pipeline.local.summary import summarize_session

__all__ = ["compress_events", "summarize_session"]
