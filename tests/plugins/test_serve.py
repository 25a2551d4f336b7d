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
        assert proc.wait(20) == 0
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
