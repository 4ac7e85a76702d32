"""The observation types are one list: every place that offers or explains them (the LLM's
prompt, the memory API's document, the MCP tools' schemas, the CLI's help, the timeline's
marks, the viewer's filters) shows exactly `vocabulary.OBSERVATION_TYPES`."""

from __future__ import annotations

import asyncio
from typing import Any

from claude_mem.context.timeline import TYPE_MARKS
from claude_mem.mcp.server import build_server
from claude_mem.pipeline.prompts import observation_prompt
from claude_mem.vocabulary import DEFAULT_TYPE, OBSERVATION_TYPES, TYPE_MEANINGS
from claude_mem.worker.api import openapi
from claude_mem.worker.routes import ENDPOINTS
from tests.test_pipeline_prompts import CTX, event
from tests.worker_fixtures import RunningWorker
from tests.worker_process import run_cli

TYPES = list(OBSERVATION_TYPES)


def test_every_type_has_a_meaning_and_a_mark() -> None:
    assert list(TYPE_MEANINGS) == TYPES
    assert list(TYPE_MARKS) == TYPES
    assert DEFAULT_TYPE in TYPES


def test_the_prompt_offers_each_type_with_its_meaning() -> None:
    prompt = observation_prompt([event()], CTX)
    assert f"<type>one of: {', '.join(TYPES)}</type>" in prompt
    for kind, meaning in TYPE_MEANINGS.items():
        assert f"{kind} {meaning}" in prompt


def test_the_memory_api_document_accepts_exactly_the_types() -> None:
    body = openapi(ENDPOINTS)["components"]["schemas"]["MemoryBody"]["properties"]["type"]
    assert sorted(body["enum"]) == sorted(TYPES)
    assert body["default"] == DEFAULT_TYPE


def test_the_mcp_tools_offer_exactly_the_types() -> None:
    tools: dict[str, Any] = {
        t.name: t.input_schema for t in asyncio.run(build_server().list_tools())
    }
    saved = tools["save_memory"]["properties"]["type"]
    assert (saved["enum"], saved["default"]) == (TYPES, DEFAULT_TYPE)
    listed = tools["corpus_build"]["properties"]["types"]["anyOf"][0]
    assert (listed["items"]["enum"], listed["maxItems"]) == (TYPES, len(TYPES))
    assert ", ".join(TYPES) in tools["search"]["properties"]["type"]["description"]


def test_search_help_names_the_types() -> None:
    out = run_cli("search", "--help")
    assert out.returncode == 0
    assert ", ".join(TYPES) in " ".join(out.stdout.split())


def test_the_viewer_offers_the_types_first(worker: RunningWorker) -> None:
    assert worker.client.get("/api/viewer/meta").json()["types"][: len(TYPES)] == TYPES
