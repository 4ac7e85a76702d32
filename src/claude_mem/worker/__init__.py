"""The worker: one long-running local HTTP service per user that every other part talks to."""
