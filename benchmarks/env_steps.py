"""Throughput of tau_emotion.core.env: oracle-driven episodes through the environment against `tau run`'s runner.

    python benchmarks/env_steps.py [DOMAIN] [--split test] [--n 16] [--episodes 64]

The same episodes (the oracle agent's actions, the scripted user, the emotion plugin's conditions)
three ways: `TauEnv` one at a time, `TauVectorEnv` with N environments stepped together, and the
runner (`prepare_run` + `run_sync` with the oracle agent, concurrency N, results into a temporary
SQLite file). Prints episodes/s and environment steps/s, and the environment's cost per step over
the runner's (the asyncio hand-off of each action).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from types import SimpleNamespace

from tau_emotion.core.env import TauEnv, TauVectorEnv, prepare
from tau_emotion.core.episode import ToolsView
from tau_emotion.core.models import RunConfig
from tau_emotion.core.runner import prepare_run, run_sync
from tau_emotion.plugins.oracle_agent import OracleAgent


def oracle(env) -> OracleAgent:
    domain = env.session.domain
    return OracleAgent(SimpleNamespace(task=env.task, tools=ToolsView(domain.toolset, None), domain=domain))


def one_by_one(session, ids: list[str]) -> tuple[float, int]:
    env, steps = TauEnv(session), 0
    started = time.perf_counter()
    for task_id in ids:
        env.reset(task_id, options={"trial": 0})
        agent, done = oracle(env), False
        while not done:
            *_, terminated, truncated, _ = env.step(asyncio.run(agent.act([])).chat())
            done, steps = terminated or truncated, steps + 1
    elapsed = time.perf_counter() - started
    env.close()
    return elapsed, steps


def vectorised(session, ids: list[str], n: int) -> tuple[float, int]:
    vec, steps = TauVectorEnv(session, n), 0
    started = time.perf_counter()
    for at in range(0, len(ids), n):
        chunk = ids[at:at + n]
        vec.reset(chunk + [chunk[0]] * (n - len(chunk)), options={"trial": 0})
        agents = [oracle(SimpleNamespace(task=e.task, session=session)) for e in vec.envs]
        live = [True] * n
        while any(live):
            actions = [asyncio.run(a.act([])).chat() if on else None for a, on in zip(agents, live, strict=True)]
            _, _, terminated, truncated, _ = vec.step(actions)
            steps += sum(1 for a in actions if a is not None)
            live = [on and not (t or u) for on, t, u in zip(live, terminated, truncated, strict=True)]
    elapsed = time.perf_counter() - started
    vec.close()
    return elapsed, steps


def runner(domain: str, split: str, ids: list[str], n: int, options: dict) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        config = RunConfig(plugins=[domain, "emotion"], domains=[domain], split=split, task_ids=ids, trials=1,
                           agent="oracle", concurrency=n, options={**options, "progress": {"no_progress": True}})
        run = prepare_run(config, f"{tmp}/runs.sqlite")
        started = time.perf_counter()
        run_sync(run)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domain", nargs="?", default="airline")
    parser.add_argument("--split", default="test")
    parser.add_argument("--n", type=int, default=16)
    parser.add_argument("--episodes", type=int, default=64)
    args = parser.parse_args()
    session = prepare(args.domain, split=args.split, emotion="random")
    ids = session.task_ids[: args.episodes]
    t1, steps = one_by_one(session, ids)
    tv, _ = vectorised(session, ids, args.n)
    tr = runner(args.domain, args.split, ids, args.n, {"emotion": {"emotion": "random"}})
    print(f"{len(ids)} {args.domain} episodes, {steps} agent steps (oracle actions, scripted user, emotion random)")
    print(f"TauEnv one at a time:      {len(ids) / t1:7.1f} episodes/s  {steps / t1:8.1f} steps/s")
    print(f"TauVectorEnv (n={args.n}):      {len(ids) / tv:7.1f} episodes/s  {steps / tv:8.1f} steps/s")
    print(f"runner, oracle agent (c={args.n}): {len(ids) / tr:7.1f} episodes/s  (stores every trial)")
    print(f"environment over runner: {(t1 - tr) / steps * 1e3:+.2f} ms per step one at a time, "
          f"{(tv - tr) / steps * 1e3:+.2f} ms vectorised")


if __name__ == "__main__":
    main()
