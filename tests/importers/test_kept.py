"""`contextd import kept`: one Kept project's notes as memories, types as categories, the
supersede link and wiki links resolved to the new ids, once."""

from pathlib import Path

import pytest

from contextd.app import App
from contextd.models import Kind, Origin, Status
from tests.conftest import Cli
from tests.importers.conftest import ORBIT, stored

PROSE = Path(__file__).parents[1] / "core" / "prose"

NATS = "The task queue runs on NATS JetStream with durable consumers"
REDIS = "The task queue runs on Redis pub/sub"
DRAIN = "Pause the JetStream consumers before every rollout and resume them after it"


def test_notes_become_memories_of_the_category_their_type_means(app: App, run: Cli) -> None:
    out = run.json("import", "kept", str(ORBIT))
    assert out["counts"] == {
        "entries": 6,
        "imported": 6,
        "proposed": 0,
        "updated": 0,
        "already_stored": 0,
        "refused": 0,
    }
    categories = {title: r.category for title, r in stored(app).items()}
    assert categories == {
        DRAIN: "convention",  # feedback: how to work here
        "Maya leads the backend team and reviews every change to the queue": "user",
        "The queue dashboards live in Grafana under Orbit / JetStream": "reference",
        NATS: "project",
        REDIS: "project",
        "Staging runs on the shared k3s cluster in the office basement": "project",
    }
    records = stored(app)
    assert all(r.kind is Kind.MEMORY and r.origin is Origin.IMPORT for r in records.values())


def test_the_description_and_body_are_the_memory_text(app: App, run: Cli) -> None:
    run.json("import", "kept", str(ORBIT))
    maya = stored(app)["Maya leads the backend team and reviews every change to the queue"]
    assert maya.title == (
        "Maya leads the backend team and reviews every change to the queue\n\n"
        "She prefers small pull requests, each with a test against a real NATS server."
    )
    assert maya.retrieval_hints == ("maya",)  # the note's name, as a Kept user says it


def test_a_superseded_note_links_to_its_imported_successor(app: App, run: Cli) -> None:
    run.json("import", "kept", str(ORBIT))
    records = stored(app)
    redis, nats = records[REDIS], records[NATS]
    assert redis.status is Status.SUPERSEDED and redis.superseded_by == nats.id
    assert nats.status is Status.ACTIVE
    assert run.json("show", redis.id)["label"] == "NOT CURRENT"
    staging = records["Staging runs on the shared k3s cluster in the office basement"]
    assert staging.status is Status.ARCHIVED and staging.superseded_by is None


def test_wiki_links_become_relations(app: App, run: Cli) -> None:
    run.json("import", "kept", str(ORBIT))
    records = stored(app)
    dashboards = records["The queue dashboards live in Grafana under Orbit / JetStream"]
    assert records[NATS].related_to == (records[DRAIN].id, dashboards.id)
    assert "[[deploy-drain]]" in records[NATS].title  # the text itself is kept as written


def test_the_verified_date_dates_the_memory(app: App, run: Cli) -> None:
    run.json("import", "kept", str(ORBIT))
    records = stored(app)
    assert records[REDIS].verified_at == "2026-09-14T00:00:00.000Z"
    assert records[REDIS].created_at == records[REDIS].updated_at == records[REDIS].verified_at
    assert records[DRAIN].verified_at == "2026-10-05T00:00:00.000Z"


def test_the_generated_hot_index_is_not_imported(app: App, run: Cli) -> None:
    out = run.json("import", "kept", str(ORBIT))
    assert "MEMORY.md" not in {i["file"] for i in out["imported"]}
    assert not any("Durable knowledge" in title for title in stored(app))


def test_running_it_again_imports_nothing(app: App, run: Cli) -> None:
    run.json("import", "kept", str(ORBIT))
    again = run.json("import", "kept", str(ORBIT))
    assert again["counts"]["imported"] == 0 and again["counts"]["already_stored"] == 6
    assert len(stored(app)) == 6


def test_a_family_folder_holding_one_project_is_enough(app: App, run: Cli, kept_copy: Path) -> None:
    family = kept_copy.parent
    out = run.json("import", "kept", str(family))
    assert out["counts"]["imported"] == 6
    assert {i["file"] for i in out["imported"]} >= {"orbit/queue-nats.md"}


def test_a_successor_written_since_supersedes_the_stored_note(
    app: App, run: Cli, kept_copy: Path
) -> None:
    (kept_copy / "queue-redis.md").write_text(
        (kept_copy / "queue-redis.md")
        .read_text(encoding="utf-8")
        .replace("status: archived", "status: active")
        .replace('superseded_by: "[[queue-nats]]"\n', ""),
        encoding="utf-8",
    )
    nats = (kept_copy / "queue-nats.md").read_text(encoding="utf-8")
    (kept_copy / "queue-nats.md").unlink()
    run.json("import", "kept", str(kept_copy))
    assert stored(app)[REDIS].status is Status.ACTIVE
    (kept_copy / "queue-nats.md").write_text(nats, encoding="utf-8")
    (kept_copy / "queue-redis.md").write_text(
        (ORBIT / "queue-redis.md").read_text(encoding="utf-8"), encoding="utf-8"
    )
    out = run.json("import", "kept", str(kept_copy))
    records = stored(app)
    assert out["superseded_existing"] == [
        {"id": records[REDIS].id, "superseded_by": records[NATS].id}
    ]
    assert records[REDIS].status is Status.SUPERSEDED


