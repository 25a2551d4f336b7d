"""The classic adapter: τ-bench-style env packages as domains, with rewards equal to their own env's.

Parity is checked against their env itself (`Env.step` + `calculate_reward`, one env per domain, reset
per task) for every test task of the four τ-Trait domains, plus perturbed trajectories for a seeded
sample. Their env reloads and hashes the whole database twice per task (~0.3 s an airline task with the
garbage collector paused, twice that without), so their rewards are computed once per module.
A fake package in tmp_path covers what tau-trait does not exercise, and runs without tau-trait.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import multiprocessing
import os
import random
import re
import subprocess
import sys
import textwrap
from concurrent.futures import ProcessPoolExecutor

import pytest

from tau_emotion.core.models import Message, Termination
from tau_emotion.core.reward import check_task, gold_messages, replay, score
from tau_emotion.core.state import Database
from tau_emotion.core.tools import Toolset
from tau_emotion.plugins import classic

# importing tau_trait for real needs OPENAI_API_KEY, so probe with find_spec instead of importorskip
needs_tau_trait = pytest.mark.skipif(importlib.util.find_spec("tau_trait") is None,
                                     reason="tau-trait is not installed: pip install 'tau-emotion-bench[classic]'")
TAU_TRAIT = [classic.tautrait_airline, classic.tautrait_retail, classic.tautrait_telecom, classic.tautrait_telehealth]
TEST_TASKS = {"tautrait-airline": 60, "tautrait-retail": 120, "tautrait-telecom": 2, "tautrait-telehealth": 12}
STOP = Termination(reason="user_stop")


def their_gold_trajectory(raw):
    """Their task record as an agent would play it: tell the outputs, make every gold call (unknown ones too)."""
    said = ["; ".join(raw.outputs)] if raw.outputs else []
    return [(a.name, a.kwargs) for a in raw.actions], said


def our_reward(domain, task, calls, said):
    """Our reward for the same trajectory: calls on a fresh state (stopping at a terminal tool, as the stop plugin does)."""
    state = domain.database.state()
    messages = [Message(role="assistant", content=text) for text in said]
    for name, arguments in calls:
        text, is_error = domain.toolset.call(state, name, arguments)
        messages.append(Message(role="tool", name=name, content=text, error=is_error))
        if not is_error and domain.toolset.is_terminal(name):
            break
    return score(domain, task, state, messages, STOP)[0]


def their_gold_rewards(job):
    """Their reward for the gold trajectory of some test tasks of one domain: one env, reset per task."""
    name, task_ids = job
    suite = next(s for s in TAU_TRAIT if s.name == name)
    env = suite.native_env("test")
    wanted = set(task_ids)
    rewards = {}
    gc.disable()  # their hash builds millions of tuples; pausing the collector halves the time, changes nothing
    try:
        for task in suite.domain().tasks("test"):
            if task.id in wanted:
                index = task.meta["task_index"]
                calls, said = their_gold_trajectory(env.tasks[index])
                rewards[task.id] = classic.native_reward(suite, env, index, calls, said)
    finally:
        gc.enable()
    return name, rewards


@pytest.fixture(scope="module")
def native():
    """Their env per τ-Trait domain and their gold reward for every test task, by our task id.

    Their side costs ~40 s in one process, so the tasks are shared among forked workers when there
    are cores for them (nothing in their package or ours runs a thread that a fork could break).
    """
    envs = {suite.name: suite.native_env("test") for suite in TAU_TRAIT}  # imports their package once, before forking
    jobs = []
    for suite in TAU_TRAIT:
        ids = [t.id for t in suite.domain().tasks("test")]
        jobs.extend((suite.name, ids[i:i + 30]) for i in range(0, len(ids), 30))
    workers = min(len(os.sched_getaffinity(0)), 4)
    if workers > 1:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            results = list(pool.map(their_gold_rewards, jobs))
    else:
        results = [their_gold_rewards(job) for job in jobs]
    rewards = {name: {} for name in envs}
    for name, part in results:
        rewards[name].update(part)
    return {name: (env, rewards[name]) for name, env in envs.items()}


# --------------------------------------------------------------------------- tau-trait


@needs_tau_trait
@pytest.mark.parametrize("suite", TAU_TRAIT, ids=lambda s: s.name)
def test_gold_reward_equals_their_env_for_every_test_task(native, suite):
    domain = suite.domain()
    tasks = domain.tasks("test")
    assert len(tasks) == TEST_TASKS[suite.name]
    _, theirs = native[suite.name]
    ours = {t.id: score(domain, t, replay(domain, t), gold_messages(domain, t), STOP)[0] for t in tasks}
    assert ours == theirs
    assert re.fullmatch(rf"{suite.name}-test-\d{{3}}", tasks[17 % len(tasks)].id)


@needs_tau_trait
@pytest.mark.parametrize("suite", TAU_TRAIT, ids=lambda s: s.name)
def test_perturbed_trajectories_agree_with_their_env(native, suite):
    """Dropped or doubled writes, outputs withheld or said with thousands separators: same reward as theirs."""
    env, _ = native[suite.name]
    domain = suite.domain()
    tasks = domain.tasks("test")
    sample = random.Random(17).sample(tasks, min(5, len(tasks)))
    checked = []
    gc.disable()
    try:
        for task in sample:
            gold = [(a.name, a.arguments) for a in task.gold.actions]
            writes = [i for i, (name, _) in enumerate(gold) if domain.toolset[name].writes]
            said = ["; ".join(task.gold.outputs)] if task.gold.outputs else []
            variants = {"outputs withheld": (gold, [])} if said else {}
            if writes:
                last = writes[-1]
                variants["last write dropped"] = (gold[:last] + gold[last + 1:], said)
                variants["last write twice"] = (gold[:last + 1] + gold[last:],
                                                [re.sub(r"\b(\d)(\d{3})\b", r"\1,\2", s) for s in said])
            for label, (calls, told) in variants.items():
                theirs = classic.native_reward(suite, env, task.meta["task_index"], calls, told)
                assert our_reward(domain, task, calls, told) == theirs, (task.id, label)
                checked.append(theirs)
    finally:
        gc.enable()
    if suite is not classic.tautrait_telecom:  # telecom's two tasks have no outputs and one write
        assert 0.0 in checked


@needs_tau_trait
def test_tau_trait_suite_runs_and_every_reward_matches_their_env(tau, tmp_path, native):
    result = tau("run", "--suite", "tau-trait", "--agent", "oracle", "--user", "scripted", "--trials", "1",
                 "--summary-json", "s.json", "--no-progress", "--db", str(tmp_path / "runs.sqlite"))
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["n_tasks"] == sum(TEST_TASKS.values()) and summary["errors"] == 0
    assert set(summary["by_domain"]) == set(TEST_TASKS)
    shown = json.loads(tau("show", summary["run_id"], "--json", "--db", str(tmp_path / "runs.sqlite")).output)
    ours = {t["task_id"]: t["reward"] for t in shown["trials"]}
    theirs = {task_id: reward for _, rewards in native.values() for task_id, reward in rewards.items()}
    assert ours == theirs


@needs_tau_trait
@pytest.mark.parametrize("suite", TAU_TRAIT, ids=lambda s: s.name)
def test_tasks_check_lists_exactly_the_tasks_broken_in_their_env(tau, native, suite):
    result = tau("tasks", suite.name, "--check")
    assert result.exit_code == 0, result.output
    listed = set(re.findall(rf"task '({suite.name}-test-\d+)'", result.output))
    _, theirs = native[suite.name]
    assert listed == {task_id for task_id, reward in theirs.items() if reward != 1.0}
    n = TEST_TASKS[suite.name]
    assert f"{n - len(listed)} of {n} task(s) in {suite.name}/test score 1" in result.output


@needs_tau_trait
def test_tasks_tools_policy_and_database_are_theirs():
    airline = classic.tautrait_airline.domain()
    task = airline.tasks("test")[0]
    assert task.user.known["user_id"] == task.meta["user_id"] == "mia_li_3668"
    assert task.user.instruction.startswith("Your user id is mia_li_3668")
    book = airline.toolset["book_reservation"]
    assert book.writes and not book.terminal
    assert book.schema == classic.tautrait_airline.tool_classes()[0].get_info()  # verbatim, unknown keys kept
    assert airline.toolset.is_terminal("transfer_to_human_agents")
    assert not airline.toolset["search_onestop_flight"].writes
    assert "airline agent" in airline.policy.lower()
    assert {name: len(rows) for name, rows in airline.database.tables.items()} == {
        "flights": 300, "reservations": 2000, "users": 502}
    # the user id is known to the user only when the instruction says it (retail users give name and zip)
    retail = classic.tautrait_retail.domain().tasks("test")[0]
    assert "user_id" not in retail.user.known and retail.user.known["zip_code"] == "19122"
    # a gold call of a tool that does not exist does nothing in their env; it is dropped and kept in meta
    broken_call = next(t for t in airline.tasks("test") if "dropped_gold_actions" in t.meta)
    assert broken_call.meta["dropped_gold_actions"][0]["name"] == "update_reservation_baggage"


@needs_tau_trait
def test_splits_and_the_telecom_dev_split_that_does_not_import():
    assert classic.tautrait_retail.domain().splits == ["dev", "test", "train"]
    telecom = classic.tautrait_telecom.domain()
    assert telecom.splits == ["test", "train"]
    assert "TASKS_DEV" in telecom.meta["skipped_splits"]["dev"]
    assert "split 'dev' unavailable" in telecom.description


@needs_tau_trait
def test_write_flags_cover_every_tool_that_changes_data():
    """Replaying all gold calls with every tool in write mode: a tool that changed a row must be marked `writes`."""
    for suite in TAU_TRAIT:
        domain = suite.domain()
        all_writes = Toolset([classic.ClassicTool(c, writes=True) for c in suite.tool_classes()])
        changed = set()
        for task in domain.tasks(None):
            state = domain.database.state()
            for action in task.gold.actions:
                before = state.content_hash
                all_writes.call(state, action.name, action.arguments)
                if state.content_hash != before:
                    changed.add(action.name)
        assert changed, suite.name
        assert all(domain.toolset[name].writes for name in changed), (suite.name, changed)


@needs_tau_trait
def test_loading_a_classic_domain_imports_no_model_library(tmp_path):
    script = textwrap.dedent("""
        import sys
        from tau_emotion.plugins import classic
        assert "tau_trait" not in sys.modules
        for suite in classic.PLUGINS[:4]:
            domain = suite.domain()
            _ = domain.tasks(None), domain.toolset, domain.policy, domain.database.content_hash
        print(",".join(m for m in ("litellm", "openai", "tau_trait", "tau_trait.envs.base") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


@needs_tau_trait
def test_replays_leave_the_shared_snapshot_untouched():
    """Read-only tools see uncopied rows; after every replay and run above, the snapshot must be as loaded."""
    for suite in TAU_TRAIT:
        domain = suite.domain()
        for task in domain.tasks(None):
            replay(domain, task)
        assert Database(domain.database.tables).content_hash == suite.database().content_hash, suite.name


# --------------------------------------------------------------------------- without tau-trait


@pytest.mark.parametrize("how", ["find_spec", "sys.modules"])
def test_without_tau_trait_plugins_are_listed_unavailable_and_nothing_else_breaks(tau, tmp_path, monkeypatch, how):
    if how == "find_spec":
        real = importlib.util.find_spec

        def find_spec(name, *args, **kwargs):
            return None if name.split(".")[0] == "tau_trait" else real(name, *args, **kwargs)

        monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    else:
        monkeypatch.setitem(sys.modules, "tau_trait", None)
    listing = tau("plugins")
    assert listing.exit_code == 0, listing.output
    for suite in TAU_TRAIT:
        line = next(x for x in listing.output.splitlines() if x.startswith(suite.name))
        assert f"UNAVAILABLE: plugin '{suite.name}' is unavailable: pip install 'tau-emotion-bench[classic]'" in line
    domains = tau("domains")
    assert domains.exit_code == 0 and "mock" in domains.output and "tautrait" not in domains.output
    assert tau("suites").exit_code == 0
    db = str(tmp_path / "r.sqlite")
    assert tau("run", "--plugins", "mock", "--trials", "1", "--no-progress", "--db", db).exit_code == 0
    failed = tau("run", "--suite", "tau-trait", "--db", db)
    assert failed.exit_code == 1 and len(failed.output.strip().splitlines()) == 1
    assert "pip install 'tau-emotion-bench[classic]'" in failed.output


def test_module_import_is_cheap():
    out = subprocess.run([sys.executable, "-c", "import sys, tau_emotion.plugins.classic; "
                          "print([m for m in ('tau_trait', 'tau_bench', 'litellm') if m in sys.modules])"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_tau_bench_plugins_say_how_to_install_when_absent(monkeypatch):
    monkeypatch.setitem(sys.modules, "tau_bench", None)
    for suite in (classic.taubench_airline, classic.taubench_retail):
        with pytest.raises(classic.PluginUnavailable, match="tau-bench from source"):
            suite.check_available()


@pytest.mark.skipif(importlib.util.find_spec("tau_bench") is None, reason="tau_bench is not installed (from source)")
@pytest.mark.parametrize("suite", [classic.taubench_airline, classic.taubench_retail], ids=lambda s: s.name)
def test_tau_bench_sample_agrees_with_their_env(suite):
    domain = suite.domain()
    env = suite.native_env("test")
    for task in random.Random(3).sample(domain.tasks("test"), 5):
        calls, said = their_gold_trajectory(env.tasks[task.meta["task_index"]])
        theirs = classic.native_reward(suite, env, task.meta["task_index"], calls, said)
        assert score(domain, task, replay(domain, task), gold_messages(domain, task), STOP)[0] == theirs, task.id


# --------------------------------------------------------------------------- a fake τ-bench-style package

_NO_INIT = "raise ImportError('{}/__init__.py must not run when the adapter loads a domain')\n"
FAKE = {
    "fakebench/__init__.py": _NO_INIT.format("fakebench"),
    "fakebench/envs/__init__.py": _NO_INIT.format("fakebench/envs"),
    "fakebench/envs/shop/__init__.py": _NO_INIT.format("fakebench/envs/shop"),
    "fakebench/envs/shop/env.py": """
        from fakebench.envs.base import Env
        from .data import load_data
        from .tools import ALL_TOOLS
        from fakebench.envs.shop.wiki import WIKI
        RULES = ["be kind"]

        class MockShopDomainEnv(Env):
            def __init__(self, user_strategy="llm", user_model="gpt-4o", task_split="test"):
                if task_split == "test":
                    from fakebench.envs.shop.tasks_test import TASKS as tasks
                elif task_split == "dev":
                    from .tasks_dev import TASKS_DEV as tasks
                else:
                    raise ValueError(task_split)
                super().__init__(data_load_func=load_data, tools=ALL_TOOLS, tasks=tasks, wiki=WIKI, rules=RULES,
                                 user_strategy=user_strategy, user_model=user_model)
                self.terminate_tools = ["transfer_to_human"]
    """,
    "fakebench/envs/shop/wiki.py": "WIKI = 'The shop policy. ' * 10\n",
    "fakebench/envs/shop/data/__init__.py": """
        def load_data():
            return {"users": {"ann_1": {"name": {"first": "Ann"}, "email": "ann@x.org", "orders": []}},
                    "orders": {"o1": {"user_id": "ann_1", "total": 5}},
                    "log": [], "counter": 0}
    """,
    "fakebench/envs/shop/tools/__init__.py": """
        import json

        def tool(name, invoke):
            info = {"type": "function", "function": {"name": name, "description": name,
                    "parameters": {"type": "object", "properties": {}}, "strict": False}}
            return type(name, (), {"invoke": staticmethod(invoke), "get_info": staticmethod(lambda: info)})

        def find_user(data, email):
            return next((uid for uid, u in data["users"].items() if u["email"] == email), "Error: not found")

        def rename_user(data, user_id, first):
            data["users"][user_id]["name"]["first"] = first
            return "ok"

        def create_order(data, user_id, total):
            oid = f"o{len(data['orders']) + 1}"
            data["orders"][oid] = {"user_id": user_id, "total": total}
            data["users"][user_id]["orders"].append(oid)
            data["log"].append(f"created {oid}")
            data["counter"] = data["counter"] + 1
            return json.dumps({"order_id": oid, "tables": sorted(data)})

        def delete_order(data, order_id):
            del data["orders"][order_id]
            return "deleted"

        def explode(data, user_id):
            data["users"][user_id]["flag"] = True
            raise KeyError("half done")

        def transfer_to_human(data, summary):
            return "Transfer successful"

        ALL_TOOLS = [tool(f.__name__, f) for f in
                     (find_user, rename_user, create_order, delete_order, explode, transfer_to_human)]
    """,
    "fakebench/envs/shop/tasks_test.py": """
        TASKS = [
            {"annotator": 1, "user_id": "ann_1", "instruction": "You are Ann Lee, email ann@x.org. Rename yourself.",
             "actions": [{"name": "find_user", "kwargs": {"email": "ann@x.org"}},
                         {"name": "rename_user", "kwargs": {"user_id": "ann_1", "first": "Anna"}},
                         {"name": "create_order", "kwargs": {"user_id": "ann_1", "total": 7}},
                         {"name": "delete_order", "kwargs": {"order_id": "o1"}},
                         {"name": "rename_usr", "kwargs": {}},
                         {"name": "respond", "kwargs": {"content": "done"}}],
             "outputs": ["o2"]},
            {"user_id": "ann_1", "instruction": "Ask for a human.",
             "actions": [{"name": "transfer_to_human", "kwargs": {"summary": "wants a human"}}], "outputs": []},
        ]
    """,
    "fakebench/envs/shop/tasks_dev.py": "TASKS_DEVV = []\n",
}


@pytest.fixture
def fake_shop(tmp_path, monkeypatch):
    for path, text in FAKE.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield classic.ClassicPlugin("fake-shop", "fakebench", "shop", "fake", "pip install fakebench", "A fake shop")
    for name in [m for m in sys.modules if m.split(".")[0] == "fakebench"]:
        del sys.modules[name]


def test_any_tau_bench_style_package_becomes_a_domain(fake_shop):
    fake_shop.check_available()
    domain = fake_shop.domain()
    source = fake_shop.env_source()
    assert source.class_name == "MockShopDomainEnv" and source.refs["rules"] == ["be kind"]
    assert set(source.splits) == {"test", "dev"}
    tasks = domain.tasks(None)
    assert [t.id for t in tasks] == ["fake-shop-test-000", "fake-shop-test-001"]
    assert domain.meta["skipped_splits"]["dev"].startswith("AttributeError")
    first = tasks[0]
    assert first.user.known == {"name": "Ann Lee", "email": "ann@x.org"}  # the instruction does not give the id
    assert [a.name for a in first.gold.actions] == ["find_user", "rename_user", "create_order", "delete_order"]
    assert [d["name"] for d in first.meta["dropped_gold_actions"]] == ["rename_usr", "respond"]
    assert first.meta["annotator"] == "1"
    assert domain.policy.startswith("The shop policy.")
    tools = domain.toolset
    assert [n for n, t in tools.tools.items() if t.writes] == ["rename_user", "create_order", "delete_order", "explode"]
    assert tools.is_terminal("transfer_to_human") and not tools["transfer_to_human"].writes
    assert domain.database.tables[classic.VALUES_TABLE] == {"log": [], "counter": 0}


def test_their_tools_mutate_rows_tables_and_top_level_values_through_state(fake_shop):
    domain = fake_shop.domain()
    task = domain.tasks()[0]
    state = replay(domain, task)
    data = dict(classic.ClassicData(state))
    assert data["users"]["ann_1"] == {"name": {"first": "Anna"}, "email": "ann@x.org", "orders": ["o2"]}
    assert dict(data["orders"]) == {"o2": {"user_id": "ann_1", "total": 7}}
    assert data["log"] == ["created o2"] and data["counter"] == 1
    assert state.changed() == {"users": {"ann_1": data["users"]["ann_1"]}, "orders": {"o1": None, "o2": data["orders"]["o2"]},
                               classic.VALUES_TABLE: {"log": ["created o2"], "counter": 1}}
    assert check_task(domain, task) is None
    assert domain.database.to_dict() == fake_shop.database().to_dict()  # the snapshot is untouched
    # a tool that raises half-way: their Env.step's text, not a harness error; what it changed stays
    text, is_error = domain.toolset.call(state, "explode", {"user_id": "ann_1"})
    assert (text, is_error) == ("Error: 'half done'", False)
    assert state["users"]["ann_1"]["flag"] is True
    text, is_error = domain.toolset.call(state, "rename_user", {"user_id": "ann_1"})
    assert text.startswith("Error:") and "missing 1 required positional argument: 'first'" in text and not is_error
    # a transfer is terminal; a task whose gold ends in one needs it called
    transfer = domain.tasks()[1]
    assert check_task(domain, transfer) is None
    assert our_reward(domain, transfer, [], []) == 0.0
    assert our_reward(domain, transfer, [("transfer_to_human", {"summary": "x"})], []) == 1.0
