"""The observation types: one list for the compressor's prompt, the search filters, the CLI's
`--help`, the MCP tools, the memory API and the viewer (which gets it from `/api/viewer/meta`).
Standard library only, so `--help` stays instant.

Stored records may carry other types too (imported ones, or a model's own word): search
accepts those as well, so they are checked against the store, not only this list.
"""

from __future__ import annotations

from typing import Literal, get_args

ObservationType = Literal["bugfix", "feature", "refactor", "change", "discovery", "decision"]
OBSERVATION_TYPES: tuple[ObservationType, ...] = get_args(ObservationType)
# What a record without a type (a model's reply, a saved memory, an import) becomes.
DEFAULT_TYPE: ObservationType = "discovery"
# When each type applies, in the words the LLM compressor is given.
TYPE_MEANINGS: dict[ObservationType, str] = {
    "bugfix": "when something broken now works",
    "feature": "for a new capability",
    "refactor": "for a restructuring that keeps behaviour",
    "change": "for other edits (configuration, docs, dependencies)",
    "discovery": "when the agent learned how existing code or a system behaves",
    "decision": "when one option was chosen over another, with the reason",
}

# Where an observation's unit of work came from: the agent's hooks, a transcript read after
# the fact, an import, git history, a memory saved by hand (the API, the MCP tool), or a
# teammate's memory pulled from the team server (team/sync.py).
ObservationSource = Literal["hooks", "transcript", "import", "git", "manual", "team"]
TEAM_SOURCE: ObservationSource = "team"
# Where a search looks: this machine's store (the team's pulled rows included), or the team
# server's records beyond that copy (CLAUDE_MEM_TEAM_URL).
SearchScope = Literal["local", "team"]
DEFAULT_SCOPE: SearchScope = "local"
HISTORY_SOURCE: ObservationSource = "git"


def commit_fact(sha: str) -> str:
    """The fact a commit's observation opens with: its full hash, which full text finds."""
    return f"commit {sha}"


def shown_type(kind: str, source: object = None, commit: object = None) -> str:
    """A record's type as people and agents read it: a commit read from the project's git
    history says so, `decision · history a1b2c3d`, where a session's memory says `decision`."""
    if source != HISTORY_SOURCE:
        return kind
    return f"{kind} · history {str(commit)[:7]}" if commit else f"{kind} · history"
