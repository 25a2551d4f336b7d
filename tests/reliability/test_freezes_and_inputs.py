"""Things that froze a run or ended it with a traceback (issue 24, items 4, 9 and 10): a trickling /models
preflight, an infinite --retry-wait, FIFO data files, task ids that are not printable text, JSON too deep
or numbers too long to read."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from tau_emotion.core.cli import build_cli
from tau_emotion.core.domain import parse_tasks
from tau_emotion.core.errors import DataError, TauError
from tau_emotion.core.models import ModelSettings, RunConfig
from tau_emotion.core.state import read_json
from tau_emotion.plugins.model_calls import ModelCallError, RetryOptions, preflight
from tau_emotion.plugins.score import read_messages


@pytest.fixture
def trickling_server():
    """Answers GET /models with one header byte every 0.5 s, forever (until the test ends)."""
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 1000:
                if stop.is_set():
                    return
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.5)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    stop.set()
    server.shutdown()


def test_a_trickling_models_endpoint_fails_the_preflight_within_its_total_timeout(trickling_server):
    settings = ModelSettings(model="openai/m", api_base=trickling_server, api_key="k")
    started = time.monotonic()
    with pytest.raises(ModelCallError, match="no complete answer within 1 s"):
        preflight(settings, RunConfig(), "agent", timeout=1.0)
    assert time.monotonic() - started < 3


def test_the_preflight_does_not_follow_a_redirect_with_the_key():
    """Failure: urllib followed a 302 to another origin and sent it the Authorization header."""
    seen: list[str | None] = []

    class Other(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            seen.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    other = ThreadingHTTPServer(("127.0.0.1", 0), Other)
    threading.Thread(target=other.serve_forever, daemon=True).start()

    class Redirect(Other):
        def do_GET(self):  # noqa: N802
            self.send_response(302)
            self.send_header("Location", f"http://localhost:{other.server_address[1]}/v1/models")
            self.end_headers()

    first = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=first.serve_forever, daemon=True).start()
    try:
        settings = ModelSettings(model="openai/m", api_base=f"http://127.0.0.1:{first.server_address[1]}/v1",
                                 api_key="sk-secret-key-0123456789")
        preflight(settings, RunConfig(), "agent")
        assert seen == []
    finally:
        first.shutdown()
        other.shutdown()


def test_the_preflight_error_never_shows_url_credentials():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = ModelSettings(model="openai/m", api_base=f"http://admin:hunter2pass@127.0.0.1:{port}/v1")
    with pytest.raises(ModelCallError) as info:
        preflight(settings, RunConfig(), "agent", timeout=2)
    assert "hunter2pass" not in str(info.value) and f"127.0.0.1:{port}" in str(info.value)


@pytest.mark.parametrize("wait", [float("inf"), 1e300, float("nan")])
def test_an_endless_retry_wait_is_refused(wait):
    with pytest.raises(ValueError):
        RetryOptions(retry_wait=wait)


def test_retry_wait_inf_is_refused_on_the_command_line(tmp_path):
    result = CliRunner().invoke(build_cli(), ["run", "--plugins", "mock", "-o", "retry_wait=inf",
                                              "--db", str(tmp_path / "r.sqlite")])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert not (tmp_path / "r.sqlite").exists()


def test_a_fifo_tasks_file_or_messages_file_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "tasks.json"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(DataError, match="not a regular file"):
        read_json(fifo)
    with pytest.raises(TauError, match="not a regular file"):
        read_messages(str(fifo))
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "[" + "9" * 5000 + "]"])
def test_json_too_deep_or_a_huge_integer_is_one_line(tmp_path, text):
    path = tmp_path / "tasks.json"
    path.write_text(text)
    with pytest.raises(DataError, match="tasks.json"):
        read_json(path)
    with pytest.raises(TauError, match="tasks.json"):
        read_messages(str(path))


@pytest.mark.parametrize("ident", ["a\nFAKE LINE trial=0 reward=+1", "x\x1b[2J", "\ud800", "", "t" * 500])
def test_task_ids_must_be_printable_and_bounded(ident):
    task = {"id": ident, "domain": "mock", "user": {"instruction": "hi"}}
    with pytest.raises(DataError, match="field 'id'"):
        parse_tasks([task], "tasks.json", "mock")


def test_a_printable_unicode_task_id_loads():
    [task] = parse_tasks([{"id": "café-1", "domain": "mock", "user": {"instruction": "hi"},
                           "gold": {"outputs": ["1200"]}}], "t.json", "mock")
    assert task.id == "café-1"


def test_trial_and_block_timeouts_must_be_finite():
    for field in ("trial_timeout", "block_timeout", "tool_timeout"):
        with pytest.raises(ValueError):
            RunConfig(**{field: float("inf")})
    assert json.loads(RunConfig(trial_timeout=5).model_dump_json())["trial_timeout"] == 5
