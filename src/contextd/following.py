"""config.toml for a process that runs for days (`contextd serve`, `contextd ui`): read
again when it changes, so a change such as `capture.review` holds from the next request, as
it does for the daemon (which stops and is started again). What the process opened at start
— the store, the embedding model, the sockets' limits — cannot change under it: such a change
is said once, with the restart it needs, and the process goes on as it started."""

from pathlib import Path

from msgspec.structs import replace

from contextd.app import App
from contextd.config import Settings, load_settings
from contextd.errors import ContextdError

__all__ = ["FollowedApp", "config_signature"]

_SECTIONS_AT_START = ("store", "embeddings")  # the store and the model, opened at start
_SERVE_AT_START = ("max_body_kb", "header_timeout_s")  # the sockets' limits, set at start


def config_signature(path: Path) -> tuple[int, int, int] | None:
    """What tells one version of the file from another, without reading it (None: no file)."""
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


class FollowedApp:
    """The App to answer a request with: the one started with, or one with config.toml as it
    is now (sharing the opened store and vectors)."""

    def __init__(self, app: App) -> None:
        self._app = app
        self._seen = config_signature(app.settings.config_path)
        self.restart_note: str | None = None  # what a change needs that only a restart gives

    def current(self) -> App:
        """The App with the settings in force: config.toml is looked at (one stat) each time."""
        seen = config_signature(self._app.settings.config_path)
        if seen == self._seen:
            return self._app
        self._seen = seen
        old = self._app.settings
        try:
            fresh = replace(
                load_settings(old.home, old.project, old.cwd, refuse_secrets=True),
                agent_dirs=old.agent_dirs,
                models_from=old.models_from,
            )
        except ContextdError as exc:
            self.restart_note = f"{exc} Going on with the settings read at start."
            return self._app
        kept, fixed = _as_opened(old, fresh)
        self.restart_note = None
        if fixed:
            self.restart_note = (
                f"{old.config_path} changed {', '.join(fixed)}, which take effect only at start: "
                "restart this process to use them; the rest of the change holds now."
            )
        self._app = self._app.with_settings(kept)
        return self._app


def _as_opened(old: Settings, fresh: Settings) -> tuple[Settings, list[str]]:
    """`fresh`, with what the process opened at start kept as `old` has it; and the names of
    those that changed (and wait for a restart)."""
    fixed = [
        f"[{name}]" for name in _SECTIONS_AT_START if getattr(old, name) != getattr(fresh, name)
    ]
    fixed += [
        f"serve.{key}"
        for key in _SERVE_AT_START
        if getattr(old.serve, key) != getattr(fresh.serve, key)
    ]
    serve = replace(fresh.serve, **{key: getattr(old.serve, key) for key in _SERVE_AT_START})
    sections = {name: getattr(old, name) for name in _SECTIONS_AT_START}
    return replace(fresh, serve=serve, **sections), fixed
