"""How often the 'likely replaces' flag fires correctly, on a dataset with supersede edges.

Run: .venv/bin/python benchmarks/replacement_flags.py ../shared/eval/supersession-dev

The corpus is loaded in file order through the normal write path, without its `supersedes`
edges; after each record is stored, the flags it raises are compared with the edges the
dataset says it has. Prints precision (flags that name a record it really replaces) and
recall (real replacements that were flagged).
"""

import sys
import tempfile
from pathlib import Path

import _one_shot  # noqa: F401  (one BLAS thread, as the CLI runs)

from contextd.app import open_app
from contextd.config import load_settings
from contextd.evaluation import load_dataset
from contextd.models import Kind, MemoryBody, Origin, RecordDraft


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/eval/supersession-dev")
    corpus, _ = load_dataset(folder)
    flagged = correct = 0
    truth = {(item.id, old) for item in corpus for old in item.supersedes}
    with tempfile.TemporaryDirectory() as home, open_app(load_settings(home=home)) as app:
        ids: dict[str, str] = {}
        back: dict[str, str] = {}
        for item in corpus:
            project = app.projects.ensure(item.project)
            draft = RecordDraft(
                Kind.MEMORY,
                item.text,
                MemoryBody(),
                category="note",
                origin=Origin.IMPORT,
                created_at=item.created_at,
            )
            record = app.writer.create(draft, project, force=True)
            ids[item.id], back[record.id] = record.id, item.id
            for similar in app.writer.similar(record):
                if similar.replaces:
                    flagged += 1
                    correct += (item.id, back[similar.record.id]) in truth
    found = correct
    print(f"records {len(corpus)}, true replacements {len(truth)}, flags raised {flagged}")
    print(
        f"precision {correct / flagged if flagged else 0:.2f}  "
        f"recall {found / len(truth) if truth else 0:.2f}"
    )


if __name__ == "__main__":
    main()
