"""Rebuild the ADR development set (benchmarks/data/adr-dev) from pinned public repositories.

Each source repository is read from a bare git directory (``git clone --mirror URL DIR``); nothing
is downloaded here. Every ADR file becomes one ``decision`` record: its title and body with the
status section, status badges and HTML comments trimmed. ``supersedes`` comes only from what the
ADRs state ("Superseded by [ADR024](...)", "This decision supersedes decision: [0008 ...](...)"),
resolved to the ADR number the link names. The questions are hand-written data
(``questions.jsonl``, read here and checked against the corpus); this script writes
``corpus.jsonl``, ``queries.jsonl`` and ``provenance.jsonl``.

    python benchmarks/build_adr_dev.py --mirrors /path/to/mirrors

where ``/path/to/mirrors/<owner>+<name>/repo`` is each repository's git directory (``--check`` only
verifies that the written files are what the sources give).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "adr-dev"


@dataclass(frozen=True)
class Source:
    project: str
    repo: str
    commit: str
    folder: str
    licence: str
    licence_file: str
    number: str = r"^(?:ADR)?0*(\d+)-"  # the ADR number in the file name


SOURCES = (
    Source(
        "gsp",
        "alphagov/gsp",
        "a9f80de52b39d460d4c8d00ae5fd9f7a4c9da383",
        "docs/architecture/adr",
        "MIT",
        "LICENSE",
        r"^ADR0*(\d+)-",
    ),
    Source(
        "tdr",
        "nationalarchives/tdr-dev-documentation",
        "7b67a6fa947f796e22cbbddd01944fd5b97932e3",
        "architecture-decision-records",
        "MIT",
        "LICENCE",
    ),
    Source(
        "fac",
        "GSA-TTS/FAC",
        "fe766b09799c4c9f5ba231973aaf642c6cf21155",
        "docs/architecture/decisions",
        "CC0-1.0 (US public domain)",
        "LICENSE.md",
    ),
    Source(
        "bfys",
        "DFE-Digital/buy-for-your-school",
        "ce327192538ed1de10d8461222b70cff7fa2af65",
        "doc/architecture/decisions",
        "MIT",
        "LICENCE",
    ),
    Source(
        "getgov",
        "cisagov/manage.get.gov",
        "839b758608cc7a3f14fb30611c3f994b954dba24",
        "docs/architecture/decisions",
        "CC0-1.0 (US public domain)",
        "LICENSE.md",
    ),
    Source(
        "casdk",
        "Green-Software-Foundation/carbon-aware-sdk",
        "e6de58da895e5936b43ee66dbce925345bd88d02",
        "casdk-docs/docs/architecture/decisions",
        "MIT",
        "LICENSE",
    ),
    Source(
        "forms",
        "alphagov/forms",
        "ae72f4b339970b2c84409d8a240f8dd3482b6136",
        "ADR",
        "MIT",
        "LICENCE",
        r"^ADR0*(\d+)-",
    ),
    Source(
        "govuk-infra",
        "alphagov/govuk-infrastructure",
        "d9b7454f26061e8af95753fa688cdf3d86a6c3ee",
        "docs/architecture/decisions",
        "MIT",
        "LICENCE",
    ),
)

# Links whose target file was renamed or mistyped in the source; the key is (project, ADR number
# stating the link), the value the ADR number the text means. Each one is named in the README.
LINK_FIXES: dict[tuple[str, int], dict[int, int]] = {
    # FAC ADR 14 says "Superseded by ADR 16" and links 0016-compliance-documentation.md, which does
    # not exist; the compliance-documentation ADR that replaces it is 0025.
    ("fac", 14): {16: 25},
}

# contextd keeps one successor per record (a chain, not a tree): where an ADR names two successors,
# the edge kept is the one that replaces the same thing. gsp ADR030 (AWS Service Operator for SQS)
# is "superseded by ADR031 and ADR034"; ADR034 (one service operator for many resource kinds) is
# the one that replaces the operator; ADR031 (Postgres for tenants) adds a new resource kind.
ONE_SUCCESSOR: dict[tuple[str, int], int] = {("gsp", 30): 34}

# Sample credentials inside an ADR's example configuration, which contextd's secret scan refuses
# (rightly); the placeholder keeps the example readable. (project, ADR number) -> [(old, new)].
REDACT: dict[tuple[str, int], list[tuple[str, str]]] = {
    ("casdk", 16): [('"Password": "super_secret_secret"', '"Password": "<password>"')],
}

SKIP = re.compile(r"(template|readme|index|toc)\b", re.IGNORECASE)
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)[^)]*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
DATE = re.compile(r"^\W*date\W*\s*(\d{4}-\d{2}-\d{2})", re.IGNORECASE)
SUPERSEDED_BY = re.compile(
    r"superseded\s+(?:by|in favou?r of)|deprecated\s+in\s+favou?r\s+of|replaced\s+by", re.I
)
SUPERSEDES = re.compile(r"\bsupersedes\b", re.IGNORECASE)
STATUS_LINE = re.compile(
    r"^([*_-]*\s*status[*_]*\s*:|this decision (has been superseded|supersedes))", re.IGNORECASE
)
BADGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")


def git(git_dir: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=True
    )
    return out.stdout


@dataclass
class Adr:
    source: Source
    path: str
    number: int
    title: str
    text: str
    created_at: str
    first_added: str  # the date git first added the file
    status: str
    superseded_by: set[int]
    supersedes: set[int]
    suffix: str = ""  # "b" for a second file with the same ADR number

    @property
    def id(self) -> str:
        return f"{self.source.project}-{self.number:03d}{self.suffix}"


def _link_numbers(line: str, source: Source) -> set[int]:
    numbers = set()
    for _label, target in LINK.findall(line):
        name = target.rstrip("/").rsplit("/", 1)[-1]
        match = re.match(source.number, name) or re.match(r"^(?:ADR)?0*(\d+)-", name, re.I)
        if match:
            numbers.add(int(match.group(1)))
    if not numbers:  # "Superseded by ADR025", no link
        numbers = {int(n) for n in re.findall(r"\bADR[-\s]?0*(\d+)\b", line, re.IGNORECASE)}
    return numbers


def _split(raw: str) -> tuple[str, list[str], list[str], str]:
    """An ADR's title, body lines, status lines and stated date."""
    raw = re.sub(r"<!--.*?-->", "", raw, flags=re.DOTALL)
    raw = re.sub(r"\A---\n.*?\n---\n", "", raw, flags=re.DOTALL)
    title, body, status_lines, created = "", [], [], ""
    in_status = False
    for line in raw.splitlines():
        heading = HEADING.match(line)
        if heading and not title and len(heading.group(1)) == 1:
            title = heading.group(2).strip()
            continue
        if heading:
            in_status = heading.group(2).strip().lower().rstrip(":") in {"status", "state"}
            if in_status:
                continue
        date_line = DATE.match(line)
        if date_line and not created:
            created = date_line.group(1)
            continue
        stripped = line.strip()
        if in_status or STATUS_LINE.match(stripped):
            status_lines.append(stripped)
        elif not BADGE.fullmatch(stripped):
            body.append(line.rstrip())
    return title, body, status_lines, created


