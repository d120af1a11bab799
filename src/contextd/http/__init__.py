"""`contextd serve`: the MCP server over Streamable HTTP, for agents that run elsewhere and
for a team on one store, with a bearer token per developer."""
