"""Build two retrieval sets of long design proposals, with the projects' own commit subjects as
the queries (issue 45): `rfc-dev` from rust-lang/rfcs (tuned on) and `proposal-check` from
swiftlang/swift-evolution (a check set: never tuned on, only reported).

Each proposal file becomes one `decision` record: a title line made from its number and file name
("RFC 2229: capture disjoint fields"), then its text, cut at a paragraph before 20,000
characters (a record's text limit). Each query is the subject of a commit that changed exactly
one proposal after it was numbered, written by the people who worked on it, such as "Amend text
to also consider by-value self methods as object safe"; its answer is that proposal. Subjects
that only tidy (typos, links, renames, status) or that cite the proposal by number are left out,
and at most three subjects are kept per proposal (the earliest). A query holding a code
identifier (`snake_case`, `CamelCase`, `a::path`, backticks, a call) is in category
`identifier`, the rest in `prose`.

Nothing is downloaded: each source is a git directory (`git clone --mirror URL DIR`):

    python benchmarks/build_proposal_sets.py --mirrors /path/to/mirrors

where `/path/to/mirrors/<owner>+<name>/repo` is each repository's git directory. The corpora
are not committed (about 8 MB each): build them before `contextd eval benchmarks/data/rfc-dev`.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from contextd.storage.fulltext import STOP_WORDS

DATA = Path(__file__).resolve().parent / "data"
MAX_TEXT = 20_000  # a record's text limit (contextd.core.writing.validation.MAX_FIELD_CHARS)
PER_PROPOSAL = 3


@dataclass(frozen=True)
class Source:
    name: str  # the dataset folder
    project: str
    repo: str
    commit: str
    folder: str
    label: str  # how a proposal is cited: "RFC", "SE"
    licence: str


SOURCES = (
    Source(
        "rfc-dev",
        "rust-rfcs",
        "rust-lang/rfcs",
        "354518a8c9025f40be6f730452c1bfe71a12dc22",
        "text",
        "RFC",
        "MIT or Apache-2.0 (LICENSE-MIT, LICENSE-APACHE)",
    ),
    Source(
        "proposal-check",
        "swift-evolution",
        "swiftlang/swift-evolution",
        "0105e139a22938561c700cfbb89ddc3ebe402f0c",
        "proposals",
        "SE",
        "Apache-2.0 with the Runtime Library Exception (LICENSE.txt)",
    ),
)

_FILE = re.compile(r"^(\d{4})-([\w.-]+)\.md$")
_WORD = re.compile(r"[a-z0-9]+")
# Words of a subject that only tidies, or that says where, not what.
_TIDY = frozenset(
    """fix fixed fixes fixing typo typos update updated updates updating link links linked rename
    renamed renaming merge merged minor nit nits nitpick wording reword reworded rewording format
    formatting formatted whitespace cleanup clean cleaned review reviews feedback suggestion
    suggestions suggested apply applied add added adds adding remove removed removes removing
    tracking issue issues pr prs number numbers section sections text md readme change changes
    changed edit edits edited small misc grammar spelling markdown toc heading headings file files
    date dates status accepted postponed closed implemented rejected withdrawn expired active
    proposal proposals rfc rfcs se pitch review manager note notes comment comments mention
    trailing line lines broken url urls example examples code block blocks draft wip tweak tweaks
    tweaked small slight slightly address addressed addressing incorporate incorporated
    incorporating respond response resolve resolved resolving revise revised revision more typo
    correct corrected correction corrections spell copy paste capitalization capitalize
    punctuation grammatical editorial chore matters missing words stray characters adjust""".split()
)
_IDENTIFIER = re.compile(
    r"`[^`]+`|\w+::\w+|\b[a-z0-9]+_[a-z0-9_]+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b|\w\(\)"
)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def proposals(repo: Path, source: Source) -> dict[str, tuple[str, str]]:
    """Each numbered proposal at the pinned commit: file name -> (id, record text)."""
    found = {}
    names = git(repo, "ls-tree", "--name-only", f"{source.commit}:{source.folder}").split()
    for name in sorted(names):
        match = _FILE.match(name)
        if match is None or match.group(1) == "0000":
            continue
        number = str(int(match.group(1)))
        body = git(repo, "show", f"{source.commit}:{source.folder}/{name}")
        title = f"{source.label} {number}: {match.group(2).replace('-', ' ').replace('_', ' ')}"
        found[name] = (f"{source.project}-{match.group(1)}", _cut(f"# {title}\n\n{body.strip()}"))
    return found


def _cut(text: str) -> str:
    """At most MAX_TEXT characters, ending at a paragraph (else a line) where it was cut."""
    if len(text) <= MAX_TEXT:
        return text
    head = text[:MAX_TEXT]
    cut = head.rfind("\n\n")
    cut = cut if cut > MAX_TEXT // 2 else head.rfind("\n")
    return head[: cut if cut > 0 else MAX_TEXT].rstrip()


def subjects(
    repo: Path, source: Source, known: dict[str, tuple[str, str]]
) -> list[dict[str, object]]:
    """Queries: commit subjects that changed exactly one numbered proposal, oldest first."""
    log = git(
        repo, "log", "--reverse", "--no-merges", "--format=@@%s", "--name-only", source.commit,
        "--", f"{source.folder}/",
    )  # fmt: skip
    per: dict[str, int] = {}
    seen: set[str] = set()
    queries: list[dict[str, object]] = []
    for block in log.split("@@")[1:]:
        lines = [line.strip() for line in block.strip().splitlines() if line.strip()]
        subject, files = re.sub(r"\s*\(#\d+\)$", "", lines[0]), lines[1:]
        if len(files) != 1 or not files[0].startswith(f"{source.folder}/"):
            continue
        name = files[0].split("/", 1)[1]
        if name not in known or per.get(name, 0) >= PER_PROPOSAL or not _says_what(subject):
            continue
        number = str(int(name[:4]))
        if re.search(rf"(?<!\d)0*{number}(?!\d)", subject) or subject.lower() in seen:
            continue  # cites it by number: a lookup, not a search
        seen.add(subject.lower())
        per[name] = per.get(name, 0) + 1
        record_id = known[name][0]
        queries.append(
            {
                "id": f"q-{record_id}-{per[name]}",
                "project": source.project,
                "query": subject,
                "relevant": [record_id],
                "category": "identifier" if _IDENTIFIER.search(subject) else "prose",
            }
        )
    return queries


def _says_what(subject: str) -> bool:
    words = [w for w in _WORD.findall(subject.lower()) if w not in STOP_WORDS and w not in _TIDY]
    return len(words) >= 3 and not subject.lower().startswith(("revert", "merge"))


def build(mirrors: Path, source: Source) -> None:
    repo = mirrors / source.repo.replace("/", "+") / "repo"
    known = proposals(repo, source)
    queries = subjects(repo, source, known)
    folder = DATA / source.name
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for record_id, text in known.values():
            item = {"id": record_id, "project": source.project, "kind": "decision", "text": text}
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as out:
        for query in queries:
            out.write(json.dumps(query, ensure_ascii=False) + "\n")
    kinds = {c: sum(q["category"] == c for q in queries) for c in ("identifier", "prose")}
    print(f"{source.name}: {len(known)} proposals, {len(queries)} queries {kinds}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--mirrors", type=Path, required=True)
    args = parser.parse_args()
    for source in SOURCES:
        build(args.mirrors, source)


if __name__ == "__main__":
    main()
