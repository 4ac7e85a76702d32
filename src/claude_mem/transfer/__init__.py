"""Moving memory between machines and tools: JSONL export/import, and migration from the
original claude-mem's database. Both importers feed the same `apply` step (natural keys,
privacy cleaning, id mapping), so both are idempotent."""
