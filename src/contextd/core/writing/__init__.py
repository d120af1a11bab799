"""Writing records under one set of rules: validation, the secret scan, duplicates
and replacement, each write one transaction."""
