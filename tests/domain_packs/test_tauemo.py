"""The τ-Emotion-Bench release as classic domains (`tauemo-*`, suite `tau-emotion-public`).

The release (`tau_emotion_bench`, installed from source) is rarely installed, so a synthetic package in
its layout and vocabulary, `tests/fixtures/tauemo_fixture`, goes on sys.path: four envs whose
constructors take `task_split` and `emotion_enabled` (airline nests them as the release does, the
others the other way round), three emotional test tasks each (one family/leaf mismatch per env, the
emotion as an `Emotion Instruction:` paragraph but for one task) and their no-emotion twins (one worded
differently). With the real release installed, `test_real_release_*` check its vocabulary and twins
against ours and compare the reward of every gold trajectory, and of every one with its last write
dropped, with their own `calculate_reward` (about 6 minutes on 2 cores); without it they skip with the
install hint.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from tau_emotion.core.conditions import condition_space
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import RunConfig
from tau_emotion.core.reward import check_task, gold_messages, replay, score
from tau_emotion.core.runner import prepare_run, run_sync
from tau_emotion.domain_packs import classic
from tau_emotion.domain_packs.classic import emotions
from tau_emotion.domain_packs.classic.source import _no_emotion_twins
from tau_emotion.domain_packs.classic.tasks import convert_task, link_no_emotion_twins
from tau_emotion.emotion_pack import CONTROL_SUFFIX, control_copy
from tau_emotion.emotion_pack.taxonomy import DIMENSIONS, EmotionBlock
from tests.domain_packs.classic_parity import STOP, native_env, native_reward, our_reward, their_gold_trajectory

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tauemo_fixture"
NAMES = ["tauemo-airline", "tauemo-retail", "tauemo-telecom", "tauemo-telehealth"]


def _real_release() -> bool:
    spec = importlib.util.find_spec("tau_emotion_bench")
    return spec is not None and FIXTURE not in Path(spec.origin or "").parents


needs_release = pytest.mark.skipif(not _real_release(), reason=(
    "the τ-Emotion-Bench release (tau_emotion_bench) is not installed; to check it against ours, "
    + classic.DISTRIBUTIONS["tau_emotion_bench"].hint))


def _forget_package() -> None:
    for name in [m for m in list(sys.modules) if m.split(".")[0] == "tau_emotion_bench"]:
        del sys.modules[name]
    for plugin in (classic.PLUGINS[n] for n in NAMES):  # the entry points' objects cache what they loaded
        plugin._domains.clear()
        plugin.env.__dict__.pop("source", None)
        plugin.env.__dict__.pop("tool_classes", None)


@pytest.fixture(scope="module")
def space():
    """The emotion plugin's condition space, as the adapter gets it: from the plugin manager."""
    return condition_space(get_plugin_manager(["emotion"], defaults=False), emotions.BLOCK)


@pytest.fixture
def release(monkeypatch):
    """The fixture package on sys.path; the `tauemo-*` plugins, fresh."""
    _forget_package()
    monkeypatch.syspath_prepend(str(FIXTURE))
    yield {name: classic.PLUGINS[name] for name in NAMES}
    _forget_package()


def test_the_plugins_suite_and_entry_points_are_declared():
    from tau_emotion.plugins.suites import SUITES

    assert SUITES["tau-emotion-public"] == ["emotion", *NAMES]
    assert {n: classic.SUITES[n] for n in NAMES} == {n: ("tau_emotion_bench", n.split("-")[1]) for n in NAMES}
    assert "from source" in classic.DISTRIBUTIONS["tau_emotion_bench"].hint


def test_without_the_release_the_domains_are_unavailable_with_the_hint(tau, monkeypatch):
    _forget_package()
    monkeypatch.setitem(sys.modules, "tau_emotion_bench", None)  # absent, also where it is installed
    listing = tau("plugins")
    for name in NAMES:
        line = next(x for x in listing.output.splitlines() if x.startswith(name))
        assert "UNAVAILABLE" in line and "install the τ-Emotion-Bench release from source" in line
    failed = tau("run", "--suite", "tau-emotion-public")
    assert failed.exit_code == 1 and "from source" in failed.output
    _forget_package()


