"""A rich progress bar on stderr for long transfers; silent when stderr is not a terminal."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # rich is imported only when a bar is shown
    from rich.progress import Progress, TaskID


class Bar:
    def __init__(self, progress: Progress, task: TaskID) -> None:
        self._progress, self._task = progress, task

    def total(self, count: int) -> None:
        self._progress.update(self._task, total=count)

    def advance(self, count: int) -> None:
        self._progress.advance(self._task, count)


@contextmanager
def progress_bar(label: str) -> Iterator[Bar]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True, disable=not console.is_terminal) as p:
        yield Bar(p, p.add_task(label, total=None))
