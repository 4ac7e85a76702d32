"""What the agent receives: the session-start context (and its terminal view), and the
file-read gate's timeline of a file about to be read."""
