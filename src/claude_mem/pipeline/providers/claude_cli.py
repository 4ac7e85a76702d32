"""Compression through the user's own Claude Code login: the `claude` CLI in print mode.

For subscription users with no API key. We run the CLI ourselves (no shell, prompt on stdin)
instead of depending on the `claude-agent-sdk` package, which bundles a whole CLI. Each call is
one `claude -p --output-format json` process, locked down so the observer can only answer:

- no tools (`--tools ""`, and `--disallowedTools` for every built-in that can act), no MCP
  servers (`--strict-mcp-config` with an empty config), no settings files (so none of the
  user's hooks, plugins or permissions), no slash commands, no saved transcript, a permission
  mode that never prompts, and our own system prompt in place of Claude Code's;
- cwd is `<data dir>/observer-sessions` (the worker never records anything inside the data
  dir), and the environment carries `CLAUDE_MEM_INTERNAL=1` (our hooks skip) and no other
  `CLAUDE_MEM_*`; everything the CLI needs for its own auth (HOME, ANTHROPIC_*, the OAuth
  token) passes through unchanged.

Which of those options exist is read once per installed binary from `claude --help`; a CLI
missing the essential ones is refused as too old. The CLI's JSON result gives the reply text,
token usage, and for API failures the HTTP status, which is classified like the HTTP
providers' errors; the text is read with the shared `parser`. A call that outlives the timeout
has its whole process group killed (the CLI's own children included) before it fails.

Corpus questions use saved sessions instead (`answer`): the corpus is sent once to prime a
CLI session, whose id is kept with the corpus; each question resumes it. When the CLI no
longer has the session (expired, deleted), the corpus is primed again and the question
retried, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_mem import log, paths
from claude_mem.corpus.render import fit, prime_prompt
from claude_mem.pipeline.parser import parse_response, prose_error
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
    configured_model,
)
from claude_mem.pipeline.providers.llm import (
    Reply,
    classify_http,
    estimate_tokens,
    int_or_none,
)
from claude_mem.privacy import clean_text
from claude_mem.settings import Settings

__all__ = [
    "DEFAULT_MODEL",
    "DENIED_TOOLS",
    "NAME",
    "ClaudeCliProvider",
    "CliFeatures",
    "SessionExpired",
    "build_command",
    "child_env",
    "create",
    "observer_dir",
    "read_result",
    "session_of",
]

NAME = "claude-agent-sdk"
DEFAULT_MODEL = "haiku"  # the CLI's alias for its current Haiku
STARTUP_S = 10.0  # added to CLAUDE_MEM_LLM_TIMEOUT_MS: the CLI loads and authenticates first
PROBE_TIMEOUT_S = 20.0
KILL_GRACE_S = 2.0  # between SIGTERM and SIGKILL of a timed-out CLI
SNIPPET_CHARS = 300
EMPTY_MCP = '{"mcpServers":{}}'
# Built-ins that can act, denied even where `--tools ""` already leaves none offered.
DENIED_TOOLS = (
    "Bash", "Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "WebFetch", "WebSearch",
    "Task", "Agent", "NotebookEdit", "TodoWrite", "AskUserQuestion", "Skill",
)  # fmt: skip
# Options without which the observer can't be isolated from the user's configuration.
REQUIRED_OPTIONS = (
    "--print",
    "--output-format",
    "--model",
    "--setting-sources",
    "--strict-mcp-config",
    "--mcp-config",
)
# Variables naming the Claude Code session that (indirectly) started the worker.
PARENT_SESSION_VARS = ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_SESSION_ID")
# One retry inside the CLI (lets it refresh an OAuth token); the queue retries the rest later.
CLI_RETRIES = "1"
INSTALL_HINT = (
    "install Claude Code (npm i -g @anthropic-ai/claude-code) or set CLAUDE_MEM_CLAUDE_PATH"
)


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat[:SNIPPET_CHARS] + ("…" if len(flat) > SNIPPET_CHARS else "")


# --- what the installed CLI supports ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CliFeatures:
    """The long options an installed `claude` accepts, read from its `--help`."""

    options: frozenset[str]
    dont_ask: bool = False  # `--permission-mode dontAsk` exists

    @classmethod
    def from_help(cls, text: str) -> CliFeatures:
        found = frozenset(re.findall(r"(?<![\w-])(--[a-zA-Z][\w-]*)", text))
        return cls(found, dont_ask="dontAsk" in text)

    def has(self, option: str) -> bool:
        return option in self.options

    def missing(self) -> list[str]:
        """Essential options this CLI lacks (empty = usable)."""
        lacking = [option for option in REQUIRED_OPTIONS if option not in self.options]
        if not (self.has("--tools") or self.has("--disallowedTools")):
            lacking.append("--tools")
        return lacking


_features: dict[tuple[str, int, int], CliFeatures] = {}


def build_command(
    binary: str,
    model: str,
    features: CliFeatures,
    system_prompt: str = SYSTEM_PROMPT,
    *,
    keep_session: bool = False,
    resume: str | None = None,
) -> list[str]:
    """The locked-down argv (the prompt goes on stdin, never here). `keep_session` saves the
    CLI's transcript so a later call can `resume` it (knowledge corpora)."""
    argv = [binary, "-p", "--output-format", "json", "--model", model]
    if features.has("--tools"):
        argv += ["--tools", ""]
    if features.has("--disallowedTools"):
        argv += ["--disallowedTools", ",".join(DENIED_TOOLS)]
    argv += ["--strict-mcp-config", "--mcp-config", EMPTY_MCP, "--setting-sources", ""]
    if features.has("--no-session-persistence") and not keep_session:
        argv.append("--no-session-persistence")
    if resume is not None:
        argv += ["--resume", resume]
    if features.has("--permission-mode") and features.dont_ask:
        argv += ["--permission-mode", "dontAsk"]
    if features.has("--disable-slash-commands"):
        argv.append("--disable-slash-commands")
    if features.has("--system-prompt"):
        argv += ["--system-prompt", system_prompt]
    return argv


