"""The `progress` plugin: a live line on stderr (≤ 80 columns): episodes in flight, success rate, mean reward,
model-call retries (of finished episodes: each reply's usage counts its retries) and errors.

It owns the `--no-progress` option. Its bars are kept per run id in the plugin itself.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from tau_emotion.core import hookimpl
from tau_emotion.core.terminal import WHOLE_UP_TO
from tau_emotion.core.terminal import reward as terminal_reward


class ProgressOptions(BaseModel):
    no_progress: bool = Field(False, description="No progress bar.")


_bars: dict[str, tuple[Any, Any, dict[str, float]]] = {}


@hookimpl
def tau_register_options(register):
    register("progress", ProgressOptions)


def _live(tally: dict[str, float], counters: dict[str, int] | None = None) -> str:
    """The live counters: in flight, successes, mean reward, model-call retries (of finished episodes: each
    reply's usage counts its retries), what other plugins count (`tau_live_counters`), errors (read at each
    refresh)."""
    retries = int(tally.get("retries", 0))
    n = tally["n"] or 1
    rate = f"{tally['ok'] / n:.0%}" if tally["n"] else "-"
    mean = tally["reward"] / n
    reward = (f"{mean:+.2f}" if abs(mean) < WHOLE_UP_TO else terminal_reward(mean)) if tally["n"] else "-"
    extra = "".join(f" {name} {value}" for name, value in (counters or {}).items())
    return f"run {int(tally['flying'])} ok {rate} r {reward} retry {retries}{extra} err {int(tally['errors'])}"


@hookimpl
def tau_run_start(run):
    if run.config.options_for("progress", ProgressOptions).no_progress or not run.pending:
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TimeElapsedColumn
    from rich.text import Text

    tally = {"n": 0, "ok": 0, "reward": 0.0, "errors": 0, "flying": 0, "retries": 0}

    class Live(ProgressColumn):
        def render(self, task):
            counters = {k: v for got in run.pm.hook.tau_live_counters(run=run) for k, v in (got or {}).items()}
            return Text(_live(tally, counters))

    # at most ~78 columns: bar 12, "1234/5678", the live counters (~45), elapsed
    progress = Progress(BarColumn(bar_width=12), MofNCompleteColumn(), Live(), TimeElapsedColumn(),
                        console=Console(stderr=True), transient=False, expand=False, refresh_per_second=4)
    done = run.total - len(run.pending)
    bar = progress.add_task(run.run_id, total=run.total, completed=done)
    _bars[run.run_id] = (progress, bar, tally)
    progress.start()


@hookimpl
def tau_episode_start(episode):
    state = _bars.get(episode.run.run_id) if episode.run is not None else None
    if state is not None:
        state[2]["flying"] += 1


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
    tally["retries"] += result.usage.get("retries", 0.0)
    tally["flying"] = max(0, tally["flying"] - 1)
    progress.update(bar, advance=1)


@hookimpl
def tau_run_end(run, summary):
    state = _bars.pop(run.run_id, None)
    if state is not None:
        state[0].stop()
