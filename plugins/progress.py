"""The `progress` plugin: a rich progress bar on stderr with the live success rate and mean reward."""

from __future__ import annotations

from typing import Any

from tau_emotion.core import hookimpl


def _bar(run: Any) -> Any:
    return run.extras.get("progress")


@hookimpl
def tau_run_start(run):
    if not run.config.options.get("progress", True) or not run.pending:
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("success {task.fields[rate]}  reward {task.fields[reward]}  errors {task.fields[errors]}"),
        TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True), transient=False,
    )
    done = run.total - len(run.pending)
    bar = progress.add_task(run.run_id, total=run.total, completed=done, rate="-", reward="-", errors=0)
    run.extras["progress"] = (progress, bar, {"n": 0, "ok": 0, "reward": 0.0, "errors": 0})
    progress.start()


@hookimpl
def tau_episode_end(episode, result):
    state = _bar(episode.run) if episode.run is not None else None
    if state is None:
        return
    progress, bar, tally = state
    tally["n"] += 1
    tally["ok"] += result.success
    tally["reward"] += result.reward
    tally["errors"] += result.status == "error"
    progress.update(bar, advance=1, rate=f"{tally['ok'] / tally['n']:.1%}",
                    reward=f"{tally['reward'] / tally['n']:+.2f}", errors=tally["errors"])


@hookimpl
def tau_run_end(run, summary):
    state = _bar(run)
    if state is not None:
        state[0].stop()
