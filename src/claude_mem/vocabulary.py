"""The observation types: one list for the compressor's prompt, the search filters, the CLI's
`--help`, the MCP tools and the viewer. Standard library only, so `--help` stays instant.

Stored records may carry other types too (imported ones, or a model's own word): search
accepts those as well, so they are checked against the store, not only this list.
"""

from __future__ import annotations

from typing import Literal

OBSERVATION_TYPES: tuple[str, ...] = (
    "bugfix",
    "feature",
    "refactor",
    "change",
    "discovery",
    "decision",
)

# Where an observation's unit of work came from: the agent's hooks, a transcript read after
# the fact, an import, or git history.
ObservationSource = Literal["hooks", "transcript", "import", "git"]
