"""One module per CLI command: `add_arguments(parser)` (cheap) and `run(args) -> exit code`."""
