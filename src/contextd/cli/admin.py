"""config: the settings in effect, changing one, and checking the embedding provider."""

from typing import Any

import click
from msgspec.structs import asdict

from contextd.cli._context import common_options, get_app, get_settings
from contextd.cli._groups import SuggestingGroup
from contextd.cli._output import emit
from contextd.config import settings_view, toml_value
from contextd.core.workspace.config_file import set_config_value
from contextd.text.printer import echo, style

__all__ = ["COMMANDS"]


@click.group(invoke_without_command=True, cls=SuggestingGroup)
@click.option("--check", is_flag=True, help="Ask the embedding provider for a real vector.")
@click.option("--toml", "show_toml", is_flag=True, help="Print config.toml as it is on disk.")
@common_options
@click.pass_context
def config(ctx: click.Context, check: bool, show_toml: bool) -> None:
    """Show the settings in effect, as TOML (where they live in comments), or check the
    embedding provider.

    \b
    Examples:
      contextd config                          # every setting in effect
      contextd config --check                  # does the embedding provider answer?
      contextd config set search.fts_weight 0.8
    """
    if ctx.invoked_subcommand is not None:
        return
    settings = get_settings()
    if show_toml:
        path = settings.config_path
        echo(path.read_text(encoding="utf-8") if path.exists() else "", nl=False)
        return
    if check:
        _check()
        return
    payload: dict[str, Any] = {
        "home": str(settings.home),
        "config": str(settings.config_path),
        "database": settings.store_location,
        "settings": settings_view(settings),
    }

    def human() -> None:
        # Valid TOML: where things live as comments, then every section in effect.
        echo(
            f"# home      {settings.home}\n# config    {settings.config_path}\n"
            f"# database  {settings.store_location}\n"
        )
        for section, values in payload["settings"].items():
            echo(f"[{section}]")
            for name, value in values.items():
                echo(f"{name} = {toml_value(value)}")
            echo()

    emit(payload, human)


def _check() -> None:
    """Ask the embedding provider for a real vector, and say how the index stands."""
    report = get_app().index.check()
    state = report.state
    payload = {
        "check": {
            "provider": report.provider,
            "dimensions": report.dimensions,
            "seconds": round(report.seconds, 3),
            "index": asdict(state),
            "fix": state.fix,
        }
    }

    def human() -> None:
        echo(
            style("✓ ", fg="green") + f"{report.provider} answered a "
            f"{report.dimensions}-dimension vector in {report.seconds:.2f} s"
        )
        echo(f"index     {state.embedded}/{state.records} records embedded")
        if state.note:
            echo(f"note      {state.note}")
        if state.fix:
            echo(style(f"fix       run `{state.fix}`", fg="yellow"))

    emit(payload, human)


@config.command(name="set")
@click.argument("key")
@click.argument("value")
@common_options
def set_value(key: str, value: str) -> None:
    """Set KEY (section.name, e.g. embeddings.provider) to VALUE in config.toml."""
    stored = set_config_value(get_settings().home, key, value)
    emit({"key": key, "value": stored}, lambda: echo(f"{key} = {toml_value(stored)}"))


COMMANDS = [config]
