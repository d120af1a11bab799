"""Spotting credentials in any text contextd is asked to keep (a record, a log line, a
setting), without ever repeating them: the one scanner every way in uses."""
