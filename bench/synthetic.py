"""Deterministic, realistic-looking observations for benchmarks (no model, no network)."""

from __future__ import annotations

import random
from collections.abc import Iterator

from claude_mem.records import Observation

MODULES = [
    "scheduler", "auth", "parser", "cache", "router", "billing", "search", "worker", "config",
    "storage", "session", "export", "metrics", "render", "queue", "client", "migrations",
]  # fmt: skip
FOLDERS = ["src", "src/core", "src/api", "lib", "app/services", "pkg/internal", "tests"]
VERBS = ["Fixed", "Added", "Refactored", "Investigated", "Documented", "Removed", "Renamed"]
PROBLEMS = [
    "race condition when two workers claim the same job",
    "off-by-one in pagination cursor",
    "token expiry compared in milliseconds instead of seconds",
    "missing index on created_at slowing the dashboard",
    "unicode normalisation breaking path lookups",
    "retry loop without backoff hammering the API",
    "stale cache entry after settings change",
    "deadlock between writer thread and checkpoint",
]
TYPES = ["bugfix", "feature", "refactor", "change", "discovery", "decision"]
CONCEPTS = ["how-it-works", "problem-solution", "gotcha", "pattern", "trade-off", "what-changed"]


def observations(count: int, session_id: int, seed: int = 7) -> Iterator[Observation]:
    rng = random.Random(seed)
    for i in range(count):
        module = rng.choice(MODULES)
        path = f"{rng.choice(FOLDERS)}/{module}_{rng.randrange(40)}.py"
        problem = rng.choice(PROBLEMS)
        verb = rng.choice(VERBS)
        yield Observation(
            session_id=session_id,
            project=f"project-{rng.randrange(12)}",
            type=rng.choice(TYPES),
            title=f"{verb} {problem} in {path}",
            subtitle=f"{module} module, change #{i}",
            narrative=(
                f"While working on {module} we found the {problem}. The function "
                f"{module}_{rng.choice(['load', 'save', 'claim', 'render', 'sync'])}() in {path} "
                f"was changed; tests in tests/test_{module}.py now cover it. "
                + " ".join(rng.choice(PROBLEMS) for _ in range(2))
            ),
            facts=[
                f"{path}:{rng.randrange(1, 900)} changed",
                f"{rng.randrange(3, 300)} tests pass",
            ],
            concepts=rng.sample(CONCEPTS, 2),
            files_read=[f"{rng.choice(FOLDERS)}/{rng.choice(MODULES)}.py"],
            files_modified=[path],
            prompt_number=rng.randrange(1, 20),
            discovery_tokens=rng.randrange(200, 5000),
            created_at=1_700_000_000_000 + i * 60_000,
        )
