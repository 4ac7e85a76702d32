"""Test runs: counts, failing tests and errors read from a runner's output, and the note
that reports them."""

from __future__ import annotations

import re

from claude_mem.pipeline.local.note import Note, discovery, output_facts
from claude_mem.pipeline.local.shell import EXCEPTION_LINE, Run, error_line, run_failed
from claude_mem.pipeline.local.text import SUBTITLE_CHARS, backticked, clip, dedup, shortlist
from claude_mem.pipeline.providers.base import ToolEvent
from claude_mem.pipeline.tools.paths import normalize_path

_COUNT = re.compile(
    r"(\d{1,7})\s+(passed|failed|failures?|errors?|skipped|xfailed|xpassed|passing|failing|"
    r"pending|ignored|deselected)\b",
    re.IGNORECASE,
)
_COUNT_NAMES = {
    "passed": "passed",
    "passing": "passed",
    "failed": "failed",
    "failing": "failed",
    "failure": "failed",
    "failures": "failed",
    "error": "errors",
    "errors": "errors",
    "skipped": "skipped",
    "pending": "skipped",
    "ignored": "skipped",
    "xfailed": "xfailed",
    "xpassed": "xpassed",
    "deselected": "deselected",
}
_COUNT_ORDER = ("passed", "failed", "errors", "skipped", "xfailed", "xpassed", "deselected")
_FAILED_TESTS = (
    re.compile(r"^(?:FAILED|ERROR)\s+([^\s(]\S*?)(?:\s+-\s+(.*))?$"),  # pytest short summary
    re.compile(r"^\s*--- FAIL: (\S+)"),  # go
    re.compile(r"^test (\S+) \.\.\. FAILED$"),  # cargo
    re.compile(r"^(?:FAIL|ERROR): (\S+(?: \([^)]{0,200}\))?)"),  # unittest
    re.compile(r"^\s*(?:✕|×|✗)\s+(.+?)$"),  # jest, vitest
    re.compile(r"^\s*●\s+(.+ › .+)$"),  # jest
)


def _test_counts(text: str) -> dict[str, int]:
    """Test counts from a runner's summary (pytest, jest, vitest, cargo, go, unittest...)."""
    lines = text.splitlines()[-600:]
    counts: dict[str, int] = {}
    results = [line for line in lines if line.lstrip().startswith("test result:")]
    summary = results or _summary_lines(lines)
    for line in summary:
        for number, word in _COUNT.findall(line):
            name = _COUNT_NAMES[word.lower()]
            counts[name] = counts.get(name, 0) + int(number)
    _add_special_counts(lines, counts)
    nonzero = {name: counts[name] for name in _COUNT_ORDER if counts.get(name)}
    if nonzero:
        return nonzero
    return {"passed": 0} if counts or _no_tests(lines) else {}


def _summary_lines(lines: list[str]) -> list[str]:
    """The last line with counts, plus the one before it if it adds other counts (mocha)."""
    for index in range(len(lines) - 1, -1, -1):
        if _COUNT.search(lines[index]):
            chosen = [lines[index]]
            if index and _COUNT.search(lines[index - 1]):
                kinds = {w.lower() for _, w in _COUNT.findall(lines[index])}
                if not kinds & {w.lower() for _, w in _COUNT.findall(lines[index - 1])}:
                    chosen.insert(0, lines[index - 1])
            return chosen
    return []


def _add_special_counts(lines: list[str], counts: dict[str, int]) -> None:
    """unittest ('Ran 13 tests' + 'FAILED (failures=1)'), rspec, and go's per-test lines."""
    text = "\n".join(lines)
    ran = re.search(r"^Ran (\d{1,7}) tests? in ", text, re.MULTILINE)
    if ran and not counts:
        failures = sum(int(n) for n in re.findall(r"(?:failures|errors)=(\d{1,7})", text))
        skipped = sum(int(n) for n in re.findall(r"skipped=(\d{1,7})", text))
        counts.update(passed=int(ran.group(1)) - failures - skipped, failed=failures)
        counts["skipped"] = skipped
    examples = re.search(r"(\d{1,7}) examples?, (\d{1,7}) failures?", text)
    if examples:
        counts["passed"] = int(examples.group(1)) - int(examples.group(2))
    if not counts:
        go_pass = len(re.findall(r"^\s*--- PASS: ", text, re.MULTILINE))
        go_fail = len(re.findall(r"^\s*--- FAIL: ", text, re.MULTILINE))
        if go_pass or go_fail:
            counts.update(passed=go_pass, failed=go_fail)


def _no_tests(lines: list[str]) -> bool:
    return any("no tests ran" in line or "No tests found" in line for line in lines[-20:])


def _failed_tests(text: str) -> list[str]:
    """Names (with the reason, when given) of failing tests."""
    found: list[str] = []
    for line in text.splitlines()[-2000:]:
        for pattern in _FAILED_TESTS:
            match = pattern.match(line)
            if match:
                reason = match.group(2) if pattern.groups > 1 and match.group(2) else ""
                name = re.sub(r"\s+\(?\d+(?:\.\d+)?\s?m?s\)?$", "", match.group(1).strip())
                found.append(name + (f" — {reason}" if reason else ""))
                break
    return dedup(found)


def _error_lines(text: str) -> list[str]:
    """pytest's `E   ...` lines and exception lines: the why of a failure."""
    lines = text.splitlines()[-2000:]
    found = [line.strip()[1:].strip() for line in lines if re.match(r"^E\s{2,}\S", line)]
    if not found:
        found = [line.strip() for line in lines if EXCEPTION_LINE.match(line.strip())]
    return dedup(found)[:2]


def _test_target(argv: list[str], event: ToolEvent) -> str:
    """The test files or folders a test command names, for the title."""
    paths = [
        word
        for word in argv[1:]
        if not word.startswith("-")
        and ("/" in word or "::" in word or word.endswith(".py"))
        and not word.endswith("...")
        and not set(word) & set("$`*?")
    ]
    return shortlist([normalize_path(path, event.cwd) for path in paths], 2)


def test_note(event: ToolEvent, command: str, argv: list[str], run: Run) -> Note:
    counts = _test_counts(run.output)
    failing = _failed_tests(run.output)
    if not counts and failing:
        counts = {"failed": len(failing)}
    failed = bool(counts.get("failed") or counts.get("errors") or failing)
    if not counts:
        failed = failed or run_failed(run, [argv])
    target = _test_target(argv, event)
    where = f" in {target}" if target else ""
    if counts:
        result = ", ".join(f"{n} {name}" for name, n in counts.items())
        result = "no tests ran" if result == "0 passed" else result
        title = f"Ran tests{where}: {result}"
    elif failed:
        result = error_line(run)
        title = f"Tests failed{where}: {result}"
    else:
        result = "passed" if run.exit_code == 0 else "finished"
        title = f"Ran tests{where}: {result}"
    quoted = [f"Result: {result}", *(f"Failed: {name}" for name in failing[:4])]
    quoted.extend(f"Error: {line}" for line in _error_lines(run.output))
    facts = [f"Command: {clip(command, 180)}", *output_facts(quoted)]
    narrative = f"Ran {backticked(command, 100)}: {result}."
    if failing:
        narrative += f" Failing: {clip(shortlist(failing, 3), 100)}."
    return discovery(
        event,
        "test",
        title,
        subtitle=clip(command, SUBTITLE_CHARS),
        narrative=narrative,
        facts=facts,
        concepts=["problem-solution"] if failed else ["how-it-works"],
        failed=failed,
    )
