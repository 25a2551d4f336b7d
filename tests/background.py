"""Slow, pure computations the suite needs, started in a worker process when the session starts, so
they overlap with other tests on a second core instead of adding to the wall time.

Only the feelings-classifier trainings qualify today (~10 s each): the whole bank (the shipped
model must be reproducible) and the held-out split of `tau emotions eval`.
"""

from __future__ import annotations

from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

_pool: ProcessPoolExecutor | None = None
_jobs: dict[str, Future] = {}


def _train(name: str) -> Any:
    from tau_emotion.emotion_pack.anchors import anchor_rows
    from tau_emotion.emotion_pack.classifier import FeelingsClassifier

    if name == "full":
        return FeelingsClassifier.train()
    return FeelingsClassifier.train([r for r in anchor_rows() if r["index"] in range(8)])


def start(names: list[str]) -> None:
    global _pool
    if _pool is None and names:
        _pool = ProcessPoolExecutor(max_workers=1)
    for name in names:
        if name not in _jobs:
            _jobs[name] = _pool.submit(_train, name)


def result(name: str) -> Any:
    """The computation's result: from the worker when it was started, else computed here."""
    job = _jobs.get(name)
    return job.result() if job is not None else _train(name)


def stop() -> None:
    if _pool is not None:
        _pool.shutdown(cancel_futures=True)
