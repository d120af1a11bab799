"""Agent config files on disk: parse JSON (with comments too) or TOML, render them back, back
up, replace atomically."""

import json
import os
import re
import tempfile
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions
from msgspec import Struct

from contextd.core.workspace.capped import MB, Cap, read_capped
from contextd.errors import ConfigError

__all__ = ["Format", "Parsed", "backup", "parse", "read_config", "render", "write_atomically"]

_SETTINGS_FILE = Cap(16 * MB, "an agent's settings file", "check that it is the file you meant")
_INDENT = re.compile(r"^[{\[][^\n]*\n([ \t]+)\S", re.MULTILINE)


class Format(StrEnum):
    JSON = "json"
    TOML = "toml"


class Parsed(Struct, frozen=True):
    """A document and how its text was laid out, so it can be written back the same way."""

    data: Any  # a dict for JSON, a tomlkit.TOMLDocument for TOML
    indent: str | int | None = 2  # None: all on one line
    final_newline: bool = True
    commented: Any = None  # a jsonc.Document for JSON with comments: rendered through its model


def read_config(path: Path) -> str | None:
    """The text of an agent's config file (newlines as text mode reads them); None if
    there is none."""
    if not path.is_file():
        return None
    try:
        text = read_capped(path, _SETTINGS_FILE).decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(
            f"{path} is not UTF-8 text; contextd setup left it untouched, fix it and run "
            "setup again."
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"{path} cannot be read ({exc.strerror}); check its permissions."
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")  # as text mode reads it


def parse(path: Path, text: str, fmt: Format) -> Parsed:
    """Read `text` (the content of `path`); a file that cannot be parsed is refused, never fixed."""
    if fmt is Format.TOML:
        try:
            return Parsed(tomlkit.parse(text))
        except tomlkit.exceptions.ParseError as exc:
            raise ConfigError(
                f"{path} is not valid TOML ({exc}); contextd setup left it untouched, "
                "fix it and run setup again."
            ) from None
        except RecursionError:
            raise ConfigError(
                f"{path} nests too deeply to be an agent's settings; contextd setup left it "
                "untouched, fix it and run setup again."
            ) from None
    if not text.strip():
        return Parsed({})
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return _parse_commented(path, text, exc)
    except RecursionError:
        raise ConfigError(
            f"{path} nests too deeply to be an agent's settings; contextd setup left it "
            "untouched, fix it and run setup again."
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path} does not hold a JSON object; contextd setup left it untouched, "
            "fix it and run setup again."
        )
    return Parsed(data, _indent_of(text), text.endswith("\n"))


def _parse_commented(path: Path, text: str, plain: json.JSONDecodeError) -> Parsed:
    """JSON with comments or trailing commas, as Gemini CLI and VS Code-style tools read it."""
    from contextd.agents import jsonc  # json-five and its regex engine: only for such files

    indent = _indent_of(text)
    unit = indent if isinstance(indent, str) else " " * (indent or 2)
    try:
        document = jsonc.load(text, unit)
    except ValueError:
        raise ConfigError(
            f"{path} is not valid JSON, even with comments (line {plain.lineno}, column "
            f"{plain.colno}: {plain.msg}); contextd setup left it untouched, fix it and run "
            "setup again."
        ) from None
    if not isinstance(document.data, dict):
        raise ConfigError(
            f"{path} does not hold a JSON object; contextd setup left it untouched, "
            "fix it and run setup again."
        )
    return Parsed(document.data, indent, text.endswith("\n"), document)


def _indent_of(text: str) -> str | int | None:
    stripped = text.strip()
    if "\n" not in stripped and len(stripped) > 2:  # a one-line object stays on one line
        return None
    found = _INDENT.search(text)
    if found is None:
        return 2
    indent = found.group(1)
    return indent if "\t" in indent else len(indent)


def render(parsed: Parsed, fmt: Format) -> str:
    if fmt is Format.TOML:
        return tomlkit.dumps(parsed.data)
    if parsed.commented is not None:
        from contextd.agents import jsonc

        return jsonc.render(parsed.commented)
    text = json.dumps(parsed.data, indent=parsed.indent, ensure_ascii=False)
    return text + "\n" if parsed.final_newline else text


def backup(path: Path, moment: datetime | None = None) -> Path:
    """Copy `path` beside itself under a timestamped name that no earlier backup has."""
    stamp = (moment or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.contextd-backup-{stamp}")
    counter = 1
    while target.exists():
        target = path.with_name(f"{path.name}.contextd-backup-{stamp}-{counter}")
        counter += 1
    write_atomically(target, path.read_bytes(), mode=path.stat().st_mode & 0o777)
    return target


def write_atomically(path: Path, content: bytes, *, mode: int | None = None) -> None:
    """Write through a temporary file in the same folder and rename it over `path`.

    A reader sees the old file or the new one, never half of one. A symlinked config (dotfiles)
    stays a symlink: its target is what gets replaced.
    """
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        mode = target.stat().st_mode & 0o777 if target.exists() else 0o600
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
