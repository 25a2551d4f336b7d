"""Run metadata: who ran what, with which models and endpoints, when, and how it ended.

Recorded through the store (`save_run_meta`) at `tau_run_start` and `tau_run_end`, so every store
that implements the protocol keeps it. Option values whose name says key, token or secret are
never stored. Status is running, complete, interrupted (fewer trials stored than the run asked
for) or errored (some trial ended in error).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from functools import cache
from pathlib import Path
from typing import Any

from tau_emotion.core.limits import is_secret_name
from tau_emotion.core.terminal import safe

REDACTED = "[redacted]"


def redact(value: Any, name: str = "") -> Any:
    """`value` with every entry whose name looks like a credential replaced by a marker."""
    if name and is_secret_name(name):
        return REDACTED if value not in (None, "") else value
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


@cache
def git_commit() -> str | None:
    """The commit of the harness checkout, when it is one (an editable install); None otherwise."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=here, capture_output=True, text=True,
                             timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def models(run: Any) -> dict[str, str]:
    """The model and endpoint of every role the run gives one (`agent_model`, `user_api_base`, ...), flat, as the
    roles contract reads them (a role `serve` pointed at its server shows that server)."""
    from tau_emotion.core.roles import role_options

    out: dict[str, str] = {}
    for role in run.pm.catalog("roles").names():
        o = role_options(run.config, role)
        out.update({f"{role}_{k}": str(v) for k, v in (("model", o.model), ("api_base", o.api_base)) if v})
    return out


def start_meta(run: Any, previous: dict[str, Any] | None) -> dict[str, Any]:
    from tau_emotion.core import __version__

    config = run.config
    meta = dict(previous or {})
    meta.update({
        "agent": config.agent,
        "user": config.user,
        "models": models(run),
        "options": redact(config.options),
        "plugins": list(config.plugins),
        "seed": config.seed,
        "split": config.split,
        "domains": sorted(run.domains),
        "n_tasks": len(run.tasks),
        "trials": config.trials,
        "task_selection": {"n_tasks": config.n_tasks, "task_ids": list(config.task_ids)},
        "harness_version": __version__,
        "git_commit": git_commit(),
        "status": "running",
        "ended": None,
        "host": socket.gethostname(),  # with pid: `tau runs` tells a killed run from a running one
        "pid": os.getpid(),
    })
    meta.setdefault("started", time.time())
    if previous:
        meta["resumed"] = [*previous.get("resumed", []), time.time()]
    return meta


def end_status(expected: int, stored: int, errors: int) -> str:
    if stored < expected:
        return "interrupted"
    return "errored" if errors else "complete"


def when(stamp: float | None) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M") if stamp else "-"


def died(meta: dict[str, Any]) -> bool:
    """A run recorded as running by a process of this host that no longer exists (killed, e.g. SIGKILL)."""
    if meta.get("host") != socket.gethostname() or not isinstance(meta.get("pid"), int):
        return False
    try:
        os.kill(meta["pid"], 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def run_status(run: dict[str, Any]) -> str:
    """running, complete, interrupted or errored (from the run's metadata; older runs from their summary)."""
    meta = run.get("meta") or {}
    if meta.get("status") == "running" and died(meta):
        return "interrupted"
    if meta.get("status"):
        return meta["status"]
    s = run.get("summary")
    if not s:
        return "unknown"
    if run.get("n_trials", 0) < s.get("n_tasks", 0) * s.get("trials", 0):
        return "interrupted"
    return "errored" if s.get("errors") else "complete"


def run_row(run: dict[str, Any]) -> dict[str, str]:
    """The report's cells of one run in `tau runs`: when it started, its status, models, and the trials it plans."""
    meta, s, config = run.get("meta") or {}, run.get("summary") or {}, run.get("config") or {}
    planned = (meta.get("n_tasks") or s.get("n_tasks") or 0) * config.get("trials", 0)
    tokens, cost = spent(s)
    return {"started": when(meta.get("started") or run.get("created")), "status": run_status(run),
            "models": " ".join(f"{k}={v}" for k, v in (meta.get("models") or {}).items()) or "-",
            "trials": f"{run.get('n_trials', 0)}/{planned or '?'}",
            "tokens": f"{tokens:,.0f}" if tokens else "-", "cost": f"${cost:.4f}" if cost else "-",
            "tags": ",".join(str(t) for t in meta.get("tags") or []) or "-"}


def spent(summary: dict[str, Any]) -> tuple[float, float]:
    """(tokens, cost) a run's model calls counted, from its summary (0, 0 before it has one)."""
    conversation = summary.get("conversation") or {}
    return float(conversation.get("total_tokens") or 0), float(conversation.get("total_cost") or 0)


def run_header(run: dict[str, Any]) -> list[str]:
    """`tau show`'s first line: status, agent, user, models, seed, when, and the harness that ran it."""
    meta = run.get("meta") or {}
    if not meta:
        return []
    import textwrap

    models = " ".join(f"{k}={v}" for k, v in (meta.get("models") or {}).items())
    run_kind = (run.get("config") or {}).get("kind") or "eval"
    line = (f"run {run['run_id']}: {meta.get('status', '?')}; kind={run_kind} agent={meta.get('agent')} user={meta.get('user')} "
            f"{models} seed={meta.get('seed')} started {when(meta.get('started'))} ended {when(meta.get('ended'))}"
            f" harness {meta.get('harness_version')} {meta.get('git_commit') or ''}")
    summary = run.get("summary") or {}
    tokens, cost = spent(summary)
    n = summary.get("n_trials") or run.get("n_trials") or 0
    if tokens or cost:
        line += (f"; model calls counted {tokens:,.0f} tokens, ${cost:.4f}"
                 + (f" ({tokens / n:,.0f} tokens, ${cost / n:.4f} per trial)" if n else ""))
    else:
        line += "; no tokens or cost counted (no model call reported usage)"
    # model names and ids are data: control characters shown escaped (core/terminal.py), a newline forges no line
    return textwrap.wrap(" ".join(safe(line).split()), width=80, subsequent_indent="  ", break_on_hyphens=False)
