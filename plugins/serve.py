"""The `serve` plugin: `tau serve MODEL` runs `vllm serve` as a managed subprocess and prints the endpoint.

It picks a free port (or `--port`), writes the server's output to a log file, waits until
`GET /v1/models` answers (or the server exits, or `--ready-timeout` passes: an error naming the log
file and its last lines), prints the flags to give `tau run`, and stops the server's whole process
group on exit, on Ctrl-C and on SIGTERM. `--executable` runs another program with vLLM's command
line (tests use a small OpenAI-compatible stand-in; vLLM has no CPU wheel). Arguments after `--`
go to `vllm serve` unchanged.

`tau run --serve vllm` does the same for one run: the server starts before the run (after the options
are read, before the preflight), the agent (`--serve-for agent`, the default), the LLM user or both
are pointed at it through the roles contract (`roles.point_role`: this run only, the stored
configuration keeps what was given), and it stops when the run ends, fails or is interrupted. A
resumed run starts a fresh server (the port is not part of what defines a run).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import click
from pydantic import BaseModel, Field

from tau_emotion.core import hookimpl
from tau_emotion.core.errors import TauError
from tau_emotion.core.roles import point_role, role_options


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _tail(path: Path, lines: int = 8) -> str:
    """The log's last lines, with control characters and escape sequences shown escaped (a server's log holds
    colours, progress bars and sometimes binary garbage)."""
    from tau_emotion.core.terminal import safe

    try:
        return safe("\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]),
                    multiline=True)
    except OSError:
        return ""


def _answers(url: str, timeout: float) -> bool:
    """Whether GET `url` answers 200 within `timeout` seconds in total (a server trickling its reply cannot
    hold the wait past --ready-timeout: the request runs on a daemon thread that is left behind)."""
    import threading

    answer = []

    def ask() -> None:
        with contextlib.suppress(urllib.error.URLError, OSError, ValueError), \
                urllib.request.urlopen(url, timeout=timeout) as reply:
            answer.append(reply.status == 200)

    worker = threading.Thread(target=ask, daemon=True, name="tau-serve-ready")
    worker.start()
    worker.join(timeout)
    return bool(answer and answer[0])


def wait_ready(proc: subprocess.Popen[bytes], base: str, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise TauError(f"the model server exited with code {proc.returncode} before it was ready; "
                           f"log {log}:\n{_tail(log)}")
        if _answers(f"{base}/models", max(0.05, min(2.0, deadline - time.monotonic()))):
            return
        if time.monotonic() > deadline:
            raise TauError(f"the model server did not answer {base}/models within {timeout:g} s; log {log}:\n{_tail(log)}")
        time.sleep(0.2)


def stop(proc: subprocess.Popen[bytes], grace: float = 15.0) -> None:
    """SIGTERM to the supervisor, which ends every process the server started (SIGKILL after its grace);
    should it not end within `grace` seconds, SIGKILL to its whole process group."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def port_in_use(host: str, port: int) -> bool:
    """Whether something already listens on `host:port` (then the run would talk to that server, not ours)."""
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


