"""Time the viewer's first paint over 10k stored observations in headless Chromium.

    .venv/bin/python bench/viewer_bench.py [--observations 10000] [--rounds 10]

A real worker process (started by `claude-mem viewer`, embeddings off) serves a fresh data dir
seeded with bench/synthetic.py observations; each round opens the page in a new tab of one
signed-in browser and reads `first-cards` (a mark the feed sets when its first cards are in
the DOM) and first-contentful-paint, both in ms since navigation start, plus the slowest
request before the mark. Prints a Markdown table; the latest figures are in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright
from tests.net import free_port
from tests.viewer_harness import first_cards_ms, launch, seed_bulk, start_worker, worker_env

SLOWEST_REQUEST = """() => {
  const mark = performance.getEntriesByName('first-cards')[0].startTime;
  const before = performance.getEntriesByType('resource').filter(r => r.responseEnd <= mark);
  const slowest = before.sort((a, b) => b.duration - a.duration)[0];
  return slowest ? [slowest.name.replace(location.origin, ''), slowest.duration] : ['', 0];
}"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--observations", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="viewer-bench-") as scratch:
        root = Path(scratch)
        (root / "home").mkdir()
        (root / "data").mkdir(mode=0o700)
        seed_bulk(root / "data", args.observations)
        worker, link = start_worker(worker_env(root / "data", free_port(), root / "home"))
        try:
            with sync_playwright() as playwright:
                browser = launch(playwright)
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                page.goto(link)
                first_cards_ms(page)
                page.close()
                cards, paints, slow = [], [], []
                for _ in range(args.rounds):
                    page = context.new_page()
                    page.goto(worker.base + "/")
                    cards.append(first_cards_ms(page))
                    paints.append(page.evaluate(
                        "performance.getEntriesByName('first-contentful-paint')[0].startTime"
                    ))  # fmt: skip
                    slow.append(page.evaluate(SLOWEST_REQUEST))
                    page.close()
                browser.close()
        finally:
            worker.stop()
    slowest = max(slow, key=lambda pair: pair[1])
    print("| observations | rounds | first cards median | max | FCP median | slowest request |")
    print("|---|---|---|---|---|---|")
    print(
        f"| {args.observations:,} | {args.rounds} | {statistics.median(cards):.0f} ms "
        f"| {max(cards):.0f} ms | {statistics.median(paints):.0f} ms "
        f"| `{slowest[0]}` {slowest[1]:.0f} ms |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
