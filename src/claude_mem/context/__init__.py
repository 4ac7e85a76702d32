"""What the agent receives: the session-start context."""
