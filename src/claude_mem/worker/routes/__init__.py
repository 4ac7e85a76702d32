"""All endpoints, one module per group; the app and the OpenAPI document both read ENDPOINTS."""

from claude_mem.worker.api import Endpoint
from claude_mem.worker.routes import (
    config,
    context,
    corpus,
    data,
    embedding,
    health,
    hooks,
    memory,
    search,
    sessions,
    team,
    viewer,
)

ENDPOINTS: list[Endpoint] = [
    *health.ENDPOINTS,
    *sessions.ENDPOINTS,
    *data.ENDPOINTS,
    *config.ENDPOINTS,
    *context.ENDPOINTS,
    *search.ENDPOINTS,
    *embedding.ENDPOINTS,
    *memory.ENDPOINTS,
    *viewer.ENDPOINTS,
    *corpus.ENDPOINTS,
    *hooks.ENDPOINTS,
    *team.ENDPOINTS,
]
