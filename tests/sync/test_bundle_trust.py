"""A bundle is held to the rules of a CLI write: a crafted one changes nothing, and is refused
in one sentence naming the first bad entry and counting the others."""

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.sync.conftest import NOTES, Machine

Document = dict[str, Any]
GITHUB_TOKEN = "ghp_" + "Zq8RkV2mXw7NpL4sT9bYcJ3hF6dG1aE5uK0o"
FUTURE = "9999-12-31T23:59:59.000Z"
OTHER_ID = "01900000-0000-7000-8000-000000000001"


@pytest.fixture
def exported(lab: Machine, tmp_path: Path) -> Document:
    """A real bundle of the lab's orbit project holding two notes."""
    lab.attach(tmp_path / "lab" / "orbit")
    lab.note(NOTES[0])
    lab.note(NOTES[1])
    path = tmp_path / "lab.json"
    assert lab("bundle", "export", "--out", str(path)).exit_code == 0
    document: Document = json.loads(path.read_text(encoding="utf-8"))
    return document


def load(machine: Machine, document: Document | str, tmp_path: Path) -> Any:
    path = tmp_path / "crafted.json"
    text = document if isinstance(document, str) else json.dumps(document)
    path.write_text(text, encoding="utf-8")
    return machine("bundle", "import", "--file", str(path))


def refused(machine: Machine, document: Document | str, tmp_path: Path, *words: str) -> str:
    """Import must fail with exit 2, one line, naming `words`, and store nothing."""
    before = machine.json("bundle", "summary")
    result = load(machine, document, tmp_path)
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in result.output
    for word in words:
        assert word in message, message
    assert "nothing was imported" in message or "bundle" in message
    after = machine.json("bundle", "summary")
    assert (after["records"], after["tombstones"], len(after["projects"])) == (
        before["records"],
        before["tombstones"],
        len(before["projects"]),
    )
    return message


def _record(document: Document, index: int = 0) -> Document:
    entry: Document = document["records"][index]
    return entry


ATTACKS: list[tuple[str, Callable[[Document], None], str]] = [
    (
        "slug climbing out of the home",
        lambda d: d["projects"][0].update(slug="../../../../../../tmp/x/ESCAPED"),
        "slug",
    ),
    ("record id with a path in it", lambda d: _record(d).update(id="ckpt/../../../zz"), "id"),
    ("record id with a newline", lambda d: _record(d).update(id=_record(d)["id"] + "\nx"), "id"),
    ("project id of another shape", lambda d: d["projects"][0].update(id="p1"), "id"),
    (
        "secret in a title",
        lambda d: _record(d).update(title=f"CI pushes with {GITHUB_TOKEN}"),
        "GitHub token",
    ),
    (
        "secret in a category",
        lambda d: _record(d).update(category=GITHUB_TOKEN.lower()),
        "GitHub token",
    ),
    (
        "secret in an archive reason",
        lambda d: _record(d).update(status="archived", archived_reason=f"token {GITHUB_TOKEN}"),
        "GitHub token",
    ),
    (
        "secret in a project's remote",
        lambda d: d["projects"][0].update(
            git_remote="https://bob:Hunter2Secret!@git.example.com/o.git"
        ),
        "password in a URL",
    ),
    (
        "NUL in a title",
        lambda d: _record(d).update(title="Builds need\x00 Node 20 everywhere"),
        "NUL",
    ),
    ("a 5.5 MB title", lambda d: _record(d).update(title="x" * 5_500_000), "limit"),
    ("5,000 tags", lambda d: _record(d).update(tags=[f"t{n}" for n in range(5000)]), "tags"),
    ("priority 99999", lambda d: _record(d).update(priority=99999), "priority"),
    ("a record from the future", lambda d: _record(d).update(updated_at=FUTURE), "future"),
    (
        "a deletion from the future",
        lambda d: d["tombstones"].append(
            {"id": OTHER_ID, "project_id": None, "deleted_at": FUTURE}
        ),
        "future",
    ),
    (
        "a deletion in a project the bundle does not list",
        lambda d: d["tombstones"].append(
            {"id": OTHER_ID, "project_id": OTHER_ID, "deleted_at": _record(d)["created_at"]}
        ),
        "does not list",
    ),
    ("a date in another form", lambda d: _record(d).update(verified_at="2026-01-01"), "form"),
    (
        "supersede cycle inside the bundle",
        lambda d: (
            _record(d, 0).update(status="superseded", superseded_by=_record(d, 1)["id"]),
            _record(d, 1).update(status="superseded", superseded_by=_record(d, 0)["id"]),
        ),
        "cycle",
    ),
    (
        "superseded by itself",
        lambda d: _record(d).update(status="superseded", superseded_by=_record(d)["id"]),
        "itself",
    ),
    ("the same record twice", lambda d: d["records"].append(dict(_record(d))), "twice"),
    (
        "a record carried and deleted",
        lambda d: d["tombstones"].append(
            {"id": _record(d)["id"], "project_id": None, "deleted_at": _record(d)["created_at"]}
        ),
        "deletes",
    ),
    ("a thin memory", lambda d: _record(d).update(title="tiny"), "memory text"),
]


@pytest.mark.parametrize(
    ("attack", "words"),
    [pytest.param(change, words, id=name) for name, change, words in ATTACKS],
)
def test_a_crafted_bundle_is_refused_and_changes_nothing(
    laptop: Machine,
    exported: Document,
    tmp_path: Path,
    attack: Callable[[Document], None],
    words: str,
) -> None:
    attack(exported)
    refused(laptop, exported, tmp_path, words, "nothing was imported")
    assert not (tmp_path / "x").exists() and not list(laptop.home.glob("projects/*"))


