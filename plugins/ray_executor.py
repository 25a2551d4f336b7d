"""The `ray` executor: trials on Ray workers, each loading the run's plugins and domains once.

`--executor ray --plugins ray` (install the `[ray]` extra). Every worker is an async Ray actor that
builds the run's plugin manager and domains from the run's config when it starts, then runs
trials as they are sent (`--concurrency` in flight over all workers, spread evenly). Results come
back to the driver as each trial ends and go to the driver's store at once, so Ctrl-C or a lost
worker loses only trials in flight and `tau run --resume` finishes the rest. `--ray-address`
joins an existing cluster (`ray start --head` on one host, `ray start --address=...` on the
others); without it a local Ray is started for the run and stopped after it. Ray is imported
only when the executor runs. Episode hooks (`tau_episode_start/end`) run on the workers, so the
driver's progress line counts trials as their results arrive, not episodes in flight.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel, Field

from tau_emotion.core import hookimpl
from tau_emotion.core.models import EpisodeResult
from tau_emotion.core.protocols import Job


class RayOptions(BaseModel):
    ray_address: str | None = Field(None, description="Ray cluster to join (e.g. ray://head:10001 or auto); "
                                    "default: start a local Ray for this run.")
    ray_workers: int = Field(2, ge=1, description="Ray worker actors; each loads the domains once.")


class EpisodeWorker:
    """One Ray actor: the run's plugins and domains, loaded once; `run` plays one trial."""

    def __init__(self, run_id: str, config_json: str, role_endpoints: dict[str, tuple[str, str]] | None = None):
        from tau_emotion.core.models import RunConfig
        from tau_emotion.core.runner import Run, build_plugin_manager, selected_domains

        config = RunConfig.model_validate_json(config_json)
        config.role_endpoints.update(role_endpoints or {})  # roles pointed at a server for this run (serve)
        pm = build_plugin_manager(config)
        self.run = Run(run_id=run_id, config=config, pm=pm, store=None, domains=selected_domains(pm, config), tasks=[])

    async def run_trial(self, task: Any, trial: int) -> EpisodeResult:
        from tau_emotion.core.runner import run_one

        return await run_one(self.run, task, trial)

    def pid(self) -> int:
        return os.getpid()


@contextmanager
def usage_stats_off() -> Iterator[None]:
    """Ray's usage statistics off for the Ray this run starts (its processes inherit the setting), unless the
    user chose otherwise; the driver's environment is as it was afterwards."""
    name = "RAY_USAGE_STATS_ENABLED"
    if name in os.environ:
        yield
        return
    os.environ[name] = "0"
    try:
        yield
    finally:
        os.environ.pop(name, None)


class RayExecutor:
    def __init__(self, concurrency: int = 8):
        self.concurrency = max(1, int(concurrency))

    async def run(self, jobs: list[Job], on_result: Callable[[EpisodeResult], Any]) -> None:
        if not jobs:
            return
        first = jobs[0]  # every job of a run has its run id and config
        options = first.config.options_for("ray", RayOptions)
        import ray

        started = not ray.is_initialized()
        if started:
            with usage_stats_off():
                ray.init(address=options.ray_address, include_dashboard=False, log_to_driver=False,
                         ignore_reinit_error=True, configure_logging=False)
        try:
            n = min(options.ray_workers, len(jobs))
            per_worker = max(1, -(-self.concurrency // n))
            actor = ray.remote(EpisodeWorker).options(max_concurrency=per_worker)
            config_json = first.config.model_dump_json()
            workers = [actor.remote(first.run_id, config_json, dict(first.config.role_endpoints)) for _ in range(n)]
            limit = asyncio.Semaphore(self.concurrency)

            async def one(i: int, job: Job) -> None:
                async with limit:
                    result = await workers[i % n].run_trial.remote(job.task, job.trial)
                stored = on_result(result)
                if inspect.isawaitable(stored):
                    await stored

            tasks = [asyncio.ensure_future(one(i, job)) for i, job in enumerate(jobs)]
            try:
                await asyncio.gather(*tasks)
            finally:
                for t in tasks:
                    t.cancel()
                for w in workers:
                    ray.kill(w)
        finally:
            if started:
                ray.shutdown()


@hookimpl
def tau_register_executors(register):
    register("ray", RayExecutor)


@hookimpl
def tau_register_options(register):
    register("ray", RayOptions)
