"""`tau new-pack` renders a pack that installs, passes the conformance suite and scores 1 with the oracle."""

import json
import os
import subprocess
import sys

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


@pytest.mark.slow
def test_new_pack_installs_conforms_builds_a_tracer_split_and_scores_one(tmp_path):
    home = tmp_path / "home"  # pip's build tools may write settings under HOME
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(tmp_path / "site"), "OMP_NUM_THREADS": "1"}
    new = subprocess.run([*TAU, "new-pack", "acme", "--dir", str(tmp_path)], env=env, capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)  # not the checkout: a stale *.egg-info there would shadow entry points
    assert new.returncode == 0, new.stderr
    build = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(tmp_path / "site"), str(tmp_path / "acme")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert build.returncode == 0, build.stderr
    # a Tracer-built split, written into the installed copy, so the conformance tests below also audit it
    build = subprocess.run([*TAU, "tracer", "build", "acme", "--split", "train", "--n", "6", "--min-calls", "2"],
                           env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    assert "6 task(s) accepted" in build.stdout
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "acme")],
                           env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert tests.returncode == 0, tests.stdout[-2000:]
    assert f"{len(CHECKS)} passed" in tests.stdout
    domains = subprocess.run([*TAU, "domains"], env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert any(line.split()[:1] == ["acme"] for line in domains.stdout.splitlines()), domains.stdout
    run = subprocess.run([*TAU, "run", "--plugins", "acme", "--agent", "oracle", "--user", "scripted", "--trials", "1",
                          "--no-progress", "--db", str(tmp_path / "r.sqlite"), "--summary-json", str(tmp_path / "s.json")],
                         env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["by_domain"]["acme"]["mean_reward"] == 1.0
    assert summary["by_domain"]["acme"]["n_tasks"] == 2


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
