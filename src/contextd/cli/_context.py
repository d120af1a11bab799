"""What every command shares: the --json/--home/--project options and the lazily opened App."""

import functools
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import click
from msgspec import Struct

from contextd.app import App, can_write_store, open_app
from contextd.client.options import Option
from contextd.config import Settings, load_settings
from contextd.errors import ContextdError
from contextd.text.printer import COLOUR_MODES, echo, use_colour
from contextd.wire.launch import start_quietly

__all__ = [
    "CliState",
    "common_options",
    "declared_options",
    "get_app",
    "get_settings",
    "option_bundle",
    "state",
]

F = TypeVar("F", bound=Callable[..., Any])


class CliState(Struct):
    json: bool = False
    home: str | None = None
    project: str | None = None
    app: App | None = None
    config_checked: bool = False  # config.toml was scanned for credentials


def state(ctx: click.Context | None = None) -> CliState:
    root = (ctx or click.get_current_context()).find_root()
    if not isinstance(root.obj, CliState):
        root.obj = CliState()
    return root.obj


def _remember(name: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value:  # a value given on the subcommand overrides one given before it
            setattr(state(ctx), name, value)

    return callback


def option_bundle(*options: Callable[[F], F]) -> Callable[[F], F]:
    """One decorator applying several click options, in the order they are listed."""

    def decorate(command: F) -> F:
        return functools.reduce(lambda cmd, option: option(cmd), reversed(options), command)

    return decorate


def declared_options(*options: Option) -> Callable[[F], F]:
    """Click options from their declarations (contextd.client.options), in the order given."""
    return option_bundle(*(_click_option(option) for option in options))


def _click_option(option: Option) -> Callable[[F], F]:
    if option.kind == "flag":
        return click.option(option.flag, option.dest, is_flag=True, help=option.help)
    kind: click.ParamType[Any] | type[int] | None = None
    if option.choices:
        kind = click.Choice(option.choices)
    elif option.bounds:
        kind = click.IntRange(*option.bounds)
    elif option.kind == "int":
        kind = int
    # An explicit default of None would satisfy `required` (click 8.3+): pass only real ones.
    default: dict[str, Any] = {} if option.default is None else {"default": option.default}
    return click.option(
        option.flag,
        option.dest,
        multiple=option.multiple,
        required=option.required,
        type=kind,
        show_default=option.show_default,
        metavar=option.metavar,
        help=option.help,
        **default,
    )


def _colour(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    """--color for contextd's printer and for click's own messages (help, usage errors)."""
    if value:
        use_colour(value)
        ctx.find_root().color = {"always": True, "never": False}.get(value)


common_options = option_bundle(
    click.option(
        "--json",
        "json_output",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_remember("json"),
        help="Print machine-readable JSON.",
    ),
    click.option(
        "--home",
        type=click.Path(file_okay=False, readable=False),  # an unusable home: see load_settings
        expose_value=False,
        is_eager=True,
        callback=_remember("home"),
        metavar="DIR",
        help="Store folder (default: $CONTEXTD_HOME or ~/.contextd).",
    ),
    click.option(
        "--project",
        expose_value=False,
        is_eager=True,
        metavar="NAME",
        callback=_remember("project"),
        help="Act on this project (default: $CONTEXTD_PROJECT, then the folder).",
    ),
    click.option(
        "--color",
        type=click.Choice(COLOUR_MODES),
        expose_value=False,
        is_eager=True,
        callback=_colour,
        help="Colour: auto (a terminal, unless $NO_COLOR is set), always or never.",
    ),
)
"""--json, --home, --project and --color, on every command (and on the root group)."""


def get_settings() -> Settings:
    """The settings a command runs with; config.toml holding a credential is refused here
    (every command, server and the daemon; the hooks fail open and skip the scan)."""
    current = state()
    settings = load_settings(
        home=current.home,
        project=current.project,
        cwd=Path.cwd(),
        refuse_secrets=not current.config_checked,
    )
    current.config_checked = True
    return settings


READ_ONLY_NOTE = (
    "Note: {home} cannot be written (a read-only mount or its permissions), so contextd only "
    "reads it here: writes are off."
)


def get_app(*, read_only: bool = False) -> App:
    """Open the store once per process; it is closed when the command ends. `read_only`
    opens it without writing anything (see contextd.app.open_app); a store that cannot be
    written is opened so too, and every read works, with a note on stderr that writes are
    off (a write then fails in one sentence)."""
    current = state()
    if current.app is None:
        ctx = click.get_current_context().find_root()
        settings = get_settings()
        if not read_only and settings.db_path.is_file() and not can_write_store(settings):
            echo(READ_ONLY_NOTE.format(home=settings.home), err=True)
            read_only = True
        opened = open_app(settings, read_only=read_only)
        current.app = opened.__enter__()
        ctx.call_on_close(lambda: opened.__exit__(None, None, None))
        if not read_only:
            _take_in_team_files(current.app)
    return current.app


def _autostart(settings: Settings) -> None:
    """Start the daemon when none runs, and say so on stderr (once: it then runs)."""
    if not start_quietly(settings.home):
        return
    idle = settings.daemon.idle_exit
    ends = f"it stops after {idle} idle" if settings.daemon.idle_exit_s else "it keeps running"
    echo(f"Started the contextd daemon ({ends}; `contextd daemon stop` ends it).", err=True)


def _take_in_team_files(app: App) -> None:
    """Bring the view of the shared checkout this command runs in up to date with its team
    files; records that arrive without vectors have the daemon started to fill them."""
    settings = app.settings
    if settings.hooks.autostart_daemon and app.indexer is not None:
        app.vectors_wanted = partial(_autostart, settings)
    try:
        project = app.project(None, settings.cwd)
    except ContextdError:
        return  # no project here: the command says so if it needs one
    app.shares.take_in(project, app.vectors_wanted)
