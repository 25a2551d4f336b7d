"""Data loss from inputs or commands (issue 24, item 5; the tracer's --force and hand split are issue 25's):
the same task ids in two selected domains, a task file half written, deleting a run that is running."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import RunConfig
from tau_emotion.core.runner import RunError, prepare_run, run_lock
from tau_emotion.core.state import write_text_atomic

TWIN = '''
from tau_emotion.core import hookimpl
from tau_emotion.core.domain import Domain

@hookimpl
def tau_register_domains(register):
    register(Domain("mock_twin", tools="tau_emotion.domain_packs.mock.tools", package="tau_emotion.domain_packs.mock",
                    load_tasks=lambda: [t.model_copy(update={"domain": "mock_twin"}) for t in _mock_tasks()]))

def _mock_tasks():
    from tau_emotion.core.domain import load_tasks_file
    from importlib.resources import files
    return load_tasks_file(files("tau_emotion.domain_packs.mock").joinpath("data/tasks.json"), "mock")
'''


def test_the_same_task_ids_in_two_selected_domains_are_refused_before_any_trial(plugin_module, tmp_path):
    plugin_module("mock_twin_pack", TWIN)
    pm = get_plugin_manager(["mock", "mock_twin_pack"])
    config = RunConfig(plugins=["mock", "mock_twin_pack"], trials=2, options={"progress": {"no_progress": True}})
    with pytest.raises(RunError, match="'mock-001' in mock .* and mock_twin"):
        prepare_run(config, str(tmp_path / "dup.sqlite"), pm=pm)
    assert not (tmp_path / "dup.sqlite").exists() or b"mock-001" not in (tmp_path / "dup.sqlite").read_bytes()


def test_an_atomic_write_that_fails_leaves_the_old_file_whole(tmp_path):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([{"id": "hand-1"}]))
    script = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000)); "
              "import signal; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
              "from tau_emotion.core.state import write_text_atomic; "
              f"write_text_atomic({str(path)!r}, 'x' * 100000)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "file-size limit" in done.stderr and "the earlier file is unchanged" in done.stderr
    assert json.loads(path.read_text()) == [{"id": "hand-1"}]
    assert [p.name for p in tmp_path.iterdir()] == ["tasks.json"]  # no temporary left behind
    write_text_atomic(path, "[]\n")
    assert path.read_text() == "[]\n"


def test_deleting_a_run_that_is_running_is_refused(tau, tmp_path):
    db = str(tmp_path / "live.sqlite")
    tau("run", "--plugins", "mock", "--trials", "1", "--tasks", "1", "--db", db, "--no-progress")
    run_id = json.loads(tau("runs", "--json", "--db", db).output)[-1]["run_id"]
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                               "from tau_emotion.core.runner import run_lock\n"
                               f"with run_lock({db!r}, {run_id!r}):\n"
                               "    print('held', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        refused = tau("runs", "--delete", run_id, "--db", db)
        assert refused.exit_code == 1 and f"process {holder.pid}" in refused.output
        for reference in ("latest", run_id.rsplit("-", 1)[-1][:4]):  # a run reference names the live run too
            refused = tau("runs", "--delete", reference, "--db", db)
            assert refused.exit_code == 1 and f"run '{run_id}' is running now" in refused.output
        assert run_id in tau("runs", "--json", "--db", db).output
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.1)
    with run_lock(db, "probe"):  # the lock machinery still works for others
        pass
    deleted = tau("runs", "--delete", run_id, "--db", db)
    assert deleted.exit_code == 0 and run_id not in tau("runs", "--json", "--db", db).output
