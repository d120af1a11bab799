"""The embedded store: one SQLite file in the home (FTS5 for full text, vectors as BLOBs)."""
