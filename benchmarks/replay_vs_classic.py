"""Gold replay + reward in their own env vs ours, for every available classic domain (tau-trait, tau_bench).

    python benchmarks/replay_vs_classic.py [--domains tautrait-airline,...] [--split test] [--no-runner]

Per task, their side: `env.reset(i)`, the agent tells the gold outputs, every gold action through
`env.step`, and `calculate_reward()` (which reloads their data and replays the gold again), one env per
domain, built by the parity helpers in `tests/domain_packs/classic_parity.py` (their env unchanged, with
a silent user). Our side: the gold actions on a fresh copy-on-write state and `score` (whose gold replay runs once
per task and is then cached, so the first pass is timed). With `--runner` (default) also the whole runner:
oracle agent, scripted user, in-memory store. Every reward is compared; a mismatch is printed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tau_emotion.core.manager import PluginUnavailable, get_plugin_manager
from tau_emotion.core.models import RunConfig, Termination
from tau_emotion.core.reward import gold_messages, replay, score
from tau_emotion.core.runner import prepare_run, run_sync
from tau_emotion.domain_packs.classic import PLUGINS, ClassicPlugin

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the parity helpers live with the tests
from tests.domain_packs.classic_parity import native_env, native_reward, their_gold_trajectory  # noqa: E402


def their_side(suite: ClassicPlugin, split: str) -> tuple[dict[int, float], float, float]:
    start = time.perf_counter()
    env = native_env(suite, split)
    setup = time.perf_counter() - start
    rewards: dict[int, float] = {}
    start = time.perf_counter()
    for index, raw in enumerate(env.tasks):
        calls, said = their_gold_trajectory(raw)
        rewards[index] = native_reward(suite, env, index, calls, said)
    return rewards, setup, time.perf_counter() - start


def our_side(suite: ClassicPlugin, split: str) -> tuple[dict[int, float], float, float]:
    start = time.perf_counter()
    domain = suite.domain()
    tasks = domain.tasks(split)
    _ = domain.database.content_hash, domain.toolset
    setup = time.perf_counter() - start
    stop = Termination(reason="user_stop")
    rewards: dict[int, float] = {}
    start = time.perf_counter()
    for task in tasks:
        state = replay(domain, task)
        rewards[task.meta["task_index"]], _ = score(domain, task, state, gold_messages(domain, task), stop)
    return rewards, setup, time.perf_counter() - start


def failing_gold_calls(suite: ClassicPlugin, split: str) -> list[str]:
    """Tasks whose gold makes a write that fails (an error text, or a tool that does not exist): it does
    the same (usually nothing) in either env, and the gold database expects exactly that."""
    domain = suite.domain()
    out = []
    for task in domain.tasks(split):
        state = domain.database.state()
        texts = [domain.toolset.call(state, a.name, a.arguments)[0] for a in task.gold.actions]
        failed = [a.name for a, text in zip(task.gold.actions, texts, strict=True)
                  if text.startswith("Error") and domain.toolset[a.name].writes]
        failed += [d["name"] + " (no such tool)" for d in task.meta.get("dropped_gold_actions", ())]
        if failed:
            out.append(f"{task.id}: {', '.join(failed)}")
    return out


def runner_side(suite: ClassicPlugin, split: str) -> tuple[dict[int, float], float]:
    config = RunConfig(plugins=[suite.name], split=split, trials=1, agent="oracle", user="scripted",
                       options={"progress": {"no_progress": True}})
    run = prepare_run(config, ":memory:", pm=get_plugin_manager([suite.name]))
    start = time.perf_counter()
    run_sync(run)
    elapsed = time.perf_counter() - start
    by_id = {t.id: t.meta["task_index"] for t in run.tasks}
    return {by_id[r.task_id]: r.reward for r in run.results}, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", default=",".join(PLUGINS))
    parser.add_argument("--split", default="test")
    parser.add_argument("--no-runner", dest="runner", action="store_false")
    args = parser.parse_args()
    wanted = [x.strip() for x in args.domains.split(",") if x.strip()]
    header = f"{'domain':20} {'tasks':>5} {'theirs t/s':>10} {'ours t/s':>9} {'ratio':>7} {'runner t/s':>10}  agree"
    print(header)
    print("-" * len(header))
    totals = {"n": 0, "theirs": 0.0, "ours": 0.0, "runner": 0.0}
    notes: list[str] = []
    for suite in PLUGINS.values():
        if suite.name not in wanted:
            continue
        try:
            suite.check_available()
        except PluginUnavailable as exc:
            notes.append(f"{suite.name}: skipped ({exc})")
            continue
        ours, our_setup, our_s = our_side(suite, args.split)
        theirs, their_setup, their_s = their_side(suite, args.split)
        n = len(theirs)
        runner_cell = ""
        runner: dict[int, float] = {}
        if args.runner:
            runner, runner_s = runner_side(suite, args.split)
            runner_cell = f"{n / runner_s:10.0f}"
            totals["runner"] += runner_s
        bad = sorted(i for i in theirs if ours.get(i) != theirs[i] or (runner and runner.get(i) != theirs[i]))
        print(f"{suite.name:20} {n:5d} {n / their_s:10.2f} {n / our_s:9.0f} {their_s / our_s:6.0f}x {runner_cell:>10}  "
              f"{'yes' if not bad else 'NO: ' + ', '.join(map(str, bad))}")
        broken = [i for i, r in theirs.items() if r != 1.0]
        notes.append(f"{suite.name}: setup theirs {their_setup:.2f} s (env; the first imports their env modules), "
                     f"ours {our_setup:.2f} s (data + hash + tasks); gold not scoring 1 in their env: {broken or 'none'}")
        notes.extend(f"  failing gold write: {line}" for line in failing_gold_calls(suite, args.split))
        totals["n"] += n
        totals["theirs"] += their_s
        totals["ours"] += our_s
    if totals["n"]:
        n = totals["n"]
        runner_cell = f"{n / totals['runner']:10.0f}" if args.runner else ""
        print("-" * len(header))
        print(f"{'all':20} {n:5d} {n / totals['theirs']:10.2f} {n / totals['ours']:9.0f} "
              f"{totals['theirs'] / totals['ours']:6.0f}x {runner_cell:>10}")
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