def test_env_reading_finds_the_no_emotion_splits(release):
    for plugin in release.values():
        plugin.check_available()
        assert plugin.env.source.splits == {
            "test": f"tau_emotion_bench.envs.{plugin.env.env}.tasks_test:TASKS",
            "test-no-emotion": f"tau_emotion_bench.envs.{plugin.env.env}.tasks_test_no_emotion:TASKS"}
    # an env that names only `tasks_test` (or computes the other name) still gets the sibling module
    with release["tauemo-airline"].env.light():
        assert _no_emotion_twins({"test": "tau_emotion_bench.envs.airline.tasks_test:TASKS_TEST",
                                  "dev": "tau_emotion_bench.envs.airline.tasks_dev:TASKS_DEV"}) == {
            "test-no-emotion": "tau_emotion_bench.envs.airline.tasks_test_no_emotion:TASKS_TEST"}



def test_their_conditions_become_emotion_blocks_and_mismatches_are_noted(release, space):
    mismatched = []
    for plugin in release.values():
        domain = plugin.domain(space)
        tasks, twins = domain.tasks("test"), domain.tasks("test-no-emotion")
        assert len(tasks) == 3 and len(twins) == 3
        assert all(t.block("emotion") is None and not t.meta.get("notes") for t in twins)
        assert all(check_task(domain, t) is None for t in domain.tasks(None))
        for task, twin in zip(tasks, twins, strict=True):
            block = EmotionBlock(**task.block("emotion"))
            assert block.anchor and task.meta["emotion_source"]["leaf"] == block.emotion
            assert "Emotion Instruction" not in task.user.instruction
            if task.meta["emotion_source"]["anchor"] == "instruction":  # the paragraph left the instruction
                assert task.user.instruction == twin.user.instruction or task.id == "tauemo-telecom-test-002"
            if task.meta["emotion_source"].get("family_mismatch"):
                mismatched.append(task.id)
                assert "family/leaf mismatch" in task.meta["notes"][0]
    assert mismatched == ["tauemo-airline-test-001", "tauemo-retail-test-002", "tauemo-telecom-test-000",
                          "tauemo-telehealth-test-001"]
    airline = release["tauemo-airline"].domain(space).tasks("test")
    assert airline[1].block("emotion")["family"] == "enjoyment"  # their 'fear' with 'excitement': ours wins
    assert airline[1].meta["emotion_source"] == {"family": "fear", "leaf": "excitement", "family_mismatch": True,
                                                 "anchor": "instruction"}
    assert airline[1].block("emotion")["anchor"] == "You can hardly wait to get this sorted and it shows."
    assert airline[0].block("emotion") | {"anchor": None} == {
        "family": "fear", "emotion": "anxiety", "politeness": "warm", "urgency": "high", "trust": "cautious",
        "anchor": None}
    assert airline[0].meta["emotion_source"]["anchor"] == "bank"  # no paragraph (as in their dev split)
    assert airline[0].user.instruction == "Your user id is mia_chen_1. Cancel your booking bo1."
    retail = release["tauemo-retail"].domain(space).tasks("test")
    assert retail[1].block("emotion")["anchor"] == "You are thrilled about this purchase and say so."


def test_the_emotion_paragraph_is_split_from_the_instruction():
    assert emotions.split_instruction("Cancel bo1.\n\nUse x for authentication.\nEmotion Instruction: You’re eager. "
                                      "Be curt.") == ("Cancel bo1.\n\nUse x for authentication.", "You’re eager. Be curt.")
    assert emotions.split_instruction("Cancel bo1.") == ("Cancel bo1.", None)
    assert emotions.split_instruction("Cancel bo1. Emotion Instruction:  ") == ("Cancel bo1. Emotion Instruction:  ", None)


def test_the_domain_gets_the_space_from_its_plugin_manager_and_without_one_has_no_emotion(release):
    with_space = get_plugin_manager(["emotion", "tauemo-airline"]).catalog("domains").get("tauemo-airline")
    without = get_plugin_manager(["tauemo-airline"]).catalog("domains").get("tauemo-airline")
    assert with_space is release["tauemo-airline"].domain(condition_space(get_plugin_manager(["emotion"]), "emotion"))
    assert with_space.tasks("test")[1].block("emotion")["family"] == "enjoyment"
    plain = without.tasks("test")[1]
    assert plain.block("emotion") is None and "emotion_source" not in plain.meta and not plain.meta.get("notes")
    assert plain.meta["emotion_control_user"]["task"] == "tauemo-airline-test-no-emotion-001"
    assert plain.user.instruction == with_space.tasks("test")[1].user.instruction  # the paragraph left it too


