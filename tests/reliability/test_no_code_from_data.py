"""No agent input reaches eval/exec, and nothing unpickles (failures 2 and 6), checked on the source of every module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tau_emotion.core

ROOT = Path(tau_emotion.core.__file__).resolve().parent.parent
PACKAGES = ("core", "plugins", "domain_packs", "emotion_pack", "tracer", "templates")
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__"}
FORBIDDEN_ATTRS = {("pickle", "load"), ("pickle", "loads"), ("pickle", "Unpickler"), ("joblib", "load"),
                   ("marshal", "loads"), ("dill", "load"), ("dill", "loads"), ("cloudpickle", "loads"),
                   ("shelve", "open")}


def _modules():
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def _offences(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in FORBIDDEN_CALLS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {func.id}()")
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                    (func.value.id, func.attr) in FORBIDDEN_ATTRS | {("builtins", n) for n in FORBIDDEN_CALLS}:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {func.value.id}.{func.attr}()")
            if isinstance(func, ast.Attribute) and func.attr == "load" and any(
                    isinstance(k, ast.keyword) and k.arg == "allow_pickle" and
                    not (isinstance(k.value, ast.Constant) and k.value.value is False) for k in node.keywords):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: load(allow_pickle=...) not False")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            if any(n.split(".")[0] in ("pickle", "dill", "cloudpickle", "marshal", "shelve") for n in names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: imports {', '.join(names)}")
    return found


def test_the_scan_sees_every_package():
    modules = list(_modules())
    assert len(modules) > 50
    assert ROOT / "domain_packs" / "classic" / "calculator.py" in modules


@pytest.mark.slow
def test_no_module_evaluates_code_or_unpickles():
    offences = [o for path in _modules() for o in _offences(path)]
    assert not offences, "\n".join(offences)


def test_the_scan_catches_what_it_forbids(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import pickle\nimport numpy as np\nx = eval(s)\npickle.loads(b)\nnp.load(f, allow_pickle=True)\n")
    offences = _offences_in(bad)
    assert len(offences) == 4, offences


def _offences_in(path: Path) -> list[str]:
    global ROOT
    saved, ROOT = ROOT, path.parent
    try:
        return _offences(path)
    finally:
        ROOT = saved
