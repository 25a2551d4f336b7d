"""The τ-Emotion-Bench release as classic domains (`tauemo-*`, suite `tau-emotion-public`).

The release (`tau_emotion_bench`, installed from source) is rarely installed, so a synthetic package in
its layout, `tests/fixtures/tauemo_fixture`, goes on sys.path: four envs whose constructors take
`task_split` and `emotion_enabled`, three emotional test tasks each (one family/leaf mismatch per env,
a leaf synonym, a task with its own anchor) and their no-emotion twins. With the real release
installed, `test_real_release_*` compare every gold trajectory's reward with theirs.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tau_emotion.core.models import RunConfig
from tau_emotion.core.reward import check_task, gold_messages, replay, score
from tau_emotion.core.runner import prepare_run, run_sync
from tau_emotion.domain_packs import classic
from tau_emotion.domain_packs.classic import emotions
from tau_emotion.domain_packs.classic.source import _no_emotion_twins
from tau_emotion.emotion_pack import CONTROL_SUFFIX, control_copy
from tau_emotion.emotion_pack.taxonomy import EmotionBlock
from tests.domain_packs.classic_parity import STOP, native_env, native_reward, our_reward, their_gold_trajectory

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tauemo_fixture"
NAMES = ["tauemo-airline", "tauemo-retail", "tauemo-telecom", "tauemo-telehealth"]


def _real_release() -> bool:
    spec = importlib.util.find_spec("tau_emotion_bench")
    return spec is not None and FIXTURE not in Path(spec.origin or "").parents


needs_release = pytest.mark.skipif(not _real_release(), reason=(
    "the τ-Emotion-Bench release (tau_emotion_bench) is not installed: install it from source to compare "
    "every gold trajectory's reward with its calculate_reward"))


def _forget_package() -> None:
    for name in [m for m in list(sys.modules) if m.split(".")[0] == "tau_emotion_bench"]:
        del sys.modules[name]
    for plugin in (classic.PLUGINS[n] for n in NAMES):  # the entry points' objects cache what they loaded
        plugin._domain = None
        plugin.env.__dict__.pop("source", None)
        plugin.env.__dict__.pop("tool_classes", None)


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


@pytest.mark.skipif(_real_release(), reason="the release is installed")
def test_without_the_release_the_domains_are_unavailable_with_the_hint(tau):
    _forget_package()
    listing = tau("plugins")
    for name in NAMES:
        line = next(x for x in listing.output.splitlines() if x.startswith(name))
        assert "UNAVAILABLE" in line and "install the τ-Emotion-Bench release from source" in line
    failed = tau("run", "--suite", "tau-emotion-public")
    assert failed.exit_code == 1 and "from source" in failed.output


def test_env_reading_finds_the_no_emotion_splits(release):
    for plugin in release.values():
        plugin.check_available()
        assert plugin.env.source.splits == {
            "test": f"tau_emotion_bench.envs.{plugin.env.env}.tasks_test:TASKS_TEST",
            "test-no-emotion": f"tau_emotion_bench.envs.{plugin.env.env}.tasks_test_no_emotion:TASKS_TEST"}
    # an env that names only `tasks_test` (or computes the other name) still gets the sibling module
    with release["tauemo-airline"].env.light():
        assert _no_emotion_twins({"test": "tau_emotion_bench.envs.airline.tasks_test:TASKS_TEST",
                                  "dev": "tau_emotion_bench.envs.airline.tasks_dev:TASKS_DEV"}) == {
            "test-no-emotion": "tau_emotion_bench.envs.airline.tasks_test_no_emotion:TASKS_TEST"}


def test_their_conditions_become_emotion_blocks_and_mismatches_are_noted(release):
    mismatched = []
    for plugin in release.values():
        domain = plugin.domain()
        tasks = domain.tasks("test")
        assert len(tasks) == 3 and len(domain.tasks("test-no-emotion")) == 3
        assert all(t.block("emotion") is None and not t.meta.get("notes") for t in domain.tasks("test-no-emotion"))
        for task in tasks:
            block = EmotionBlock(**task.block("emotion"))
            assert block.anchor and task.meta["emotion_source"]["leaf"]
            assert all(check_task(domain, t) is None for t in domain.tasks(None))
            if task.meta["emotion_source"].get("family_mismatch"):
                mismatched.append(task.id)
                assert "family/leaf mismatch" in task.meta["notes"][0]
    assert mismatched == ["tauemo-airline-test-001", "tauemo-retail-test-002", "tauemo-telecom-test-000",
                          "tauemo-telehealth-test-001"]
    airline = release["tauemo-airline"].domain().tasks("test")
    assert airline[1].block("emotion")["family"] == "enjoyment"  # their 'fear' with 'excitement': ours wins
    assert airline[0].block("emotion") | {"anchor": None} == {
        "family": "fear", "emotion": "anxiety", "politeness": "warm", "urgency": "high", "trust": "cautious",
        "anchor": None}  # polite/high/medium
    assert airline[2].meta["emotion_source"]["leaf_synonym"] == "anxiety"  # their 'worry'
    retail = release["tauemo-retail"].domain().tasks("test")
    assert retail[1].block("emotion")["anchor"] == "You are thrilled about this purchase and say so."
    assert retail[1].meta["emotion_source"]["anchor"] == "task" and airline[0].meta["emotion_source"]["anchor"] == "bank"


def test_bank_anchors_are_seeded_by_task_id_and_odd_values_are_noted():
    fields = {"emotion_family": "anger", "emotion_leaf": "Frustration", "dimension_politeness": "rude",
              "dimension_urgency": "urgent", "dimension_trust_in_agent": "sceptical-ish"}
    block, source, notes = emotions.emotion_block(fields.get, "x-test-000")
    again, _, _ = emotions.emotion_block(fields.get, "x-test-000")
    assert block == again and block["emotion"] == "frustration" and block["urgency"] == "high"
    assert block["trust"] == "cautious" and notes == [
        "x-test-000: dimension_trust_in_agent 'sceptical-ish' is not a known value; taken as 'cautious'"]
    unknown = {**fields, "emotion_leaf": "boredom"}.get
    block, source, notes = emotions.emotion_block(unknown, "x-test-001")
    assert block is None and source["unmapped_leaf"] and "maps to none of ours" in notes[0]


def test_every_leaf_synonym_and_dimension_value_names_one_of_ours():
    from tau_emotion.emotion_pack.taxonomy import DIMENSIONS, EMOTIONS, FAMILIES

    assert set(emotions.LEAF_SYNONYMS.values()) <= set(EMOTIONS)
    assert not set(emotions.LEAF_SYNONYMS) & set(EMOTIONS)
    assert set(emotions.FAMILY_SYNONYMS.values()) <= set(FAMILIES)
    for dim, (_, table) in emotions.DIMENSION_VALUES.items():
        assert set(table.values()) == set(DIMENSIONS[dim]) and all(table[v] == v for v in DIMENSIONS[dim])


def test_the_control_arm_plays_the_no_emotion_twin(release, tmp_path):
    task = release["tauemo-airline"].domain().tasks("test")[0]
    twin = release["tauemo-airline"].domain().tasks("test-no-emotion")[0]
    control = control_copy(task)
    assert control.id == task.id + CONTROL_SUFFIX and control.block("emotion") is None
    assert control.user.instruction == twin.user.instruction != task.user.instruction
    assert control.meta["emotion_control_user"]["task"] == twin.id and control.gold == task.gold
    config = RunConfig(plugins=["emotion", "tauemo-airline"], trials=1, options={
        "progress": {"no_progress": True}, "emotion": {"emotion_control": True}})
    run = prepare_run(config, str(tmp_path / "r.sqlite"))
    summary = run_sync(run)
    controls = [t for t in run.tasks if t.id.endswith(CONTROL_SUFFIX)]
    assert len(controls) == 3 and all("You feel" not in t.user.instruction for t in controls)
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
    assert "1 of 3 task(s) in tauemo-telecom/test carry notes" in checked.output


def _parity(plugin, splits, *, all_gold_score_1=True):
    domain = plugin.domain()
    for split in splits:
        env = native_env(plugin, split)
        for task in domain.tasks(split):
            raw = env.tasks[task.meta["task_index"]]
            calls, said = their_gold_trajectory(raw)
            theirs = native_reward(plugin, env, task.meta["task_index"], calls, said)
            ours = score(domain, task, replay(domain, task), gold_messages(domain, task), STOP)[0]
            assert ours == theirs and (ours == 1.0 or not all_gold_score_1), task.id
            writes = [i for i, (name, _) in enumerate(calls) if name in domain.toolset.tools
                      and domain.toolset[name].writes]
            if writes:  # and one perturbation: the last write dropped (a dropped transfer differs by design)
                dropped = calls[:writes[-1]] + calls[writes[-1] + 1:]
                assert our_reward(domain, task, dropped, said) == native_reward(
                    plugin, env, task.meta["task_index"], dropped, said) == 0.0, task.id


def test_gold_rewards_equal_their_calculate_reward_on_the_fixture(release):
    for plugin in release.values():
        _parity(plugin, ["test", "test-no-emotion"])


@needs_release
@pytest.mark.parametrize("name", NAMES)
def test_real_release_gold_rewards_equal_theirs_and_conditions_map(name):
    plugin = classic.PLUGINS[name]
    domain = plugin.domain()
    tasks = domain.tasks("test")
    assert len(tasks) == 70
    assert all(t.block("emotion") is not None for t in tasks), [t.id for t in tasks if t.block("emotion") is None]
    mismatches = sum(bool(t.meta["emotion_source"].get("family_mismatch")) for t in tasks)
    print(f"{name}: {mismatches} of {len(tasks)} test tasks have a family/leaf mismatch")
    # every task of both splits, no sample; their own gold need not score 1 there, only the same as ours
    _parity(plugin, [s for s in domain.splits if s in ("test", "test-no-emotion")], all_gold_score_1=False)
