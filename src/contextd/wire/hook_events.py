"""The events `contextd hook EVENT` answers, as the hook names them to the daemon."""

__all__ = ["EVENTS"]

EVENTS = (
    "session-start", "prompt", "post-edit", "post-bash", "pre-compact", "stop", "session-end",
)  # fmt: skip
