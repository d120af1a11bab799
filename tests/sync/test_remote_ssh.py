"""remote add/scan/pull/push through a real sshd on a loopback port; each "machine" is its
own contextd home and the far side runs this checkout's contextd."""

import socket
from pathlib import Path

import pytest

from tests.sync.conftest import CONTEXTD, NOTES, Machine, add_remote
from tests.sync.sshd import SshServer


def test_pull_then_push_and_a_second_pull_changes_nothing(
    laptop: Machine, lab: Machine, sshd: SshServer, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    theirs = {lab.note(NOTES[0]), lab.note(NOTES[1])}
    add_remote(laptop, "lab", lab, sshd)
    pulled = laptop.json("remote", "pull", "lab")
    assert (pulled["added"], pulled["conflicts"], pulled["remote"]) == (2, 0, "lab")
    assert set(laptop.records()) == theirs
    again = laptop.json("remote", "pull", "lab")
    assert (again["added"], again["updated"], again["unchanged"]) == (0, 0, 2)

    mine = laptop.note(NOTES[2])
    pushed = laptop.json("remote", "push", "lab")
    assert (pushed["added"], pushed["unchanged"]) == (1, 2)
    assert set(lab.records()) == theirs | {mine}
    listed = laptop.json("remote", "list")["remotes"][0]
    assert listed["last_pull_at"] and listed["last_push_at"]
    assert listed["store_id"] == lab.json("bundle", "summary")["store_id"]


def test_a_deletion_reaches_a_third_machine_through_the_second(
    laptop: Machine, lab: Machine, sshd: SshServer, tmp_path: Path
) -> None:
    desk = Machine(tmp_path / "desk-home")
    lab.attach(tmp_path / "lab" / "orbit")
    doomed, kept = lab.note(NOTES[0]), lab.note(NOTES[1])
    add_remote(laptop, "lab", lab, sshd)
    add_remote(desk, "laptop", laptop, sshd)
    laptop.json("remote", "pull", "lab")
    desk.json("remote", "pull", "laptop")
    assert set(desk.records()) == {doomed, kept}
    assert lab("delete", doomed).exit_code == 0
    assert laptop.json("remote", "pull", "lab")["deleted"] == 1
    assert desk.json("remote", "pull", "laptop")["deleted"] == 1
    assert set(desk.records()) == {kept}
    assert laptop.json("remote", "push", "lab")["added"] == 0  # nobody hands it back


def test_an_edit_on_both_sides_is_listed_not_resolved(
    laptop: Machine, lab: Machine, sshd: SshServer, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    record = lab.note(NOTES[0])
    add_remote(laptop, "lab", lab, sshd)
    laptop.json("remote", "pull", "lab")
    assert lab("update", record, "--title", NOTES[0] + " on lab").exit_code == 0
    assert laptop("update", record, "--title", NOTES[0] + " on laptop").exit_code == 0
    pulled = laptop.json("remote", "pull", "lab")
    assert (pulled["conflicts"], pulled["updated"]) == (1, 0)
    pushed = laptop.json("remote", "push", "lab")
    assert (pushed["conflicts"], pushed["updated"]) == (1, 0)
    assert laptop.records()[record]["title"].endswith("on laptop")
    assert lab.records()[record]["title"].endswith("on lab")
    listed = laptop.json("sync", "conflicts")["conflicts"]
    assert [(c["id"], c["peer"]) for c in listed] == [(record, "lab")]
    over_there = lab.json("sync", "conflicts")["conflicts"]
    assert [(c["id"], c["peer"]) for c in over_there] == [(record, socket.gethostname())]
    human = laptop("sync", "conflicts")
    assert "on lab" in human.output and "sync resolve" in human.output


def test_a_project_is_matched_by_its_remote_in_either_url_form(
    laptop: Machine, lab: Machine, sshd: SshServer, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit", "git@github.com:acme/orbit.git")
    record = lab.note(NOTES[0])
    slug = laptop.attach(tmp_path / "work" / "orbit-laptop", "https://github.com/acme/orbit")
    add_remote(laptop, "lab", lab, sshd)
    pulled = laptop.json("remote", "pull", "lab")
    assert pulled["projects_created"] == []
    assert list(laptop.records(slug)) == [record]


def test_dry_runs_change_nothing_on_either_side(
    laptop: Machine, lab: Machine, sshd: SshServer, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    lab.note(NOTES[0])
    laptop.attach(tmp_path / "orbit")
    laptop.note(NOTES[1])
    add_remote(laptop, "lab", lab, sshd)
    pulled = laptop.json("remote", "pull", "lab", "--dry-run")
    assert (pulled["added"], pulled["dry_run"]) == (1, True)
    pushed = laptop.json("remote", "push", "lab", "--dry-run")
    assert (pushed["added"], pushed["dry_run"]) == (1, True)
    assert len(laptop.records()) == 1 and len(lab.records()) == 1
    listed = laptop.json("remote", "list")["remotes"][0]
    assert listed["last_pull_at"] is None and listed["last_push_at"] is None


def test_scan_counts_a_target_that_is_not_a_remote_yet_without_copying(
    laptop: Machine, lab: Machine, sshd: SshServer, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    lab.note(NOTES[0])
    lab.note(NOTES[1])
    args = ["--command", CONTEXTD, "--remote-home", str(lab.home), *sshd.options]
    found = laptop.json("remote", "scan", "lab", *args)
    summary = found["summary"]
    assert (summary["records"], found["remote"], found["target"]) == (2, None, "lab")
    assert summary["projects"][0]["kinds"] == {"memory": 2}
    assert NOTES[0] not in str(found)
    assert laptop.json("bundle", "summary")["records"] == 0
    human = laptop("remote", "scan", "lab", *args)
    assert "Nothing was copied" in human.output
    add_remote(laptop, "box", lab, sshd)
    assert laptop.json("remote", "scan", "box")["summary"]["records"] == 2


def test_a_login_shell_banner_and_a_quoted_tilde_are_handled_on_the_far_side(
    laptop: Machine, sshd: SshServer, tmp_path: Path
) -> None:
    far = Machine(sshd.user_home / "far-store")
    far.attach(tmp_path / "far" / "orbit")
    record = far.note(NOTES[0])
    bin_dir = Path(CONTEXTD).parent
    (sshd.user_home / ".profile").write_text(
        f'echo "Welcome to lab-box, {{\\"format\\": 1}}"\nexport PATH="{bin_dir}:$PATH"\n',
        encoding="utf-8",
    )
    added = laptop(
        "remote",
        "add",
        "far",
        "lab",
        "--login-shell",
        "--remote-home",
        "~/far-store",
        *sshd.options,
    )
    assert added.exit_code == 0, added.output
    assert laptop.json("remote", "pull", "far")["added"] == 1
    assert record in laptop.records()


def test_contextd_missing_from_the_remote_path_names_both_fixes(
    laptop: Machine, lab: Machine, sshd: SshServer
) -> None:
    result = laptop("remote", "add", "bare", "lab", "--remote-home", str(lab.home), *sshd.options)
    assert result.exit_code == 0
    pulled = laptop("remote", "pull", "bare")
    assert pulled.exit_code == 7
    assert "--command /full/path/to/contextd" in pulled.stderr and "--login-shell" in pulled.stderr
    wrong = laptop("remote", "scan", "lab", "--command", "/opt/nowhere/contextd", *sshd.options)
    assert wrong.exit_code == 7 and "/opt/nowhere/contextd is not an executable" in wrong.stderr


def test_a_failing_ssh_surfaces_its_own_message_in_one_line(
    laptop: Machine, lab: Machine, sshd: SshServer
) -> None:
    closed = sshd.port + 1 if sshd.port < 65535 else sshd.port - 1
    add_remote(laptop, "down", lab, sshd, "--ssh-option=-p", f"--ssh-option={closed}")
    result = laptop("remote", "pull", "down")
    assert result.exit_code == 7
    assert "ssh lab failed:" in result.stderr and "Connection refused" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_failure_of_contextd_over_there_is_relayed(
    laptop: Machine, sshd: SshServer, tmp_path: Path
) -> None:
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "contextd.db").write_text("not a database", encoding="utf-8")
    laptop_remote = ["--command", CONTEXTD, "--remote-home", str(foreign), *sshd.options]
    assert laptop("remote", "add", "odd", "lab", *laptop_remote).exit_code == 0
    result = laptop("remote", "pull", "odd")
    assert result.exit_code == 7
    assert "contextd on lab failed:" in result.stderr and "not a contextd database" in result.stderr


def test_unknown_remote_and_duplicate_names_are_refused(
    laptop: Machine, lab: Machine, sshd: SshServer
) -> None:
    unknown = laptop("remote", "pull", "nowhere")
    assert unknown.exit_code == 3 and "No remote named 'nowhere'" in unknown.stderr
    add_remote(laptop, "lab", lab, sshd)
    again = laptop("remote", "add", "lab", "elsewhere")
    assert again.exit_code == 4 and "remote remove lab" in again.stderr
    assert laptop("remote", "add", "bad name!", "host").exit_code == 2
    assert laptop.json("remote", "remove", "lab")["removed"]["name"] == "lab"
    assert laptop.json("remote", "list")["remotes"] == []


def test_a_path_expanded_by_the_local_shell_is_pointed_out(
    laptop: Machine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    expanded = str(tmp_path / "me" / ".local" / "bin" / "contextd")
    result = laptop.json("remote", "add", "lab", "dev@lab-box", "--command", expanded)
    assert len(result["warnings"]) == 1
    assert "'~/.local/bin/contextd'" in result["warnings"][0]
    quoted = laptop.json("remote", "add", "lab2", "dev@lab-box", "--command", "~/bin/contextd")
    assert quoted["warnings"] == []


def test_scan_detail_breaks_each_project_down_in_counts_only(
    laptop: Machine, lab: Machine, sshd: SshServer, tmp_path: Path
) -> None:
    lab.attach(tmp_path / "lab" / "orbit")
    lab.note(NOTES[0])
    lab.json("add", NOTES[1], "--category", "gotcha", "--project", "orbit")
    old = lab.json("add", NOTES[2], "--category", "convention", "--project", "orbit")["id"]
    new = lab.json("add", NOTES[3], "--category", "convention", "--project", "orbit")["id"]
    lab.json("supersede", old, "--by", new, "--project", "orbit")
    lab.json("checkpoint", "worker heartbeat completed", "--project", "orbit")
    add_remote(laptop, "lab", lab, sshd)

    found = laptop.json("remote", "scan", "lab", "--detail")["summary"]
    orbit = found["projects"][0]
    assert orbit["kinds_by_status"]["memory"] == {"active": 3, "superseded": 1}
    assert orbit["categories"] == {"architecture": 1, "convention": 1, "gotcha": 1}  # current
    assert set(orbit["last_checkpoint"]) == {"created_at"}
    assert orbit["last_activity"] >= orbit["last_checkpoint"]["created_at"]
    plain = laptop.json("remote", "scan", "lab")["summary"]["projects"][0]
    assert "categories" not in plain and plain["kinds_by_status"] == orbit["kinds_by_status"]

    text = laptop("remote", "scan", "lab", "--detail").output
    assert "Memories       4 (3 current, 1 superseded)" in text
    assert "  memory           4 (3 current, 1 superseded)" in text
    assert "  categories       architecture 1, convention 1, gotcha 1" in text
    assert "  last checkpoint  just now" in text
    assert "Nothing was copied" in text
    for written in (*NOTES, "worker heartbeat"):
        assert written not in text and written not in str(found)
    assert laptop.json("bundle", "summary")["records"] == 0


def test_a_scan_answer_of_the_wrong_shape_prints_what_it_can(
    laptop: Machine, sshd: SshServer, tmp_path: Path
) -> None:
    odd = tmp_path / "odd-contextd"
    odd.write_text(
        '#!/bin/sh\necho \'{"contextd": 7, "projects": [1, {"slug": "x\\u001b[2J", '
        '"kinds_by_status": [], "last_checkpoint": "soon"}], "totals": "all"}\'\n',
        encoding="utf-8",
    )
    odd.chmod(0o755)
    args = ["--command", str(odd), *sshd.options]
    result = laptop("remote", "scan", "lab", "--detail", *args)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "x\\x1b[2J" in result.output
    assert "Traceback" not in result.output
