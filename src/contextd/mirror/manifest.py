"""What `sync` last wrote into a mirror folder: each file's hash and each record section's, so
a hand edit is told apart from a change in the store."""

import json
from pathlib import Path

from msgspec import Struct, field

from contextd.core.workspace.textfiles import read_text, write_text_atomic
from contextd.mirror.layout import MANIFEST

__all__ = ["Manifest", "load_manifest", "save_manifest"]


class Manifest(Struct):
    files: dict[str, str] = field(default_factory=dict)  # relative path -> sha256 of its text
    sections: dict[str, dict[str, str]] = field(default_factory=dict)  # path -> {id: sha256}

    def section_ids(self) -> dict[str, str]:
        """Every record id written, with the file it was written to."""
        return {rid: name for name, ids in self.sections.items() for rid in ids}


def load_manifest(folder: Path) -> Manifest | None:
    """The folder's manifest, or None when there is none (or it cannot be read: then every
    file that differs from the store counts as edited, which is the safe reading)."""
    text = read_text(folder / MANIFEST)
    if text is None:
        return None
    try:
        data = json.loads(text)
        files = {k: str(v) for k, v in dict(data["files"]).items() if _safe(k)}
        sections = {k: dict(v) for k, v in data["sections"].items() if _safe(k)}
        return Manifest(files, sections)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None


def save_manifest(folder: Path, manifest: Manifest) -> None:
    data = {"version": 1, "files": manifest.files, "sections": manifest.sections}
    write_text_atomic(folder / MANIFEST, json.dumps(data, indent=1, sort_keys=True) + "\n")


def _safe(name: object) -> bool:
    """A file name the mirror itself writes: relative, inside the folder. An entry naming
    anything else was not written by contextd and is ignored."""
    if not isinstance(name, str) or not name or name.startswith(("/", "\\")):
        return False
    return ".." not in name.replace("\\", "/").split("/")
