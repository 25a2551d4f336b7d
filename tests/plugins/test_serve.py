"""`tau serve MODEL`: a managed model server (a CPU stand-in for vLLM), its endpoint, readiness and teardown."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tau_emotion.core.errors import TauError
from tau_emotion.plugins.serve import managed_server

FAKE = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'fixtures' / 'fake_vllm.py'}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_tau_serve_prints_the_endpoint_and_stops_the_server_on_ctrl_c(tmp_path):
    proc = subprocess.Popen([str(Path(sys.executable).parent / "tau"), "serve", "tiny", "--executable", FAKE,
                             "--log", str(tmp_path / "s.log"), "--ready-timeout", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        line = json.loads(proc.stdout.readline())
        assert line["model"] == "hosted_vllm/tiny" and line["api_base"].startswith("http://127.0.0.1:")
        with urllib.request.urlopen(line["api_base"] + "/models", timeout=5) as reply:
            assert json.load(reply)["data"][0]["id"] == "tiny"
        server_pid = int((tmp_path / "s.log").read_text().split(" pid ")[1].split()[0])
        proc.send_signal(signal.SIGINT)
        # the designed worst case is the supervisor's 8 s grace inside `stop`'s 15 s one, then a SIGKILL: a loaded
        # 2-core CI machine once took over 20 s, so the wait leaves room above that path
        assert proc.wait(45) == 0
        deadline = time.monotonic() + 10
        while _alive(server_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(server_pid)
        assert "serving tiny" in (tmp_path / "s.log").read_text()
    finally:
        proc.kill()


def test_a_server_that_dies_names_its_log(tmp_path):
    with pytest.raises(TauError, match=r"(?s)exited with code 3 .*s\.log:\n.*CUDA out of memory"), \
            managed_server("tiny", executable=FAKE, log=str(tmp_path / "s.log"), extra=("--fail",)):
        pass


def test_readiness_timeout_and_teardown(tmp_path):
    with pytest.raises(TauError, match="did not answer"), \
            managed_server("tiny", executable=FAKE, log=str(tmp_path / "s.log"), ready_timeout=0.5,
                           extra=("--slow", "30")):
        pass


def _server_pid(log: Path) -> int:
    return int(log.read_text().split(" pid ")[1].split()[0])


def test_tau_run_serve_starts_the_server_points_the_agent_at_it_and_stops_it_at_run_end(tau, tmp_path):
    log = tmp_path / "s.log"
    result = tau("run", "--plugins", "mock", "--agent", "tool_calling", "--agent-model", "hosted_vllm/tiny",
                 "--user", "scripted", "--trials", "1", "--serve", "vllm", "--serve-executable", FAKE,
                 "--serve-log", str(log), "--serve-ready-timeout", "30", "--no-progress", "--summary-json", "s.json")
    assert result.exit_code == 0, result.output
    assert "serving tiny at http://127.0.0.1:" in result.output
    # the run is over: the server was stopped then (not at interpreter exit)
    assert not _alive(_server_pid(log))
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["n_trials"] == 4 and summary["errors"] == 0
    # the served endpoint is what the run's metadata recorded; the stored configuration keeps what was given
    # (no plugin writes the agent role's options), so a resume starts a fresh server
    [run] = json.loads(tau("runs", "--json").output)
    assert run["config"]["options"]["agent"] == {"agent_model": "hosted_vllm/tiny"}
    recorded = run["meta"]["models"]
    assert f"serving tiny on {recorded['agent_api_base'].split(':')[2].split('/')[0]}" in log.read_text()
    assert recorded["agent_model"] == "hosted_vllm/tiny" and recorded["agent_api_base"].startswith("http://127.0.0.1:")


def test_tau_run_serve_serves_a_path_under_the_agent_model_name(tmp_path):
    from tau_emotion.core.models import RunConfig
    from tau_emotion.plugins import serve

    config = RunConfig(plugins=["mock"], agent="tool_calling", options={
        "agent": {"agent_model": "hosted_vllm/qwen"},
        "serve": {"serve": "vllm", "serve_model": str(tmp_path / "weights"), "serve_executable": FAKE,
                  "serve_log": str(tmp_path / "s.log"), "serve_ready_timeout": 30}})
    try:
        serve.start_for_run(config)
        assert f"loading {tmp_path / 'weights'}" in (tmp_path / "s.log").read_text()
        from tau_emotion.core.roles import role_settings

        settings = role_settings(config, "agent")
        assert settings.model == "hosted_vllm/qwen" and "agent_api_base" not in config.options["agent"]
        base = settings.api_base
        with urllib.request.urlopen(base + "/models", timeout=5) as reply:
            assert [m["id"] for m in json.load(reply)["data"]] == ["qwen"]  # --served-model-name qwen
        pid = _server_pid(tmp_path / "s.log")
    finally:
        serve.stop_run_servers()
    assert not _alive(pid)


def test_tau_run_serve_for_both_plays_agent_and_user_on_one_server(tau, tmp_path):
    log = tmp_path / "s.log"
    result = tau("run", "--plugins", "mock", "--agent", "tool_calling", "--user", "llm", "--user-model", "openai/tiny",
                 "--trials", "1", "--tasks", "1", "--serve", "vllm", "--serve-for", "both", "--serve-executable", FAKE,
                 "--serve-log", str(log), "--serve-ready-timeout", "30", "--no-progress")
    assert result.exit_code == 0, result.output
    assert "serving tiny at http://127.0.0.1:" in result.output and "for the agent and user" in result.output
    models = json.loads(tau("runs", "--json").output)[0]["meta"]["models"]
    assert models["agent_api_base"] == models["user_api_base"]
    assert models["agent_model"] == models["user_model"] == "hosted_vllm/tiny"


@pytest.mark.parametrize(("args", "message"), [
    (["--agent", "oracle"], "serves a model to the agent, but the agent is 'oracle': use --agent tool_calling"),
    (["--agent", "tool_calling"], "--serve needs a model to serve"),
    (["--serve-for", "user", "--user", "scripted"], "the user is 'scripted': use --user llm"),
    (["--agent", "tool_calling", "--agent-model", "a", "--user", "llm", "--user-model", "b", "--serve-for", "both"],
     "the agent and user models differ"),
])
def test_tau_run_serve_errors_are_one_line(tau, args, message):
    result = tau("run", "--plugins", "mock", "--serve", "vllm", "--serve-executable", FAKE, "--no-progress", *args)
    assert result.exit_code != 0 and message in result.output
    assert "Traceback" not in result.output
