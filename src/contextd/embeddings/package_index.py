"""Which package index to fetch the model wheel from, read as pip would, without pip (a uv
tool environment has none): PIP_INDEX_URL, else uv's UV_DEFAULT_INDEX / UV_INDEX_URL, else
`index-url` in pip's config files, else the public index.

pip's files are read in its order, later ones winning: the global ones ($XDG_CONFIG_DIRS/pip/
pip.conf, /etc/pip.conf), the user's (~/.pip/pip.conf, ~/.config/pip/pip.conf), the
environment's (sys.prefix/pip.conf), then $PIP_CONFIG_FILE (os.devnull there: no files at
all); in each, [install] over [global]. The CA bundle pip is told to trust (`cert`,
PIP_CERT) is used the same way.
"""

import configparser
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from msgspec import Struct

__all__ = ["DEFAULT_INDEX", "IndexChoice", "choose_index", "shown_url"]

DEFAULT_INDEX = "https://pypi.org/simple"


class IndexChoice(Struct, frozen=True):
    url: str
    origin: str  # where it was configured, for messages: "PIP_INDEX_URL", a file, "default"
    cert: str | None  # a CA bundle to verify with, when pip is given one


def choose_index(explicit: str | None = None) -> IndexChoice:
    """The index `explicit` names, else the one pip (or uv) is configured with."""
    settings = _pip_settings()
    configured_cert = settings.get("cert")
    cert = os.environ.get("PIP_CERT") or (configured_cert[0] if configured_cert else None)
    if explicit:
        return IndexChoice(explicit, "--index-url", cert)
    for variable in ("PIP_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX_URL"):
        value = os.environ.get(variable, "").split()
        if value:
            return IndexChoice(value[0], variable, cert)
    found = settings.get("index-url")
    if found is not None and found[0]:
        return IndexChoice(found[0].split()[0], found[1], cert)
    return IndexChoice(DEFAULT_INDEX, "default", cert)


def shown_url(url: str) -> str:
    """The URL without a user or password (an index URL may carry a token)."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _config_files() -> list[Path]:
    chosen = os.environ.get("PIP_CONFIG_FILE")
    if chosen == os.devnull:
        return []
    dirs = os.environ.get("XDG_CONFIG_DIRS") or "/etc/xdg"
    files = [Path(d) / "pip" / "pip.conf" for d in dirs.split(os.pathsep) if d]
    files.append(Path("/etc/pip.conf"))
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    files += [Path.home() / ".pip" / "pip.conf", Path(config_home) / "pip" / "pip.conf"]
    files.append(Path(sys.prefix) / "pip.conf")
    if chosen:
        files.append(Path(chosen))
    return files


def _pip_settings() -> dict[str, tuple[str, str]]:
    """Each key pip's files set for `pip install`, with the file that set it."""
    found: dict[str, tuple[str, str]] = {}
    for path in _config_files():
        parser = configparser.RawConfigParser()
        try:
            if not parser.read(path, encoding="utf-8"):
                continue
        except (configparser.Error, UnicodeDecodeError, OSError):
            continue  # pip would refuse this file too; the default index still works
        for section in ("global", "install"):
            if parser.has_section(section):
                for key, value in parser.items(section):
                    found[key.replace("_", "-")] = (value.strip(), str(path))
    return found
