"""What each MCP tool does: one worker call, then compact text for the model.

Everything here is plain synchronous code (the server runs it in a thread), so it can be
tested without an MCP session. Failures become `ToolFailure` with a message meant for the
model to read; the server turns them into tool errors.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from claude_mem.store.fulltext import clip_query
from claude_mem.text import counted
from claude_mem.vocabulary import DEFAULT_TYPE, ObservationType, shown_type
from claude_mem.worker import lifecycle
from claude_mem.worker.client import Response, WorkerUnavailable, request
from claude_mem.worker.token import read_token

START_WAIT_S = 15.0
REQUEST_TIMEOUT_S = 30.0
# A corpus question waits for an LLM, and the first one primes a session with the whole corpus.
ANSWER_TIMEOUT_S = 300.0
STARTING_RETRY_S = 10.0  # how long a worker whose store is still opening is waited for


class ToolFailure(Exception):
    """A tool call that cannot be answered; the message is shown to the model."""


class WorkerProxy:
    """Calls the worker's HTTP API, starting the worker the first time it is needed."""

    def __init__(
        self,
        *,
        start: Callable[[], lifecycle.WorkerInfo | None] | None = None,
        timeout: float = REQUEST_TIMEOUT_S,
    ) -> None:
        self._start = start or (lambda: lifecycle.ensure_running(wait_s=START_WAIT_S))
        self._timeout = timeout
        self._worker: lifecycle.WorkerInfo | None = None

    def _connect(self, *, fresh: bool) -> lifecycle.WorkerInfo:
        if self._worker is None or fresh:
            self._worker = self._start()
        if self._worker is None:
            raise ToolFailure(
                "claude-mem worker is not running and could not be started; "
                "run `claude-mem worker start` and `claude-mem doctor`, then retry"
            )
        return self._worker

    def _send(self, method: str, path: str, body: bytes | None, timeout: float) -> Response:
        """One request; a worker that vanished is looked up (or restarted) once."""
        for attempt in range(2):
            worker = self._connect(fresh=attempt > 0)
            try:
                return request(
                    method,
                    path,
                    port=worker.port,
                    host=worker.host,
                    body=body,
                    token=read_token(),
                    timeout=timeout,
                )
            except WorkerUnavailable as exc:
                failure = exc
        raise ToolFailure(f"claude-mem worker did not answer: {failure}")

    def call(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: object = None,
        timeout: float | None = None,
    ) -> Response:
        """The worker's 2xx answer; any other status raises ToolFailure with its message."""
        params = {k: v for k, v in (query or {}).items() if v is not None and v != []}
        target = f"{path}?{urlencode(params, doseq=True)}" if params else path
        payload = None if body is None else json.dumps(body).encode()
        deadline = time.monotonic() + STARTING_RETRY_S
        while True:
            response = self._send(method, target, payload, timeout or self._timeout)
            if response.status != 503 or time.monotonic() >= deadline:
                break
            time.sleep(0.2)  # the store is still opening (or migrating)
        if 200 <= response.status < 300:
            return response
        raise ToolFailure(_error_text(response, path))

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            return self.call(method, path, **kwargs).json()
        except ValueError as exc:
            raise ToolFailure(f"claude-mem worker sent invalid JSON for {path}: {exc}") from None


def _error_text(response: Response, path: str) -> str:
    try:
        data = response.json()
        message = data.get("error") if isinstance(data, dict) else None
    except ValueError:
        message = None
    if response.status == 404 and not message:
        message = "this worker has no such endpoint (is it an older version?)"
    if response.status == 401:
        message = "the worker refused our token; restart it with `claude-mem worker restart`"
    detail = message or response.body[:300].decode("utf-8", "replace") or "no details"
    return f"claude-mem worker answered {response.status} for {path}: {detail}"


# --- formatting -------------------------------------------------------------------------------

# The worker's record labels: #12 observation, #S12 summary, #P12 prompt.
_KIND_PREFIX = {"observation": "#", "summary": "#S", "prompt": "#P"}


def _when(epoch_ms: object) -> str:
    if not isinstance(epoch_ms, int | float) or isinstance(epoch_ms, bool):
        return "?"
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(epoch_ms / 1000))


def _ref(hit: Mapping[str, Any]) -> str:
    return f"{_KIND_PREFIX.get(str(hit.get('kind') or 'observation'), '?')}{hit.get('id', '?')}"


