"""The hook events contextd answers (`contextd hook EVENT`)."""

__all__ = ["EVENTS"]

EVENTS = ("session-start", "prompt", "post-edit", "post-bash", "pre-compact", "stop")
