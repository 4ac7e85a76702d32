"""Asking the running worker for a one-time viewer sign-in link (the CLI and the demo)."""

from __future__ import annotations

import json

from claude_mem.worker.client import WorkerUnavailable, request
from claude_mem.worker.token import read_token


class LinkError(Exception):
    """No link could be had; the message says why."""


def sign_in_link(host: str, port: int, timeout: float = 5.0) -> str:
    """`http://HOST:PORT/auth?code=…`: opens the viewer signed in, once, within minutes."""
    token = read_token()
    if token is None:
        raise LinkError("no worker token yet: start the worker with `claude-mem worker start`")
    try:
        response = request(
            "POST", "/api/viewer/links", port=port, host=host, token=token, timeout=timeout
        )
    except WorkerUnavailable as exc:
        raise LinkError(f"the worker did not answer: {exc}") from None
    try:
        body = json.loads(response.body)
    except ValueError:
        body = None
    if response.status != 200 or not isinstance(body, dict) or "url" not in body:
        raise LinkError(f"the worker refused a viewer link ({response.status}): {body}")
    return str(body["url"])
