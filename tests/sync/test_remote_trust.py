"""Remotes: what another machine sends is held to the write rules, and what names a remote is
neither an ssh option nor a secret."""

import sqlite3
from pathlib import Path

from tests.sync.conftest import NOTES, Machine, add_remote
from tests.sync.sshd import SshServer

GITHUB_TOKEN = "ghp_" + "Zq8RkV2mXw7NpL4sT9bYcJ3hF6dG1aE5uK0o"


def test_a_pull_is_held_to_the_write_rules_and_takes_nothing(
    laptop: Machine, lab: Machine, sshd: SshServer, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    lab.note(NOTES[0])
    forged = lab.note(NOTES[1])
    with sqlite3.connect(lab.home / "contextd.db") as conn:  # as a tampered store would hold it
        conn.execute("UPDATE records SET title = ? WHERE id = ?", (f"push {GITHUB_TOKEN}", forged))
    conn.close()
    add_remote(laptop, "lab", lab, sshd)
    result = laptop("remote", "pull", "lab")
    assert result.exit_code == 2, result.output
    assert f"record 2 ({forged})" in result.stderr and "GitHub token" in result.stderr
    assert GITHUB_TOKEN not in result.output and "nothing was imported" in result.stderr
    assert laptop.json("bundle", "summary")["records"] == 0
    assert laptop.json("remote", "list")["remotes"][0]["last_pull_at"] is None


def test_a_secret_in_a_remote_setting_is_refused_and_not_stored(laptop: Machine) -> None:
    result = laptop(
        "remote", "add", "lab", "dev@lab-box", "--remote-home", f"/srv/{GITHUB_TOKEN}/store"
    )
    assert result.exit_code == 2 and "--remote-home" in result.stderr
    assert GITHUB_TOKEN not in result.output
    assert laptop.json("remote", "list")["remotes"] == []


def test_scan_refuses_a_host_that_ssh_would_read_as_an_option(
    laptop: Machine, tmp_path: Path
) -> None:
    witness = tmp_path / "ran"
    result = laptop("remote", "scan", "--", f"-oProxyCommand=touch {witness}")
    assert result.exit_code == 2 and "not a host" in result.stderr
    assert not witness.exists()
