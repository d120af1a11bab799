"""The standard-library half of contextd's command line, and everything that talks to the
daemon: the socket (rendezvous, frames, asking, launching), the fast client of the hot
commands and the option tables click also builds them from, the printer and the CLI's words,
the MCP relay and the hook entry. None of it loads click, msgspec, numpy or the store: a
contract in pyproject.toml holds that, since the prompt hook runs on every prompt."""