def _edges(source: Source, number: int, status_lines: list[str]) -> tuple[set[int], set[int]]:
    """The ADR numbers that supersede this one and that this one supersedes, as stated."""
    superseded_by: set[int] = set()
    supersedes: set[int] = set()
    for line in status_lines:
        if SUPERSEDED_BY.search(line):
            superseded_by |= _link_numbers(line, source)
        elif SUPERSEDES.search(line):
            supersedes |= _link_numbers(line, source)
    fixes = LINK_FIXES.get((source.project, number), {})
    superseded_by = {fixes.get(n, n) for n in superseded_by} - {number}
    if (source.project, number) in ONE_SUCCESSOR:
        superseded_by = {ONE_SUCCESSOR[(source.project, number)]}
    return superseded_by, {fixes.get(n, n) for n in supersedes} - {number}


def parse(source: Source, path: str, raw: str, first_added: str) -> Adr:
    name = path.rsplit("/", 1)[-1]
    match = re.match(source.number, name)
    assert match, path
    number = int(match.group(1))
    title, body, status_lines, created = _split(raw)
    superseded_by, supersedes = _edges(source, number, status_lines)
    text = "\n".join(body).strip()
    for old, new in REDACT.get((source.project, number), []):
        assert old in text, (path, old)
        text = text.replace(old, new)
    if created and not _is_date(created):
        created = ""  # "2023-13-10" and the like: the git date stands in
    text = re.sub(r"\n{3,}", "\n\n", text)
    title = title or name.rsplit(".", 1)[0]
    return Adr(
        source,
        path,
        number,
        title,
        f"{title}\n\n{text}".strip(),
        created or first_added,
        first_added,
        " ".join(s for s in status_lines if s).strip(),
        superseded_by,
        supersedes,
    )


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def load(mirrors: Path) -> list[Adr]:
    adrs: list[Adr] = []
    for source in SOURCES:
        git_dir = mirrors / source.repo.replace("/", "+") / "repo"
        if not git_dir.is_dir():
            sys.exit(f"missing {git_dir}: git clone --mirror https://github.com/{source.repo} it")
        paths = git(git_dir, "ls-tree", "--name-only", source.commit, f"{source.folder}/").split(
            "\n"
        )
        for path in sorted(p for p in paths if p.endswith(".md")):
            name = path.rsplit("/", 1)[-1]
            if (
                SKIP.search(name)
                or not re.match(source.number, name)
                or re.match(r"^(ADR)?0+-", name)
            ):
                continue
            raw = git(git_dir, "show", f"{source.commit}:{path}")
            added = git(
                git_dir, "log", "--diff-filter=A", "--format=%cs", source.commit, "--", path
            ).split()
            adr = parse(source, path, raw, added[-1] if added else "")
            if any(a.source is source and a.number == adr.number for a in adrs):
                adr.suffix = "b"
            adrs.append(adr)
    return adrs