def child_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The CLI's environment: the worker's, minus every CLAUDE_MEM_* and the parent session's
    markers, plus CLAUDE_MEM_INTERNAL=1; auth variables pass through untouched."""
    env = {
        key: value
        for key, value in environ.items()
        if not key.startswith("CLAUDE_MEM_") and key not in PARENT_SESSION_VARS
    }
    env["CLAUDE_MEM_INTERNAL"] = "1"
    env.setdefault("CLAUDE_CODE_MAX_RETRIES", CLI_RETRIES)
    return env


def observer_dir() -> Path:
    """`<data dir>/observer-sessions` (0700), the CLI's working directory."""
    return paths.ensure_dir(paths.data_dir() / "observer-sessions")


# --- the CLI's answer -------------------------------------------------------------------------


def _result_object(stdout: str) -> dict[str, Any] | None:
    """The `{"type": "result", …}` object the CLI prints last, or None."""
    candidates = [stdout.strip(), *reversed(stdout.strip().splitlines())]
    for text in candidates:
        if not text.startswith("{"):
            continue
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if isinstance(data, dict) and ("result" in data or data.get("type") == "result"):
            return data
    return None


def _model_of(data: Mapping[str, Any]) -> str | None:
    usage = data.get("modelUsage")
    if not isinstance(usage, dict) or not usage:
        return None

    def output(name: str) -> int:
        entry = usage.get(name)
        return (int_or_none(entry.get("outputTokens")) or 0) if isinstance(entry, dict) else 0

    return str(max(usage, key=output))


def read_result(returncode: int, stdout: str, stderr: str) -> Reply:
    """The reply in the CLI's output, or the classified ProviderError it stands for."""
    data = _result_object(stdout)
    if data is None:
        said = (stderr.strip() or stdout.strip())[-2000:]
        error = prose_error(said[-1000:]) if said else None
        if error is not None:
            raise ProviderError(error.kind, f"{NAME}: {_snippet(said)}")
        if returncode != 0:
            raise ProviderError(
                "transient", f"{NAME}: claude exited {returncode}: {_snippet(said)}"
            )
        raise ProviderError("transient", f"{NAME}: claude printed no JSON result: {_snippet(said)}")
    text = data.get("result")
    text = text if isinstance(text, str) else ""
    if data.get("is_error") or data.get("subtype", "success") != "success" or returncode != 0:
        status = int_or_none(data.get("api_error_status"))
        if status:
            raise classify_http(NAME, status, text)
        error = prose_error(text)
        if error is not None:
            raise ProviderError(error.kind, f"{NAME}: {_snippet(text)}")
        what = data.get("subtype") or f"exit {returncode}"
        raise ProviderError("transient", f"{NAME}: claude failed ({what}): {_snippet(text)}")
    usage = found if isinstance(found := data.get("usage"), dict) else {}
    reported_in = int_or_none(usage.get("input_tokens"))
    cached = sum(
        int_or_none(usage.get(key)) or 0
        for key in ("cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return Reply(
        text=text,
        input_tokens=None if reported_in is None else reported_in + cached,
        output_tokens=int_or_none(usage.get("output_tokens")),
        model=_model_of(data),
    )


class SessionExpired(ProviderError):
    """A `--resume` of a session the CLI no longer has (expired, deleted, another machine)."""

    def __init__(self, message: str) -> None:
        super().__init__("unrecoverable", message)


# What the CLI says when it cannot resume (2.1.x: "No conversation found with session ID: …").
_SESSION_GONE = re.compile(
    r"no conversation found|session[^\n]{0,60}(?:not found|expired|invalid)|invalid session",
    re.IGNORECASE,
)


def session_of(stdout: str) -> str | None:
    """The session id in the CLI's JSON result (to resume it later), or None."""
    data = _result_object(stdout)
    value = data.get("session_id") if data else None
    return value if isinstance(value, str) and value else None


# --- running it -------------------------------------------------------------------------------


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """End the CLI and everything it started (its own process group), then reap it."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        if sig == signal.SIGTERM:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(proc.wait()), KILL_GRACE_S)
    await proc.wait()
    if proc.stdin is not None:
        proc.stdin.close()


async def _run(
    argv: Sequence[str], stdin: bytes, *, env: Mapping[str, str], cwd: Path, timeout: float
) -> tuple[int, str, str]:
    """Run to completion within `timeout` seconds: (exit code, stdout, stderr)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,  # its own process group, so a timeout can end all of it
        )
    except OSError as exc:  # missing, not executable, not a program
        reason = exc.strerror or type(exc).__name__
        message = f"{NAME}: cannot run {argv[0]} ({reason}); {INSTALL_HINT}"
        raise ProviderError("setup_required", message) from None
    finished = False
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), timeout)
        finished = True
    except TimeoutError:
        raise ProviderError(
            "transient", f"{NAME}: claude gave no answer within {timeout:g} s and was stopped"
        ) from None
    finally:
        if not finished:  # timed out or cancelled: leave nothing of it running
            await asyncio.shield(_stop(proc))
    code = proc.returncode if proc.returncode is not None else -1
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


