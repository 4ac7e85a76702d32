"""What the benchmarks share to summarise their timings."""

from __future__ import annotations


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank value at `fraction` (0.5: the median) of `values`, one of them."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]
