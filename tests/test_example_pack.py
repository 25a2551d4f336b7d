"""A real third-party pack, pip-installed, is found through its entry point and runs end to end."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "example_pack"


@pytest.mark.slow
def test_installed_third_party_pack_is_discovered_and_runs(tmp_path):
    target = tmp_path / "site"
    source = tmp_path / "example_pack"  # a build writes build/ and egg-info next to the sources: keep them here
    shutil.copytree(FIXTURE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    home = tmp_path / "home"  # and pip's build tools may write settings under HOME
    home.mkdir()
    build = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(target), str(source)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env={**os.environ, "HOME": str(home)})
    assert build.returncode == 0, build.stderr
    env = {**os.environ, "PYTHONPATH": str(target)}
    tau = [sys.executable, "-c", "from tau_emotion.core.cli import main; main()"]
    plugins = subprocess.run([*tau, "plugins"], env=env, capture_output=True, text=True, timeout=120)
    assert "example" in plugins.stdout and "tau-emotion-example 0.0.1" in plugins.stdout
    run = subprocess.run([*tau, "run", "--plugins", "example", "--trials", "2", "--no-progress",
                          "--db", str(tmp_path / "r.sqlite"), "--summary-json", str(tmp_path / "s.json")],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["by_domain"]["library"]["pass_hat_k"]["2"] == 1.0
