"""The figures of every Tracer pack's built splits, and the generated block of each pack README that carries them.

Each Tracer pack's README states how its `test` and `train` splits are rebuilt and what they hold. Typed by hand,
those numbers went stale at every rebuild; here they are computed from the committed `data/tasks.json` (through the
domain's own loader) and written between two markers in the README's Tasks section:

    <!-- tracer-figures:start -->  ...  <!-- tracer-figures:end -->

The block holds the rebuild commands (from `REBUILD`, the one place a pack's build flags live), the audit commands,
the tool graph's size (`tau tracer graph PACK`: tools, edges, density, with the pack's hints) and one table row per
split: tasks, distinct users, gold calls (average, min-max), tasks of 1/2/3+ intents, policy-challenge tasks and
their kinds (`tau_emotion.tracer.audit.challenge_kinds`: refusal reasons, `transfer` for a handover), and decision
rules (tasks with `meta.decisions`; proceed/decline branches), and review coverage (`tau tracer review`: tasks a person
accepted or edited, rejected tasks replaced, decisions gone stale; `tau_emotion.tracer.review.coverage`).

    python benchmarks/pack_figures.py [PACK ...]            # print the figures
    python benchmarks/pack_figures.py --write [PACK ...]    # rewrite each README's block from the committed splits
    python benchmarks/pack_figures.py --check [PACK ...]    # exit 1 naming each README whose block is stale,
                                                            # and each split its README command's seed did not build
    python benchmarks/pack_figures.py --rebuild [PACK ...]  # print a shell script rebuilding every split, then --write
    python benchmarks/pack_figures.py --strip PACK ...      # drop the Tracer-built splits from data/tasks.json (hand kept)

`tests/domain_packs/test_readme_figures.py` runs the check, so figures cannot drift from the data again.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tau_emotion.tracer.plan import decision_branches, policy_challenge

ROOT = Path(__file__).resolve().parents[1]

#: each Tracer pack's rebuild flags per split, in build order (test first: train keeps apart from it); the README
#: commands are made from these and nowhere else
REBUILD: dict[str, dict[str, str]] = {
    "airline": {"test": "--n 58 --seed 5", "train": "--n 600 --seed 3 --min-calls 5"},
    "retail": {"test": "--n 58 --seed 12 --challenge-rate 0.45",
               "train": "--n 600 --seed 4 --min-calls 5 --challenge-rate 0.3"},
    "telecom": {"test": "--n 58 --seed 3 --challenge-rate 0.5", "train": "--n 600 --seed 1"},
    "telehealth": {"test": "--n 58 --seed 4 --min-calls 6 --challenge-rate 0.3", "train": "--n 600 --seed 3 --min-calls 6"},
    "restaurant": {"test": "--n 58 --seed 1 --min-calls 6 --challenge-rate 0.4", "train": "--n 600 --seed 1"},
    "bank": {"test": "--n 58 --seed 2 --min-calls 6 --challenge-rate 0.25",
             "train": "--n 600 --seed 1 --challenge-rate 0.2"},
    "school": {"test": "--n 58 --seed 5 --min-calls 6 --challenge-rate 0.2", "train": "--n 600 --seed 1"},
    "movie": {"test": "--n 58 --seed 14 --min-calls 6 --challenge-rate 0.3", "train": "--n 600 --seed 1"},
    "travel": {"test": "--n 58 --seed 1 --min-calls 6 --challenge-rate 0.4", "train": "--n 600 --seed 1"},
    "basketball": {"test": "--n 58 --seed 1 --min-calls 6 --challenge-rate 0.4", "train": "--n 600 --seed 1"},
}

START = "<!-- tracer-figures:start -->"
END = "<!-- tracer-figures:end -->"
BLOCK = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
INTENT_BINS = 3  # tasks of 1, 2 and 3+ intents


@dataclass
class SplitFigures:
    split: str
    tasks: int
    users: int
    calls_avg: float
    calls_min: int
    calls_max: int
    intents: tuple[int, ...]
    challenge_tasks: int
    kinds: list[tuple[str, int]]
    rule_tasks: int
    proceed: int
    decline: int
    seeds: tuple[int, ...] = ()  # the build seeds its tasks record (`meta.seed`)
    review: dict[str, int] = field(default_factory=dict)  # `review.coverage` of the split

    def row(self) -> str:
        kinds = ", ".join(f"{k} {c}" for k, c in self.kinds) or "none"
        share = f"{self.rule_tasks / self.tasks:.0%}" if self.tasks else "-"
        return (f"| `{self.split}` | {self.tasks} | {self.users} | {self.calls_avg:.2f} ({self.calls_min}-{self.calls_max}) "
                f"| {'/'.join(map(str, self.intents))} | {self.challenge_tasks} | {kinds} "
                f"| {self.rule_tasks} ({share}; {self.proceed}/{self.decline}) | {self.review_cell()} |")

    def review_cell(self) -> str:
        r = self.review
        cell = f"{r.get('reviewed', 0)} ({r.get('accepted', 0)}/{r.get('edited', 0)}/{r.get('rejected', 0)})"
        return cell + (f", {r['stale']} stale" if r.get("stale") else "")


@dataclass
class PackFigures:
    pack: str
    tools: int
    edges: int
    density: float
    readme: Path
    splits: list[SplitFigures] = field(default_factory=list)


def load_domain(pack: str, pm: Any = None) -> Any:
    """The installed domain `pack`, as `tau tracer` loads it (its Tracer hints come from its own package)."""
    from tau_emotion.core.domain import Domain
    from tau_emotion.core.manager import load_all_plugins

    pm = pm if pm is not None else load_all_plugins()
    obj = pm.catalog("domains").get(pack)
    return obj if isinstance(obj, Domain) else obj()


def split_figures(domain: Any, split: str, tasks: list[Any], decisions: list[Any] | None = None) -> SplitFigures:
    from tau_emotion.tracer.audit import challenge_kinds, task_user
    from tau_emotion.tracer.review import coverage

    mine = [t for t in tasks if t.split == split and t.meta.get("source") == "tracer"]
    calls = [len(t.gold.actions) for t in mine] or [0]
    intents = Counter(min(len(t.user.intents), INTENT_BINS) for t in mine)
    kinds = Counter(k for t in mine for k in challenge_kinds(domain, t))
    branches = Counter(b for t in mine for b in decision_branches(t))
    return SplitFigures(
        split=split, tasks=len(mine), users=len({task_user(t) for t in mine} - {None}),
        calls_avg=round(sum(calls) / max(len(mine), 1), 2), calls_min=min(calls), calls_max=max(calls),
        intents=tuple(intents.get(k, 0) for k in range(1, INTENT_BINS + 1)),
        challenge_tasks=sum(1 for t in mine if policy_challenge(t)),
        kinds=sorted(kinds.items(), key=lambda kc: (-kc[1], kc[0])),
        rule_tasks=sum(1 for t in mine if decision_branches(t)),
        proceed=branches.get("proceed", 0), decline=branches.get("decline", 0),
        seeds=tuple(sorted({t.meta["seed"] for t in mine if isinstance(t.meta.get("seed"), int)})),
        review=coverage(mine, decisions or []))


def pack_figures(pack: str, pm: Any = None) -> PackFigures:
    """Figures of `pack`'s Tracer-built splits, read from its committed task file through the domain's loader."""
    from tau_emotion.tracer.graph import build_graph
    from tau_emotion.tracer.review import read_decisions, review_path

    domain = load_domain(pack, pm)
    graph = build_graph(domain)
    tasks = domain.tasks(None)
    decisions = read_decisions(review_path(domain))
    return PackFigures(pack=pack, tools=len(graph.graph), edges=graph.graph.number_of_edges(),
                       density=round(graph.density, 3), readme=package_dir(domain) / "README.md",
                       splits=[split_figures(domain, split, tasks, decisions) for split in REBUILD[pack]])


def commands(pack: str) -> list[str]:
    builds = [f"tau tracer build {pack} --split {split} {flags}" for split, flags in REBUILD[pack].items()]
    return builds + [f"tau tracer audit {pack} --split {split}" for split in REBUILD[pack]]


def block(fig: PackFigures) -> str:
    """The README block for `fig` (markers included)."""
    order = " then ".join(f"`{s}`" for s in REBUILD[fig.pack])
    lines = [
        START,
        "<!-- generated by `python benchmarks/pack_figures.py --write` from data/tasks.json: do not edit by hand -->",
        "",
        f"Rebuild the Tracer-built splits in this order ({order}), starting from a `tasks.json` that holds only the "
        f"hand-written splits (`python benchmarks/pack_figures.py --rebuild {fig.pack}` prints the whole script), "
        f"then audit them:",
        "",
        "```",
        *commands(fig.pack),
        "```",
        "",
        f"Tool graph (`tau tracer graph {fig.pack}`, with the pack's hints): {fig.tools} tools, {fig.edges} edges, "
        f"density {fig.density:.3f}. The committed splits hold:",
        "",
        "| split | tasks | users | gold calls avg (min-max) | intents 1/2/3+ | policy-challenge tasks "
        "| challenge kinds (`transfer`: handed over) | tasks with a decision rule (share; rules proceed/decline) "
        "| reviewed (accepted/edited/rejected and replaced) |",
        "|---|---|---|---|---|---|---|---|---|",
        *(s.row() for s in fig.splits),
        "",
        f"A person's decisions on these tasks (`tau tracer review {fig.pack} --split test`) are kept in "
        f"`data/review.jsonl`; every rebuild above honours them (docs/writing-a-pack.md, \"Reviewing the tasks\").",
        END,
    ]
    return "\n".join(lines)


def package_dir(domain: Any) -> Path:
    """The folder of the pack's package, where its README and data/tasks.json live (the install `tau` uses)."""
    from importlib.resources import files

    return Path(str(files(domain.package)))


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def stale(figures: list[PackFigures]) -> list[str]:
    """READMEs (repo-relative) whose block is missing or differs from what the committed splits give."""
    out = []
    for fig in figures:
        found = BLOCK.findall(fig.readme.read_text(encoding="utf-8"))
        if found != [block(fig)]:
            out.append(shown(fig.readme))
    return out


