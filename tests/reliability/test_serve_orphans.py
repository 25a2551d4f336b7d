"""A managed model server never outlives its run (issue 24, item 8): a launcher that backgrounds the server and
exits, a child started with `setsid`, a SIGKILL of tau; a port another server holds is an error."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tau_emotion.core.errors import TauError
from tau_emotion.plugins.serve import managed_server

FAKE = Path(__file__).resolve().parents[1] / "fixtures" / "fake_vllm.py"


def _with_marker(marker: str) -> list[int]:
    """Pids whose command line holds `marker`."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline and int(name) != os.getpid():
                found.append(int(name))
    return found


def _gone(marker: str, within: float = 20.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _with_marker(marker):
            return True
        time.sleep(0.2)
    return False


@pytest.fixture
def launcher(tmp_path):
    """An executable that starts the fake server in its own session, in the background, and exits at once."""
    path = tmp_path / "launch.sh"
    path.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        setsid {sys.executable} {FAKE} "$@" >/dev/null 2>&1 < /dev/null &
        exit 0
    """))
    path.chmod(0o755)
    return str(path)


def test_a_backgrounded_setsid_server_is_stopped_with_the_run(launcher, tmp_path):
    marker = f"orphan-{secrets.token_hex(4)}"
    with managed_server(marker, executable=launcher, log=str(tmp_path / "s.log"), ready_timeout=30) as base:
        assert base.startswith("http://127.0.0.1:")
        assert _with_marker(marker), "the server should be running"
    assert _gone(marker), f"left running: {_with_marker(marker)}"


def test_a_sigkill_of_tau_ends_the_server(launcher, tmp_path):
    marker = f"killed-{secrets.token_hex(4)}"
    script = (f"from tau_emotion.plugins.serve import managed_server\n"
              f"import time\n"
              f"with managed_server({marker!r}, executable={launcher!r}, log={str(tmp_path / 'k.log')!r}, "
              f"ready_timeout=30):\n    print('ready', flush=True)\n    time.sleep(120)\n")
    tau = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert tau.stdout.readline().strip() == "ready"
        assert _with_marker(marker)
        tau.send_signal(signal.SIGKILL)
        tau.wait()
        assert _gone(marker), f"left running after SIGKILL of tau: {_with_marker(marker)}"
    finally:
        tau.kill()
        for pid in _with_marker(marker):
            os.kill(pid, signal.SIGKILL)


def test_a_port_already_in_use_is_an_error(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(TauError, match=f"port {port} on 127.0.0.1 is already in use"), \
                managed_server("m", port=port, executable=f"{sys.executable} {FAKE}", log=str(tmp_path / "p.log")):
            pass


def test_a_missing_executable_or_unwritable_log_is_one_line(tmp_path):
    with pytest.raises(TauError, match="cannot start no-such-vllm-binary: not found"), \
            managed_server("m", executable="no-such-vllm-binary", log=str(tmp_path / "x.log")):
        pass
    with pytest.raises(TauError, match="cannot write the server log"), \
            managed_server("m", executable=f"{sys.executable} {FAKE}", log="/proc/nope/x.log"):
        pass
