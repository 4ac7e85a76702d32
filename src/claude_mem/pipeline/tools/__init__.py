"""What a recorded tool event says, read from its input alone: the tool's kind (`kinds`), the
shell programs we know (`programs`), shell command lines (`shell`), patches (`patches`), and
the files it read or modified (`evidence`), under one path rule (`paths`)."""