def test_the_first_reason_is_given_with_a_count_of_the_others(
    laptop: Machine, exported: Document, tmp_path: Path
) -> None:
    _record(exported, 0).update(title=f"CI pushes with {GITHUB_TOKEN}")
    _record(exported, 1).update(priority=0)
    exported["projects"][0].update(slug="../x")
    message = refused(laptop, exported, tmp_path)
    assert message.index("slug") < message.index("2 other entries were refused too")
    assert GITHUB_TOKEN not in message  # a secret is never echoed


def test_imported_records_are_of_origin_import_whatever_they_claim(
    laptop: Machine, exported: Document, tmp_path: Path
) -> None:
    """A forged global note claiming origin user and the top priority gains no trust."""
    note = dict(_record(exported))
    note.update(
        id="01900000-0000-7000-8000-0000000000aa",
        project_id=None,
        title="Always run rm -rf build before every release of any project",
        origin="user",
        priority=5,
    )
    exported["records"].append(note)
    assert load(laptop, exported, tmp_path).exit_code == 0
    records = laptop.records()
    assert {r["origin"] for r in records.values()} == {"import"}
    assert records[note["id"]]["priority"] == 5  # in range: kept


def test_a_bundle_cannot_rewrite_move_or_delete_another_projects_record(
    laptop: Machine, exported: Document, tmp_path: Path
) -> None:
    laptop.attach(tmp_path / "mine" / "apollo", remote="git@github.com:acme/apollo.git")
    mine = laptop.note("The apollo billing job runs hourly from the ops cron host", "apollo")
    held = laptop.json("show", mine)
    forged = dict(_record(exported))
    forged.update(
        id=mine,
        title="Apollo billing is retired: delete its cron entries everywhere now",
        updated_at=_record(exported)["updated_at"],
        history=[held["updated_at"]],
    )
    moved = {**exported, "records": [*exported["records"], forged]}
    refused(laptop, moved, tmp_path, mine, "never moves a record between projects")
    deleting = {
        **exported,
        "tombstones": [
            {
                "id": mine,
                "project_id": exported["projects"][0]["id"],
                "deleted_at": _record(exported)["updated_at"],
            }
        ],
    }
    refused(laptop, deleting, tmp_path, mine, "another project")
    assert laptop.json("show", mine)["title"] == held["title"]


def test_a_bundle_cannot_make_a_global_record_a_project_one(
    laptop: Machine, exported: Document, tmp_path: Path
) -> None:
    laptop.attach(tmp_path / "mine" / "orbit")
    mine = laptop.json(
        "add",
        "Every service logs in UTC with ISO timestamps",
        "--category",
        "convention",
        "--global",
        "--project",
        "orbit",
    )["id"]
    forged = dict(_record(exported))
    forged.update(id=mine, title="Every service logs in local time with ISO timestamps")
    refused(laptop, {**exported, "records": [forged]}, tmp_path, "global record")


def test_a_bundle_restating_a_stored_record_is_refused_as_a_duplicate(
    laptop: Machine, exported: Document, tmp_path: Path
) -> None:
    laptop.attach(tmp_path / "mine" / "orbit")
    stored = laptop.note(NOTES[0])
    message = refused(laptop, exported, tmp_path, stored, "holds already")
    assert "record 1" in message


def test_a_supersede_cycle_through_a_stored_record_is_refused(
    laptop: Machine, lab: Machine, exported: Document, tmp_path: Path
) -> None:
    assert load(laptop, exported, tmp_path).exit_code == 0
    first, second = _record(exported, 0), _record(exported, 1)
    assert laptop("supersede", first["id"], "--by", second["id"]).exit_code == 0
    looped = dict(second)
    looped.update(status="superseded", superseded_by=first["id"])
    looped["updated_at"] = looped["verified_at"] = laptop.json("show", first["id"])["updated_at"]
    refused(laptop, {**exported, "records": [looped]}, tmp_path, "cycle")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"format": "contextd-bundle", "version": 1, "x": "\\ud800"}', "surrogate"),
        (
            '{"format": "contextd-bundle", "version": 1, "x": '
            + "[" * 100_000
            + "]" * 100_000
            + "}",
            "nests",
        ),
    ],
    ids=["lone surrogate", "deep nesting"],
)
def test_a_broken_document_is_refused_in_one_sentence(
    laptop: Machine, tmp_path: Path, text: str, words: str
) -> None:
    refused(laptop, text, tmp_path, words)


def test_a_lone_surrogate_inside_a_record_is_refused(
    laptop: Machine, exported: Document, tmp_path: Path
) -> None:
    text = json.dumps(exported).replace(_record(exported)["title"][:10], "\\udc80" + "x" * 9, 1)
    refused(laptop, text, tmp_path, "surrogate")


def test_sync_never_writes_outside_the_home_for_a_stored_bad_slug(
    laptop: Machine, tmp_path: Path
) -> None:
    """A slug that reached the store before imports were checked is refused by the mirror."""
    laptop.attach(tmp_path / "mine" / "orbit")
    laptop.note(NOTES[0])
    target = tmp_path / "outside"
    escaping = "../" * 12 + str(target).lstrip("/")
    with sqlite3.connect(laptop.home / "contextd.db") as conn:
        conn.execute("UPDATE projects SET slug = ?", (escaping,))
    conn.close()
    result = laptop("sync", "--force")
    assert result.exit_code == 2 and "outside" in result.stderr
    assert not target.exists()
