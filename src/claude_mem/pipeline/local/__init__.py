"""The built-in offline compressor: rules over recorded tool events, with no model and no I/O.

It exists so memory works with no API key, and it is deterministic (same events → same
drafts: no clock, no randomness), so a replay gives the same memory.

Units of work (a prompt turn, `ctx.turn` set — how the consumer compresses):
- One observation per unit of work, not per tool call. A turn is one unit unless the agent
  moves on after changing something: its words announce a new step ("Next, …"), or, once a
  change was verified (passing tests, a commit), it turns to files the unit has not touched.
  Reads, searches, listings, web lookups, test runs, commits and noise fold into their unit;
  every event of the turn is in exactly one unit's `source_event_ids`. Only noise: no unit.
- Title: the sentence of the unit's words (its reply too, for the last unit) that states a
  cause, change, rule or finding, over narration ("Let me look at…"); words that say little
  ("Done.", "I listed the files.") never title it. Else the request's first sentence with the
  symbols or files the unit worked on (first unit), then the agent's stated intent, then the
  events (the change, a failure, or "Investigated <files>"). ≤ 80 chars, cut at a word.
- Narrative: the agent's words for the unit, narration left out (else the describers').
- Facts: the evidence of its events, from their notes: files modified and read, symbols
  changed, test results ("Tests: 3 passed, 1 failed → 4 passed"), failing tests and
  assertions, errors, commits, code changed, symbols read, searches, other commands.
- Type: the strongest change type of its edits (a plain change typed by the prompt and the
  agent's words, unless it only touched docs and tests), else `discovery`. Concepts: the
  change's, then its events'. Calls to memory's own MCP tools are noise.
- Summary with the turn: "Learned" holds the causes, rules and gotchas the agent stated (then
  its findings), never test counts (those go to "notes"); "Completed" the files changed,
  commits and the agent's stated change; "Next steps" what it left open, never a cause. The
  consumer folds it into the session's one summary (`pipeline.session_summary`).

Per event (no turn: old callers, imported batches):
- One observation per meaningful event. Noise is skipped: todo lists and plans, an empty
  listing, a bare `cd`/`pwd`. Consecutive edits (Edit, MultiEdit, replace, a one-file
  patch) to the same file with the same type merge into one "Edited <file> (N edits)".
- Types. An edit/write/patch is `bugfix` when its prompt (or a comment it adds) speaks of a
  fix, bug, error, crash, failure or regression; `refactor` for rename/refactor/extract/
  move/cleanup; `feature` for add/implement/new/support; `bugfix` again when an earlier
  command in the batch failed; else `change`. A git commit is `change` (so is a shell
  command that plainly changes state: rm, mv, installs, git checkout...). Reads, searches,
  listings, web, test runs and failed commands are `discovery`.
- Titles name the file (relative path) and what happened, ≤ 120 chars, cut at a word.
  Failures say what failed ("`npm run build` failed: Cannot find module 'x'"); test runs
  give the counts.

Both:
- Drafts carry no file lists: the consumer stores the evidence (`pipeline.tools.evidence`) of
  exactly the events a draft names in `source_event_ids`. Describers ask the same functions
  for the files their titles name.
- Raw tool output is quoted sparingly: ≤ 200 chars in a per-event narrative and ≤ 300 chars
  of output lines across an event's facts (the whole output is stored with the raw event).

Modules: `compress` (events → drafts) and `summary` are the entry points; `describe` holds
the `DESCRIBERS` table (one describer per tool kind); one module per kind of event describes
it (`edits`, `lookups`, `web`, `tools`, `shell_notes`, `git`, `test_runs`), over shared
pieces (`note`, `classify`, `shell`, `code_text`, `responses`, `text`); `merge` joins
consecutive edits. Turns: `segment` cuts them into units, `words` reads the agent's prose,
`unit_facts` gathers a unit's evidence, `units` drafts them. The provider itself is
`providers.local`.
"""

from claude_mem.pipeline.local.compress import compress_events
from claude_mem.pipeline.local.summary import summarize_session

__all__ = ["compress_events", "summarize_session"]
