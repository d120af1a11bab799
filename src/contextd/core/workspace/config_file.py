"""Changing config.toml in place, keeping the user's comments and layout."""

from pathlib import Path

from contextd.config import load_settings, parse_setting
from contextd.core.workspace.textfiles import write_text_atomic
from contextd.core.writing.validation import refuse_secret
from contextd.errors import ConfigError, InvalidInputError, ValidationError

__all__ = ["set_config_value"]


def set_config_value(home: Path, key: str, raw: str) -> str | int | float | bool:
    """Write `key = raw` (typed) into home/config.toml; the file is replaced atomically.

    Raises:
        InvalidInputError: an unknown key, or a value that does not fit it.
        ConfigError: a config file that cannot be parsed.
    """
    import tomlkit  # Deferred: only `config set` edits TOML.
    from tomlkit.exceptions import TOMLKitError

    try:  # first: a refusal below would quote the value
        refuse_secret(key, raw, label=f"value for {key}")
    except ValidationError as exc:
        raise InvalidInputError(str(exc)) from None
    try:
        section, name, value = parse_setting(key, raw)
    except ConfigError as exc:  # typed in just now: bad input (exit 2), not a broken file
        raise InvalidInputError(str(exc)) from None
    path = home / "config.toml"
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        document = tomlkit.parse(text)
    except (OSError, UnicodeDecodeError, TOMLKitError) as exc:
        raise ConfigError(f"Cannot edit {path} ({exc}); fix or remove it first.") from exc
    except RecursionError:
        raise ConfigError(f"Cannot edit {path}: it nests too deeply; fix or remove it.") from None
    table = document.get(section)
    if table is None:
        table = tomlkit.table()
        document[section] = table
    table[name] = value
    write_text_atomic(path, tomlkit.dumps(document))
    load_settings(home=home)  # the whole file must still load
    return value
