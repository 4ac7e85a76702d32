"""Web fetches and web searches: which page or query, and what came back."""

from __future__ import annotations

import re

from claude_mem.pipeline.local.note import Note, Scope, discovery
from claude_mem.pipeline.local.responses import json_text, response_text
from claude_mem.pipeline.local.text import (
    EXCERPT_CHARS,
    SUBTITLE_CHARS,
    as_int,
    as_str,
    clip,
    dedup,
    excerpt,
    in_quotes,
    shortlist,
)
from claude_mem.pipeline.providers.base import ToolEvent
from claude_mem.pipeline.tools.inputs import input_dict
from claude_mem.text import counted

_URL = re.compile(r"https?://[^\s'\"<>)]+")


def fetch_note(event: ToolEvent, scope: Scope) -> Note:
    """WebFetch / web_fetch: which page, what was asked, and the gist of the answer."""
    data = input_dict(event)
    prompt = as_str(data.get("prompt"))
    url = as_str(data.get("url"))
    if not url:
        found = _URL.search(prompt[:5000])
        url = found.group(0) if found else ""
    page = re.sub(r"^https?://(?:www\.)?", "", url) or "a web page"
    response = event.tool_response
    answer = response_text(response)
    code = as_int(response.get("code")) if isinstance(response, dict) else None
    facts = [f"Question: {clip(prompt, 180)}"] if prompt else []
    if code is not None:
        facts.append(f"HTTP {code}")
    narrative = f"Fetched {url or page}."
    if answer:
        narrative += f" Answer: {in_quotes(excerpt(answer), EXCERPT_CHARS)}."
    return discovery(
        event,
        "web",
        f"Fetched {page}" + (f": {clip(prompt, 60)}" if prompt else ""),
        subtitle=clip(url, SUBTITLE_CHARS),
        narrative=narrative,
        facts=facts,
        investigated=[url or page],
    )


def websearch_note(event: ToolEvent, scope: Scope) -> Note:
    """WebSearch / google_web_search: the query, and the sources found."""
    query = as_str(input_dict(event).get("query")) or "?"
    urls = dedup(_URL.findall(json_text(event.tool_response)))[:20]
    found = f" ({counted(len(urls), 'source')})" if urls else ""
    title = f"Searched the web for {in_quotes(query, 60)}{found}"
    facts = [f"Sources: {shortlist(urls, 3)}"] if urls else []
    return discovery(
        event,
        "web",
        title,
        subtitle=f"query {in_quotes(query, 80)}",
        narrative=f"Searched the web for {in_quotes(query, 120)}.",
        facts=facts,
        investigated=[f"web: {in_quotes(query)}"],
    )
