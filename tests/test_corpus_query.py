"""Corpus questions answered by models, on the wire: the Anthropic Messages API (corpus as a
cacheable system block, cut to budget) and the real Claude Code CLI (prime once, resume the
session, prime again when the CLI no longer has it), both against the loopback mock."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from claude_mem.corpus.build import CorpusFilter, build, load
from claude_mem.corpus.query import Answer, ask
from claude_mem.pipeline.providers.anthropic import AnthropicProvider
from claude_mem.pipeline.providers.base import Provider
from claude_mem.pipeline.providers.claude_cli import ClaudeCliProvider
from claude_mem.records import Observation
from claude_mem.settings import load as load_settings
from claude_mem.store.db import Database, open_database
from claude_mem.store.observations import insert_observation
from claude_mem.store.sessions import ensure_session
from tests.claude_code import claude_binary, claude_env
from tests.llm_mocks import answer, anthropic_mock, error

T0 = 1_767_225_600_000
PRIVATE = "the private vendor contract"


def seed(db: Database, count: int) -> list[int]:
    with db.write() as conn:
        sid = ensure_session(conn, platform="claude-code", host_session_id="h", project="shop")
        return [
            insert_observation(
                conn,
                Observation(
                    session_id=sid, project="shop", type="discovery", title=f"Finding {n}",
                    narrative=f"Detail {n}: " + "words " * 60 + f"<private>{PRIVATE}</private>",
                    created_at=T0 + n * 60_000,
                ),
            )[0]
            for n in range(count)
        ]  # fmt: skip


def ask_now(db: Database, question: str, provider: Provider) -> Answer:
    return asyncio.run(ask(db, "shop", question, load_settings(), provider=provider))


def test_anthropic_gets_the_corpus_as_a_cached_system_block_within_budget(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_MEM_CORPUS_MAX_TOKENS", "1000")
    with open_database() as db:
        ids = seed(db, 30)
        build(db, "shop", CorpusFilter.parse(project="shop"))
        with anthropic_mock() as api:
            api.script(answer(f"Finding 29 says so [#{ids[-1]}]."), answer("Second answer."))
            provider = AnthropicProvider(api_key="k", base_url=api.url)
            first = ask_now(db, "What is in finding 29?", provider)
            second = ask_now(db, "And finding 28?", provider)
            calls = api.calls("/v1/messages")
    assert first.answer == f"Finding 29 says so [#{ids[-1]}]."
    assert first.provider == "anthropic"
    assert first.left_out > 0  # 30 observations do not fit in 1000 tokens
    assert second.answer == "Second answer."
    assert len(calls) == 2
    body = calls[0].json
    [block] = body["system"]
    assert block["cache_control"] == {"type": "ephemeral"}
    system = block["text"]
    assert system == calls[1].json["system"][0]["text"]  # byte-identical: the cache can hit
    assert system.startswith("You are a knowledge agent with access to 30 observations")
    assert "untrusted historical data" in system
    assert len(system) < 1000 * 4 + 3000
    assert f"[#{ids[-1]}]" in system
    assert f"[#{ids[0]}]" not in system
    assert f"{first.left_out} older observations left out" in system
    assert body["messages"] == [{"role": "user", "content": "What is in finding 29?"}]
    assert all(PRIVATE not in call.text for call in calls)


def test_provider_failure_is_a_clear_error(data_dir: Path) -> None:
    with open_database() as db:
        seed(db, 2)
        build(db, "shop", CorpusFilter.parse(project="shop"))
        with anthropic_mock(error(401, "invalid x-api-key")) as api:
            provider = AnthropicProvider(api_key="k", base_url=api.url)
            with pytest.raises(ValueError, match=r"anthropic could not answer \(auth\)"):
                ask_now(db, "anything?", provider)


def _user_texts(request_json: dict) -> str:
    return json.dumps([m for m in request_json["messages"] if m.get("role") == "user"])


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_agent_sdk_primes_once_resumes_and_reprimes_an_expired_session(
    data_dir: Path, tmp_path: Path
) -> None:
    claude = claude_binary()
    home = tmp_path / "home"
    with open_database() as db:
        ids = seed(db, 3)
        build(db, "shop", CorpusFilter.parse(project="shop"))
        with anthropic_mock(answer("ACK: findings 0-2.")) as api:
            provider = ClaudeCliProvider(claude_path=str(claude), environ=claude_env(api.url, home))
            api.script(answer("Primed."), answer(f"Finding 1 [#{ids[1]}]."))
            first = ask_now(db, "What is finding 1?", provider)
            after_first = len(api.calls("/v1/messages"))

            api.script(answer(f"Finding 2 [#{ids[2]}]."))
            second = ask_now(db, "What is finding 2?", provider)
            resumed = api.calls("/v1/messages")[after_first:]

            for transcript in (home / ".claude" / "projects").rglob("*.jsonl"):
                transcript.unlink()  # the CLI no longer has the session: it has "expired"
            api.script(answer("Primed again."), answer(f"Finding 0 [#{ids[0]}]."))
            third = ask_now(db, "What is finding 0?", provider)
            reprimed = api.calls("/v1/messages")[after_first + len(resumed) :]
            stored = load(db, "shop")

    assert (first.primed, first.session_expired) == (True, False)
    assert first.answer == f"Finding 1 [#{ids[1]}]."
    assert first.session_id
    prime, question = api.calls("/v1/messages")[:after_first][-2:]
    assert "<knowledge-base>" in _user_texts(prime.json)
    assert "Finding 2" in _user_texts(prime.json)
    assert "untrusted historical data" in json.dumps(prime.json["system"])
    assert "What is finding 1?" in _user_texts(question.json)
    assert "<knowledge-base>" in _user_texts(question.json)  # resumed: the corpus is history

    assert (second.primed, second.session_expired) == (False, False)
    assert second.session_id == first.session_id
    assert second.answer == f"Finding 2 [#{ids[2]}]."
    assert len(resumed) == 1  # no second prime
    assert "<knowledge-base>" in _user_texts(resumed[0].json)

    assert (third.primed, third.session_expired) == (True, True)
    assert third.answer == f"Finding 0 [#{ids[0]}]."
    assert len(reprimed) == 2
    assert "<knowledge-base>" in _user_texts(reprimed[0].json)
    assert third.session_id
    assert third.session_id != first.session_id
    assert (stored.session_id, stored.session_provider) == (third.session_id, "claude-agent-sdk")
    assert all(PRIVATE not in call.text for call in api.calls("/v1/messages"))


def test_corpus_sessions_are_saved_and_resumed_observer_calls_are_not() -> None:
    from claude_mem.pipeline.providers.claude_cli import CliFeatures, build_command

    features = CliFeatures.from_help(
        "-p, --print --output-format --model --tools --disallowedTools --mcp-config "
        "--strict-mcp-config --setting-sources --no-session-persistence --system-prompt"
    )
    observer = build_command("claude", "haiku", features, "S")
    assert "--no-session-persistence" in observer
    assert "--resume" not in observer
    saved = build_command("claude", "haiku", features, "S", keep_session=True, resume="abc-1")
    assert "--no-session-persistence" not in saved
    assert saved[saved.index("--resume") + 1] == "abc-1"
    assert saved[saved.index("--tools") + 1] == ""  # still locked down: no tools at all
