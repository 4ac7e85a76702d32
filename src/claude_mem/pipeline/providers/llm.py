"""What every HTTP LLM provider shares: prompts in, one classified HTTP call, drafts out.

A subclass knows only its wire format: how to build the request (`build_call`, which marks
the system prompt cacheable when a `Completion` asks and the API can), read a success body
(`read_reply`), read a streamed one (`read_stream`), and map its error bodies
(`error_kind_hint`). Everything else lives here once: setup checks, privacy cleaning of every
text sent, per-attempt timeouts and retries, mapping of transport failures, token usage (the
API's counts, else a chars/4 estimate), reading the reply with `parser`, and corpus answers
(one call per question, the corpus in a system prompt that stays the same between questions).

`httpx2` is imported on first use so importing the package stays cheap for hooks and the CLI.
A client is opened per batch and closed after it: a batch already waits seconds for a model,
and a client tied to one event loop can't leak into another (tests, worker restarts).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import math
import random
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from claude_mem.corpus.render import fit
from claude_mem.pipeline.parser import parse_response
from claude_mem.pipeline.prompts import (
    SYSTEM_PROMPT,
    needs_model,
    observation_prompt,
    summary_prompt,
)
from claude_mem.pipeline.providers.base import (
    CorpusAnswer,
    CorpusContext,
    CorpusQuestion,
    ProviderError,
    Result,
    SessionContext,
    SummaryInput,
    ToolEvent,
    model_key,
)
from claude_mem.pipeline.retry import parse_retry_after, with_retry
from claude_mem.privacy import clean_text
from claude_mem.settings import Settings

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "DEFAULT_TEMPERATURE",
    "Completion",
    "HttpCall",
    "LLMProvider",
    "Reply",
    "classify_http",
    "estimate_tokens",
    "int_or_none",
    "is_loopback",
    "iter_sse",
    "setup_message",
    "text_of",
]

DEFAULT_TEMPERATURE = 0.2
DEFAULT_MAX_OUTPUT_TOKENS = 2048
MAX_BODY_BYTES = 32 * 1024 * 1024  # a success body larger than this is not a model reply
ERROR_BODY_BYTES = 64 * 1024  # enough of an error body to classify it
SNIPPET_CHARS = 300  # of an error body quoted in a message


@dataclass(frozen=True, slots=True)
class Completion:
    """One request to a model: a system prompt and one user message. `cache_system` asks for
    the system prompt to be kept in the API's prompt cache (if the provider `caches_prompts`)."""

    system: str
    user: str
    cache_system: bool = False


@dataclass(slots=True)
class Reply:
    """A model's answer; token counts are None when the API did not report them."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class HttpCall:
    url: str
    headers: dict[str, str]
    body: dict[str, Any]


def estimate_tokens(text: str) -> int:
    """The usual rough count when an API gives none: one token per four characters."""
    return math.ceil(len(text) / 4)


def setup_message(what: str, key: str) -> str:
    """A setup_required message naming both places a setting can come from."""
    return f"{what}: set {key} in settings.json or the environment"


def is_loopback(url: str) -> bool:
    """True for http(s) URLs on this machine (local model servers, test mocks)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# --- error classification --------------------------------------------------------------------

_QUOTA_WORDS = re.compile(
    r"quota|credit|billing|insufficient|usage limit|spend(?:ing)? limit|resource_exhausted"
)
_DENIED_WORDS = re.compile(r"permission|scope|forbidden")  # a 403 about access, not money
_CONTEXT_WORDS = re.compile(
    r"prompt is too long|context[ _-]?(?:length|window)|maximum context|too many tokens"
    r"|request[ _]too[ _]large|input is too long|exceeds the maximum number of tokens"
)
_MODEL_WORDS = re.compile(
    r"model[^.\n]{0,80}?(?:not found|does not exist|not exist|not supported|unsupported"
    r"|is invalid|invalid|unknown|not available)"
    r"|(?:invalid|unknown|unsupported) model|model_not_found|no such model"
)


def _snippet(body: str) -> str:
    text = " ".join(body.split())
    return text[:SNIPPET_CHARS] + ("…" if len(text) > SNIPPET_CHARS else "")


