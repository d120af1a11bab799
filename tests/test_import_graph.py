"""The import graph tells the truth: an import inside a function hides a dependency from
whoever reads the top of the module (and can hide a circle), so each one is listed in
tests/function_imports.txt, with why such imports exist, and this test keeps the list exact:
a new one fails until it is listed (or moved to the top of its module), and one that is gone
fails until it is struck off, so the list only shrinks."""

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "contextd"
LISTED = Path(__file__).with_name("function_imports.txt")


def function_level_imports() -> set[str]:
    """`module.py: imported.module` for every import inside a function of the package."""
    found: set[str] = set()
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(SOURCE.parent).as_posix()
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import):
                    found.update(f"{where}: {alias.name}" for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module:
                    found.add(f"{where}: {'.' * node.level}{node.module}")
    return found


def listed() -> set[str]:
    lines = LISTED.read_text(encoding="utf-8").splitlines()
    return {line for line in lines if line and not line.startswith("#")}


def test_every_import_inside_a_function_is_listed_and_every_listed_one_exists() -> None:
    found, known = function_level_imports(), listed()
    assert not found - known, (
        f"imports inside functions not listed in {LISTED.name}: {sorted(found - known)}"
    )
    assert not known - found, (
        f"listed in {LISTED.name} but gone (strike them off): {sorted(known - found)}"
    )