def link(adrs: list[Adr]) -> dict[str, list[str]]:
    """Each record's supersedes list, from both directions of the stated status lines."""
    by_number: dict[tuple[str, int], Adr] = {}
    for adr in adrs:  # a number two files share means the first (the one without a suffix)
        by_number.setdefault((adr.source.project, adr.number), adr)
    edges: dict[str, set[str]] = {a.id: set() for a in adrs}
    for adr in adrs:
        for newer in adr.superseded_by:
            target = by_number.get((adr.source.project, newer))
            if target is None:
                sys.exit(f"{adr.id}: superseded by ADR {newer}, which is not in the set")
            edges[target.id].add(adr.id)
        for older in adr.supersedes:
            target = by_number.get((adr.source.project, older))
            if target is None:
                sys.exit(f"{adr.id}: supersedes ADR {older}, which is not in the set")
            edges[adr.id].add(target.id)
    return {k: sorted(v) for k, v in edges.items() if v}


def chain_end(record: str, superseded_by: dict[str, set[str]]) -> set[str]:
    """The current records a record's chain ends in (follows every successor)."""
    todo, ends, seen = [record], set(), set()
    while todo:
        item = todo.pop()
        if item in seen:
            continue
        seen.add(item)
        nxt = superseded_by.get(item, set())
        if nxt:
            todo.extend(nxt)
        else:
            ends.add(item)
    return ends


def build(mirrors: Path) -> dict[str, list[dict[str, Any]]]:
    adrs = load(mirrors)
    edges = link(adrs)
    ids = {a.id for a in adrs}
    by_id = {a.id: a for a in adrs}
    for newer, olds in edges.items():
        # a successor dated before what it replaces has a mistyped Date: line; git's date stands in
        if any(by_id[newer].created_at < by_id[old].created_at for old in olds):
            by_id[newer].created_at = by_id[newer].first_added
        if any(by_id[newer].created_at < by_id[old].created_at for old in olds):
            sys.exit(f"{newer} is dated before a record it supersedes")
    corpus, provenance = [], []
    # ingested in date order so a successor arrives after what it supersedes
    for adr in sorted(adrs, key=lambda a: (a.created_at, a.source.project, a.number)):
        line: dict[str, Any] = {
            "id": adr.id,
            "project": adr.source.project,
            "kind": "decision",
            "text": adr.text,
            "created_at": adr.created_at,
        }
        if adr.id in edges:
            line["supersedes"] = edges[adr.id]
        corpus.append(line)
        provenance.append(
            {
                "id": adr.id,
                "repo": adr.source.repo,
                "commit": adr.source.commit,
                "path": adr.path,
                "url": f"https://github.com/{adr.source.repo}/blob/{adr.source.commit}/{adr.path}",
                "licence": adr.source.licence,
                "licence_file": adr.source.licence_file,
                "status": adr.status,
                "created_at_from": "git" if adr.created_at == adr.first_added else "Date: line",
            }
        )
    queries = _queries(mirrors, edges, ids, {p["id"]: p for p in provenance})
    return {"corpus.jsonl": corpus, "queries.jsonl": queries, "provenance.jsonl": provenance}


