"""Agent hooks: `contextd hook EVENT`, fail-open, fed the agent's hook JSON on stdin."""
