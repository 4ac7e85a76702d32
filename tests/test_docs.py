"""README.md and ARCHITECTURE.md cannot drift from the code: the settings table is generated,
and every backticked `claude-mem …` command, `--flag` and `CLAUDE_MEM_*` name they show exists.

Only backticked spans and fenced code lines are read, so prose is never flagged."""

from __future__ import annotations

import argparse
import re
import runpy
from collections.abc import Iterator
from pathlib import Path

import pytest

from claude_mem import cli, settings
from claude_mem.vocabulary import OBSERVATION_TYPES
from tests.worker_fixtures import RunningWorker

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "ARCHITECTURE.md")
GENERATOR = runpy.run_path(str(ROOT / "scripts" / "gen_readme_settings.py"))
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")


def text(name: str) -> str:
    return (ROOT / name).read_text("utf-8")


def spans(doc: str) -> Iterator[str]:
    """Backticked spans outside fenced blocks, and each fenced line without its comment."""
    fenced = False
    for line in doc.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif fenced:
            yield line.split("  #", 1)[0].strip()
        else:
            yield from re.findall(r"`([^`]+)`", line)


def command_spans(doc: str) -> list[str]:
    """What follows `claude-mem ` in each span that runs the CLI (table cells unescaped)."""
    found = []
    for span in spans(doc):
        match = re.search(r"(?:^|/)claude-mem\s+(.*)$", span)
        if match and not span.startswith("~"):
            found.append(match.group(1).replace("\\|", "|"))
    return found


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def options(parser: argparse.ArgumentParser) -> set[str]:
    """The option strings of `parser` and of every subcommand under it."""
    found = {flag for action in parser._actions for flag in action.option_strings}
    for child in subcommands(parser).values():
        found |= options(child)
    return found


def actions(parser: argparse.ArgumentParser) -> set[str]:
    """The words a command takes as its action: subcommands, or a positional's choices."""
    found = set(subcommands(parser))
    for action in parser._actions:
        if not action.option_strings and action.choices is not None:
            found |= {str(choice) for choice in action.choices}
    return found


PARSER = cli.build_parser()
COMMANDS = subcommands(PARSER)


def problems(span: str) -> list[str]:
    """What `claude-mem SPAN` names that the argument parsers lack."""
    words = re.sub(r'"[^"]*"', "", span).split()
    named = words[0].split("|") if words else []
    unknown = [name for name in named if name not in COMMANDS]
    if unknown or not named:
        return [f"no command {name!r}" for name in unknown or [span]]
    parsers = [COMMANDS[name] for name in named]
    found = []
    children = set().union(*(actions(parser) for parser in parsers))
    if children:
        for word in re.findall(r"(?<![\w-])[a-z][a-z-]*(?![\w=-])", " ".join(words[1:])):
            if word not in children:
                found.append(f"{named[0]} has no subcommand {word!r}")
    flags = set().union(*(options(parser) for parser in parsers))
    found += [
        f"{'|'.join(named)} has no {flag}" for flag in FLAG.findall(span) if flag not in flags
    ]
    return found


def test_readme_settings_table_is_generated_from_settings_py() -> None:
    readme = text("README.md")
    assert GENERATOR["rewritten"](readme) == readme, (
        f"README.md's settings table is out of date; run {GENERATOR['COMMAND']}"
    )
    assert all(f"| `{key}` |" in readme for key in settings.SPECS)


@pytest.mark.parametrize("name", DOCS)
def test_every_command_and_flag_the_document_shows_exists(name: str) -> None:
    found = {span: problems(span) for span in command_spans(text(name))}
    assert found, f"{name} shows no command"
    assert not {span: why for span, why in found.items() if why}


def test_the_check_sees_a_missing_command_subcommand_or_flag() -> None:
    assert problems("serve") == ["no command 'serve'"]
    assert problems("worker start|halt") == ["worker has no subcommand 'halt'"]
    assert problems("search QUERY [--typ T]") == ["search has no --typ"]
    assert problems("install|uninstall [--keep-worker] [--no-start]") == []
    assert problems('corpus query NAME "what is it" [--provider P]') == []
    assert problems("logs [-n N] [-x]") == ["logs has no -x"]


def test_every_command_is_in_the_readme_table() -> None:
    rows = [line for line in text("README.md").splitlines() if line.startswith("| `claude-mem ")]
    named = {
        name
        for row in rows
        for span in re.findall(r"`claude-mem ([^`]+)`", row)
        for name in span.replace("\\|", "|").split()[0].split("|")
    }
    assert named == set(COMMANDS)


@pytest.mark.parametrize("name", DOCS)
def test_every_setting_the_document_names_exists(name: str) -> None:
    doc = text(name)
    keys = set(re.findall(r"CLAUDE_MEM_[A-Z0-9_]*[A-Z0-9]", doc))
    assert keys, name
    assert keys <= set(settings.SPECS) | set(settings.ENV_ONLY)
    # `_SESSION_COUNT` after a full key stands for a key sharing its prefix
    short = {span for span in spans(doc) if re.fullmatch(r"_[A-Z0-9_]+", span)}
    assert all(any(key.endswith(end) for key in settings.SPECS) for end in short), short


def flat(name: str) -> str:
    """The document as one line: table pipes unescaped, runs of white space as one space."""
    return " ".join(text(name).replace("\\|", "|").split())


def test_readme_lists_the_observation_types_search_accepts() -> None:
    types = ", ".join(OBSERVATION_TYPES)
    assert f"`--type` is one of {types} or a type in the store" in flat("README.md")


def number(value: float) -> str:
    """A constant as the documents write it: whole numbers without a fraction, thousands
    with a comma."""
    return f"{int(value):,}" if value == int(value) else str(value)


