"""What code a record names: a constraint's scope globs, and the paths and symbols in its text.

Paths are relative (`src/billing/invoice.py`, `db/migrations/`, `pyproject.toml`); absolute
ones and URLs are routes or links, not files of the project. Symbols are identifiers written
as code: in backticks (`parse_when`), called (`parse_when()`), or snake_case (`needs_rehash`).
A capitalised product name (PostgreSQL) is not a symbol: it changes in comments too often.
"""

import fnmatch
import posixpath
import re

from msgspec import Struct

from contextd.models import ConstraintBody, Record, body_to_dict

__all__ = ["Anchors", "anchors_of", "path_matches"]

_EXTENSIONS = (
    "py|pyi|js|jsx|mjs|cjs|ts|tsx|go|rs|java|kt|kts|rb|php|c|h|cc|cpp|hpp|cs|swift|scala|m|"
    "sql|sh|bash|zsh|ps1|toml|yaml|yml|json|jsonc|ini|cfg|conf|env|md|rst|txt|lock|tf|hcl|"
    "proto|graphql|gql|css|scss|sass|less|html|vue|svelte|mjml|xml|gradle|cmake|mk|dockerfile"
)
# a/b/c.ext, a/b/, or a bare file name with a known extension; not preceded by ://, / or @
_PATH = re.compile(
    r"(?<![\w/.@:~$-])"
    r"((?:\.{0,2}[\w*-][\w.*-]*/)+(?:[\w*-][\w.*-]*)?"
    rf"|[\w-][\w.-]*\.(?:{_EXTENSIONS})\b"
    r"|Dockerfile|Makefile|Justfile|Procfile)"
    r"(?![\w/])",
    re.IGNORECASE,
)
_BACKTICKED = re.compile(r"`([^`\n]{2,80})`")
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*(?:\(\))?$")
_CALLED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(\)")
_SNAKE = re.compile(r"(?<![\w./-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![\w/.(-])")
_MIN_SYMBOL = 4


class Anchors(Struct, frozen=True):
    paths: tuple[str, ...]  # files, or folders (ending in "/"), relative to the project
    globs: tuple[str, ...]  # a constraint's scope, matched as .gitignore lines
    symbols: tuple[str, ...]  # identifiers named in the text

    def __bool__(self) -> bool:
        return bool(self.paths or self.globs or self.symbols)


def anchors_of(record: Record) -> Anchors:
    """The code `record` names."""
    body = record.body
    globs = body.scope if isinstance(body, ConstraintBody) else ()
    text = _text(record)
    paths = [m.group(1) for m in _PATH.finditer(text)]
    symbols = [_symbol(m.group(1)) for m in _BACKTICKED.finditer(text)]
    symbols += [_symbol(m.group(1)) for m in _CALLED.finditer(text)]
    symbols += [m.group(1) for m in _SNAKE.finditer(text)]
    clean_paths = [p for p in (_clean_path(p) for p in paths) if p]
    named = {posixpath.basename(p.rstrip("/")) for p in clean_paths}
    kept = [s for s in symbols if s and len(s) >= _MIN_SYMBOL and s not in named]
    return Anchors(tuple(dict.fromkeys(clean_paths)), tuple(globs), tuple(dict.fromkeys(kept)))


def path_matches(anchor: str, path: str) -> bool:
    """Whether a changed file `path` is what the path `anchor` names: the file itself, a file
    under a named folder, a file of that name anywhere (a bare name), or a wildcard match."""
    if any(c in anchor for c in "*?["):
        return fnmatch.fnmatchcase(path, anchor) or fnmatch.fnmatchcase(path, anchor + "/*")
    if anchor.endswith("/"):
        return path.startswith(anchor)
    if "/" not in anchor:
        return posixpath.basename(path) == anchor
    return path == anchor or path.startswith(anchor + "/")


def _clean_path(raw: str) -> str | None:
    path = raw.strip().rstrip(".,;:)")
    while path.startswith("./"):
        path = path[2:]
    if not path or path.startswith(("../", "/")) or "//" in path:
        return None
    if "/" not in path.rstrip("/") and not path.endswith("/") and "." not in path:
        return path if path in ("Dockerfile", "Makefile", "Justfile", "Procfile") else None
    return path


def _symbol(raw: str) -> str | None:
    """The identifier to look for in code: the telling part of a dotted name, no call."""
    text = raw.strip().removesuffix("()")
    if not _IDENTIFIER.match(text + ("()" if raw.strip().endswith("()") else "")):
        return None
    parts = text.split(".")
    telling = [p for p in parts if "_" in p or any(c.isupper() for c in p[1:])]
    return (telling or [max(parts, key=len)])[-1]


def _text(record: Record) -> str:
    parts = [record.title, *record.retrieval_hints]
    for name, value in body_to_dict(record.body).items():
        if name == "scope":
            continue
        if isinstance(value, list):
            parts.extend(str(v) for v in value)
        elif isinstance(value, str):
            parts.append(value)
    return "\n".join(parts)