def command_seed(pack: str, split: str) -> int:
    flags = REBUILD[pack][split].split()
    return int(flags[flags.index("--seed") + 1])


def seed_mismatches(figures: list[PackFigures]) -> list[str]:
    """Splits whose tasks record a build seed other than the README command's: the command does not make them."""
    return [f"{fig.pack} {s.split}: built with seed {', '.join(map(str, s.seeds)) or '(none recorded)'}, "
            f"the README command says --seed {command_seed(fig.pack, s.split)}"
            for fig in figures for s in fig.splits if s.seeds != (command_seed(fig.pack, s.split),)]


def write(fig: PackFigures) -> bool:
    """Rewrite the block in `fig`'s README; True when the text changed. A README without exactly one block fails."""
    path = fig.readme
    text = path.read_text(encoding="utf-8")
    if len(BLOCK.findall(text)) != 1:
        raise SystemExit(f"{shown(path)}: needs exactly one '{START}' ... '{END}' block in its Tasks "
                         f"section (put the two marker lines there and run --write again)")
    new = BLOCK.sub(lambda _: block(fig), text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def strip(pack: str, path: Path | None = None) -> int:
    """Drop the Tracer-built splits (those in REBUILD) from `pack`'s data/tasks.json (or `path`), keeping the
    hand-written ones in the layout `tau tracer build` writes; returns the tasks kept."""
    from tau_emotion.tracer.build import pack_tasks_path

    path = path if path is not None else pack_tasks_path(load_domain(pack))
    rows = json.loads(path.read_text(encoding="utf-8"))
    kept = [row for row in rows if row.get("split") not in REBUILD[pack]]
    path.write_text(json.dumps(kept, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(kept)


def rebuild_script(packs: list[str]) -> str:
    lines = ["#!/bin/sh",
             "# Rebuild every Tracer-built split from the hand-written splits alone (test, then train), audit, and",
             "# refresh the README blocks. Generated by `python benchmarks/pack_figures.py --rebuild`; run from the repo root.",
             "set -e"]
    for pack in packs:
        lines += ["", f"# {pack}", f"python benchmarks/pack_figures.py --strip {pack}"]
        lines += [c for c in commands(pack) if c.startswith("tau tracer build")]
    lines += [""] + [f"tau tracer audit {p} --split {s} > /dev/null || echo 'audit FAILED: {p} {s}'"
                     for p in packs for s in REBUILD[p]]
    lines += ["", f"python benchmarks/pack_figures.py --write {' '.join(packs)}"]
    return "\n".join(lines) + "\n"


def report(fig: PackFigures) -> str:
    lines = [f"{fig.pack}: graph {fig.tools} tools, {fig.edges} edges, density {fig.density:.3f}"]
    for s in fig.splits:
        kinds = ", ".join(f"{k} {c}" for k, c in s.kinds) or "none"
        lines.append(f"  {s.split:5} {s.tasks} tasks, {s.users} users, gold calls {s.calls_avg:.2f} "
                     f"({s.calls_min}-{s.calls_max}), intents 1/2/3+ {'/'.join(map(str, s.intents))}, "
                     f"{s.challenge_tasks} challenge tasks ({kinds}), {s.rule_tasks} decision rules "
                     f"({s.proceed} proceed, {s.decline} decline)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packs", nargs="*", metavar="PACK", help=f"packs (default: all of {', '.join(REBUILD)})")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite each README's generated block")
    mode.add_argument("--check", action="store_true", help="exit 1 naming each README whose block is stale")
    mode.add_argument("--rebuild", action="store_true", help="print a shell script that rebuilds every split")
    mode.add_argument("--strip", action="store_true", help="drop the Tracer-built splits from data/tasks.json")
    args = parser.parse_args(argv)
    unknown = [p for p in args.packs if p not in REBUILD]
    if unknown:
        parser.error(f"unknown pack(s) {', '.join(unknown)}; known: {', '.join(REBUILD)}")
    packs = args.packs or list(REBUILD)
    if args.rebuild:
        sys.stdout.write(rebuild_script(packs))
        return 0
    if args.strip:
        if not args.packs:
            parser.error("--strip needs the pack(s) to strip")
        for pack in packs:
            print(f"{pack}: kept {strip(pack)} hand-written task(s)", file=sys.stderr)
        return 0
    from tau_emotion.core.manager import load_all_plugins

    pm = load_all_plugins()
    figures = [pack_figures(pack, pm) for pack in packs]
    if args.check:
        bad = stale(figures)
        for path in bad:
            print(f"stale: {path} (run python benchmarks/pack_figures.py --write)", file=sys.stderr)
        seeds = seed_mismatches(figures)
        for line in seeds:
            print(f"seed: {line} (rebuild the split with its README command)", file=sys.stderr)
        return 1 if bad or seeds else 0
    if args.write:
        for fig in figures:
            print(f"{shown(fig.readme)}: {'rewritten' if write(fig) else 'unchanged'}")
        return 0
    print("\n".join(report(fig) for fig in figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