def test_a_note_holding_a_secret_is_refused_and_the_rest_imported(
    app: App, run: Cli, kept_copy: Path
) -> None:
    key = "AKIA" + "Z7QW3ERT5YUI8OPA"
    (kept_copy / "maya.md").write_text(
        "---\nname: maya\ndescription: Maya's deploy credentials\ntype: user\n---\n"
        f"Her access key is {key}.\n",
        encoding="utf-8",
    )
    result = run("import", "kept", str(kept_copy))
    assert result.exit_code == 2 and key not in result.output
    assert "1 of 6 Kept notes were refused (the rest was imported); the first, maya in maya.md" in (
        result.stderr
    )
    assert "AWS access key id" in result.stderr
    assert len(stored(app)) == 5


def test_a_note_superseded_by_a_note_outside_the_import_is_archived_saying_so(
    app: App, run: Cli, kept_copy: Path
) -> None:
    (kept_copy / "queue-nats.md").unlink()
    out = run.json("import", "kept", str(kept_copy))
    assert any("queue-redis" in n and "queue-nats" in n for n in out["notes"])
    redis = stored(app)[REDIS]
    assert redis.status is Status.ARCHIVED and redis.superseded_by is None
    assert redis.archived_reason == "Superseded in Kept by queue-nats, which was not imported."


def test_decision_records_full_of_lookalikes_are_imported_whole(
    app: App, run: Cli, tmp_path: Path
) -> None:
    # Digests, integrity hashes, API-token users' mail addresses, links to documents by id,
    # public keys: one of them used to refuse the note, and with it every other note.
    project = tmp_path / "kept" / "acme" / "decisions"
    project.mkdir(parents=True)
    records = sorted(PROSE.glob("*.md"))
    records.remove(PROSE / "README.md")
    for path in records:
        title = path.read_text(encoding="utf-8").split("\n", 1)[0].lstrip("# ")
        (project / path.name).write_text(
            f"---\nname: {path.stem}\ndescription: {title}\ntype: project\n---\n\n"
            + path.read_text(encoding="utf-8"),
            encoding="utf-8",
        )
    out = run.json("import", "kept", str(project))
    assert out["counts"]["refused"] == 0
    assert out["counts"]["imported"] == len(records) == 6
    assert len(stored(app)) == len(records)
    found = run.json("search", "Digest SHA-256 object store")
    assert any("JetStream based Object Stores" in r["title"] for r in found["results"])


def test_an_import_embeds_its_notes_in_one_batch(
    app: App, run: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the model's batch speed, not one call per note."""
    from contextd.embeddings.hashing import HashingEmbedder

    batches: list[int] = []
    embed = HashingEmbedder.embed_documents

    def counted(self: HashingEmbedder, texts: list[str]) -> list[list[float]]:
        batches.append(len(texts))
        return embed(self, texts)

    monkeypatch.setattr(HashingEmbedder, "embed_documents", counted)
    out = run.json("import", "kept", str(ORBIT))
    assert out["counts"]["imported"] == 6
    assert batches == [6]


def test_a_note_edited_since_its_import_updates_its_memory(
    app: App, run: Cli, kept_copy: Path
) -> None:
    first = run.json("import", "kept", str(kept_copy))
    note = kept_copy / "queue-nats.md"
    note.write_text(
        note.read_text(encoding="utf-8").replace(
            "with durable consumers", "with durable pull consumers"
        ),
        encoding="utf-8",
    )

    out = run.json("import", "kept", str(kept_copy))

    assert out["counts"]["updated"] == 1 and out["counts"]["imported"] == 0
    imported = {i["source_id"]: i["id"] for i in first["imported"]}
    assert out["updated"][0]["id"] == imported["queue-nats"]
    records = stored(app)
    assert len(records) == 6 and NATS not in records
    edited = next(r for title, r in records.items() if "durable pull consumers" in title)
    assert edited.id == imported["queue-nats"]
    assert records[REDIS].superseded_by == edited.id  # its links kept


def test_a_note_without_a_name_is_known_by_its_file_name(
    app: App, run: Cli, kept_copy: Path
) -> None:
    note = kept_copy / "staging-cluster.md"
    unnamed = "\n".join(
        line
        for line in note.read_text(encoding="utf-8").splitlines()
        if not line.startswith("name:")
    )
    note.write_text(unnamed + "\n", encoding="utf-8")
    run.json("import", "kept", str(kept_copy))
    note.write_text(unnamed.replace("staging", "the staging") + "\n", encoding="utf-8")

    out = run.json("import", "kept", str(kept_copy))

    assert out["counts"]["updated"] == 1 and out["counts"]["imported"] == 0
    assert len(stored(app)) == 6
    assert (
        "staging-cluster"
        in stored(app)[
            "Staging runs on the shared k3s cluster in the office basement"
        ].retrieval_hints
    )
