"""The docs site's generated references, built from the code at build time so they cannot drift:
the CLI reference from the click command tree, the MCP tool reference from the schemas the
server advertises in `tools/list`, and the configuration reference from the config model.

mkdocs loads this file as a hook (mkdocs.yml `hooks:`): the three pages are added to the site
as generated files, any page under docs/ that the nav leaves out is appended to it, and a line
`<!-- contextd:pages GLOB -->` in a page becomes the list of the pages matching GLOB (so a page
merged later is linked without editing the page that lists it).

Run it to print one reference: `python scripts/docs_reference.py cli|mcp|config`.
"""

import fnmatch
import inspect
import io
import json
import re
import sys
import tempfile
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

PAGES = {
    "reference/cli.md": "cli",
    "reference/mcp.md": "mcp",
    "reference/configuration.md": "config",
}
MARKER = re.compile(r"^<!-- contextd:pages (\S+) -->$", re.MULTILINE)
UNLISTED_SECTION = "More"
FIELD = re.compile(r"^    ([a-z_][a-z0-9_]*): ")  # a field of a settings Struct


# --- the CLI --------------------------------------------------------------------------------


def command_paths() -> Iterator[tuple[str, click.Command, click.Context]]:
    """Every command that `contextd --help` and its groups list, with its context, parents
    before their subcommands."""
    from contextd.cli.main import cli

    root = click.Context(cli, info_name="contextd")
    yield "contextd", cli, root
    yield from _below(cli, root)


def _below(group: click.Group, parent: click.Context) -> Iterator[tuple[str, click.Command, Any]]:
    for name in group.list_commands(parent):
        command = group.get_command(parent, name)
        if command is None or command.hidden:
            continue
        ctx = click.Context(command, info_name=name, parent=parent)
        yield ctx.command_path, command, ctx
        if isinstance(command, click.Group):
            yield from _below(command, ctx)


def cli_reference() -> str:
    out = [
        "# CLI reference\n",
        "Generated from the click commands when the site is built, so it always matches "
        "`contextd --help`. For what the commands share (ids, `--json`, projects, exit "
        "codes) see [Using the command line](../cli.md).\n",
    ]
    shared: set[str] = set()
    for path, command, ctx in command_paths():
        level = 2 if path == "contextd" else min(path.count(" ") + 1, 4)
        out.append(f"{'#' * level} `{path}`\n")
        out.append("```text\n" + " ".join([path, *command.collect_usage_pieces(ctx)]) + "\n```\n")
        out.append(_help_markdown(command.help or command.short_help or ""))
        options = [p for p in command.get_params(ctx) if isinstance(p, click.Option)]
        if path == "contextd":
            shared = {p.name for p in options if p.name and p.name != "version"}
        rows = [
            record
            for p in options
            if (path == "contextd" or p.name not in shared) and (record := p.get_help_record(ctx))
        ]
        if rows:
            out.append("| option | what it does |\n|---|---|")
            out.extend(f"| `{_cell(opts)}` | {_cell(_escape(text))} |" for opts, text in rows)
            out.append("")
        if path != "contextd" and shared & {p.name for p in options}:
            out.append(
                "It also takes the options every command takes: `--json`, `--home`, "
                "`--project` and `--help` (see [`contextd`](#contextd)).\n"
            )
        if isinstance(command, click.Group):
            names = [
                n for n in command.list_commands(ctx) if not _hidden(command.get_command(ctx, n))
            ]
            if names:
                links = (f"[`{path} {n}`](#{_slug(f'{path} {n}')})" for n in names)
                out.append("Commands: " + ", ".join(links) + ".\n")
    return "\n".join(out)


def _slug(path: str) -> str:
    """The anchor Markdown's table of contents gives the heading `path`."""
    return path.replace(" ", "-").lower()


def _hidden(command: click.Command | None) -> bool:
    return command is None or command.hidden


def _help_markdown(text: str) -> str:
    """click's help text as Markdown: a paragraph click keeps unwrapped (`\\b`) is shown as it
    is printed; the others are prose."""
    parts = []
    for paragraph in inspect.cleandoc(text).split("\n\n"):
        if paragraph.startswith("\b"):
            block = paragraph.lstrip("\b").strip("\n")
            parts.append("```text\n" + block + "\n```")
        elif paragraph.strip():
            parts.append(_escape(" ".join(paragraph.split())))
    return "\n\n".join(parts) + "\n" if parts else ""


