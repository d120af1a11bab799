"""The hook's slow path, taken when no daemon answers: open the store here, without the
embedding model (its load alone costs more than a prompt may wait), so recall is full-text.
A session-start also starts the daemon for the prompts that follow, when config allows."""

import subprocess
import sys
from dataclasses import replace

from contextd.app import open_app
from contextd.config import load_settings
from contextd.hooks.handlers import handle

__all__ = ["answer_in_process", "start_daemon_in_background"]


# Within the hook's own time budget: a store locked by a long write gives up, not the agent.
_BUSY_TIMEOUT_MS = 1500


def answer_in_process(event: str, payload: dict[str, object]) -> str:
    settings = load_settings()
    light = replace(settings, embeddings=replace(settings.embeddings, provider="none"))
    with open_app(light, busy_timeout_ms=_BUSY_TIMEOUT_MS) as app:
        text = handle(app, event, payload, settings.project)
    if event == "session-start" and text and settings.hooks.autostart_daemon:
        start_daemon_in_background(str(settings.home))  # only inside a known project
    return text


def start_daemon_in_background(home: str) -> None:
    """Start `contextd daemon run` detached; it exits at once if one is already running."""
    subprocess.Popen(
        [sys.executable, "-m", "contextd", "--home", home, "daemon", "run"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
