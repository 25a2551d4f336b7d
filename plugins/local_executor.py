"""The `local` executor: trials as asyncio tasks under a concurrency limit (episodes are I/O-bound)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.models import EpisodeResult
from tau_emotion.core.protocols import Job


class LocalExecutor:
    def __init__(self, concurrency: int = 8):
        self.concurrency = max(1, int(concurrency))

    async def run(self, jobs: list[Job] | list[Callable[[], Awaitable[EpisodeResult]]],
                  on_result: Callable[[EpisodeResult], Any]) -> None:
        limit = asyncio.Semaphore(self.concurrency)

        async def one(job: Callable[[], Awaitable[EpisodeResult]]) -> None:
            async with limit:
                result = await job()
            stored = on_result(result)
            if inspect.isawaitable(stored):  # the runner's callback writes on a thread and is awaited
                await stored

        tasks = [asyncio.ensure_future(one(job)) for job in jobs]
        try:
            await asyncio.gather(*tasks)
        finally:
            for t in tasks:
                t.cancel()


@hookimpl
def tau_register_executors(register):
    register("local", LocalExecutor)
