"""The SQLite store: the only package that speaks SQL."""

from claude_mem.store.db import Database, SchemaError

__all__ = ["Database", "SchemaError"]