def test_values_outside_our_vocabulary_are_noted_not_guessed(space):
    fields = {"emotion_family": "Anger", "emotion_leaf": "Frustration", "dimension_politeness": "rude",
              "dimension_urgency": "high", "dimension_trust_in_agent": "skeptical"}
    block, source, notes = emotions.emotion_block(space, fields.get, "x-test-000")
    again, _, _ = emotions.emotion_block(space, fields.get, "x-test-000")
    assert block == again and block["emotion"] == "frustration" and block["urgency"] == "high"  # case is ignored
    assert block["politeness"] == "neutral" and source["anchor"] == "bank" and notes == [
        "x-test-000: dimension_politeness 'rude' is none of ours; taken as 'neutral'"]
    block, source, notes = emotions.emotion_block(space, {**fields, "emotion_family": "joy"}.get, "x-test-001",
                                                  "Be curt.")
    assert block["family"] == "anger" and block["anchor"] == "Be curt." and source["anchor"] == "instruction"
    assert "their family 'joy' with leaf 'Frustration'; ours is 'anger.frustration' (unknown family)" in notes[0]
    block, source, notes = emotions.emotion_block(space, {**fields, "emotion_leaf": "worry"}.get, "x-test-002")
    assert block is None and source["unmapped_leaf"] and notes == [
        "x-test-002: emotion leaf 'worry' is none of ours; no emotion block"]
    assert set(emotions.DIMENSION_FIELDS) == set(DIMENSIONS)


def _raw(user, instruction, actions=(("cancel", {"id": "a"}),), emotional=True):
    raw = {"user_id": user, "instruction": instruction, "outputs": [],
           "actions": [{"name": n, "kwargs": k} for n, k in actions]}
    if emotional:
        raw |= {"emotion_family": "fear", "emotion_leaf": "anxiety", "dimension_politeness": "warm",
                "dimension_urgency": "high", "dimension_trust_in_agent": "cautious"}
        raw["instruction"] += "\n\nEmotion Instruction: You worry."
    return raw


def test_twins_pair_by_index_only_with_the_same_user_and_gold(space):
    emotional = [_raw("u0", "Cancel a."), _raw("u1", "Cancel a."), _raw("u2", "Cancel a."), _raw("u3", "Cancel a."),
                 _raw("u4", "Cancel a.")]
    twins = [_raw("u0", "Cancel a.", emotional=False),                             # linked
             _raw("uX", "Cancel a.", emotional=False),                             # another user
             _raw("u2", "Cancel a.", (("cancel", {"id": "b"}),), emotional=False),  # another gold
             _raw("u3", "Please cancel a.", emotional=False)]                      # linked, worded differently
    tasks = [convert_task(r, domain="d", split=split, index=i, source="s", tools={"cancel"}, space=space)
             for split, raws in (("test", emotional), ("test-no-emotion", twins)) for i, r in enumerate(raws)]
    link_no_emotion_twins(tasks)
    linked = {t.id: t.meta["emotion_control_user"]["instruction"] for t in tasks if "emotion_control_user" in t.meta}
    assert linked == {"d-test-000": "Cancel a.", "d-test-003": "Please cancel a."}
    notes = {t.id: t.meta.get("notes") for t in tasks if t.split == "test" and t.meta.get("notes")}
    assert notes == {
        "d-test-001": ["d-test-001: its no-emotion twin d-test-no-emotion-001 has another user; not linked for the "
                       "control arm"],
        "d-test-002": ["d-test-002: its no-emotion twin d-test-no-emotion-002 has another gold; not linked for the "
                       "control arm"],
        "d-test-003": ["d-test-003: its no-emotion twin d-test-no-emotion-003 (same user and gold, linked) words the "
                       "instruction differently"],
        "d-test-004": ["d-test-004: no no-emotion twin at index 4 of test-no-emotion; not linked for the control arm"]}
    assert control_copy(tasks[3]).user.instruction == "Please cancel a." and tasks[3].user.instruction == "Cancel a."


