"""The `progress` plugin: a rich progress bar on stderr with the live success rate and mean reward.

It owns the `--no-progress` option. Its bars are kept per run id in the plugin itself.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from tau_emotion.core import hookimpl


class ProgressOptions(BaseModel):
    no_progress: bool = Field(False, description="No progress bar.")


_bars: dict[str, tuple[Any, Any, dict[str, float]]] = {}


@hookimpl
def tau_register_options(register):
    register("progress", ProgressOptions)


@hookimpl
def tau_run_start(run):
    if run.config.options_for("progress", ProgressOptions).no_progress or not run.pending:
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
    _bars[run.run_id] = (progress, bar, {"n": 0, "ok": 0, "reward": 0.0, "errors": 0})
    progress.start()


@hookimpl
def tau_episode_end(episode, result):
    state = _bars.get(episode.run.run_id) if episode.run is not None else None
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
    state = _bars.pop(run.run_id, None)
    if state is not None:
        state[0].stop()
