"""Tracer throughput: validated tasks per second per core, without any LLM, and the rejection breakdown.

    python benchmarks/tracer_build.py [DOMAIN...] [--split test] [--n 58] [--seeds 3] [--emotion]

Without a domain it times every domain whose pack gives grounding hints, one after the other.

One process (one core) builds N tasks per seed with the template refiner and template feelings;
the figure counts every candidate tried (sampling, grounding, refinement, validation) over the
wall time of the build. The database load and graph inference are one-off costs and are reported
separately; `--emotion` adds the emotion pack's classifier (its one-off load time is excluded).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import Counter

from tau_emotion.core.manager import load_all_plugins
from tau_emotion.tracer.build import build_tasks, default_avoid
from tau_emotion.tracer.feelings import condition_space
from tau_emotion.tracer.graph import build_graph
from tau_emotion.tracer.hints import load_hints
from tau_emotion.tracer.validate import CHECKS


def measure(pm, name: str, args: argparse.Namespace, space, labeler) -> float:
    """Time `args.seeds` builds of `name` and print its figures; the median validated tasks per second."""
    domain = pm.catalog("domains").get(name)
    t0 = time.perf_counter()
    _ = domain.database.content_hash
    hints = load_hints(domain, pm)
    graph = build_graph(domain, hints)
    setup_s = time.perf_counter() - t0
    avoid = default_avoid(domain, args.split)
    # warm caches (templates, regexes)
    build_tasks(domain, args.split, 3, 99, labeler=labeler, space=space, avoid=avoid, hints=hints, graph=graph)
    rates, cpu_rates, rejected, candidates, accepted, calls = [], [], Counter(), 0, 0, []
    for seed in range(100, 100 + args.seeds):
        cpu = time.process_time()
        report = build_tasks(domain, args.split, args.n, seed, labeler=labeler, space=space, avoid=avoid, hints=hints,
                             graph=graph)
        cpu_rates.append(report.accepted / max(time.process_time() - cpu, 1e-9))
        rates.append(report.accepted / report.seconds)
        rejected.update(report.rejected)
        candidates += report.candidates
        accepted += report.accepted
        calls += [len(t.gold.actions) for t in report.tasks]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{name}/{args.split}: graph {len(graph.graph)} tools, {graph.graph.number_of_edges()} edges, "
          f"density {graph.density:.3f}; database + graph {setup_s:.2f}s (one-off)")
    print(f"validated tasks per second per core: {statistics.median(rates):.1f} "
          f"(median of {len(rates)} builds of {args.n}; min {min(rates):.1f}, max {max(rates):.1f}; "
          f"1 of {cores} core(s) used)")
    # on a shared machine the wall clock counts other processes' turns: the CPU time is this build's own
    print(f"validated tasks per CPU second: {statistics.median(cpu_rates):.1f} (median; min {min(cpu_rates):.1f}, "
          f"max {max(cpu_rates):.1f})")
    print(f"accepted {accepted} of {candidates} candidates ({accepted / candidates:.0%}); "
          f"gold calls per task: avg {statistics.mean(calls):.2f}")
    print("rejections by check:")
    for check in CHECKS:
        if rejected.get(check):
            print(f"  {check:12} {rejected[check]:6}  ({rejected[check] / candidates:.0%} of candidates)")
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domains", nargs="*", help="Domains to time (default: every domain whose pack gives the "
                                                   "Tracer grounding hints).")
    parser.add_argument("--split", default="test")
    parser.add_argument("--n", type=int, default=58)
    parser.add_argument("--seeds", type=int, default=3, help="Builds to time (seeds 100, 101, ...).")
    parser.add_argument("--emotion", action="store_true", help="Also classify feelings with the emotion pack.")
    args = parser.parse_args()
    pm = load_all_plugins()
    catalog = pm.catalog("domains")
    names = args.domains or [n for n in catalog.names() if load_hints(catalog.get(n), pm).can_ground]
    space = condition_space(pm)
    labeler = None
    if args.emotion:
        from tau_emotion.tracer.feelings import EmotionLabeler

        t1 = time.perf_counter()
        labeler = EmotionLabeler.from_space(space)
        print(f"emotion pack classifier loaded in {time.perf_counter() - t1:.2f}s (one-off, not counted)")
    rates = {name: measure(pm, name, args, space, labeler) for name in names}
    if len(rates) > 1:
        print("validated tasks per second per core, median per domain:")
        for name, rate in rates.items():
            print(f"  {name:12} {rate:6.1f}")
        print(f"  {'(lowest)':12} {min(rates.values()):6.1f}")


if __name__ == "__main__":
    main()
