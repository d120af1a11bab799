"""The command group every `contextd` group is: a mistyped command gets the names it was
probably meant to be (exit 2, as click's usage errors)."""

from typing import Any

import click

from contextd.text.grammar import did_you_mean

__all__ = ["SuggestingGroup"]


class SuggestingGroup(click.Group):
    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        unknown = name and not name.startswith("-") and self.get_command(ctx, name) is None
        if unknown and not ctx.resilient_parsing:
            hint = did_you_mean(name, self.list_commands(ctx))
            ctx.fail(f"No such command '{name}'.{hint}")
        return super().resolve_command(ctx, args)

    def group(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("cls", SuggestingGroup)
        return super().group(*args, **kwargs)
