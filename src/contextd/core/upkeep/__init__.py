"""Keeping the store true: quality, staleness anchored in code, duplicates that got
in, the semantic index, and `refresh` that runs them."""
