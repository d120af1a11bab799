"""The Markdown mirror of the store, and adopting hand edits back into records."""
