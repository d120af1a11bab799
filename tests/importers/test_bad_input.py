"""Bad input to either importer is one sentence and a non-zero exit, never a traceback, and
stores nothing."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from contextd.app import App
from tests.conftest import Cli
from tests.importers.conftest import KEPT, stored

Break = Callable[[Path], None]


def _decisions(folder: Path) -> Path:
    return folder / ".context" / "decisions.json"


def _edit_first(change: Callable[[dict[str, object]], None]) -> Break:
    def apply(folder: Path) -> None:
        path = _decisions(folder)
        entries = json.loads(path.read_text(encoding="utf-8"))
        change(entries[0])
        path.write_text(json.dumps(entries), encoding="utf-8")

    return apply


def _write(text: str | bytes) -> Break:
    def apply(folder: Path) -> None:
        path = _decisions(folder)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")

    return apply


def _huge(folder: Path) -> None:
    with _decisions(folder).open("w", encoding="utf-8") as out:
        out.write("[" + " " * (17 * 1024 * 1024) + "]")


def _repeat_id(folder: Path) -> None:
    path = folder / ".context" / "constraints.json"
    entries = json.loads(path.read_text(encoding="utf-8"))
    entries[1]["id"] = "dec-001"
    path.write_text(json.dumps(entries), encoding="utf-8")


CK_CASES: list[tuple[str, Break, str]] = [
    ("malformed", _write('[{"id": "dec-001",'), "is not valid JSON"),
    ("not a list", _write('{"id": "dec-001"}'), "does not hold context-keeper entries"),
    ("tags a number", _edit_first(lambda e: e.update(tags=7)), "Expected `array | null`"),
    ("no id", _edit_first(lambda e: e.pop("id")), "missing required field `id`"),
    ("odd id", _edit_first(lambda e: e.update(id="dec 001; rm")), "is not a context-keeper id"),
    (
        "secret id",
        _edit_first(lambda e: e.update(id="ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")),
        "has an entry whose id is not a context-keeper id",
    ),
    ("status", _edit_first(lambda e: e.update(status="zombie")), "status must be active"),
    ("date", _edit_first(lambda e: e.update(verified_at="last tuesday")), "verified_at is not"),
    (
        "before the calendar",
        _edit_first(lambda e: e.update(created_at="0001-01-01T00:00:00+05:00")),
        "created_at is not an ISO date",
    ),
    ("future", _edit_first(lambda e: e.update(updated_at="2999-01-01")), "lies in the future"),
    ("not UTF-8", _write(b'[{"id": "dec-001", "summary": "caf\xe9"}]'), "is not UTF-8 text"),
    ("huge", _huge, "is larger than 16 MB"),
    ("repeated id", _repeat_id, "Two entries are called dec-001"),
    ("deep", _write("[" * 100_000 + "]" * 100_000), "decisions.json"),
]


def _one_sentence(result_stderr: str, fragment: str) -> None:
    lines = result_stderr.strip().splitlines()
    assert len(lines) == 1, result_stderr
    assert lines[0].startswith("Error: ") and fragment in lines[0], lines[0]
    assert "Traceback" not in result_stderr


@pytest.mark.parametrize(("name", "damage", "fragment"), CK_CASES, ids=[c[0] for c in CK_CASES])
def test_a_broken_context_keeper_file_is_one_sentence(
    app: App, run: Cli, ck_copy: Path, name: str, damage: Break, fragment: str
) -> None:
    damage(ck_copy)
    result = run("import", "context-keeper", str(ck_copy))
    assert result.exit_code == 2, result.output
    _one_sentence(result.stderr, fragment)
    assert stored(app) == {}


def test_a_hardness_context_keeper_does_not_know_is_refused(
    app: App, run: Cli, ck_copy: Path
) -> None:
    path = ck_copy / ".context" / "constraints.json"
    entries = json.loads(path.read_text(encoding="utf-8"))
    entries[0]["hardness"] = "mandatory"
    path.write_text(json.dumps(entries), encoding="utf-8")
    result = run("import", "context-keeper", str(ck_copy))
    assert result.exit_code == 2
    _one_sentence(result.stderr, "constraints.json, con-001: hardness must be absolute")


def test_folders_that_are_not_a_store_are_named(app: App, run: Cli, tmp_path: Path) -> None:
    missing = run("import", "context-keeper", str(tmp_path / "nope"))
    _one_sentence(missing.stderr, "No folder at")
    a_file = tmp_path / "notes.txt"
    a_file.write_text("hello", encoding="utf-8")
    _one_sentence(run("import", "kept", str(a_file)).stderr, "is a file, not a folder")
    empty = tmp_path / "empty"
    empty.mkdir()
    _one_sentence(run("import", "context-keeper", str(empty)).stderr, "No context-keeper store")
    _one_sentence(run("import", "kept", str(empty)).stderr, "No Kept notes in")
    assert all(
        r.exit_code == 2
        for r in (missing, run("import", "kept", str(a_file)), run("import", "kept", str(empty)))
    )


def _note(text: str) -> Break:
    def apply(folder: Path) -> None:
        (folder / "queue-nats.md").write_text(text, encoding="utf-8")

    return apply


def _big_note(folder: Path) -> None:
    body = "word " * (300 * 1024)
    (folder / "queue-nats.md").write_text(f"---\nname: big\n---\n{body}", encoding="utf-8")


KEPT_CASES: list[tuple[str, Break, str]] = [
    ("no front matter", _note("Just text.\n"), "does not start with a front matter block"),
    ("never closed", _note("---\nname: x\ntype: project\n"), "never closed"),
    ("not key value", _note("---\nname x\n---\nbody\n"), "line 2 is not a `key: value` line"),
    ("open quote", _note('---\nname: "x\n---\nbody\n'), "opens a quote it never closes"),
    ("list for text", _note("---\nstatus: [active]\n---\nbody\n"), "`status` must be a single"),
    ("unknown status", _note("---\nstatus: zombie\n---\nbody\n"), "status must be active or"),
    ("bad date", _note("---\nverified: soon\n---\nbody\n"), "verified is not an ISO date"),
    ("repeated field", _note("---\nname: a\nname: b\n---\nbody\n"), "repeats the field `name`"),
    ("big", _big_note, "is larger than 1 MB"),
]


@pytest.mark.parametrize(("name", "damage", "fragment"), KEPT_CASES, ids=[c[0] for c in KEPT_CASES])
def test_a_broken_kept_note_is_one_sentence(
    app: App, run: Cli, kept_copy: Path, name: str, damage: Break, fragment: str
) -> None:
    damage(kept_copy)
    result = run("import", "kept", str(kept_copy))
    assert result.exit_code == 2, result.output
    _one_sentence(result.stderr, fragment)
    assert stored(app) == {}


def test_a_root_holding_several_kept_projects_is_refused(app: App, run: Cli) -> None:
    result = run("import", "kept", str(KEPT))
    assert result.exit_code == 2
    _one_sentence(result.stderr, "holds the notes of 2 Kept projects (acme/common, acme/orbit)")
    assert stored(app) == {}


def test_json_output_carries_the_error_too(app: App, run: Cli, tmp_path: Path) -> None:
    result = run("import", "kept", str(tmp_path / "nope"), "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["message"].startswith("No folder at")