class ClaudeCliProvider:
    """The `claude-agent-sdk` provider: one locked-down `claude -p` process per call."""

    name = NAME
    offline = False
    caches_prompts = True  # Claude Code caches a resumed session's history, the corpus in it

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        claude_path: str = "",
        timeout: float = 30.0 + STARTUP_S,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.model = model or DEFAULT_MODEL
        self.claude_path = claude_path
        self.timeout = timeout
        self.environ = environ  # None: the process environment at call time

    def binary(self) -> str:
        """The CLI to run: CLAUDE_MEM_CLAUDE_PATH, else `claude` on PATH; setup_required if none."""
        env = os.environ if self.environ is None else self.environ
        if self.claude_path:
            path = Path(os.path.expanduser(self.claude_path))
            if os.sep not in self.claude_path and not path.exists():
                found = shutil.which(self.claude_path, path=env.get("PATH"))
                path = Path(found) if found else path
            if path.is_file() and os.access(path, os.X_OK):
                return str(path.absolute())
            problem = "does not exist" if not path.exists() else "is not an executable file"
            message = f"{NAME}: CLAUDE_MEM_CLAUDE_PATH {path} {problem}; {INSTALL_HINT}"
            raise ProviderError("setup_required", message)
        found = shutil.which("claude", path=env.get("PATH"))
        if found is None:
            raise ProviderError("setup_required", f"{NAME}: no `claude` on PATH; {INSTALL_HINT}")
        return found

    def environment(self) -> dict[str, str]:
        return child_env(os.environ if self.environ is None else self.environ)

    async def features(self, binary: str) -> CliFeatures:
        """What this binary supports (asked once per installed file)."""
        try:
            stat = os.stat(binary)
        except OSError as exc:
            message = f"{NAME}: {binary}: {exc.strerror}; {INSTALL_HINT}"
            raise ProviderError("setup_required", message) from None
        key = (binary, stat.st_mtime_ns, stat.st_size)
        if key not in _features:
            env, cwd = self.environment(), observer_dir()
            code, out, err = await _run(
                [binary, "--help"], b"", env=env, cwd=cwd, timeout=PROBE_TIMEOUT_S
            )
            found = CliFeatures.from_help(out)
            if code != 0 or not found.has("--print"):
                said = _snippet(err or out)
                message = f"{NAME}: {binary} does not look like Claude Code ({said})"
                raise ProviderError("setup_required", f"{message}; {INSTALL_HINT}")
            _features[key] = found
        features = _features[key]
        if features.missing():
            lacking = ", ".join(features.missing())
            message = f"{NAME}: {binary} is too old (no {lacking}); update Claude Code"
            raise ProviderError("setup_required", message)
        return features

    async def complete(self, system: str, user: str) -> Reply:
        """One locked-down CLI call; the reply, or a classified ProviderError."""
        binary = self.binary()
        features = await self.features(binary)
        system, user = clean_text(system), clean_text(user)  # defence in depth
        prompt = user if features.has("--system-prompt") else f"{system}\n\n{user}"
        argv = build_command(binary, self.model, features, system)
        code, out, err = await _run(
            argv, prompt.encode(), env=self.environment(), cwd=observer_dir(), timeout=self.timeout
        )
        return read_result(code, out, err)

    async def converse(
        self, system: str, user: str, *, resume: str | None = None
    ) -> tuple[Reply, str]:
        """One turn of a saved CLI session: a new one, or `resume` (SessionExpired if the CLI
        no longer has it). Returns the reply and the session id to resume next."""
        binary = self.binary()
        features = await self.features(binary)
        system, user = clean_text(system), clean_text(user)  # defence in depth
        prompt = user if features.has("--system-prompt") else f"{system}\n\n{user}"
        argv = build_command(binary, self.model, features, system, keep_session=True, resume=resume)
        code, out, err = await _run(
            argv, prompt.encode(), env=self.environment(), cwd=observer_dir(), timeout=self.timeout
        )
        if resume is not None and code != 0 and _SESSION_GONE.search(err or out):
            raise SessionExpired(f"{NAME}: session {resume} cannot be resumed: {_snippet(err)}")
        reply = read_result(code, out, err)
        session = session_of(out)
        if session is None:
            raise ProviderError("unrecoverable", f"{NAME}: the CLI reported no session id")
        return reply, session

    async def answer(self, question: CorpusQuestion, corpus: CorpusContext) -> CorpusAnswer:
        """The question asked in the corpus's saved session, primed first if there is none
        or the CLI no longer has it."""
        answer = CorpusAnswer("")
        if question.session_id is not None:
            try:
                reply, answer.session_id = await self.converse(
                    question.system_prompt, question.question, resume=question.session_id
                )
                answer.text = reply.text.strip()
                return answer
            except SessionExpired as exc:
                log.info("corpus", "agent session gone; priming again", corpus=question.corpus,
                         error=exc.message)  # fmt: skip
                answer.session_expired = True
        session, answer.left_out = await self._prime(question, corpus)
        answer.primed = True
        reply, answer.session_id = await self.converse(
            question.system_prompt, question.question, resume=session
        )
        if answer.session_id != session:
            corpus.save_session(answer.session_id)
        answer.text = reply.text.strip()
        return answer

    async def _prime(self, question: CorpusQuestion, corpus: CorpusContext) -> tuple[str, int]:
        """A new session holding the corpus, saved with it: (session id, observations cut)."""
        knowledge, left_out = fit(question.knowledge, question.max_tokens)
        _, session = await self.converse(question.system_prompt, prime_prompt(knowledge))
        corpus.save_session(session)
        log.info("corpus", "primed an agent session", corpus=question.corpus, left_out=left_out)
        return session, left_out

    async def compress(self, events: list[ToolEvent], ctx: SessionContext) -> Result:
        """Observations for one batch (or a turn's words alone), each with the events it
        covers; prose or `<skip/>` is an empty result, not an error."""
        if not needs_model(events, ctx):
            return Result(model=self.model)
        user = observation_prompt(events, ctx)
        reply = await self.complete(SYSTEM_PROMPT, user)
        parsed = parse_response(reply.text, [event.tool_use_row_id for event in events])
        if parsed.error is not None:
            raise parsed.error
        drafts = parsed.observations if parsed.kind == "observations" else []
        return self._result(user, reply, observations=drafts)

    async def summarize(self, request: SummaryInput, ctx: SessionContext) -> Result:
        """A summary draft, or none when the model skipped or answered without one."""
        user = summary_prompt(request, ctx)
        reply = await self.complete(SYSTEM_PROMPT, user)
        parsed = parse_response(reply.text)
        if parsed.error is not None:
            raise parsed.error
        summary = parsed.summary if parsed.kind == "summary" else None
        return self._result(user, reply, summary=summary)

    def _result(self, user: str, reply: Reply, **drafts: Any) -> Result:
        sent = estimate_tokens(SYSTEM_PROMPT + user)
        return Result(
            input_tokens=sent if reply.input_tokens is None else reply.input_tokens,
            output_tokens=(
                estimate_tokens(reply.text) if reply.output_tokens is None else reply.output_tokens
            ),
            model=reply.model or self.model,
            **drafts,
        )


def create(settings: Settings) -> ClaudeCliProvider:
    """The provider as configured (the registry's entry point)."""
    return ClaudeCliProvider(
        model=configured_model(settings, NAME) or DEFAULT_MODEL,
        claude_path=settings.get_str("CLAUDE_MEM_CLAUDE_PATH"),
        timeout=settings.get_int("CLAUDE_MEM_LLM_TIMEOUT_MS") / 1000 + STARTUP_S,
    )
