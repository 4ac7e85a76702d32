"""What the running worker holds: settings, the store once it is open, the event stream.

Settings follow settings.json while the worker runs: every use checks the file's stamp (one
stat) and loads it again when it changed, so `claude-mem settings set` (or a hand edit) applies
to the next request. Those the worker reads only at start (`Spec.restart`) are logged as
waiting for a restart.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import threading
import time
from collections.abc import Callable

from claude_mem import __version__, backup, locations, log
from claude_mem import settings as settings_module
from claude_mem.pipeline.consumer import Pipeline
from claude_mem.project import ProjectIdentity
from claude_mem.search.embedding_task import Embedding
from claude_mem.settings import Settings
from claude_mem.settings import load as load_settings
from claude_mem.store import Database
from claude_mem.store import queue as queue_store
from claude_mem.store.observations import get_observation
from claude_mem.team.sync import TeamSync
from claude_mem.worker.history_refresh import HistoryRefresh
from claude_mem.worker.ingest import Ingest
from claude_mem.worker.recovery import Recovery
from claude_mem.worker.stream import Broadcaster
from claude_mem.worker.token import ensure_hook_token, ensure_token

OPEN_RETRY_MAX_S = 2.0
QUEUE_STATUS_INTERVAL_S = 0.25
TEAM_SETTINGS_S = 1.0  # how often the team sync's settings are looked at


class WorkerState:
    """Two phases: the socket answers at once; the store opens (and migrates) in the background."""

    def __init__(self, settings: Settings | None = None) -> None:
        self._settings_path = locations.settings_path()  # built once: stat on every use
        self._settings_stamp = settings_module.stamp(self._settings_path)
        self._settings = settings or load_settings()
        self._started_with = self._settings
        self._settings_lock = threading.Lock()
        _log_problems(self._settings)
        self.version = __version__
        self.pid = os.getpid()
        self.port: int | None = None
        self.started_at = time.time()
        self.token = ensure_token()
        self.hook_token = ensure_hook_token()  # the hook routes' own, and only theirs
        self.stream = Broadcaster()
        self.db: Database | None = None
        self.ingest: Ingest | None = None
        self.pipeline: Pipeline | None = None
        self.embedding: Embedding | None = None
        self.history: HistoryRefresh | None = None
        self.recovery: Recovery | None = None
        self.team: TeamSync | None = None  # only while a team URL is set
        self._team_config: tuple[str, int] | None = None  # the settings `team` was made for
        self._team_lock = threading.Lock()
        self._queue_changed = threading.Event()
        self.error: str | None = None
        # Set by whoever runs the server (worker.main, test harness): asks it to stop gracefully.
        self.request_shutdown: Callable[[], None] | None = None
        self._opening: asyncio.Task[None] | None = None
        self._status_task: asyncio.Task[None] | None = None
        self._backup_task: asyncio.Task[None] | None = None
        self._team_task: asyncio.Task[None] | None = None

    @property
    def ready(self) -> bool:
        return self.db is not None

    def token_matches(self, presented: str | None) -> bool:
        return presented is not None and hmac.compare_digest(presented, self.token)

    def hook_token_matches(self, presented: str | None) -> bool:
        return presented is not None and hmac.compare_digest(presented, self.hook_token)

    @property
    def settings(self) -> Settings:
        """The current settings: loaded again when settings.json changed since the last use."""
        if settings_module.stamp(self._settings_path) != self._settings_stamp:
            with self._settings_lock:  # the pipeline's threads ask too: load and log once
                current = settings_module.stamp(self._settings_path)
                if current != self._settings_stamp:
                    self._settings_stamp = current
                    self._apply(load_settings())
        return self._settings

    def _apply(self, new: Settings) -> None:
        old, self._settings = self._settings, new
        changed = sorted(key for key in new if new[key] != old[key])
        if changed:
            log.info("settings", "settings changed", keys=",".join(changed))
        _log_problems(new, old)
        waiting = [key for key in sorted(new) if settings_module.SPECS[key].restart
                   and new[key] != self._started_with[key]]  # fmt: skip
        if waiting:
            log.warn("settings", "changed settings wait for a restart (claude-mem worker restart)",
                     keys=",".join(waiting))  # fmt: skip
        log.configure(new.get_str("CLAUDE_MEM_LOG_LEVEL"),
                      new.get_int("CLAUDE_MEM_LOG_RETENTION_DAYS"))  # fmt: skip
        if self.db is not None:
            self.db.redact_secrets = new.get_bool("CLAUDE_MEM_REDACT_SECRETS")

    def start_opening(self) -> None:
        self._opening = asyncio.get_running_loop().create_task(self._open_store())

    async def _open_store(self) -> None:
        """Open and migrate the store, retrying (the file may be locked or the disk full)."""
        delay = 0.1
        while self.db is None:
            try:
                db = await asyncio.to_thread(self._open_once)
            except Exception as exc:  # any failure: report it on /api/readiness and retry
                self.error = f"{type(exc).__name__}: {exc}"
                log.warn("worker", "store not ready, retrying", error=self.error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, OPEN_RETRY_MAX_S)
                continue
            model = self.settings.get_str("CLAUDE_MEM_EMBEDDING_MODEL")
            if model != "none":
                self.embedding = Embedding(
                    db,
                    model,
                    since_last_event=lambda: (
                        self.pipeline.since_last_event() if self.pipeline else float("inf")
                    ),
                )
                self.embedding.start()
            self.pipeline = Pipeline(
                db,
                lambda: self.settings,
                self.stream,
                on_stored=self.embedding.notify if self.embedding else lambda: None,
                held=lambda: self.recovery is not None and self.recovery.holds_pipeline,
            )
            self.history = HistoryRefresh(
                db,
                lambda: self.settings,
                on_stored=self.embedding.notify if self.embedding else lambda: None,
                since_last_event=self.pipeline.since_last_event,
            )
            self.ingest = Ingest(db, lambda: self.settings, self.stream, self._on_queue_change,
                                 on_session_started=self._session_started)  # fmt: skip
            # Before the store counts as open: no event is taken ahead of what was missed.
            self.recovery = Recovery(db, self.ingest)
            self.recovery.start()
            self.team = self._team_sync(db)
            self.db, self.error = db, None
            log.info("worker", "store ready", path=str(db.path), migrated=db.migrated)
            self._status_task = asyncio.get_running_loop().create_task(self._publish_queue_status())
            self._backup_task = asyncio.get_running_loop().create_task(
                backup.run_daily(lambda: self.db, lambda: self.settings)
            )
            self._team_task = asyncio.get_running_loop().create_task(self._follow_team(db))

    async def _publish_queue_status(self) -> None:
        """Queue depth for the viewer, at most a few times a second: counting rows on every
        event would cost the ingest path more than the event itself."""
        while self.db is not None:
            await asyncio.sleep(QUEUE_STATUS_INTERVAL_S)
            if self._queue_changed.is_set() and self.db is not None:
                self._queue_changed.clear()
                depth = await asyncio.to_thread(self._queue_counts)
                self.stream.publish("processing_status", queue=depth)

    def _open_once(self) -> Database:
        db = Database(redact_secrets=self.settings.get_bool("CLAUDE_MEM_REDACT_SECRETS"))
        try:
            with db.write() as conn:
                # This process holds the single-instance lock, so any row still marked
                # 'processing' was claimed by a worker that died: give it back.
                released = queue_store.release_stale(conn)
            if released:
                log.warn("worker", "released rows claimed by a previous worker", rows=released)
        except BaseException:
            db.close()
            raise
        return db

    def _team_settings(self) -> tuple[str, int]:
        settings = self.settings
        return settings.get_str("CLAUDE_MEM_TEAM_URL"), settings.get_int("CLAUDE_MEM_TEAM_SYNC_S")

    async def _follow_team(self, db: Database) -> None:
        """The team sync follows its settings without a worker restart: a new team URL
        (`team join`, `team leave`, `settings set`) or interval stops the running sync and
        starts the one the settings now ask for."""
        while self.db is not None:
            await asyncio.sleep(TEAM_SETTINGS_S)
            if self._team_settings() != self._team_config:
                await asyncio.to_thread(self._restart_team, db)

    def follow_team_now(self) -> bool:
        """The team settings applied at once rather than within TEAM_SETTINGS_S (`team leave`
        asks, to say what happened): whether a sync that was running has stopped."""
        was_syncing = self.team is not None
        if self.db is not None:
            self._restart_team(self.db)
        return was_syncing and self.team is None

    def _restart_team(self, db: Database) -> None:
        """The sync the settings ask for, when they changed since it was made; the lock keeps
        the once-a-second follower and `follow_team_now` from making two."""
        with self._team_lock:
            if self._team_settings() == self._team_config:
                return
            if self.team is not None:
                team, self.team = self.team, None
                team.stop()
            self.team = self._team_sync(db)

    def _team_sync(self, db: Database) -> TeamSync | None:
        """The team sync thread, started, when a team URL is set (a bad one is logged)."""
        self._team_config = url, interval_s = self._team_settings()
        if not url:
            return None
        try:
            sync = TeamSync(
                db, url, interval_s=interval_s, on_pulled=lambda ids: self._team_pulled(db, ids)
            )
        except ValueError as exc:
            log.warn("team", "team sync off: the team URL is not usable", error=str(exc))
            return None
        sync.start()
        return sync

    def _team_pulled(self, db: Database, observation_ids: list[int]) -> None:
        """Teammates' rows just stored: the embedder has new rows, the viewer new cards."""
        if self.embedding is not None:
            self.embedding.notify()
        conn = db.read()
        for obs_id in observation_ids:
            row = get_observation(conn, obs_id)
            if row is not None:
                self.stream.publish("new_observation", observation=row)

    def _session_started(self, project: ProjectIdentity) -> None:
        """A new session: its project's git history may have moved, a spool may wait."""
        if self.history is not None:
            self.history.asked(project)
        if self.recovery is not None:
            self.recovery.spooled()

    def _on_queue_change(self) -> None:
        self._queue_changed.set()
        if self.pipeline is not None:
            self.pipeline.notify()

    def _queue_counts(self) -> dict[str, int]:
        db = self.db
        return queue_store.counts(db.read()) if db is not None else {}

    async def close(self) -> None:
        """Graceful stop: stop opening, fold the WAL into the file, close the store."""
        for task in (self._opening, self._status_task, self._backup_task, self._team_task):
            if task is not None and not task.done():
                task.cancel()
        self.ingest = None
        from claude_mem.team.search import close_searchers  # noqa: PLC0415

        close_searchers()
        if self.recovery is not None:
            recovery, self.recovery = self.recovery, None
            await asyncio.to_thread(recovery.stop)
        if self.pipeline is not None:
            pipeline, self.pipeline = self.pipeline, None
            await pipeline.stop()
        if self.history is not None:
            history, self.history = self.history, None
            await asyncio.to_thread(history.stop)
        if self.team is not None:
            team, self.team = self.team, None
            await asyncio.to_thread(team.stop)
        if self.embedding is not None:
            embedding, self.embedding = self.embedding, None
            await asyncio.to_thread(embedding.stop)
        if self.db is not None:
            db, self.db = self.db, None
            await asyncio.to_thread(db.checkpoint)
            db.close()
        self.stream.close()


def _log_problems(settings: Settings, before: Settings | None = None) -> None:
    """Each problem once: those `before` already had were logged when they appeared."""
    known = set(before.problems) if before is not None else set()
    for problem in settings.problems:
        if problem not in known:
            log.warn("settings", problem)
