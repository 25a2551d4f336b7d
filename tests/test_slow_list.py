"""tests/slow_tests.txt stays true: every line names a test file, or a test function that file defines."""

import re
from functools import cache
from pathlib import Path

from tests.conftest import slow_list

ROOT = Path(__file__).resolve().parents[1]
DEF = re.compile(r"^(?:async\s+)?def\s+(test\w*)\s*\(", re.MULTILINE)


@cache
def _functions(path: Path) -> frozenset[str]:
    return frozenset(DEF.findall(path.read_text(encoding="utf-8")))  # top-level test functions


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
