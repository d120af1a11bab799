"""The store's home folder: creating it with a commented config.toml."""

import os
from pathlib import Path

from msgspec import Struct

from contextd.config import Settings, default_config_text
from contextd.errors import StoreError
from contextd.home_folder import make_private, open_private

__all__ = ["HomeOutcome", "initialise_home"]


class HomeOutcome(Struct, frozen=True):
    home: Path
    config_path: Path
    db_path: Path
    wrote_config: bool
    store_location: str  # the SQLite file, or the team server's URL


def initialise_home(settings: Settings) -> HomeOutcome:
    """Create the home folder and config.toml when missing; an existing file is kept as it is."""
    path = settings.config_path
    wrote = False
    try:
        make_private(settings.home)
        if not path.exists():
            handle = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            with open(handle, "w", encoding="utf-8") as out:
                out.write(default_config_text())
            wrote = True
    except FileExistsError:
        pass  # another process wrote it first: theirs stands
    except OSError as exc:
        raise StoreError(f"Cannot set up {settings.home}: {exc.strerror}.") from exc
    return HomeOutcome(settings.home, path, settings.db_path, wrote, settings.store_location)
