"""The entry programs that must start fast, with the standard library only: the hook
(`contextd hook EVENT`), the fast client of the hot commands and the option tables click also
builds them from, what they print, and the MCP relay. They reach the daemon through
contextd.wire and print through contextd.text; none loads click, msgspec, numpy or the store:
a contract in pyproject.toml holds that, since the prompt hook runs on every prompt."""
