"""The documentation site's generated references hold every command, option, MCP tool and
setting, each listed here from the code itself (not through the generator's own walk); the
real site builds with `mkdocs build --strict` and picks up a page merged later; the README
stays a short landing page whose links resolve."""

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import click
import pytest
from msgspec.structs import fields

from contextd.app import App
from contextd.cli.main import COMMAND_MODULES, cli
from contextd.config import Settings, settings_view
from contextd.mcp.server import build_server
from mcp import Client

ROOT = Path(__file__).resolve().parents[1]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "docs_reference", ROOT / "scripts" / "docs_reference.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reference = _generator()


def _commands() -> dict[str, click.Command]:
    """Every command path, from the table the root group loads commands from and each group's
    own registry."""
    found: dict[str, click.Command] = {}
    root = click.Context(cli, info_name="contextd")

    def visit(path: str, command: click.Command) -> None:
        if command.hidden:
            return
        found[path] = command
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                visit(f"{path} {name}", sub)

    for name in COMMAND_MODULES:
        command = cli.get_command(root, name)
        assert command is not None, name
        visit(f"contextd {name}", command)
    return found


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    following = re.search(r"^#{2,4} ", text[start + len(heading) :], re.MULTILINE)
    end = start + len(heading) + following.start() if following else len(text)
    return text[start:end]


def test_every_command_and_each_of_its_options_is_in_the_cli_reference() -> None:
    text = reference.cli_reference()
    commands = _commands()
    assert {"contextd add", "contextd remote add", "contextd session start"} <= set(commands)
    shared = {p.name for p in cli.params}
    for path, command in commands.items():
        heading = f"`{path}`\n"
        assert re.search(rf"^#{{2,4}} {re.escape(heading)}", text, re.MULTILINE), path
        section = _section(text, heading)
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden and param.name not in shared:
                assert param.opts[0] in section, (path, param.opts[0])


def test_every_mcp_tool_and_each_of_its_parameters_is_in_the_tool_reference(app: App) -> None:
    async def listed() -> list[Any]:
        async with Client(build_server(app)) as client:
            return list((await client.list_tools()).tools)

    tools = anyio.run(listed)
    text = reference.mcp_reference()
    assert len(tools) >= 20
    for tool in tools:
        section = _section(text, f"## {tool.name}\n")
        for parameter in tool.input_schema.get("properties", {}):
            assert f"`{parameter}`" in section, (tool.name, parameter)
    read_only = {line.split("`")[1] for line in text.splitlines() if "| yes |" in line}
    assert "get_context" in read_only and "record_decision" not in read_only


def test_every_setting_is_in_the_configuration_reference_with_what_it_does() -> None:
    text = reference.config_reference()
    sections = settings_view(Settings(home=Path("/nonexistent"), cwd=Path("/")))
    assert {"embeddings", "search", "store", "capture"} <= set(sections)
    for section, values in sections.items():
        assert f"## [{section}]\n" in text, section
        for key, default in values.items():
            row = next(
                (line for line in text.splitlines() if line.startswith(f"| `{section}.{key}` |")),
                None,
            )
            assert row is not None, f"{section}.{key}"
            said = row.rstrip(" |").rsplit(" | ", 1)[-1]
            assert len(said) > 8, f"{section}.{key} has no description in the config model"
            shown = reference._toml(default)
            assert f"`{shown}`" in row, (f"{section}.{key}", shown)


def test_a_setting_says_what_its_comments_say_and_nothing_of_its_neighbours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the configuration reference reads: the comment lines right above a field and the
    one after it; a `#` inside a value is no comment."""
    path = tmp_path / "demo_settings.py"
    path.write_text(
        "from msgspec import Struct\n\n\n"
        "class Demo(Struct, frozen=True):\n"
        '    """A demo."""\n'
        "\n"
        "    # said above,\n"
        "    # on two lines\n"
        '    first: str = "#not a comment"  # and after\n'
        "    second: int = 3\n"
        "    third: bool = True  # only after\n",
        encoding="utf-8",
    )
    spec = importlib.util.spec_from_file_location("demo_settings", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "demo_settings", module)
    spec.loader.exec_module(module)
    assert [f.name for f in fields(module.Demo)] == ["first", "second", "third"]
    assert reference.setting_descriptions(module.Demo) == {
        "first": "said above, on two lines and after.",
        "second": "",
        "third": "only after.",
    }


def test_the_generator_refuses_an_unknown_reference_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "docs_reference.py"), "everything"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    assert done.returncode != 0
    assert done.stderr.strip().startswith("usage:") and "cli|mcp|config" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_site_builds_strictly_and_lists_a_page_merged_later(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install '.[docs]')")
    pytest.importorskip("material", reason="the docs extra is not installed")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    for name in ("CONTRIBUTING.md", "CHANGELOG.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "docs_reference.py", tmp_path / "scripts")
    (tmp_path / "docs" / "team-later.md").write_text(
        "# Team memory, merged later\n\nA page no nav names yet.\n", encoding="utf-8"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    site = tmp_path / "site"
    for page in ("reference/cli", "reference/mcp", "reference/configuration", "team-later"):
        assert (site / page / "index.html").is_file(), page
    teams = (site / "teams" / "index.html").read_text(encoding="utf-8")
    assert "../team-later/" in teams and "Team memory, merged later" in teams
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "team-later/" in home  # in the nav, under the section for pages it does not list
    assert "contextd remote add" in (site / "reference" / "cli" / "index.html").read_text(
        encoding="utf-8"
    )


def test_the_site_build_fails_on_a_broken_link(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install '.[docs]')")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n[gone](gone.md)\n", encoding="utf-8")
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    config = config[: config.index("\nnav:")] + "\nnav:\n  - Home: index.md\n"
    config = config.replace("hooks:\n  - scripts/docs_reference.py\n", "")  # the site's rules alone
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        timeout=300,
    )
    assert done.returncode != 0
    assert "gone.md" in done.stderr


def test_the_readme_is_a_short_landing_page_whose_links_resolve() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    assert "```sh\nbash scripts/check\n```" in text
    assert "exec bash scripts/check" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not re.match(r"[a-z]+://", t)]
    assert len(local) > 20
    for target in local:
        assert (ROOT / target).exists(), target