def _queries(
    mirrors: Path, edges: dict[str, list[str]], ids: set[str], paths: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """questions.jsonl checked against the corpus, in the eval format."""
    superseded_by: dict[str, set[str]] = {}
    for newer, olds in edges.items():
        for old in olds:
            superseded_by.setdefault(old, set()).add(newer)
    queries = []
    for q in _questions():
        if q["category"] == "real-title":
            _check_real_title(mirrors, q, paths)
        relevant = q["relevant"]
        unknown = [r for r in relevant if r not in ids]
        if unknown:
            sys.exit(f"question {q['id']}: unknown ids {unknown}")
        current = set()
        for r in relevant:
            current |= chain_end(r, superseded_by)
        if current != set(relevant):
            sys.exit(
                f"question {q['id']}: {relevant} is not the end of its chain {sorted(current)}"
            )
        older = sorted({o for r in relevant for o in _ancestors(r, edges)})
        line: dict[str, object] = {
            "id": q["id"],
            "project": q["project"],
            "query": q["query"],
            "relevant": relevant,
        }
        if older:
            line["superseded"] = older
        line["category"] = q["category"]
        if q["category"] == "chain" and not old:
            sys.exit(f"question {q['id']}: category chain but no superseded record")
        if not relevant[0].startswith(q["project"] + "-"):
            sys.exit(f"question {q['id']}: relevant record of another project")
        queries.append(line)
    return queries


def _check_real_title(mirrors: Path, q: dict[str, Any], paths: dict[str, dict[str, Any]]) -> None:
    """A real title's pull request commit exists and changed the ADR file it names."""
    source = q["source"]
    record = paths.get(source["adr_file_record"])
    if record is None or record["repo"] != source["repo"]:
        sys.exit(f"question {q['id']}: source names no record of {source['repo']}")
    git_dir = mirrors / source["repo"].replace("/", "+") / "repo"
    changed = git(
        git_dir, "show", "-m", "--first-parent", "--format=", "--name-only", source["commit"]
    ).split()
    if record["path"] not in changed:
        sys.exit(f"question {q['id']}: commit {source['commit']} did not change {record['path']}")


def _ancestors(record: str, edges: dict[str, list[str]]) -> set[str]:
    out, todo = set(), list(edges.get(record, []))
    while todo:
        item = todo.pop()
        if item not in out:
            out.add(item)
            todo.extend(edges.get(item, []))
    return out


def _questions() -> list[dict[str, Any]]:
    path = DATA / "questions.jsonl"
    if not path.exists():
        return []
    rows = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if raw.strip():
            row = json.loads(raw)
            for key in ("id", "project", "query", "relevant", "category", "source"):
                if key not in row:
                    sys.exit(f"questions.jsonl line {n}: no {key}")
            rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--out", type=Path, default=DATA)
    parser.add_argument("--check", action="store_true", help="fail if the written files differ")
    args = parser.parse_args()
    files = build(args.mirrors)
    args.out.mkdir(parents=True, exist_ok=True)
    stale = []
    for name, rows in files.items():
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        target = args.out / name
        if args.check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            target.write_text(text, encoding="utf-8")
    if stale:
        sys.exit(f"out of date: {', '.join(stale)}")
    corpus = files["corpus.jsonl"]
    chains = sum(1 for r in corpus if r.get("supersedes"))
    queries = len(files["queries.jsonl"])
    print(f"{len(corpus)} records, {chains} superseding records, {queries} queries")


if __name__ == "__main__":
    main()
