"""`claude-mem demo`: the whole memory loop on embedded defaults, in a few seconds.

A worker is started for a temporary data dir (never the user's memory unless `--data-dir`
says so); three Claude Code sessions recorded from the real CLI 2.1.332 (`sessions/*.jsonl`,
made by tests/fixtures/demo/record.py) are replayed through the real hook command, one
subprocess per event, exactly as Claude Code runs our installed hooks, each with the session's
transcript (`sessions/*.transcript.jsonl`) written as far as Claude Code had written it then;
the offline `local` compressor turns each prompt turn, in the agent's own words, into
observations and a summary; then the demo prints what the next
session would get injected, a full-text search and the viewer URL.

- `recorded`: loading the recordings, moving them into a scratch project, the project's files;
- `run`: the worker, the replay, the wait for compression, and the report.
"""

from claude_mem.demo.run import DemoError, run_demo

__all__ = ["DemoError", "run_demo"]
