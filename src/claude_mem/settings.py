"""Settings: typed defaults in one table, `settings.json` on top, environment on top of that.

The file holds flat `CLAUDE_MEM_*` keys. Values may be JSON natives or strings (the original
project writes everything as strings), so both parse. A bad file or value never stops a reader:
every load that finds settings.json valid keeps a byte copy of it (`state/settings.last-good.json`),
and a file that is not valid JSON, or a value that is not allowed, falls back to that copy (then
to the default) and becomes a problem the reader reports: the CLI on stderr, the worker in its
log and in the next session-start context. Keys we do not know are kept in the file untouched.
Stdlib only: the hook path imports this.
"""

from __future__ import annotations

import os
import sys

# collections.abc's own source, which os has loaded already: `collections.abc` would import
# the whole `collections` package into every hook process.
from _collections_abc import Mapping

from claude_mem import locations
from claude_mem.hooks import jsonio

TYPE_CHECKING = False  # `typing` is not imported on the hook path; mypy reads this as true
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from os import PathLike
    from pathlib import Path

    from claude_mem.setting_keys import SettingKey

    StrPath = str | PathLike[str]

Value = str | int | bool
LAST_GOOD_NAME = "settings.last-good.json"
PREFIX = "CLAUDE_MEM_"  # every setting's key starts with it

# Who knows the installed providers: pipeline.registry sets this when it is imported (worker,
# CLI, doctor). It returns None for an installed name, else the installed names. The hook path
# never imports the registry (listing entry points scans site-packages), so hooks check only a
# provider name's form; they never use the provider.
provider_lookup: Callable[[str], list[str] | None] | None = None


class SettingsError(ValueError):
    """A value that cannot be accepted; the message names the key and what is allowed."""


class Spec:
    """One setting: its key, default, type and the values it allows."""

    __slots__ = (
        "choices",
        "default",
        "doc",
        "key",
        "kind",
        "maximum",
        "minimum",
        "restart",
        "secret",
        "shown_default",
    )

    def __init__(
        self,
        key: SettingKey,
        default: Value,
        doc: str,
        *,
        kind: str | None = None,
        choices: tuple[str, ...] = (),
        minimum: int | None = None,
        maximum: int | None = None,
        secret: bool = False,
        restart: bool = False,
        shown_default: str | None = None,
    ) -> None:
        self.key = key
        self.default = default
        self.doc = doc
        self.kind = kind or ("choice" if choices else type(default).__name__)
        self.choices = choices
        self.minimum = minimum
        self.maximum = maximum
        self.secret = secret
        self.restart = restart  # the worker reads it once, at start: a change needs a restart
        # The default as the README writes it, where the value depends on the machine.
        self.shown_default = shown_default

    def allowed(self) -> str:
        """Human description of the accepted values, used in every error message."""
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "bool":
            return "true or false"
        if self.kind == "int":
            return f"a whole number from {self.minimum} to {self.maximum}"
        if self.kind == "csv":
            return "a comma-separated list"
        if self.kind == "name":
            return "a name of lowercase letters, digits, '.', '_' or '-'"
        if self.kind == "provider":
            return "an installed provider's name"
        if self.kind == "providers":
            return "a comma-separated list of installed providers' names"
        return "text"

    def parse(self, raw: object) -> Value:
        """Coerce a file or env value to this setting's type, or raise SettingsError."""
        shown = "'********'" if self.secret else repr(raw)
        problem = f"{self.key}: {shown} is not allowed; expected {self.allowed()}"
        if self.kind == "bool":
            return _parse_bool(raw, problem)
        if self.kind == "int":
            return self._parse_int(raw, problem)
        if not isinstance(raw, str | int | float) or isinstance(raw, bool):
            raise SettingsError(problem)
        text = str(raw).strip()
        if self.kind == "choice":
            for choice in self.choices:
                if text.lower() == choice.lower():
                    return choice
            raise SettingsError(problem)
        if self.kind == "csv":
            return ",".join(_items(text))
        if self.kind == "name":
            return _parse_name(text, problem)
        if self.kind == "provider":
            return self._installed([_parse_name(text, problem)])
        if self.kind == "providers":
            return self._installed([_parse_name(item, problem) for item in _items(text)])
        return text

    def _parse_int(self, raw: object, problem: str) -> int:
        if isinstance(raw, bool):
            raise SettingsError(problem)
        try:
            number = int(str(raw).strip()) if not isinstance(raw, int) else raw
        except ValueError:
            raise SettingsError(problem) from None
        lo = self.minimum if self.minimum is not None else number
        hi = self.maximum if self.maximum is not None else number
        if not lo <= number <= hi:
            raise SettingsError(problem)
        return number

    def _installed(self, names: list[str]) -> str:
        """The provider names joined, once each is known to be installed (where that is known)."""
        for name in names:
            installed = provider_lookup(name) if provider_lookup is not None else None
            if installed is not None:
                raise SettingsError(
                    f"{self.key}: unknown provider {name!r}; installed: {', '.join(installed)}"
                )
        return ",".join(names)


