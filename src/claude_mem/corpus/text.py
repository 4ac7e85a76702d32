"""Corpus API answers as compact text for a model (the MCP corpus tools)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from claude_mem.corpus.render import day
from claude_mem.text import counted


def info_line(info: Mapping[str, Any]) -> str:
    stats = info.get("stats") or {}
    dates = stats.get("date_range") or {}
    types = ", ".join(f"{k} {v}" for k, v in (stats.get("type_breakdown") or {}).items())
    line = (
        f"{info.get('name')}: {counted(stats.get('observation_count', 0), 'observation')}, "
        f"{day(dates.get('earliest'))} to {day(dates.get('latest'))}, "
        f"~{counted(stats.get('token_estimate', 0), 'token')}"
    )
    if types:
        line += f" ({types})"
    if info.get("description"):
        line += f" — {info['description']}"
    return line


def corpus_list(data: Any) -> str:
    items = data.get("corpora") if isinstance(data, dict) else None
    if not items:
        return "No corpora yet. Build one with corpus_build(name, project=..., query=...)."
    lines = [f"{len(items)} corpus/corpora:", *(f"- {info_line(i)}" for i in items)]
    lines.append("Ask one with corpus_query(name, question).")
    return "\n".join(lines)


def built(data: Any) -> str:
    return f"Built corpus {info_line(data)}. Ask it with corpus_query(name, question)."


def answer(data: Any) -> str:
    text = str(data.get("answer") or "").strip() or "(the provider gave an empty answer)"
    notes = []
    if data.get("left_out"):
        notes.append(f"{data['left_out']} older observations did not fit the model's budget")
    if data.get("session_expired"):
        notes.append("the corpus session had expired and was primed again")
    tail = f"\n\n({'; '.join(notes)})" if notes else ""
    return f"{text}{tail}"
