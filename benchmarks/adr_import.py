"""How well `contextd import adr` reads real ADR folders: the supersessions it finds against the
ADR dev set's (benchmarks/data/adr-dev, built from the same pinned commits by build_adr_dev.py,
with its hand fixes), the records it makes of each kind, and how fast a folder imports.

    python benchmarks/adr_import.py --mirrors /path/to/mirrors

where ``/path/to/mirrors/<owner>+<name>/repo`` is each source repository's git directory, as
build_adr_dev.py reads them. Each folder is imported into its own project of a fresh store
through the real import path (`Importer.run`, the model warm).
"""

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

import _one_shot  # noqa: F401  (one BLAS thread, as the CLI runs)
from build_adr_dev import DATA, SOURCES, git

from contextd.app import open_app
from contextd.config import load_settings
from contextd.evaluation import load_dataset
from contextd.importers import Importer, ImportReport, read_adrs
from contextd.importers.adr import adr_number


def _checkout(mirrors: Path, repo: str, commit: str, folder: str, into: Path) -> Path:
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    into.mkdir(parents=True)
    for path in git(git_dir, "ls-tree", "--name-only", commit, f"{folder}/").split():
        if path.endswith(".md"):
            (into / Path(path).name).write_text(git(git_dir, "show", f"{commit}:{path}"), "utf-8")
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, required=True)
    args = parser.parse_args()
    corpus, _ = load_dataset(DATA)
    stated = found = agreed = adrs = 0
    took = 0.0
    with (
        tempfile.TemporaryDirectory() as scratch,
        open_app(load_settings(home=Path(scratch) / "home")) as app,
    ):
        assert app.indexer is not None
        app.indexer.provider.warm()
        for source in SOURCES:
            folder = _checkout(
                args.mirrors,
                source.repo,
                source.commit,
                source.folder,
                Path(scratch) / source.project,
            )
            truth = {
                (int(item.id.rsplit("-", 1)[1].rstrip("b")), int(old.rsplit("-", 1)[1].rstrip("b")))
                for item in corpus
                if item.project == source.project
                for old in item.supersedes
            }
            entries = read_adrs(folder)
            number = {
                e.source_id: adr_number(e.where, e.draft.title.split("\n")[0]) for e in entries
            }
            edges = {
                (number[e.successor], number[e.source_id]) for e in entries if e.successor in number
            }
            project = app.projects.ensure(source.project)
            report = ImportReport("adr", str(folder), project.slug, False)
            began = time.perf_counter()
            Importer(app.writer, app.reader, app.db, app.review).run(project, entries, report)
            took += time.perf_counter() - began
            kinds = Counter(i.kind.value for i in report.imported)
            refused = report.first_refusal()
            if refused:
                print(f"{source.project:<12} refused, so nothing imported: {refused}")
            differ = (
                f"  (dataset only {sorted(truth - edges)}, import only {sorted(edges - truth)})"
                if truth != edges
                else ""
            )
            same = len(truth & edges)
            print(
                f"{source.project:<12} ADRs {len(entries):>3}  {dict(kinds)}  stated "
                f"replacements {len(truth):>2}, found {len(edges):>2}, the same {same:>2}{differ}"
            )
            stated, found, agreed = (
                stated + len(truth),
                found + len(edges),
                agreed + len(truth & edges),
            )
            adrs += len(report.imported)
    print(
        f"all: {adrs} ADRs imported in {took:.1f} s ({adrs / took:.1f} records/s); "
        f"replacements stated {stated}, found {found}, the same {agreed}"
    )


if __name__ == "__main__":
    main()
