"""What contextd prints, in its own words: the one printer (styles, encodings, terminal-safe
text), small pieces of English (counts, "did you mean"), and errors in the CLI's words. The
standard library only, so the hook and the fast client can use it."""