def classify_http(
    provider: str,
    status: int,
    body: str,
    *,
    retry_after: float | None = None,
) -> ProviderError:
    """Map an HTTP failure to an error kind, first rule that applies:

    401 → auth · 402 or any 4xx whose body speaks of quota/credit/billing → quota · other
    403 → auth · 429 → rate_limit (with Retry-After) · 408, 5xx, 529 → transient · 404, or a
    400 naming a bad model → setup_required (a wrong model id or base URL fails every batch
    until the user fixes it, so the provider should pause, not drop batches) · context length
    and everything else → unrecoverable.
    """
    text = body[:8_000].lower()
    message = f"{provider} answered HTTP {status}: {_snippet(body)}"
    if status == 401:
        return ProviderError("auth", message, status=status)
    if status == 402:
        return ProviderError("quota", message, status=status, retry_after=retry_after)
    quota_words = 400 <= status < 500 and status != 408 and _QUOTA_WORDS.search(text)
    if quota_words and (status != 403 or not _DENIED_WORDS.search(text)):
        return ProviderError("quota", message, status=status, retry_after=retry_after)
    if status == 403:
        return ProviderError("auth", message, status=status)
    if status == 429:
        return ProviderError("rate_limit", message, status=status, retry_after=retry_after)
    if status == 408 or status >= 500:
        return ProviderError("transient", message, status=status, retry_after=retry_after)
    if _CONTEXT_WORDS.search(text) or status == 413:
        return ProviderError("unrecoverable", message, status=status)
    if status == 404 or (status == 400 and _MODEL_WORDS.search(text)):
        hint = f"check the model and base URL; {message}"
        return ProviderError("setup_required", hint, status=status)
    return ProviderError("unrecoverable", message, status=status)


# --- server-sent events ----------------------------------------------------------------------


async def iter_sse(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str, str]]:
    """(event, data) pairs from SSE lines: `data:` lines joined, comments skipped."""
    event = ""
    data: list[str] = []
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield event or "message", "\n".join(data)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if data:
        yield event or "message", "\n".join(data)


# --- the provider base -----------------------------------------------------------------------


def _import_httpx() -> Any:
    try:
        import httpx2  # noqa: PLC0415 - imported on first call to keep `import claude_mem` cheap
    except ImportError:
        raise ProviderError(
            "setup_required", "LLM providers need the httpx2 package: pip install httpx2"
        ) from None
    return httpx2


