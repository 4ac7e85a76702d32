"""The same context for the person at the terminal (the host's `systemMessage`).

Built from the rows the agent got, so both always agree; plainer layout, no markdown, no
colours (hosts differ in what they render).
"""

from __future__ import annotations

from claude_mem.context.render import Context
from claude_mem.context.timeline import index_lines
from claude_mem.text import shorten

NEXT_CHARS = 200


def terminal_view(context: Context) -> str:
    """Lines for the user; empty when the agent got nothing but a welcome or a warning."""
    if not context.rows:
        return ""
    lines = []
    for section, title in (("decision", "Decisions in force"), ("finding", "Latest findings")):
        picked = [row for row in context.rows if row.section == section]
        lines += [title] if picked else []
        lines += [f"  #{row.ident:<6} {row.stamp} {row.mark} {row.title}" for row in picked]
    index = [row for row in context.rows if row.section == "index"]
    for heading, row, clock in index_lines(index):
        if heading:
            lines.append(heading)
        lines.append(f"  #{row.ident:<6} {clock:<5} {row.mark} {row.title}")
    if context.dropped:
        lines.append(f"  … {context.dropped:,} rows left out (token budget)")
    if context.economics is not None:
        lines.append(context.economics.line)
    lines.append(f"Injected: ~{context.tokens:,} of {context.budget:,} tokens")
    summaries = context.memory.summaries
    if summaries and summaries[0].get("next_steps"):
        lines.append(
            f"Next steps (S{summaries[0]['id']}): {shorten(summaries[0]['next_steps'], NEXT_CHARS)}"
        )
    return "\n".join(lines)
