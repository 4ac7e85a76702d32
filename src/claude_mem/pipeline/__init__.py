"""Compression: queued tool events and summary requests become observations and summaries."""
