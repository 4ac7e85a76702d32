"""`claude-mem reindex`: embed every observation, summary and prompt again with the current
model (after a model change, or to repair vectors). Resumable with --resume."""

from __future__ import annotations

import argparse

KIND_CHOICES = ("observation", "summary", "prompt")
BATCH_ROWS = 8


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kind",
        action="append",
        choices=KIND_CHOICES,
        help="only this kind (repeatable; default: all)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep vectors already made by the current model; embed only the rest",
    )


def run(args: argparse.Namespace) -> int:
    import sys

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    from claude_mem import settings
    from claude_mem.search.embed import load_embedder
    from claude_mem.store import vectors as store
    from claude_mem.store.db import open_database

    loaded = settings.load()
    name = loaded.get_str("CLAUDE_MEM_EMBEDDING_MODEL")
    embedder = load_embedder(name)
    if embedder is None:
        print(
            "embeddings are off (CLAUDE_MEM_EMBEDDING_MODEL=none); nothing to do", file=sys.stderr
        )
        return 1
    kinds = tuple(args.kind or KIND_CHOICES)
    with open_database(loaded) as db:
        with db.write() as conn:
            store.delete_other_models(conn, embedder.model_id)
            if not args.resume:
                for kind in kinds:
                    store.delete_model(conn, embedder.model_id, kind)
        totals = {k: store.count_missing(db.read(), k, embedder.model_id) for k in kinds}
        done = 0
        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
        ) as progress:
            for kind in kinds:
                label = "summaries" if kind == "summary" else f"{kind}s"
                bar = progress.add_task(label, total=totals[kind])
                while rows := store.missing(db.read(), kind, embedder.model_id, BATCH_ROWS):
                    matrix = embedder.embed([text for _, text in rows])
                    with db.write() as conn:
                        for (row_id, _), vector in zip(rows, matrix, strict=True):
                            store.upsert(conn, kind, row_id, embedder.model_id, vector)
                    # Each batch commits, so an interrupted run resumes where it stopped.
                    progress.advance(bar, len(rows))
                    done += len(rows)
    print(f"embedded {done:,} rows with {embedder.model_id}")
    return 0