def index_line(hit: Mapping[str, Any], *, marker: str = "") -> str:
    """One hit as `#12  2025-01-02 14:03  bugfix  Title  (~80 tok)  [project]` (a commit of
    the project's history: `decision · history a1b2c3d` for its type)."""
    when = _when(hit.get("time", hit.get("created_at")))
    kind = shown_type(str(hit.get("type") or hit.get("kind") or "?"), hit.get("source"),
                      hit.get("commit"))  # fmt: skip
    title = " ".join(str(hit.get("title") or "Untitled").split())
    cost = hit.get("token_cost")
    parts = [f"{marker}{_ref(hit)}", when, str(kind), title]
    if hit.get("superseded_by") is not None:
        parts.append(f"(superseded by #{hit['superseded_by']})")
    if isinstance(cost, int):
        parts.append(f"(~{cost} tok)")
    if hit.get("project"):
        parts.append(f"[{hit['project']}]")
    return "  ".join(parts)


def _hits(data: Any, *keys: str) -> list[Mapping[str, Any]]:
    if isinstance(data, dict):
        for key in keys:
            value = data.get(key)
            if isinstance(value, list):
                return [h for h in value if isinstance(h, dict)]
    return []


def format_search(data: Any, query: str) -> str:
    hits = _hits(data, "hits", "items", "results")
    mode = data.get("mode") if isinstance(data, dict) else None
    label = f" ({mode})" if mode else ""
    if not hits:
        return f"No memory matches {query!r}{label}. Try fewer or different words, or no filters."
    lines = [f"{counted(len(hits), 'result')} for {query!r}{label}:"]
    lines += [index_line(hit) for hit in hits]
    obs_ids = [str(h["id"]) for h in hits if (h.get("kind") or "observation") == "observation"]
    if obs_ids:
        lines.append("")
        lines.append(
            "Next: timeline(anchor=ID) for what happened around one; "
            f"get_observations(ids=[{', '.join(obs_ids[:3])}]) for the few you need in full."
        )
    return "\n".join(lines)


def format_timeline(data: Any) -> str:
    items = _hits(data, "items", "hits", "timeline", "results")
    if not items:
        return "Nothing recorded around that point."
    anchor = data.get("anchor") if isinstance(data, dict) else None
    anchor_id = anchor.get("id") if isinstance(anchor, dict) else anchor
    anchor_kind = anchor.get("kind", "observation") if isinstance(anchor, dict) else "observation"
    lines = []
    if anchor_id is not None:
        lines.append(f"Timeline around {_ref({'id': anchor_id, 'kind': anchor_kind})}:")
    for item in items:
        here = item.get("is_anchor") is True or (
            item.get("id") == anchor_id and (item.get("kind") or "observation") == anchor_kind
        )
        lines.append(index_line(item, marker="→ " if here else "  "))
    return "\n".join(lines)


def _block(label: str, values: Sequence[str]) -> list[str]:
    return [f"{label}: {', '.join(values)}"] if values else []


def format_observation(obs: Mapping[str, Any]) -> str:
    lines = [f"## #{obs.get('id')} [{obs.get('type', '?')}] {obs.get('title') or 'Untitled'}"]
    if obs.get("subtitle"):
        lines.append(str(obs["subtitle"]))
    meta = [f"project {obs.get('project', '?')}", f"session {obs.get('session_id', '?')}"]
    if obs.get("prompt_number") is not None:
        meta.append(f"prompt {obs['prompt_number']}")
    meta.append(f"created {_when(obs.get('created_at'))} UTC")
    if obs.get("source"):
        meta.append(f"from {obs['source']}")
    lines.append(" · ".join(meta))
    if obs.get("superseded_by") is not None:
        lines.append(
            f"Superseded by #{obs['superseded_by']}: a newer memory replaced this one; prefer it."
        )
    if obs.get("narrative"):
        lines += ["", str(obs["narrative"])]
    facts = obs.get("facts") or []
    if facts:
        lines += ["", "Facts:", *(f"- {fact}" for fact in facts)]
    details = [
        *_block("Concepts", obs.get("concepts") or []),
        *_block("Files read", obs.get("files_read") or []),
        *_block("Files modified", obs.get("files_modified") or []),
    ]
    if details:
        lines += ["", *details]
    return "\n".join(lines)


def format_observations(data: Any, ids: Sequence[int]) -> str:
    items = _hits(data, "items")
    found = {item.get("id") for item in items}
    missing = [str(i) for i in ids if i not in found]
    parts = [format_observation(item) for item in items]
    if missing:
        parts.append(f"Not found: {', '.join(missing)} (deleted, or not observation ids).")
    return "\n\n".join(parts) if parts else "No observations found for those ids."


