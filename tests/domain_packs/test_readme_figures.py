"""Each Tracer pack's README carries the figures of its committed splits (`benchmarks/pack_figures.py --check`).

The block between `<!-- tracer-figures:start -->` and `<!-- tracer-figures:end -->` is generated from
`data/tasks.json` and the tool graph; after a rebuild, `python benchmarks/pack_figures.py --write` refreshes it.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path

import pytest

from tau_emotion.core.manager import load_all_plugins

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "pack_figures.py"


@cache
def _bench():
    spec = importlib.util.spec_from_file_location("pack_figures", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@cache
def _figures():
    bench = _bench()
    pm = load_all_plugins()
    return [bench.pack_figures(pack, pm) for pack in bench.REBUILD]


def test_every_project_pack_with_tracer_built_splits_has_its_rebuild_flags():
    """A new pack's Tracer splits cannot escape the check: its flags go into REBUILD, its README gets the block."""
    from tau_emotion.core.domain import Domain

    catalog = load_all_plugins().catalog("domains")
    built = {}
    for name in catalog.names():
        obj = catalog.get(name)
        domain = obj if isinstance(obj, Domain) else obj()
        if (domain.package or "").startswith("tau_emotion.domain_packs."):
            splits = {t.split for t in domain.tasks(None) if t.meta.get("source") == "tracer"}
            if splits:
                built[name] = splits
    assert built == {pack: set(flags) for pack, flags in _bench().REBUILD.items()}


def test_every_tracer_pack_readme_carries_the_figures_of_its_committed_splits():
    stale = _bench().stale(_figures())
    assert not stale, (f"README figures differ from the committed splits: {', '.join(stale)}; "
                       f"run python benchmarks/pack_figures.py --write")


#: packs whose committed test split predates the README's current seed (airline 2 -> 5, movie 4 -> 6)
@pytest.mark.parametrize("pack", list(_bench().REBUILD))
def test_each_committed_split_was_built_with_its_readme_commands_seed(pack):
    figures = [f for f in _figures() if f.pack == pack]
    assert figures and not _bench().seed_mismatches(figures)


def test_the_figures_count_what_the_task_file_holds():
    """The table's numbers are the split's own: tasks per split, calls within the gold, kinds summing over tasks."""
    bench = _bench()
    pm = load_all_plugins()
    for fig in _figures():
        domain = bench.load_domain(fig.pack, pm)
        tasks = domain.tasks(None)
        for s in fig.splits:
            mine = [t for t in tasks if t.split == s.split and t.meta.get("source") == "tracer"]
            assert s.tasks == len(mine) > 0, (fig.pack, s.split)
            assert sum(s.intents) == s.tasks
            assert s.calls_min <= s.calls_avg <= s.calls_max
            assert s.challenge_tasks <= sum(c for _, c in s.kinds)
            assert s.rule_tasks <= s.proceed + s.decline
            assert 0 < s.users <= s.tasks
        assert fig.edges > 0 and 0 < fig.density <= 1


def test_a_changed_figure_or_a_missing_block_is_named(tmp_path):
    bench = _bench()
    fig = _figures()[0]
    text = fig.readme.read_text(encoding="utf-8")
    edited = tmp_path / "README.md"
    edited.write_text(text.replace(f"| `test` | {fig.splits[0].tasks} |", f"| `test` | {fig.splits[0].tasks + 1} |"),
                      encoding="utf-8")
    moved = type(fig)(**{**fig.__dict__, "readme": edited})
    assert bench.stale([moved]) == [str(edited)]
    edited.write_text(bench.BLOCK.sub("", text), encoding="utf-8")
    assert bench.stale([moved]) == [str(edited)]
    with pytest.raises(SystemExit, match="needs exactly one"):
        bench.write(moved)
    edited.write_text(text + f"\n{bench.START}\nstale\n{bench.END}\n", encoding="utf-8")
    assert bench.stale([moved]) == [str(edited)]  # a second block is stale too, whatever it says


def test_write_restores_a_stale_block_and_the_rebuild_script_uses_the_readme_commands(tmp_path):
    bench = _bench()
    fig = _figures()[-1]
    text = fig.readme.read_text(encoding="utf-8")
    edited = tmp_path / "README.md"
    edited.write_text(bench.BLOCK.sub(bench.START + "\nold figures\n" + bench.END, text), encoding="utf-8")
    moved = type(fig)(**{**fig.__dict__, "readme": edited})
    assert bench.write(moved) is True
    assert edited.read_text(encoding="utf-8") == text
    assert bench.write(moved) is False
    script = bench.rebuild_script([fig.pack])
    builds = [line for line in script.splitlines() if line.startswith("tau tracer build")]
    assert builds == [c for c in bench.commands(fig.pack) if c.startswith("tau tracer build")]
    assert builds[0].split()[5] == "test" and builds[1].split()[5] == "train"
    assert script.index(f"--strip {fig.pack}") < script.index(builds[0])
    for command in builds:
        assert command in text


def test_strip_keeps_only_the_hand_written_splits_in_the_builds_layout(tmp_path):
    import json

    from tau_emotion.tracer.build import merge_into_file, pack_tasks_path

    bench = _bench()
    domain = bench.load_domain("airline")
    copy = tmp_path / "tasks.json"
    copy.write_bytes(pack_tasks_path(domain).read_bytes())
    hand = [t for t in domain.tasks(None) if t.split not in bench.REBUILD["airline"]]
    assert bench.strip("airline", copy) == len(hand) > 0
    rows = json.loads(copy.read_text(encoding="utf-8"))
    assert [r["id"] for r in rows] == [t.id for t in hand]
    before = copy.read_bytes()
    merge_into_file(copy, "test", [])  # what a build writes around the kept splits
    assert copy.read_bytes() == before
