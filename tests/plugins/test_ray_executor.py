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


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")]

SCRIPT = textwrap.dedent("""
    import json, os, sys
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
                      "avg": summary["avg_at_k"], "errors": summary.get("errors", 0),
                      "env_left": "RAY_USAGE_STATS_ENABLED" in os.environ}))
""")


def _in_namespace(tmp_path: Path, script: str, pythonpath: list[Path] = ()) -> dict:
    """Run `script` (with the results database path as its argument) in a loopback-only network namespace with a
    temporary HOME; its last stdout line is JSON."""
    short = Path(tempfile.mkdtemp(prefix="tr", dir="/tmp"))  # Ray's socket paths must stay under 107 bytes
    home = tmp_path / "home"
    home.mkdir()
    (home / "ray_bootstrap_config.yaml").write_text("cluster_name: offline\n")
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": os.pathsep.join(map(str, [ROOT, *pythonpath])),
           "RAY_TMPDIR": str(short)}
    env.pop("RAY_USAGE_STATS_ENABLED", None)  # the executor turns them off for the Ray it starts
    path = tmp_path / "ray_run.py"
    path.write_text(script)
    command = f"ip link set lo up && exec {shlex.quote(sys.executable)} {path} {tmp_path / 'r.sqlite'}"
    try:
        done = subprocess.run(["unshare", "-n", "sh", "-c", command], capture_output=True, text=True, env=env,
                              timeout=300, cwd=tmp_path)
    finally:
        shutil.rmtree(short, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_trials_run_on_ray_workers_and_resume(tmp_path):
    figures = _in_namespace(tmp_path, SCRIPT)
    assert figures == {"first": 5, "pending": 3, "trials": 8, "avg": 1.0, "errors": 0, "env_left": False}, figures


SLOW_PACK = textwrap.dedent('''
    """A pack whose tools loop for ever or sleep, and an agent that calls them (for --tool-timeout under Ray)."""
    import threading
    import time

    from tau_emotion.core import hookimpl
    from tau_emotion.core.domain import Domain
    from tau_emotion.core.models import Message, Task, ToolCall
    from tau_emotion.core.state import Database
    from tau_emotion.core.tools import tool


    @tool
    def spin(db, n: int) -> str:
        """Loop for ever."""
        while True:
            n += 1


    @tool
    def nap(db, seconds: float) -> str:
        """Sleep."""
        time.sleep(seconds)
        return "rested"


    @tool
    def where(db) -> str:
        """Which thread runs tools."""
        return "main thread" if threading.current_thread() is threading.main_thread() else "other thread"


    def _call(name, **arguments):
        return Message(role="assistant", tool_calls=[ToolCall(id=name, name=name, arguments=arguments)])


    class Caller:
        script = [_call("where"), _call("spin", n=0), _call("nap", seconds=1.5),
                  Message(role="assistant", content="bye ###STOP###")]

        def __init__(self, view):
            self.i = 0

        async def act(self, messages):
            self.i += 1
            return self.script[min(self.i, len(self.script)) - 1]


    @hookimpl
    def tau_register_domains(register):
        tasks = [Task(id=f"slow-{i}", domain="slow", user={"instruction": "hi"}) for i in range(2)]
        register(Domain("slow", tools=[spin, nap, where], load_database=lambda: Database({"t": {}}),
                        load_policy=lambda: "policy", load_tasks=lambda: tasks))


    @hookimpl
    def tau_register_agents(register):
        register("caller", Caller)
''')

DEADLINE_SCRIPT = textwrap.dedent("""
    import json, sys, time
    from tau_emotion.core.models import RunConfig
    from tau_emotion.core.runner import prepare_run, run_sync

    config = RunConfig(plugins=["slow_pack"], agent="caller", trials=1, executor="ray", concurrency=2,
                       tool_timeout=0.3, options={"ray": {"ray_workers": 1}, "progress": {"no_progress": True}})
    run = prepare_run(config, sys.argv[1])
    started = time.perf_counter()
    run_sync(run)
    tools = {r.task_id: [[m.content, m.error] for m in r.messages if m.role == "tool"]
             for r in run.store.results(run.run_id)}
    print(json.dumps({"tools": tools, "seconds": time.perf_counter() - started}))
""")


def test_tool_deadlines_hold_under_ray(tmp_path):
    """On a Ray worker the episode loop runs off the main thread: a runaway tool is still stopped at
    --tool-timeout and a sleep past it is a tool error."""
    (tmp_path / "slow_pack.py").write_text(SLOW_PACK)
    figures = _in_namespace(tmp_path, DEADLINE_SCRIPT, pythonpath=[tmp_path])
    assert set(figures["tools"]) == {"slow-0", "slow-1"}
    for calls in figures["tools"].values():
        assert calls[0] == ["other thread", False]  # the case the SIGALRM watchdog could not cover
        assert [error for _, error in calls[1:]] == [True, True]
        assert all("took longer than 0.3 s" in text for text, _ in calls[1:]), calls