def test_the_control_arm_plays_the_no_emotion_twin(release, tmp_path, space):
    task = release["tauemo-airline"].domain(space).tasks("test")[1]
    twin = release["tauemo-airline"].domain(space).tasks("test-no-emotion")[1]
    control = control_copy(task)
    assert control.id == task.id + CONTROL_SUFFIX and control.block("emotion") is None
    assert control.user.instruction == twin.user.instruction
    assert control.meta["emotion_control_user"]["task"] == twin.id and control.gold == task.gold
    config = RunConfig(plugins=["emotion", "tauemo-airline", "tauemo-telecom"], trials=1, options={
        "progress": {"no_progress": True}, "emotion": {"emotion_control": True}})
    run = prepare_run(config, str(tmp_path / "r.sqlite"))
    summary = run_sync(run)
    controls = {t.id: t for t in run.tasks if t.id.endswith(CONTROL_SUFFIX)}
    assert len(controls) == 6 and all(t.block("emotion") is None for t in controls.values())
    twins = {t.id: t for name in ("tauemo-airline", "tauemo-telecom")
             for t in release[name].domain(space).tasks("test-no-emotion")}
    assert all(t.user.instruction == twins[t.meta["emotion_control_user"]["task"]].user.instruction
               for t in controls.values())
    assert controls["tauemo-telecom-test-002" + CONTROL_SUFFIX].user.instruction.startswith(
        "Your user id is ava_ross_3. You want to talk to a human agent")  # the twin's own words
    assert summary["emotion_vs_control"]["control"]["avg_at_k"] == 1.0


def test_the_suite_runs_and_check_reports_the_mismatches(release, tau):
    ran = tau("run", "--suite", "tau-emotion-public", "--agent", "oracle", "--user", "scripted", "--trials", "1",
              "--no-progress", "--summary-json", "s.json")
    assert ran.exit_code == 0, ran.output
    summary = json.loads(Path("s.json").read_text())
    assert summary["avg_at_k"] == 1.0 and summary["n_tasks"] == 12
    listed = tau("tasks", "tauemo-airline", "--split", "test", "--json")
    assert all(t["emotion"]["anchor"] for t in json.loads(listed.output))
    checked = tau("tasks", "tauemo-telecom", "--check")
    assert checked.exit_code == 0 and "note: tauemo-telecom-test-000: family/leaf mismatch" in checked.output
    assert "note: tauemo-telecom-test-002: its no-emotion twin" in checked.output
    assert "2 of 3 task(s) in tauemo-telecom/test carry notes" in checked.output


def _their_reward(plugin, env, index, calls, said):
    gc.disable()  # their reward hashes the whole database as millions of tuples; the collector only slows it
    try:
        return native_reward(plugin, env, index, calls, said)
    finally:
        gc.enable()


def _parity(plugin, splits, *, all_gold_score_1=True, perturb=("test",)):
    """Gold reward equal to theirs on every task of `splits`; on `perturb`'s, also with the last write dropped.

    Returns their rewards for the perturbed trajectories: equality is the claim, not 0 (their data has
    tasks whose last write is already in the database, e.g. telecom-test-005's `add_device`).
    """
    domain = plugin.domain()
    perturbed = []
    for split in splits:
        env = native_env(plugin, split)
        for task in domain.tasks(split):
            index = task.meta["task_index"]
            calls, said = their_gold_trajectory(env.tasks[index])
            theirs = _their_reward(plugin, env, index, calls, said)
            ours = score(domain, task, replay(domain, task), gold_messages(domain, task), STOP)[0]
            assert ours == theirs and (ours == 1.0 or not all_gold_score_1), task.id
            writes = [i for i, (name, _) in enumerate(calls) if name in domain.toolset.tools
                      and domain.toolset[name].writes]
            if split in perturb and writes:  # a dropped transfer differs by design (see the pack's docstring)
                dropped = calls[:writes[-1]] + calls[writes[-1] + 1:]
                theirs = _their_reward(plugin, env, index, dropped, said)
                assert our_reward(domain, task, dropped, said) == theirs, (task.id, "last write dropped")
                perturbed.append(theirs)
    return perturbed


def test_gold_and_perturbed_rewards_equal_their_calculate_reward_on_the_fixture(release):
    for plugin in release.values():
        assert _parity(plugin, ["test", "test-no-emotion"]) == [0.0, 0.0]  # the fixture's writes all change state


# ---------------------------------------------------------------- the real release (installed from source)

# family/leaf mismatches of theirs per domain and split (README, "Classic suites"; docs/architecture.md §9)
MISMATCHES = {"tauemo-airline": {"test": 10, "train": 26, "dev": 4}, "tauemo-retail": {"test": 2, "train": 25, "dev": 7},
              "tauemo-telecom": {"test": 5, "train": 22}, "tauemo-telehealth": {"test": 2, "train": 15}}