# --- the MCP tools --------------------------------------------------------------------------


def mcp_tools() -> tuple[list[Any], set[str]]:
    """The tools a server lists over the SDK's own client, and the names a `--read-only` server
    lists; from a server over a scratch store."""
    import anyio

    from contextd.app import open_app
    from contextd.config import load_settings
    from contextd.mcp.server import build_server
    from mcp import Client

    async def listed(server: Any) -> list[Any]:
        async with Client(server) as client:
            return list((await client.list_tools()).tools)

    with tempfile.TemporaryDirectory(prefix="contextd-docs-") as scratch:
        home = Path(scratch) / "home"
        home.mkdir(mode=0o700)
        (home / "config.toml").write_text('[embeddings]\nprovider = "none"\n', encoding="utf-8")
        with open_app(load_settings(home=home, cwd=Path(scratch))) as app:
            tools = anyio.run(listed, build_server(app))
            reader = anyio.run(listed, build_server(app, read_only=True))
    return tools, {tool.name for tool in reader}


def mcp_reference() -> str:
    tools, read_only = mcp_tools()
    out = [
        "# MCP tool reference\n",
        "Generated from the schemas contextd's MCP server advertises in `tools/list` when the "
        "site is built. Every project tool also resolves its project as "
        "[The MCP server](../agents/mcp.md) explains; every result carries structured content "
        "matching the output schema, and text a model reads directly.\n",
        "| tool | read-only server | what |\n|---|---|---|",
    ]
    for tool in tools:
        first = _escape((tool.description or "").split("\n\n")[0])
        shown = "yes" if tool.name in read_only else "no"
        out.append(f"| [`{tool.name}`](#{tool.name}) | {shown} | {first} |")
    out.append("")
    for tool in tools:
        out.extend(_tool_section(tool))
    return "\n".join(out)


def _tool_section(tool: Any) -> list[str]:
    out = [f"## {tool.name}\n", _escape(tool.description or "") + "\n"]
    hints = tool.annotations
    if hints is not None:
        said = [
            label
            for label, on in (
                ("read-only", hints.read_only_hint),
                ("destructive", hints.destructive_hint),
                ("idempotent", hints.idempotent_hint),
                ("open world", hints.open_world_hint),
            )
            if on
        ]
        if said:
            out.append("Hints: " + ", ".join(said) + ".\n")
    schema = tool.input_schema or {}
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    if properties:
        out.append("| parameter | type | required | default | description |\n|---|---|---|---|---|")
        for name, prop in properties.items():
            default = json.dumps(prop["default"]) if "default" in prop else ""
            out.append(
                f"| `{name}` | {_cell(_type(prop, schema))} | "
                f"{'yes' if name in required else ''} | {_cell(default)} | "
                f"{_cell(prop.get('description', ''))} |"
            )
        out.append("")
    else:
        out.append("No parameters.\n")
    result = tool.output_schema or {}
    if result.get("properties"):
        out.append(
            "Structured result: " + ", ".join(f"`{name}`" for name in result["properties"]) + ".\n"
        )
    return out


def _type(prop: dict[str, Any], schema: dict[str, Any]) -> str:
    if "$ref" in prop:
        target = prop["$ref"].rsplit("/", 1)[-1]
        resolved = schema.get("$defs", {}).get(target)
        return _type(resolved, schema) if resolved else target
    if "enum" in prop:
        return " | ".join(json.dumps(v) for v in prop["enum"])
    if "anyOf" in prop:
        kinds = [_type(p, schema) for p in prop["anyOf"] if p.get("type") != "null"]
        return " or ".join(kinds)
    kind = prop.get("type", "any")
    if kind == "array":
        return f"list of {_type(prop.get('items', {}), schema)}"
    return str(kind)


# --- the configuration ----------------------------------------------------------------------


def config_sections() -> list[tuple[str, type[Any]]]:
    """config.toml's tables, in the order the settings declare them."""
    from msgspec import Struct
    from msgspec.structs import fields

    from contextd.config import Settings

    return [
        (item.name, item.type)
        for item in fields(Settings)
        if isinstance(item.type, type) and issubclass(item.type, Struct)
    ]


