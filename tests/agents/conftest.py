"""A fake user home holding the config files real agents leave behind, and a controlled PATH."""

import json
from pathlib import Path

import pytest

from tests.agents.helpers import FILES, GEMINI_SETTINGS, add_binary


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HOME; PATH holds only `bin`, which has a `contextd` and no agent binaries."""
    home = tmp_path / "user"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    add_binary(bin_dir, "contextd")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


@pytest.fixture
def configured_home(user_home: Path) -> Path:
    """A HOME where every agent was used: each config file exists with the user's own content."""
    for relative, content in FILES.items():
        path = user_home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else json.dumps(content, indent=2) + "\n"
        path.write_text(text, encoding="utf-8")
    # Gemini's file is indented with 4 spaces: the writer must keep that.
    gemini = user_home / ".gemini/settings.json"
    gemini.write_text(json.dumps(GEMINI_SETTINGS, indent=4) + "\n", encoding="utf-8")
    return user_home