@contextlib.contextmanager
def managed_server(model: str, *, host: str = "127.0.0.1", port: int = 0, executable: str = "vllm",
                   log: str | None = None, ready_timeout: float = 900.0, extra: tuple[str, ...] = ()) -> Iterator[str]:
    """Start `executable serve MODEL --host H --port P ...`, yield its OpenAI base URL once it answers, stop it after."""
    if port and port_in_use(host, port):
        raise TauError(f"port {port} on {host} is already in use (another server?): pass a free --port, or "
                       "none to take a free one")
    port = port or free_port(host)
    log_path = Path(log or f".tau/serve-{port}.log")
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        out = open(log_path, "ab")  # noqa: SIM115 - closed below, once the supervisor holds it
    except OSError as exc:
        raise TauError(f"cannot write the server log {log_path}: {exc.strerror or exc} (pass another --log)") from None
    command = [*executable.split(), "serve", model, "--host", host, "--port", str(port), *extra]
    if not command[0] or shutil.which(command[0]) is None:
        out.close()
        raise TauError(f"cannot start {command[0]}: not found (install vLLM on a GPU host: "
                       "pip install -e '.[vllm]', or pass --executable)")
    # the supervisor holds every process the server starts (a backgrounding launcher, setsid children) and
    # ends them when told, or when this process dies, even by SIGKILL (plugins/serve_supervisor.py)
    supervised = [sys.executable, "-m", "tau_emotion.plugins.serve_supervisor", str(os.getpid()), *command]
    with out:
        try:
            proc = subprocess.Popen(supervised, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
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


# ----------------------------------------------------------------------------- tau run --serve

#: role -> the built-in agent/user that plays it with a model (named in the message when another is chosen)
PLAYERS = {"agent": "tool_calling", "user": "llm"}
PROVIDER_PREFIXES = ("hosted_vllm/", "openai/")


class ServeOptions(BaseModel):
    serve: Literal["vllm"] | None = Field(None, description="Start this model server for the run and stop it "
                                          "after: `vllm` runs `vllm serve` on the --serve-for role's model and "
                                          "points that role at it.")
    serve_for: Literal["agent", "user", "both"] = Field("agent", description="Which role uses the served model.")
    serve_model: str | None = Field(None, description="What the server loads (a local path or model name; "
                                    "default: the role's --agent-model/--user-model without its provider prefix).")
    serve_executable: str = Field("vllm", description="The program run as `EXE serve MODEL ...`.")
    serve_args: str = Field("", description="Extra arguments for the server, one shell-quoted string, "
                            "e.g. '--max-model-len 8192'.")
    serve_port: int = Field(0, ge=0, le=65535, description="Port of the served model (default: a free one).")
    serve_log: str | None = Field(None, description="Server log file (default: .tau/serve-PORT.log).")
    serve_ready_timeout: float = Field(900.0, gt=0, description="Seconds to wait for the server to answer "
                                       "/v1/models.")


def served_name(model: str) -> str:
    for prefix in PROVIDER_PREFIXES:
        if model.startswith(prefix):
            return model[len(prefix):]
    return model


#: servers started for runs of this process, stopped at run end and, failing that, at exit
_RUN_SERVERS = contextlib.ExitStack()


def stop_run_servers() -> None:
    _RUN_SERVERS.close()


atexit.register(stop_run_servers)


def start_for_run(config: Any) -> None:
    """Start the server `--serve` asks for and point the chosen roles at it (for this run: `roles.point_role`)."""
    options = config.options_for("serve", ServeOptions)
    if not options.serve:
        return
    roles = ["agent", "user"] if options.serve_for == "both" else [options.serve_for]
    names = []
    for role in roles:
        player = PLAYERS[role]
        if getattr(config, role) != player:
            raise TauError(f"--serve-for {options.serve_for} serves a model to the {role}, but the {role} is "
                           f"'{getattr(config, role)}': use --{role} {player}")
        model = role_options(config, role).model
        names.append(served_name(model) if model else None)
    wanted = {n for n in names if n}
    if len(wanted) > 1:
        raise TauError(f"--serve-for both needs one model, but the agent and user models differ: {sorted(wanted)}")
    name = next(iter(wanted), None) or (served_name(options.serve_model) if options.serve_model else None)
    if not name:
        raise TauError("--serve needs a model to serve: pass --agent-model hosted_vllm/NAME (or --serve-model PATH)")
    weights = options.serve_model or name
    extra = shlex.split(options.serve_args)
    if weights != name and "--served-model-name" not in extra:
        extra += ["--served-model-name", name]
    base = _RUN_SERVERS.enter_context(managed_server(
        weights, port=options.serve_port, executable=options.serve_executable, log=options.serve_log,
        ready_timeout=options.serve_ready_timeout, extra=tuple(extra)))
    for role in roles:
        point_role(config, role, f"hosted_vllm/{name}", base)
    click.echo(f"serving {weights} at {base} for the {' and '.join(roles)}", err=True)


@hookimpl
def tau_register_options(register):
    register("serve", ServeOptions)


@hookimpl
def tau_configure(config):
    start_for_run(config)


@hookimpl
def tau_run_end(run, summary):
    stop_run_servers()


# ----------------------------------------------------------------------------- tau serve


@click.command("serve", context_settings={"ignore_unknown_options": True})
@click.argument("model")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address the server listens on.")
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
