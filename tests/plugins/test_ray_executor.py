"""The `ray` executor, run only inside a loopback-only network namespace.

Ray probes cloud metadata addresses at every start, so it never starts here outside `unshare -n`
(root), with a dummy `~/ray_bootstrap_config.yaml` in a temporary HOME. Skipped, saying why, where
ray is not installed or a namespace cannot be made.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _why_not() -> str | None:
    if find_spec("ray") is None:
        return "ray is not installed (pip install -e '.[ray]')"
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "unshare or ip is missing: no loopback-only network namespace for Ray"
    if os.geteuid() != 0:
        return "not root: `unshare -n` cannot make a loopback-only network namespace"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        return f"unshare -n fails here: {probe.stderr.decode().strip()[:100]}"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")

SCRIPT = textwrap.dedent("""
    import json, sys
    from tau_emotion.core.models import RunConfig
    from tau_emotion.core.runner import prepare_run, resume_run, run_sync

    db = sys.argv[1]
    config = RunConfig(plugins=["mock"], trials=2, executor="ray", concurrency=4,
                       options={"ray": {"ray_workers": 2}, "progress": {"no_progress": True}})
    run = prepare_run(config, db)
    run.pending = run.pending[:5]  # as if the run was killed after 5 of 8 trials
    run_sync(run)
    first = len(run.store.results(run.run_id))
    resumed = resume_run(run.run_id, db)
    pending = len(resumed.pending)
    summary = run_sync(resumed)
    print(json.dumps({"first": first, "pending": pending, "trials": summary["n_trials"],
                      "avg": summary["avg_at_k"], "errors": summary.get("errors", 0)}))
""")


def test_trials_run_on_ray_workers_and_resume(tmp_path):
    short = Path(tempfile.mkdtemp(prefix="tr", dir="/tmp"))  # Ray's socket paths must stay under 107 bytes
    home = tmp_path / "home"
    home.mkdir()
    (home / "ray_bootstrap_config.yaml").write_text("cluster_name: offline\n")
    env = {**os.environ, "HOME": str(home), "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": str(ROOT),
           "RAY_TMPDIR": str(short)}
    script = tmp_path / "ray_run.py"
    script.write_text(SCRIPT)
    command = f"ip link set lo up && exec {shlex.quote(sys.executable)} {script} {tmp_path / 'r.sqlite'}"
    try:
        done = subprocess.run(["unshare", "-n", "sh", "-c", command], capture_output=True, text=True, env=env,
                              timeout=300, cwd=tmp_path)
    finally:
        shutil.rmtree(short, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures == {"first": 5, "pending": 3, "trials": 8, "avg": 1.0, "errors": 0}, figures
