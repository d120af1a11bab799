"""How often the 'likely replaces' flag fires correctly, on datasets with supersede edges.

Run: .venv/bin/python benchmarks/replacement_flags.py [FOLDER ...] [--before REV]

Default folders: shared/eval/supersession-dev (beside the repository) and
benchmarks/data/adr-dev. Each corpus is
loaded in file order through the normal write path, without its `supersedes` edges; after each
record is stored, the flag it raises is compared with the edges the dataset says it has.
Prints precision (flags that name a record it really replaces) and recall (real replacements
that were flagged), for the rule as it is now ("after") and as it was at REV ("before",
default main: that revision's replacement.replacement_reason, asked of each record at or above
refresh.replacement_threshold, closest first, as its duplicate guard did).
"""

import subprocess
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path

import _one_shot  # noqa: F401  (one BLAS thread, as the CLI runs)

from contextd.app import open_app
from contextd.config import load_settings
from contextd.core.writing.replacement import likely_replaced
from contextd.evaluation import load_dataset
from contextd.models import Kind, MemoryBody, Origin, Record, RecordDraft, Similar

HERE = Path(__file__).parent
# The shared sets beside the repository (or beside the folder of worktrees it is in).
SHARED = next(
    (p for p in (HERE.parent.parent, HERE.parent.parent.parent) if (p / "shared").is_dir()), HERE
)
DEFAULT = [SHARED / "shared" / "eval" / "supersession-dev", HERE / "data" / "adr-dev"]
RULE = "src/contextd/core/writing/replacement.py"

Flag = Callable[[Record, list[Similar], float], str | None]


def rule_at(revision: str) -> Flag:
    """The flag as `revision` decided it (pairwise, closest record with a cue first)."""
    source = subprocess.run(
        ["git", "-C", str(HERE), "show", f"{revision}:{RULE}"],
        capture_output=True,
        encoding="utf-8",
        check=True,
    ).stdout
    module = types.ModuleType("replacement_before")
    exec(compile(source, f"{revision}:{RULE}", "exec"), module.__dict__)  # noqa: S102
    if hasattr(module, "likely_replaced"):  # the rule as it has been since it chose a record

        def chosen(record: Record, near: list[Similar], looser: float) -> str | None:
            found = module.likely_replaced(record, near, looser)
            return found.record.id if found else None

        return chosen
    reason = module.replacement_reason

    def flag(record: Record, near: list[Similar], looser: float) -> str | None:
        for found in near:
            if found.similarity >= looser and reason(record, found.record):
                return found.record.id
        return None

    return flag


def rule_now(record: Record, near: list[Similar], looser: float) -> str | None:
    found = likely_replaced(record, near, looser)
    return found.record.id if found else None


def score(folder: Path, rules: dict[str, Flag]) -> None:
    corpus, _ = load_dataset(folder)
    truth = {(item.id, old) for item in corpus for old in item.supersedes}
    flagged = dict.fromkeys(rules, 0)
    correct = dict.fromkeys(rules, 0)
    with tempfile.TemporaryDirectory() as home, open_app(load_settings(home=home)) as app:
        assert app.indexer is not None and app.vector_index is not None
        app.indexer.provider.warm()
        looser = app.settings.refresh.replacement_threshold
        back: dict[str, str] = {}
        for item in corpus:
            draft = RecordDraft(
                Kind.MEMORY,
                item.text,
                MemoryBody(),
                category="note",
                origin=Origin.IMPORT,
                created_at=item.created_at,
            )
            record = app.writer.create(draft, app.projects.ensure(item.project), force=True)
            back[record.id] = item.id
            vector = app.vector_index.vectors_of([record.id]).get(record.id)
            near = app.duplicates.near(record, vector)
            for name, rule in rules.items():
                old = rule(record, near, looser)
                if old is not None:
                    flagged[name] += 1
                    correct[name] += (item.id, back[old]) in truth
    print(f"{folder.name}: records {len(corpus)}, true replacements {len(truth)}")
    for name in rules:
        precision = correct[name] / flagged[name] if flagged[name] else 0.0
        recall = correct[name] / len(truth) if truth else 0.0
        print(
            f"  {name:<6} flags {flagged[name]:>3}, right {correct[name]:>3}: "
            f"precision {precision:.2f}  recall {recall:.2f}"
        )


def main() -> None:
    args = sys.argv[1:]
    before = "main"
    if "--before" in args:
        at = args.index("--before")
        before = args[at + 1]
        del args[at : at + 2]
    rules: dict[str, Flag] = {"before": rule_at(before), "after": rule_now}
    for folder in [Path(a) for a in args] or DEFAULT:
        score(folder, rules)


if __name__ == "__main__":
    main()