def behaviour_constants() -> list[tuple[str, str]]:
    """(document, phrase): each number in the phrase is the code's own constant."""
    from claude_mem.context import file_gate, gather, timeline
    from claude_mem.hooks import handlers
    from claude_mem.install import files
    from claude_mem.pipeline import consumer
    from claude_mem.search import embedding_task, hybrid, vectors
    from claude_mem.store import fulltext, search_queries
    from claude_mem.transfer import apply
    from claude_mem.viewer import auth
    from claude_mem.worker import app

    default = {key: int(spec.default) for key, spec in settings.SPECS.items() if spec.kind == "int"}
    assert app.BODY_LIMIT_BYTES % 2**20 == 0
    architecture = [
        f"a {app.BODY_LIMIT_BYTES // 2**20} MiB body limit",
        f"into batches of {consumer.BATCH_SIZE}",
        f"up to {consumer.TURN_EVENTS} tool events a provider call",
        f"({consumer.BURST_EVENTS} within {number(consumer.QUIET_S * 1000)} ms)",
        f"wait for a lull (at most {number(consumer.MAX_DEFER_S)} s)",
        f"waits for {number(embedding_task.QUIET_S)} s of calm and runs at nice "
        f"{embedding_task.BACKGROUND_NICE}",
        f"parked as `dead` after {consumer.MAX_ATTEMPTS} attempts",
        f"a term in more than {number(search_queries.RARE_MATCHES)} records is frequent",
        f"the rarest others ({number(search_queries.RANKED_MATCHES)} at most)",
        f"(or of exact parts alone) scores the newest {number(search_queries.FTS_WINDOW)} matches",
        f"a {number(embedding_task.POLL_S)} s poll catches the rest",
        f"Above {vectors.QUANTIZE_ABOVE // 1000}k rows the index stores int8 rows",
        f"(prompts weighted {hybrid.KIND_WEIGHT['prompt']})",
        f"writes in batches of {apply.BATCH}",
        f"code valid {number(auth.LINK_TTL_S / 60)} minutes",
        f"`CLAUDE_MEM_FILE_GATE_MIN_BYTES` ({number(default['CLAUDE_MEM_FILE_GATE_MIN_BYTES'])})",
        f"({number(handlers.FILE_GATE_TIMEOUT_S)} s timeout",
        f"keeps {file_gate.SHOWN} and lists them by day",
        f"body above bare ones, at most {file_gate.COMMITS_SHOWN}, newest first",
        f"current decisions take at most {number(gather.DECISION_SHARE * 100)}% of those rows",
        f"the {timeline.NEWEST} newest observations last",
    ]
    readme = [
        f"the last {files.KEEP_BACKUPS} of each file are kept",
        f"It works once, for {number(auth.LINK_TTL_S / 60)} minutes",
        f"(`CLAUDE_MEM_BACKUP_RETENTION`, default {default['CLAUDE_MEM_BACKUP_RETENTION']})",
        f"clipped to the {number(fulltext.QUERY_CHARS)} characters search can use",
        f"any of its {fulltext.MAX_TOKENS} most distinctive terms",
        f"`CLAUDE_MEM_CONTEXT_TOKEN_BUDGET` ({number(default['CLAUDE_MEM_CONTEXT_TOKEN_BUDGET'])}"
        " tokens",
        f"a file of {number(default['CLAUDE_MEM_FILE_GATE_MIN_BYTES'])} bytes or more",
        f"at most {number(gather.DECISION_SHARE * 100)}% of the budget",
        f"the {timeline.NEWEST} newest observations always stay",
    ]
    return [("ARCHITECTURE.md", p) for p in architecture] + [("README.md", p) for p in readme]


@pytest.mark.parametrize(("name", "phrase"), behaviour_constants())
def test_the_behaviour_constants_the_documents_quote_match_the_code(name: str, phrase: str) -> None:
    assert phrase in flat(name), f"{name} should say {phrase!r} (the code's value)"


def long_flags(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for flag in options(parser) if flag.startswith("--") and flag != "--help"}


def test_the_search_row_shows_every_search_flag() -> None:
    (row,) = [line for line in text("README.md").splitlines()
              if line.startswith("| `claude-mem search ")]  # fmt: skip
    usage = row.split(" | ")[0]
    assert {flag for flag in long_flags(COMMANDS["search"]) if flag not in usage} == set()


def test_import_help_names_every_source_it_reads() -> None:
    """A file is the positional; the other sources are flags, named in `import --help` and in
    `claude-mem --help` alike."""
    description = COMMANDS["import"].description or ""
    listed = " ".join(PARSER.format_help().split())
    for flag in ("--from-claude-mem", "--git"):
        assert flag in long_flags(COMMANDS["import"])
        assert flag in description, flag
    assert " ".join(description.split()) in listed


def test_pause_session_help_points_at_what_shows_a_running_session(
    worker: RunningWorker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every place `pause --session`'s help names shows a session that is running now."""
    body = {"host_session_id": "agent-7", "cwd": str(tmp_path), "tool_name": "Bash",
            "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"}  # fmt: skip
    assert worker.client.post("/api/sessions/observations", json=body).status_code == 200
    (session,) = worker.client.get("/api/sessions").json()["items"]
    (said,) = [a.help or "" for a in COMMANDS["pause"]._actions if "--session" in a.option_strings]
    if "`claude-mem status`" in said:
        assert cli.main(["status"]) == 0
        assert "agent-7" in capsys.readouterr().out
    assert "the session number the viewer shows" in said
    assert worker.client.get(f"/api/sessions/{session['id']}").status_code == 200  # its page
    assert cli.main(["pause", "--session", str(session["id"])]) == 0
    assert "capture paused for session agent-7" in capsys.readouterr().out
