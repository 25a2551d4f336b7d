"""`tau new-pack` renders a pack that installs, passes the conformance suite and scores 1 with the oracle."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tau_emotion.domain_packs.conformance import CHECKS
from tau_emotion.plugins.new_pack import NewPackError, check_name, new_pack_command

TAU = [sys.executable, "-c", "from tau_emotion.core.cli import main; main()"]


@pytest.mark.parametrize("name", ["Acme", "1acme", "my-shop", "class", "_acme", ""])
def test_a_bad_name_is_refused_in_one_line(name):
    with pytest.raises(NewPackError, match="lower-case Python identifier"):
        check_name(name)


def test_an_existing_folder_is_not_overwritten(tmp_path):
    (tmp_path / "acme").mkdir()
    result = CliRunner().invoke(new_pack_command, ["acme", "--dir", str(tmp_path)])
    assert result.exit_code == 1
    assert "already exists" in result.output and not any((tmp_path / "acme").iterdir())


DOCS = Path(__file__).resolve().parents[1] / "docs" / "writing-a-pack.md"
#: the steps of docs/writing-a-pack.md section 3: "Append to `PATH`:" or "Replace `PATH` with ...:", then a code block
STEP = re.compile(r"^(Append to|Replace) `([^`]+)`(?:[^\n]|\n(?!\n))*?:\n\n```\w*\n(.*?)```", re.S | re.M)


def doc_steps(name: str) -> list[tuple[str, str, str]]:
    """(verb, path, text) of every file edit the docs give, for the pack `name` (the docs' pack is acme)."""
    return [(verb, path.replace("acme", name), text.replace("acme", name)) for verb, path, text in STEP.findall(
        DOCS.read_text(encoding="utf-8"))]


@pytest.mark.slow
def test_a_newcomers_first_hour_scaffold_add_a_tool_build_both_splits_in_either_order(tmp_path):
    """The acceptance path of a pack author: scaffold, the docs' edits (nothing else), install, build train then
    test (the order that used to leak users), conformance, and the oracle at 1.000 on the built test split."""
    started = time.perf_counter()
    home = tmp_path / "home"  # pip's build tools may write settings under HOME
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(tmp_path / "site"), "OMP_NUM_THREADS": "1"}
    env.pop("TAU_DB", None)

    def tau(*args):
        return subprocess.run([*TAU, *args], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)

    new = tau("new-pack", "libdesk", "--dir", str(tmp_path))  # not the checkout: a stale *.egg-info would shadow
    assert new.returncode == 0, new.stderr
    steps = doc_steps("libdesk")
    assert [p for _, p, _ in steps] == ["tau_emotion_libdesk/tools.py", "tau_emotion_libdesk/data/policy.md",
                                        "tau_emotion_libdesk/data/graph.json", "tau_emotion_libdesk/data/procedure.json",
                                        "tau_emotion_libdesk/tracer_hints.py"]
    for verb, path, text in steps:
        target = tmp_path / "libdesk" / path
        target.write_text((target.read_text(encoding="utf-8") if verb == "Append to" else "") + text, encoding="utf-8")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(tmp_path / "site"), str(tmp_path / "libdesk")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert build.returncode == 0, build.stderr
    hand = tau("tracer", "build", "libdesk", "--split", "hand", "--n", "2", "--min-calls", "2")
    assert hand.returncode == 1 and "the Tracer did not build (libdesk-001, libdesk-002" in hand.stderr
    assert "--force" in hand.stderr
    graph = tau("tracer", "graph", "libdesk")
    assert "entry tools: get_member\n" in graph.stdout and "pause_membership" in graph.stdout
    train = tau("tracer", "build", "libdesk", "--split", "train", "--n", "12", "--min-calls", "2")
    assert train.returncode == 0, train.stderr
    test = tau("tracer", "build", "libdesk", "--split", "test", "--n", "10", "--min-calls", "2")
    assert test.returncode == 0, test.stderr
    assert re.search(r"\n    \w+ +\d+   e\.g\. \S", test.stdout)  # each rejection names its check and one example
    for split in ("test", "train"):
        audit = tau("tracer", "audit", "libdesk", "--split", split)
        assert audit.returncode == 0, audit.stdout
        assert "ok   user overlap" in audit.stdout and "ok   written entities" in audit.stdout
    assert "ok   decision rules" in tau("tracer", "audit", "libdesk", "--split", "test").stdout
    kinds = json.loads(tau("tracer", "audit", "libdesk", "--split", "train", "--json").stdout)
    assert "pause_membership" in json.dumps(kinds)  # the new task kind made it into the split
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "libdesk")],
                           env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert tests.returncode == 0, tests.stdout[-2000:]
    assert f"{len(CHECKS)} passed" in tests.stdout
    for split, n in (("test", 10), ("hand", 3)):
        run = tau("run", "--plugins", "libdesk", "--split", split, "--agent", "oracle", "--user", "scripted",
                  "--trials", "1", "--scoring", "strict", "--no-progress", "--db", str(tmp_path / "r.sqlite"), "--summary-json",
                  str(tmp_path / "s.json"))
        assert run.returncode == 0, run.stderr
        summary = json.loads((tmp_path / "s.json").read_text())
        assert summary["by_domain"]["libdesk"]["n_tasks"] == n and summary["avg_at_k"] == 1.0  # the procedure held
        assert summary["procedure"]["procedure_ok_rate"] == 1.0
    print(f"newcomer path: {time.perf_counter() - started:.1f}s")


def test_the_scaffold_declares_its_procedure(tmp_path):
    from tau_emotion.core.procedure import ProcedureSpec
    from tau_emotion.plugins.new_pack import render_pack

    target = render_pack("acme", tmp_path)
    spec = ProcedureSpec.model_validate_json((target / "tau_emotion_acme" / "data" / "procedure.json").read_text())
    assert spec.rules == ["identify_before", "confirm_before_write", "inform_before_decide", "own_records"]
    assert set(spec.confirm_before_write) == set(spec.own_records.writes) == {"change_plan"}


def test_every_scaffold_template_is_package_data():
    import fnmatch
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["*"]
    for path in (root / "templates" / "new_pack").rglob("*"):
        rel = path.relative_to(root / "templates").as_posix()
        if path.is_file() and "__pycache__" not in rel:
            assert any(fnmatch.fnmatchcase(rel, g) and rel.count("/") == g.count("/") for g in globs), rel
