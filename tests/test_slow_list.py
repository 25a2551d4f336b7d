"""tests/slow_tests.txt stays true: every line names a test file, or a test function that file defines."""

import ast
from pathlib import Path

from tests.conftest import slow_list

ROOT = Path(__file__).resolve().parents[1]


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        names |= {f"{cls.name}::{n.name}" for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    return names


def test_every_line_of_the_slow_list_names_a_test():
    stale = []
    entries = slow_list()
    assert len(entries) > 50
    for entry in sorted(entries):
        file, _, name = entry.partition("::")
        path = ROOT / file
        if not path.is_file() or (name and name.split("[", 1)[0] not in _functions(path)):
            stale.append(entry)
    assert not stale, f"tests/slow_tests.txt names tests that no longer exist: {stale}"
