"""Where the vector half's similarity floor (`hybrid.MIN_SIMILARITY`) sits, on real embeddings.

    .venv/bin/python bench/vector_floor.py [--noise 1000]

The records of tests/fixtures/vector-floor/memories.json (coding-agent observations,
summaries and prompts) are embedded with the bundled MiniLM model, as the store embeds them;
the fixture's one-tool-call log rows and `--noise` synthetic observations (bench/synthetic.py)
are the crowd an unrelated query is also scored against (short, code-like rows draw nonsense
closest). Each related query (the record's
meaning in other words) is scored against its own record; each unrelated query (nonsense
tokens, random identifiers, other subjects) against every record. The floor must sit below
every related score and above every unrelated one; the table shows both distributions and
how many of each the current floor keeps.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import claude_mem.search  # noqa: F401 - first: numpy's thread default, as in the worker

# isort: split
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import synthetic
from claude_mem.search.embed import load_embedder
from claude_mem.search.hybrid import MIN_SIMILARITY

FIXTURE = Path(__file__).parents[1] / "tests" / "fixtures" / "vector-floor" / "memories.json"
FIELDS = {"observations": ("title", "narrative"), "summaries": ("request", "learned", "completed"),
          "prompts": ("text",)}  # fmt: skip


def records(fixture: dict) -> list[tuple[str, list[str]]]:
    """(text as the store embeds it, related queries) for every fixture record."""
    return [
        ("\n".join(item[f] for f in fields), item["queries"])
        for group, fields in FIELDS.items()
        for item in fixture[group]
    ]


def noise_texts(count: int) -> list[str]:
    return [
        "\n".join(filter(None, (o.title, o.subtitle, o.narrative, *o.facts)))
        for o in synthetic.observations(count, session_id=1)
    ]


def quantiles(values: np.ndarray) -> str:
    low, p10, median, p90, high = np.quantile(values, [0, 0.1, 0.5, 0.9, 1])
    return f"{low:.3f} | {p10:.3f} | {median:.3f} | {p90:.3f} | {high:.3f}"


def sweep(own: np.ndarray, alone: np.ndarray, crowded: np.ndarray, floor: float) -> str:
    """Rows of floors around `floor`: related queries kept, unrelated queries with any hit."""
    rows = []
    for candidate in np.round(np.arange(floor - 0.06, floor + 0.065, 0.01), 2):
        mark = " (`MIN_SIMILARITY`)" if np.isclose(candidate, floor) else ""
        rows.append(
            f"| {candidate:.2f}{mark} | {int((own >= candidate).sum())}/{len(own)} "
            f"| {int((alone >= candidate).sum())}/{len(alone)} "
            f"| {int((crowded >= candidate).sum())}/{len(crowded)} |"
        )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--noise", type=int, default=1000, help="synthetic observations added")
    args = parser.parse_args()
    embedder = load_embedder("minilm-l6-int8")
    assert embedder is not None
    fixture = json.loads(FIXTURE.read_text("utf-8"))
    found = records(fixture)
    matrix = embedder.embed([text for text, _ in found])
    noise = embedder.embed(fixture["tool_log_rows"] + noise_texts(args.noise))
    related = [(row, q) for row, (_, queries) in enumerate(found) for q in queries]
    query_vectors = embedder.embed([q for _, q in related])
    scores = query_vectors @ matrix.T
    own = np.array([scores[i, row] for i, (row, _) in enumerate(related)])
    beaten = (scores > own[:, None]).sum(axis=1)
    unrelated = embedder.embed(fixture["unrelated"])
    alone = (unrelated @ matrix.T).max(axis=1)
    crowded = np.maximum(alone, (unrelated @ noise.T).max(axis=1))
    print(
        f"Model `{embedder.model_id}`; {len(found)} fixture records, {len(related)} related "
        f"and {len(alone)} unrelated queries; `MIN_SIMILARITY` = {MIN_SIMILARITY}.\n"
    )
    print("| cosine similarity | min | p10 | median | p90 | max |")
    print("|---|---:|---:|---:|---:|---:|")
    print(f"| related query → its record | {quantiles(own)} |")
    print(f"| unrelated query → best fixture record | {quantiles(alone)} |")
    crowd = f"{len(fixture['tool_log_rows'])} log rows + {args.noise} synthetic"
    print(f"| unrelated query → best of fixture + {crowd} | {quantiles(crowded)} |")
    print(
        f"\nRelated queries whose record the vectors rank first: {int((beaten == 0).sum())}"
        f"/{len(beaten)}; within the top 3: {int((beaten < 3).sum())}/{len(beaten)}.\n"
    )
    print("| floor | related kept | unrelated with a hit | ... among log rows and synthetic too |")
    print("|---|---:|---:|---:|")
    print(sweep(own, alone, crowded, MIN_SIMILARITY))
    print("\n| closest calls | kind | score |")
    print("|---|---|---:|")
    for i in np.argsort(own)[:3]:
        print(f"| {related[i][1]} | related | {own[i]:.3f} |")
    for i in np.argsort(-crowded)[:3]:
        print(f"| {fixture['unrelated'][i]} | unrelated | {crowded[i]:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