def setting_descriptions(cls: type[Any]) -> dict[str, str]:
    """Each field's description, as the config model gives it: the comment lines right above
    the field and the comment after it."""
    descriptions: dict[str, str] = {}
    above: list[str] = []
    for line in inspect.getsource(cls).splitlines()[1:]:
        stripped = line.strip()
        if stripped.startswith("#"):
            above.append(stripped.lstrip("#").strip())
            continue
        field = FIELD.match(line)
        if field:
            said = " ".join([*above, _trailing_comment(stripped)]).strip()
            descriptions[field.group(1)] = f"{said}." if said and not said.endswith(".") else said
        above = []
    return descriptions


def _trailing_comment(statement: str) -> str:
    tokens = tokenize.generate_tokens(io.StringIO(statement + "\n").readline)
    return next((t.string.lstrip("#").strip() for t in tokens if t.type == tokenize.COMMENT), "")


def config_reference() -> str:
    from msgspec.structs import fields

    from contextd import config

    choices: dict[tuple[str, str], tuple[str, ...]] = getattr(config, "_CHOICES", {})
    out = [
        "# Configuration reference\n",
        "Every key of `config.toml` (in the home, `$CONTEXTD_HOME` or `~/.contextd`), "
        "generated from the config model (`src/contextd/config.py`) when the site is built. "
        "Every key is optional. `contextd config set KEY VALUE` sets one and refuses unknown "
        "keys and wrong types; [Configuration](../configuration.md) explains the common "
        "changes.\n",
    ]
    defaults = ["# contextd settings, every key at its default"]
    for name, cls in config_sections():
        out.append(f"## [{name}]\n")
        if cls.__doc__:
            out.append(_escape(" ".join(inspect.cleandoc(cls.__doc__).split())) + "\n")
        descriptions = setting_descriptions(cls)
        out.append("| key | type | default | description |\n|---|---|---|---|")
        defaults.append(f"\n[{name}]")
        for item in fields(cls):
            value = _toml(item.default)
            text = descriptions.get(item.name, "")
            allowed = choices.get((name, item.name))
            if allowed:
                text = f"{text} One of: {', '.join(f'`{c}`' for c in allowed)}.".strip()
            kind = getattr(item.type, "__name__", str(item.type))
            out.append(
                f"| `{name}.{item.name}` | {kind} | `{_cell(value)}` | {_cell(_escape(text))} |"
            )
            defaults.append(f"{item.name} = {value}")
        out.append("")
    out.append("## Every key at its default\n")
    out.append("```toml\n" + "\n".join(defaults) + "\n```\n")
    return "\n".join(out)


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


# --- shared ---------------------------------------------------------------------------------


def _escape(text: str) -> str:
    """Text for Markdown: angle brackets shown, not taken for HTML."""
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


BUILDERS = {"cli": cli_reference, "mcp": mcp_reference, "config": config_reference}


# --- the mkdocs hook ------------------------------------------------------------------------


def on_config(config: Any) -> Any:
    """Append to the nav every page under docs/ it does not list (a page merged later)."""
    docs = Path(config["docs_dir"])
    listed = set(_nav_files(config["nav"] or []))
    extra = sorted(
        path.relative_to(docs).as_posix()
        for path in docs.rglob("*.md")
        if path.relative_to(docs).as_posix() not in listed and not path.name.startswith("_")
    )
    if extra and config["nav"] is not None:
        config["nav"].append({UNLISTED_SECTION: extra})
    return config


def _nav_files(nav: Any) -> Iterator[str]:
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from _nav_files(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _nav_files(value)


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, name in PAGES.items():
        files.append(File.generated(config, path, content=BUILDERS[name]()))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace each `<!-- contextd:pages GLOB -->` line with links to the pages it matches."""
    here = Path(page.file.src_uri).parent

    def listing(match: re.Match[str]) -> str:
        pattern = match.group(1)
        links = []
        for file in sorted(files.documentation_pages(), key=lambda f: f.src_uri):
            if fnmatch.fnmatch(file.src_uri, pattern) and file.src_uri != page.file.src_uri:
                title = _title(Path(config["docs_dir"]) / file.src_uri) or file.src_uri
                target = Path(*[".."] * len(here.parts), file.src_uri).as_posix()
                links.append(f"- [{title}]({target})")
        return "\n".join(links) or "*(none yet)*"

    return MARKER.sub(listing, markdown)


def _title(path: Path) -> str:
    if not path.is_file():
        return ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in BUILDERS:
        sys.exit(f"usage: python {sys.argv[0]} {'|'.join(BUILDERS)}")
    sys.stdout.write(BUILDERS[sys.argv[1]]())
