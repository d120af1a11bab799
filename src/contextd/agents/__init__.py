"""Agent integration: per-agent MCP/hook setup and the managed block in agent files."""
