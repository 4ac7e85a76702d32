"""The capture side: one short process per agent event (see `entry.py`).

Nothing here may import beyond the standard library and our stdlib-only modules: every
millisecond of import time is paid on each prompt and each tool call of the agent.
"""