REWORDED_TWINS = {"tauemo-telecom": ["tauemo-telecom-test-003", "tauemo-telecom-test-008", "tauemo-telecom-test-036",
                                    "tauemo-telecom-test-038"]}


def _key(task):
    return task.meta["user_id"], task.gold.model_dump_json()


@needs_release
@pytest.mark.parametrize("name", NAMES)
def test_real_release_vocabulary_anchors_and_twins_are_ours(name, space):
    """Every value of every split is ours, every test/train task is linked to a twin with its user and gold."""
    plugin = classic.PLUGINS[name]
    domain = plugin.domain(space)
    by_split = {s: domain.tasks(s) for s in domain.splits}
    assert len(by_split["test"]) == len(by_split["test-no-emotion"]) == 70
    mismatches, reworded = {}, []
    for split, tasks in by_split.items():
        if split.endswith("-no-emotion"):
            assert all(t.block("emotion") is None and "emotion_source" not in t.meta for t in tasks), split
            assert not any("Emotion Instruction" in t.user.instruction for t in tasks), split
            continue
        for task in tasks:
            source = task.meta["emotion_source"]
            assert task.block("emotion") is not None and not source.get("unmapped_leaf"), task.id
            notes = task.meta.get("notes", [])
            assert not [n for n in notes if "none of ours" in n or "unknown family" in n], task.id  # no guessing
            if split + "-no-emotion" not in by_split:  # their dev splits: no twins, no paragraph
                assert source["anchor"] == "bank" and "emotion_control_user" not in task.meta, task.id
                continue
            assert source["anchor"] == "instruction" and "emotion_control_user" in task.meta, task.id
            assert not [n for n in notes if "not linked" in n], task.id
            reworded += [task.id for n in notes if "words the instruction differently" in n]
        mismatches[split] = sum(bool(t.meta["emotion_source"].get("family_mismatch")) for t in tasks)
        twins = by_split.get(split + "-no-emotion")
        if twins:  # (user, gold) is unique in each split, so the index pair is the only content pair
            keys = Counter(map(_key, tasks))
            assert max(keys.values()) == 1 and keys == Counter(map(_key, twins)), split
            assert all(_key(t) == _key(twins[t.meta["task_index"]]) for t in tasks), split
    print(f"{name}: family/leaf mismatches per split {mismatches}; twins worded differently {len(reworded)}")
    assert mismatches == MISMATCHES[name], "the release changed: update MISMATCHES and the README's counts"
    assert [t for t in reworded if "-test-" in t] == REWORDED_TWINS.get(name, [])


@needs_release
def test_real_release_control_arm_plays_every_no_emotion_twin(tmp_path):
    config = RunConfig(plugins=["emotion", *NAMES], trials=1, options={"emotion": {"emotion_control": True}})
    run = prepare_run(config, str(tmp_path / "r.sqlite"))
    twins = {t.id: t for name in NAMES for t in classic.PLUGINS[name].domain().tasks("test-no-emotion")}
    controls = [t for t in run.tasks if t.id.endswith(CONTROL_SUFFIX)]
    emotional = [t for t in run.tasks if not t.id.endswith(CONTROL_SUFFIX)]
    assert len(controls) == len(emotional) == 280 and all(t.block("emotion") for t in emotional)
    for control in controls:
        twin = twins[control.meta["emotion_control_user"]["task"]]
        assert twin.id == control.id.removesuffix(CONTROL_SUFFIX).replace("-test-", "-test-no-emotion-")
        assert control.user.instruction == twin.user.instruction and control.gold == twin.gold
        assert control.block("emotion") is None


@needs_release
@pytest.mark.parametrize("name", NAMES)
def test_real_release_gold_and_perturbed_rewards_equal_theirs(name):
    plugin = classic.PLUGINS[name]
    domain = plugin.domain()
    assert len(domain.tasks("test")) == 70
    # every task of both splits, no sample; their own gold need not score 1 there, only the same as ours
    perturbed = _parity(plugin, ["test", "test-no-emotion"], all_gold_score_1=False)
    print(f"{name}: {len(perturbed)} test tasks with the last write dropped, {perturbed.count(1.0)} still score 1 "
          "in both")
    assert 0.0 in perturbed  # the perturbation changes something
