"""Compressors. Built-ins register through the same contract a third-party provider would."""