async def _read_capped(response: httpx2.Response, limit: int) -> bytes | None:
    """The body, or None if it is larger than `limit` bytes (reading stops there)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


class LLMProvider:
    """Base of the HTTP providers; see the module docstring for what a subclass supplies."""

    name: str = "llm"  # not a ClassVar: Provider declares an attribute
    offline: bool = False
    caches_prompts: bool = False
    key_setting: ClassVar[str] = ""
    key_required: ClassVar[bool] = True

    def __init__(
        self,
        *,
        model: str,
        api_key: str = "",
        base_url: str = "",
        timeout: float = 30.0,
        max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
        temperature: float = DEFAULT_TEMPERATURE,
        attempts: int = 3,
        base_delay: float = 0.2,
        max_delay: float = 10.0,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.model = model
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_output_tokens = max_output_tokens
        self.temperature = temperature
        self.attempts = attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.sleep = sleep
        self.rng = rng

    @staticmethod
    def settings_options(settings: Settings) -> dict[str, Any]:
        """Options every provider takes from settings (the timeout)."""
        return {"timeout": settings.get_int("CLAUDE_MEM_LLM_TIMEOUT_MS") / 1000}

    # --- what a subclass supplies ---

    def setup_problem(self) -> str | None:
        """Why this provider can't run as configured, or None."""
        if self.key_required and not self.api_key:
            return setup_message(f"{self.name} needs an API key", self.key_setting)
        if not self.model:
            return setup_message(f"{self.name} needs a model", model_key(self.name))
        return None

    def build_call(self, completion: Completion) -> HttpCall:
        raise NotImplementedError

    def read_reply(self, data: Any) -> Reply:
        raise NotImplementedError

    async def read_stream(self, response: httpx2.Response) -> Reply:
        raise ProviderError("unrecoverable", f"{self.name}: unexpected event-stream reply")

    def classify(self, status: int, body: str, headers: Mapping[str, str]) -> ProviderError:
        """Classify an HTTP error response; subclasses refine with their error shapes."""
        retry_after = parse_retry_after(headers.get("retry-after"))
        return classify_http(self.name, status, body, retry_after=retry_after)

    # --- the shared path ---

    async def compress(self, events: list[ToolEvent], ctx: SessionContext) -> Result:
        """Observations for one batch (or a turn's words alone), each with the events it
        covers; prose or `<skip/>` is an empty result, not an error."""
        if not needs_model(events, ctx):
            return Result(model=self.model)
        completion = Completion(SYSTEM_PROMPT, observation_prompt(events, ctx))
        reply = await self.complete(completion)
        parsed = parse_response(reply.text, [event.tool_use_row_id for event in events])
        if parsed.error is not None:
            raise parsed.error
        drafts = parsed.observations if parsed.kind == "observations" else []
        return self._result(completion, reply, observations=drafts)

    async def summarize(self, request: SummaryInput, ctx: SessionContext) -> Result:
        """A summary draft, or none when the model skipped or answered without one."""
        completion = Completion(SYSTEM_PROMPT, summary_prompt(request, ctx))
        reply = await self.complete(completion)
        parsed = parse_response(reply.text)
        if parsed.error is not None:
            raise parsed.error
        summary = parsed.summary if parsed.kind == "summary" else None
        return self._result(completion, reply, summary=summary)

    async def answer(self, question: CorpusQuestion, corpus: CorpusContext) -> CorpusAnswer:
        """One call: the corpus, cut to the budget, in a system prompt placed first and the
        same for every question, so a prompt cache can reuse it; the question as the message."""
        knowledge, left_out = fit(question.knowledge, question.max_tokens)
        system = f"{question.system_prompt}\n\n<knowledge-base>\n{knowledge}\n</knowledge-base>"
        completion = Completion(system, question.question, cache_system=self.caches_prompts)
        reply = await self.complete(completion)
        return CorpusAnswer(reply.text.strip(), left_out=left_out)

    def _result(self, completion: Completion, reply: Reply, **drafts: Any) -> Result:
        sent = estimate_tokens(completion.system + completion.user)
        return Result(
            input_tokens=sent if reply.input_tokens is None else reply.input_tokens,
            output_tokens=(
                estimate_tokens(reply.text) if reply.output_tokens is None else reply.output_tokens
            ),
            model=reply.model or self.model,
            **drafts,
        )

    async def complete(self, completion: Completion) -> Reply:
        """Send one completion (retrying per `retry.with_retry`) and return the reply."""
        problem = self.setup_problem()
        if problem:
            raise ProviderError("setup_required", problem)
        # Defence in depth: the events were cleaned when stored, and prompts clean each field.
        completion = replace(
            completion, system=clean_text(completion.system), user=clean_text(completion.user)
        )
        call = self.build_call(completion)
        httpx = _import_httpx()
        async with httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout),
            trust_env=not is_loopback(call.url),  # no proxy for local servers
            follow_redirects=False,
        ) as client:
            return await with_retry(
                lambda: self._attempt(httpx, client, call),
                attempts=self.attempts,
                base_delay=self.base_delay,
                max_delay=self.max_delay,
                timeout=self.timeout,
                sleep=self.sleep,
                rng=self.rng,
            )

    async def _attempt(self, httpx: Any, client: httpx2.AsyncClient, call: HttpCall) -> Reply:
        try:
            async with client.stream(
                "POST", call.url, headers=call.headers, json=call.body
            ) as response:
                status = response.status_code
                if not 200 <= status < 300:
                    head = await _read_capped(response, ERROR_BODY_BYTES) or b""
                    body = head.decode("utf-8", "replace")
                    raise self.classify(status, body, response.headers)
                if "text/event-stream" in response.headers.get("content-type", "").lower():
                    return await self.read_stream(response)
                raw = await _read_capped(response, MAX_BODY_BYTES)
        except httpx.TimeoutException:
            raise ProviderError("transient", f"{self.name}: no answer in time") from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise ProviderError("setup_required", f"{self.name}: bad base URL ({exc})") from None
        except httpx.RequestError as exc:  # connect, read, protocol and decoding failures
            detail = type(exc).__name__
            raise ProviderError("transient", f"{self.name}: connection failed ({detail})") from None
        if raw is None:
            raise ProviderError("unrecoverable", f"{self.name}: reply larger than allowed")
        try:
            data = json.loads(raw)
        except ValueError:
            start = _snippet(raw[:1000].decode("utf-8", "replace"))
            raise ProviderError(
                "unrecoverable", f"{self.name}: reply is not JSON: {start}"
            ) from None
        return self.read_reply(data)


def text_of(parts: Sequence[Any], key: str = "text") -> str:
    """Join the text of content parts (dicts with `key`), ignoring anything else."""
    return "".join(
        part[key] for part in parts if isinstance(part, dict) and isinstance(part.get(key), str)
    )


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