def _parse_bool(raw: object, problem: str) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise SettingsError(problem)


def _parse_name(text: str, problem: str) -> str:
    name = text.strip().lower()
    if not name or not all(c.isalnum() or c in "._-" for c in name) or not name.isascii():
        raise SettingsError(problem)
    return name


def _items(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def format_value(value: Value) -> str:
    """A value as settings.json and the README write it: `true`/`false`, numbers, plain text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _default_port() -> int:
    # Per-user so several accounts on one machine don't collide; 38700+ stays clear of the
    # original claude-mem's 37700 + uid % 100.
    uid = os.getuid() if hasattr(os, "getuid") else 77
    return 38700 + uid % 100


_SPECS: tuple[Spec, ...] = (
    # Worker
    Spec(
        "CLAUDE_MEM_WORKER_PORT",
        _default_port(),
        "Worker HTTP port (loopback only).",
        minimum=1024,
        maximum=65535,
        restart=True,
        shown_default="38700 + uid % 100",
    ),
    Spec(
        "CLAUDE_MEM_WORKER_HOST",
        "127.0.0.1",
        "Loopback address the worker binds.",
        choices=("127.0.0.1", "localhost", "::1"),
        restart=True,
    ),
    # Compression pipeline
    Spec(
        "CLAUDE_MEM_PROVIDER",
        "local",
        "Compressor: 'local' works offline with no model; built-ins also anthropic, "
        "openai-compatible, gemini, claude-agent-sdk; plugins add more.",
        kind="provider",
    ),
    Spec(
        "CLAUDE_MEM_TURN_IDLE_S",
        60,
        "Seconds a prompt turn may sit with no Stop before its tool events are compressed "
        "anyway (a turn is compressed as a whole when the agent stops).",
        minimum=0,
        maximum=3600,
    ),
    Spec(
        "CLAUDE_MEM_FALLBACK_PROVIDERS",
        "local",
        "Providers tried in order when the main one cannot process a batch.",
        kind="providers",
    ),
    Spec(
        "CLAUDE_MEM_MODEL",
        "",
        "Model id for CLAUDE_MEM_PROVIDER (not the fallbacks); empty = provider default.",
    ),
    Spec("CLAUDE_MEM_ANTHROPIC_MODEL", "", "Model id for anthropic, wherever it is in the chain."),
    Spec("CLAUDE_MEM_OPENAI_MODEL", "", "Model id for openai-compatible, wherever in the chain."),
    Spec("CLAUDE_MEM_GEMINI_MODEL", "", "Model id for gemini, wherever it is in the chain."),
    Spec("CLAUDE_MEM_CLAUDE_AGENT_SDK_MODEL", "", "Model for claude-agent-sdk, anywhere in chain."),
    Spec("CLAUDE_MEM_ANTHROPIC_API_KEY", "", "Anthropic API key.", secret=True),
    Spec("CLAUDE_MEM_OPENAI_API_KEY", "", "Key for the OpenAI-compatible provider.", secret=True),
    Spec("CLAUDE_MEM_OPENAI_BASE_URL", "", "Base URL of the OpenAI-compatible API."),
    Spec("CLAUDE_MEM_GEMINI_API_KEY", "", "Gemini API key.", secret=True),
    Spec(
        "CLAUDE_MEM_ANTHROPIC_BASE_URL",
        "",
        "Base URL of the Anthropic Messages API (a gateway); empty = Anthropic's own.",
    ),
    Spec(
        "CLAUDE_MEM_GEMINI_BASE_URL",
        "",
        "Base URL of the Gemini API; empty = Google's own.",
    ),
    Spec(
        "CLAUDE_MEM_CLAUDE_PATH",
        "",
        "The `claude` CLI used by the claude-agent-sdk provider; empty = found on PATH.",
    ),
    Spec(
        "CLAUDE_MEM_LLM_TIMEOUT_MS",
        30_000,
        "How long one LLM request may take before it is abandoned and retried.",
        minimum=100,
        maximum=600_000,
    ),
    Spec(
        "CLAUDE_MEM_DAILY_TOKEN_BUDGET",
        500_000,
        "LLM tokens per day before falling back to 'local' (0 = never call an LLM).",
        minimum=0,
        maximum=10**10,
    ),
    Spec(
        "CLAUDE_MEM_SESSION_TOKEN_BUDGET",
        100_000,
        "LLM tokens per agent session before falling back to 'local'.",
        minimum=0,
        maximum=10**10,
    ),
    # Capture
    Spec(
        "CLAUDE_MEM_EXCLUDED_PROJECTS",
        "",
        "Comma-separated globs (*, **, ?, ~) of folders never captured nor injected.",
        kind="csv",
    ),
    Spec(
        "CLAUDE_MEM_MODE",
        "normal",
        "normal: capture and inject; recall-only: inject but capture nothing; "
        "capture-only: capture but inject nothing.",
        choices=("normal", "recall-only", "capture-only"),
    ),
    Spec(
        "CLAUDE_MEM_SKIP_TOOLS",
        "ListMcpResourcesTool,SlashCommand,Skill,TodoWrite,AskUserQuestion",
        "Tool names never observed.",
        kind="csv",
    ),
    Spec(
        "CLAUDE_MEM_REDACT_SECRETS",
        True,
        "Redact API keys, tokens and passwords before storing.",
    ),
    Spec(
        "CLAUDE_MEM_HOOK_FAIL_LOUD_THRESHOLD",
        3,
        "Consecutive failed hooks before the agent is told capture is broken.",
        minimum=1,
        maximum=1000,
    ),
    Spec(
        "CLAUDE_MEM_HOOK_TIMEOUT_MS",
        2000,
        "How long a hook waits for the worker.",
        minimum=100,
        maximum=300_000,
    ),
    Spec(
        "CLAUDE_MEM_HOOK_PYTHON",
        "",
        "The Python that runs command hooks (CPython 3.11 or later); empty = `claude-mem install` "
        "picks the fastest that runs them. Needs `claude-mem install`.",
    ),
    Spec(
        "CLAUDE_MEM_SPOOL_MAX_BYTES",
        8 << 20,
        "Bytes of events hooks keep in the data dir's spool while no worker can start; "
        "past it events are dropped and counted (claude-mem doctor).",
        minimum=0,
        maximum=1 << 30,
    ),
    # Context injection
    Spec(
        "CLAUDE_MEM_CONTEXT_OBSERVATIONS",
        50,
        "Observations in the session-start index.",
        minimum=0,
        maximum=200,
    ),
    Spec(
        "CLAUDE_MEM_CONTEXT_FULL_COUNT",
        3,
        "Most recent observations shown in full.",
        minimum=0,
        maximum=20,
    ),
    Spec(
        "CLAUDE_MEM_CONTEXT_FULL_FIELD",
        "narrative",
        "Field shown for full observations.",
        choices=("narrative", "facts"),
    ),
    Spec("CLAUDE_MEM_CONTEXT_SESSION_COUNT", 3, "Session summaries shown.", minimum=0, maximum=50),
    Spec(
        "CLAUDE_MEM_CONTEXT_TOKEN_BUDGET",
        2000,
        "Hard cap on injected context size, in tokens.",
        minimum=100,
        maximum=100_000,
    ),
    Spec("CLAUDE_MEM_CONTEXT_SHOW_LAST_SUMMARY", True, "Append the latest summary's fields."),
    Spec("CLAUDE_MEM_CONTEXT_SHOW_SAVINGS", True, "Show the token economics line."),
    Spec("CLAUDE_MEM_CONTEXT_SHOW_TERMINAL_OUTPUT", True, "Show the context to the user too."),
    Spec("CLAUDE_MEM_WELCOME_HINT_ENABLED", True, "Short welcome line for an empty project."),
    Spec(
        "CLAUDE_MEM_FILE_GATE_MIN_BYTES",
        1500,
        "Reads of files at least this big get the file's memory timeline (0 turns it off).",
        minimum=0,
        maximum=10**9,
    ),
    Spec(
        "CLAUDE_MEM_SEMANTIC_INJECT",
        True,
        "Inject the memories relevant to each prompt (nothing when none is).",
    ),
    Spec(
        "CLAUDE_MEM_SEMANTIC_INJECT_LIMIT",
        5,
        "Memories injected per prompt.",
        minimum=1,
        maximum=20,
    ),
    Spec(
        "CLAUDE_MEM_SEMANTIC_INJECT_TOKENS",
        500,
        "Hard cap on the memories injected per prompt, in tokens.",
        minimum=50,
        maximum=500,
    ),
    # Search
    Spec(
        "CLAUDE_MEM_EMBEDDING_MODEL",
        "minilm-l6-int8",
        "Local embedding model; 'none' turns vectors off.",
        choices=("minilm-l6-int8", "none"),
        restart=True,
    ),
    Spec(
        "CLAUDE_MEM_GIT_HISTORY",
        True,
        "Keep each project's git history in memory: the worker reads new commits in the "
        "background when a session starts there (`claude-mem import --git` reads it by hand).",
    ),
    # Knowledge corpora and backups
    Spec(
        "CLAUDE_MEM_CORPUS_MAX_TOKENS",
        100_000,
        "Most corpus tokens sent to a model per question (older observations are cut first).",
        minimum=1_000,
        maximum=2_000_000,
    ),
    Spec(
        "CLAUDE_MEM_BACKUP_RETENTION",
        7,
        "Daily database backups the worker keeps in backups/; 0 turns them off.",
        minimum=0,
        maximum=3650,
    ),
    # Team memory
    Spec(
        "CLAUDE_MEM_TEAM_URL",
        "",
        "The team server this worker syncs shared projects with "
        "(postgresql://MEMBER:PASSWORD@HOST:PORT/DB, the join URL the team's owner made "
        "for this member); empty: no team.",
        secret=True,
    ),
    Spec(
        "CLAUDE_MEM_TEAM_SYNC_S",
        1,
        "Seconds between team sync rounds (push the outbox, pull the team's rows).",
        minimum=1,
        maximum=3600,
    ),
    # Logging
    Spec(
        "CLAUDE_MEM_LOG_LEVEL",
        "INFO",
        "Log threshold.",
        choices=("DEBUG", "INFO", "WARN", "ERROR", "SILENT"),
    ),
    Spec("CLAUDE_MEM_LOG_RETENTION_DAYS", 14, "Daily log files kept.", minimum=1, maximum=3650),
)

SPECS: dict[str, Spec] = {spec.key: spec for spec in _SPECS}
# Variables read from the environment only, never settings; why each cannot be a setting.
ENV_ONLY = {
    locations.DATA_DIR_ENV: "decides where settings.json lives, so it cannot live inside it",
    "CLAUDE_MEM_INTERNAL": "marks the claude subprocess of our own observer (claude-agent-sdk), "
    "whose hooks must record nothing; set by us, not by users",
    "CLAUDE_MEM_HOOK_TOKEN": "the hook token, set by the installer in Claude Code's settings `env` "
    "for the http hooks' header (worker/token.py); Claude Code reads it, we never do",
}


def spec_for(name: str) -> Spec:
    """The setting `name` names, in any case (`claude_mem_mode` is CLAUDE_MEM_MODE); else
    SettingsError saying which keys come closest."""
    spec = SPECS.get(name.upper())
    if spec is None:
        raise SettingsError(unknown_key(name))
    return spec


def setting_key(name: str) -> SettingKey:
    """`name` as a setting's key, for names built at run time; SettingsError if there is none."""
    return spec_for(name).key


class Settings(Mapping[str, Value]):
    """Resolved settings: every known key has a typed value; problems and unknown keys are kept."""

    def __init__(
        self,
        values: dict[str, Value],
        *,
        sources: dict[str, str],
        unknown: dict[str, object],
        problems: list[str],
    ) -> None:
        self._values = values
        self.sources = sources
        self.unknown = unknown
        self.problems = problems

    def __getitem__(self, key: str) -> Value:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def get_int(self, key: SettingKey) -> int:
        value = self._values[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{key} is not a number setting")
        return value

    def get_bool(self, key: SettingKey) -> bool:
        value = self._values[key]
        if not isinstance(value, bool):
            raise TypeError(f"{key} is not a true/false setting")
        return value

    def get_str(self, key: SettingKey) -> str:
        return str(self._values[key])

    def get_list(self, key: SettingKey) -> list[str]:
        """A csv setting as a list of its non-empty items."""
        return [item for item in str(self._values[key]).split(",") if item]

    def public(self) -> dict[str, Value]:
        """Values safe to show: secrets masked."""
        return {
            key: ("********" if SPECS[key].secret and value else value)
            for key, value in self._values.items()
        }


def stamp(path: StrPath | None = None) -> tuple[int, int, int] | None:
    """What tells settings.json changed (mtime, size, inode), for one stat; None if missing."""
    try:
        found = os.stat(path or locations.settings_path())
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size, found.st_ino


def last_good_path(path: StrPath | None = None) -> str:
    """The copy of the last valid settings.json, in the state/ folder beside it."""
    folder = os.path.dirname(os.fspath(path or locations.settings_path()))
    return os.path.join(folder, "state", LAST_GOOD_NAME)


def shown_path(path: StrPath) -> str:
    """`path` as people write it: the home folder as `~`."""
    home = os.path.expanduser("~")
    text = os.fspath(path)
    return "~" + text[len(home) :] if home != "/" and text.startswith(home + os.sep) else text


def _read(path: StrPath) -> tuple[bytes, os.stat_result] | None:
    """The file's bytes and the identity of what was read (its fstat); None if it is missing."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SettingsError(f"{shown_path(path)} cannot be read ({exc.strerror})") from None
    try:
        stamp = os.fstat(fd)
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError as exc:
        raise SettingsError(f"{shown_path(path)} cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)
    return b"".join(chunks), stamp


def _decode(raw: bytes, path: StrPath) -> dict[str, object]:
    """The settings object in `raw`; SettingsError saying where it is broken."""
    try:
        data = jsonio.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise SettingsError(f"{shown_path(path)} is not valid JSON (not UTF-8 text)") from None
    except ValueError as exc:
        import json  # noqa: PLC0415 - the error path: json's own error says where

        if not isinstance(exc, json.JSONDecodeError):
            raise
        where = f"line {exc.lineno}: {exc.msg}"
        raise SettingsError(f"{shown_path(path)} is not valid JSON ({where})") from None
    if isinstance(data, dict) and isinstance(data.get("env"), dict) and len(data) == 1:
        data = data["env"]  # the original project's old nested shape
    if not isinstance(data, dict):
        raise SettingsError(f"{shown_path(path)} must hold a JSON object of CLAUDE_MEM_* keys")
    return data


def read_file(path: StrPath | None = None) -> dict[str, object]:
    """The raw settings file as a dict; missing → {}; unreadable or not a JSON object →
    SettingsError."""
    path = path or locations.settings_path()
    found = _read(path)
    return _decode(found[0], path) if found is not None else {}


class _LastGood:
    """The copy of the last valid settings.json: read only when a fallback is needed, written
    only when settings.json changed since (one stat otherwise: the hook path loads settings)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._values: dict[str, object] | None = None

    def values(self) -> dict[str, object]:
        if self._values is None:
            try:
                with open(self.path, "rb") as handle:
                    self._values = _decode(handle.read(), self.path)
            except (OSError, SettingsError):
                self._values = {}
        return self._values

    def value(self, spec: Spec) -> Value | None:
        """The copy's value for `spec` if it has one that is still allowed."""
        raw = self.values().get(spec.key)
        try:
            return None if raw is None else spec.parse(raw)
        except SettingsError:
            return None

    def keep(self, raw: bytes, stamp: os.stat_result) -> None:
        """Make the copy hold `raw`; it takes the source's mtime, which tells it is current."""
        try:
            copy = os.stat(self.path)
            if copy.st_size == len(raw) and copy.st_mtime_ns == stamp.st_mtime_ns:
                return
        except FileNotFoundError:
            pass
        except OSError:
            return
        try:
            locations.write_private_file(self.path, raw)
            os.utime(self.path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        except OSError:  # a read-only or full disk: the copy is a safety net, never an error
            return


_FROM = {"file": "file", "last-good": "the last valid settings", "env": "env"}


def _shown(value: Value) -> str:
    return format_value(value) if isinstance(value, bool) else repr(value)


def load(path: StrPath | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Defaults ← file ← environment. Never raises: a broken file or a bad value falls back to
    the last valid settings (then the default) and becomes a problem."""
    path = path or locations.settings_path()
    environ = os.environ if environ is None else environ
    last_good = _LastGood(last_good_path(path))
    problems: list[str] = []
    try:
        found = _read(path)
        file_values, layer = (_decode(found[0], path) if found else {}), "file"
    except SettingsError as exc:
        found, file_values, layer = None, last_good.values(), "last-good"
        fallback = "the last valid settings" if file_values else "the defaults"
        problems.append(f"{exc}; using {fallback}")
    file_valid = found is not None
    values: dict[str, Value] = {}
    sources: dict[str, str] = {}
    for key, spec in SPECS.items():
        values[key], sources[key] = spec.default, "default"
        for source, raw in ((layer, file_values.get(key)), ("env", environ.get(key))):
            if raw is None:
                continue
            try:
                values[key], sources[key] = spec.parse(raw), source
            except SettingsError as exc:
                if source == "file":
                    file_valid = False
                    kept = last_good.value(spec)
                    if kept is not None:
                        values[key], sources[key] = kept, "last-good"
                using = _shown(values[key])
                if sources[key] == "last-good":
                    using += " from the last valid settings"
                problems.append(f"{exc} (from {_FROM[source]}; using {using})")
    if found is not None and file_valid:
        last_good.keep(*found)
    unknown = {k: v for k, v in file_values.items() if k not in SPECS}
    return Settings(values, sources=sources, unknown=unknown, problems=problems)


def warn(loaded: Settings) -> None:
    """Each problem as one `warning:` line on stderr: how a CLI reader says so."""
    for problem in loaded.problems:
        print(f"warning: {problem}", file=sys.stderr)


def unknown_key(key: str) -> str:
    """The message for a key that is no setting (`settings get`, `set`, the worker's API): the
    closest key, compared without the prefix all share, rather than all 49 of them."""
    import difflib  # noqa: PLC0415 - only for a mistyped key; the hook path never gets here

    if key.upper() in ENV_ONLY:
        return f"{key}: not a setting but an environment variable: {ENV_ONLY[key.upper()]}"
    typed = key.upper().removeprefix(PREFIX)
    names = {name.removeprefix(PREFIX): name for name in SPECS}
    every = "`claude-mem settings list` shows every setting"
    close = difflib.get_close_matches(typed, names, n=1, cutoff=0.5)
    if not close:
        return f"{key}: unknown setting; {every}"
    return f"{key}: unknown setting; did you mean {names[close[0]]}? ({every})"


def save(changes: Mapping[str, object], path: StrPath | None = None) -> dict[str, Value]:
    """Validate `changes` and write them into the file atomically, keeping every other key.

    All-or-nothing: one invalid value raises SettingsError and nothing is written.
    """
    path = path or locations.settings_path()
    parsed: dict[str, Value] = {}
    for key, raw in changes.items():
        spec = spec_for(key)
        parsed[spec.key] = spec.parse(raw)
    try:
        current = read_file(path)
    except SettingsError as exc:
        raise SettingsError(f"{exc}; fix it first (nothing was changed)") from None
    current.update(parsed)
    locations.write_private_file(path, _pretty(current))
    return parsed


def _pretty(values: Mapping[str, object]) -> str:
    """settings.json as we write it (never on the hook path: json indents, jsonio does not)."""
    import json  # noqa: PLC0415

    return json.dumps(values, indent=2, sort_keys=True) + "\n"


def ensure_file(path: StrPath | None = None) -> Path:
    """Create settings.json with every default (so users can see what to change) if missing."""
    from pathlib import Path  # noqa: PLC0415 - the CLI's; the hook path never calls this

    found = Path(path or locations.settings_path())
    if not found.exists():
        defaults = {key: spec.default for key, spec in SPECS.items()}
        locations.write_private_file(found, _pretty(defaults))
    return found
