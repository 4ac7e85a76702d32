"""The project's git history as memory: commits read with `git`, kept as observations."""
