"""Issue 33: what the Tracer writes reaches other folders only through the typed plan, never as a `meta` key.

Every module outside `tracer/` (core, plugins, emotion_pack, domain_packs, trainers, templates) is parsed, and
any read of a Tracer-owned `meta` key (`task.meta["refused"]`, `task.meta.get("feeling")`, `meta.pop(...)`) fails
the test with the file and line. import-linter's `plan` contract keeps the same folders from importing the
Tracer's writers.
"""

import ast
from pathlib import Path

from tau_emotion.tracer.build import TRACER_META

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("core", "plugins", "emotion_pack", "domain_packs", "trainers", "templates")


def meta_reads(source: str, keys=TRACER_META) -> list[tuple[int, str]]:
    """(line, key) of every read of a `keys` key from an attribute `meta`: `x.meta[K]`, `x.meta.get(K)` and the like
    (pop, setdefault, `in`). A local named `meta` is not looked at: the run metadata the report plugin reads is one."""
    found = []
    for node in ast.walk(ast.parse(source)):
        target, key = None, None
        if isinstance(node, ast.Subscript):
            target, key = node.value, node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                and node.func.attr in ("get", "pop", "setdefault"):
            target, key = node.func.value, node.args[0]
        elif isinstance(node, ast.Compare) and len(node.comparators) == 1 and isinstance(node.ops[0], ast.In):
            target, key = node.comparators[0], node.left
        if isinstance(target, ast.Attribute) and target.attr == "meta" and isinstance(key, ast.Constant) and key.value in keys:
            found.append((node.lineno, key.value))
    return found


def test_the_scanner_finds_each_kind_of_read():
    source = ('a = task.meta["refused"]\nb = view.task.meta.get("intent_gold")\nc = t.meta.pop("feeling", None)\n'
              'd = "decisions" in task.meta\ne = task.meta.get("notes")\nf = meta["refused"]\n')
    assert meta_reads(source) == [(1, "refused"), (2, "intent_gold"), (3, "feeling"), (4, "decisions")]


def test_no_tracer_meta_key_is_read_outside_the_tracer():
    reads = [f"{path.relative_to(ROOT)}:{line}: meta[{key!r}]"
             for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
             for line, key in meta_reads(path.read_text(encoding="utf-8"))]
    assert reads == [], "read the task's IntentPlan (Task.plan) instead:\n" + "\n".join(reads)