def _rendered(data: Any) -> str | None:
    """The worker's own text rendering (asked for with format=text), when it sent one."""
    text = data.get("text") if isinstance(data, dict) else None
    return text if isinstance(text, str) and text.strip() else None


# --- the tools --------------------------------------------------------------------------------


class MemoryTools:
    """The five tools as plain methods over one worker proxy."""

    def __init__(self, proxy: WorkerProxy, cwd: Callable[[], str] = os.getcwd) -> None:
        self.proxy, self._cwd = proxy, cwd

    def search(
        self,
        query: str,
        project: str | None = None,
        type: str | None = None,
        since: str | None = None,
        limit: int = 20,
        *,
        scope: str | None = None,
        as_of: str | None = None,
    ) -> str:
        types = [part.strip() for part in (type or "").split(",") if part.strip()]
        clipped = clip_query(query)
        params = {"query": clipped, "project": project, "type": types, "since": since,
                  "limit": limit, "format": "text", "scope": scope, "as_of": as_of}  # fmt: skip
        data = self.proxy.json("GET", "/api/search", query=params)
        text = _rendered(data) or format_search(data, query)
        if clipped != query:  # clipped here, to keep the request small
            text = f"(The query was clipped to {len(clipped):,} characters.)\n{text}"
        return text

    def timeline(
        self,
        anchor: int | str | None = None,
        query: str | None = None,
        depth_before: int = 5,
        depth_after: int = 5,
        project: str | None = None,
    ) -> str:
        if anchor is not None and str(anchor).strip():
            params: dict[str, Any] = {"anchor": str(anchor).strip()}
        elif query and query.strip():
            params = {"query": clip_query(query)}
        else:
            raise ToolFailure("give anchor (an id from search, like 12 or S3) or query")
        params |= {"depth_before": depth_before, "depth_after": depth_after,
                   "project": project, "format": "text"}  # fmt: skip
        data = self.proxy.json("GET", "/api/timeline", query=params)
        return _rendered(data) or format_timeline(data)

    def get_observations(self, ids: Sequence[int]) -> str:
        unique = list(dict.fromkeys(ids))
        data = self.proxy.json("POST", "/api/observations/batch", body={"ids": unique})
        return format_observations(data, unique)

    def save_memory(
        self,
        text: str,
        title: str | None = None,
        type: ObservationType = DEFAULT_TYPE,
        concepts: Sequence[str] | None = None,
        project: str | None = None,
    ) -> str:
        body: dict[str, Any] = {"text": text, "type": type, "concepts": list(concepts or [])}
        if title:
            body["title"] = title
        if project:
            body["project"] = project
        else:
            body["cwd"] = self._cwd()
        saved = self.proxy.json("POST", "/api/memory", body=body)
        verb = "Saved" if saved.get("created", True) else "Already stored"
        return (
            f"{verb} memory #{saved['id']} in project {saved.get('project', '?')}: "
            f"{saved.get('title', '')}"
        )

    def session_start_context(self, cwd: str | None = None, project: str | None = None) -> str:
        params = {"project": project} if project else {"cwd": cwd or self._cwd()}
        text = self.proxy.call("GET", "/api/context/inject", query=params).body.decode(
            "utf-8", "replace"
        )
        return text if text.strip() else "No memory stored for this project yet."

    # --- knowledge corpora (claude_mem.corpus) ---

    def corpus_list(self) -> str:
        from claude_mem.corpus import text  # noqa: PLC0415

        return text.corpus_list(self.proxy.json("GET", "/api/corpus"))

    def corpus_build(
        self,
        name: str,
        *,
        project: str | None = None,
        query: str | None = None,
        types: Sequence[str] | None = None,
        concepts: Sequence[str] | None = None,
        since: str | None = None,
        limit: int | None = None,
        description: str = "",
    ) -> str:
        from claude_mem.corpus import text  # noqa: PLC0415

        body = {"name": name, "project": project, "query": query, "types": list(types or []),
                "concepts": list(concepts or []), "since": since, "limit": limit,
                "description": description}  # fmt: skip
        sent = {key: value for key, value in body.items() if value is not None}
        return text.built(self.proxy.json("POST", "/api/corpus", body=sent))

    def corpus_query(self, name: str, question: str) -> str:
        from urllib.parse import quote  # noqa: PLC0415

        from claude_mem.corpus import text  # noqa: PLC0415

        path = f"/api/corpus/{quote(name, safe='')}/query"
        return text.answer(
            self.proxy.json("POST", path, body={"question": question}, timeout=ANSWER_TIMEOUT_S)
        )
