"""The composition root: services built on first use, and shared with a twin acting for
another folder (what the daemon lends a client's `search`)."""

from pathlib import Path

from msgspec.structs import replace

from contextd.app import App
from tests.conftest import make_repo


def test_a_twin_for_another_folder_shares_the_services(app: App, tmp_path: Path) -> None:
    other = make_repo(tmp_path / "elsewhere", "git@github.com:acme/elsewhere.git")
    app.projects.attach(other)
    twin = app.acting_for(replace(app.settings, cwd=other))
    assert twin.search is app.search  # built on the original first, so its caches last
    assert twin.projects is app.projects
    assert twin.current_project().name != app.current_project().name
    assert app.settings.cwd != other  # the original keeps its own folder
