"""The `serve` plugin: `tau serve MODEL` runs `vllm serve` as a managed subprocess and prints the endpoint.

It picks a free port (or `--port`), writes the server's output to a log file, waits until
`GET /v1/models` answers (or the server exits, or `--ready-timeout` passes: an error naming the log
file and its last lines), prints the flags to give `tau run`, and stops the server's whole process
group on exit, on Ctrl-C and on SIGTERM. `--executable` runs another program with vLLM's command
line (tests use a small OpenAI-compatible stand-in; vLLM has no CPU wheel). Arguments after `--`
go to `vllm serve` unchanged.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import click

from tau_emotion.core import hookimpl
from tau_emotion.core.errors import TauError


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _tail(path: Path, lines: int = 8) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def wait_ready(proc: subprocess.Popen[bytes], base: str, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise TauError(f"the model server exited with code {proc.returncode} before it was ready; "
                           f"log {log}:\n{_tail(log)}")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise TauError(f"the model server did not answer {base}/models within {timeout:g} s; log {log}:\n{_tail(log)}")
        time.sleep(0.2)


def stop(proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM to the server's process group, SIGKILL after `grace` seconds."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@contextlib.contextmanager
def managed_server(model: str, *, host: str = "127.0.0.1", port: int = 0, executable: str = "vllm",
                   log: str | None = None, ready_timeout: float = 900.0, extra: tuple[str, ...] = ()) -> Iterator[str]:
    """Start `executable serve MODEL --host H --port P ...`, yield its OpenAI base URL once it answers, stop it after."""
    port = port or free_port(host)
    log_path = Path(log or f".tau/serve-{port}.log")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    command = [*executable.split(), "serve", model, "--host", host, "--port", str(port), *extra]
    with open(log_path, "ab") as out:
        try:
            proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as exc:
            raise TauError(f"cannot start {command[0]}: {exc.strerror or exc} (install vLLM on a GPU host: "
                           "pip install -e '.[vllm]', or pass --executable)") from None
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        base = f"http://{host}:{port}/v1"
        wait_ready(proc, base, log_path, ready_timeout)
        yield base
    finally:
        stop(proc)
        signal.signal(signal.SIGTERM, previous)


@click.command("serve", context_settings={"ignore_unknown_options": True})
@click.argument("model")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=0, type=click.IntRange(0, 65535), help="Port (default: a free one).")
@click.option("--log", "log", default=None, help="Server log file (default: .tau/serve-PORT.log).")
@click.option("--ready-timeout", default=900.0, show_default=True, type=click.FloatRange(0, min_open=True),
              help="Seconds to wait for the server to answer /v1/models (loading weights takes a while).")
@click.option("--executable", default="vllm", show_default=True, help="The program run as `EXE serve MODEL ...`.")
@click.argument("extra", nargs=-1, type=click.UNPROCESSED)
def serve_command(model: str, host: str, port: int, log: str | None, ready_timeout: float, executable: str,
                  extra: tuple[str, ...]) -> None:
    """Serve MODEL with vLLM until Ctrl-C; prints the `tau run` flags that use it."""
    try:
        with managed_server(model, host=host, port=port, executable=executable, log=log,
                            ready_timeout=ready_timeout, extra=extra) as base:
            click.echo(json.dumps({"api_base": base, "model": f"hosted_vllm/{model}"}))
            click.echo(f"ready: tau run --agent tool_calling --agent-model hosted_vllm/{model} --agent-api-base {base}",
                       err=True)
            sys.stdout.flush()
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        click.echo("stopped", err=True)


@hookimpl
def tau_register_commands(cli):
    cli.add_command(serve_command)
