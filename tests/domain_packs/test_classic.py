"""The classic domain pack: τ-bench-style env packages as domains, with rewards equal to their own env's.

Our own gold replay must score every test task of the four τ-Trait domains 1. Their env (`Env.step`
+ `calculate_reward`, unchanged) is asked about a seeded sample of SAMPLE test tasks per domain, the
gold trajectory and, for the first PERTURBED of them, perturbed ones: it reloads and hashes its whole
database for every reward (~0.3 s an airline task), so the full comparison, every task of every
domain, is `python benchmarks/replay_vs_classic.py`. A fake package in tmp_path covers what tau-trait
does not exercise, and runs without tau-trait.
"""

from __future__ import annotations

import gc
import importlib.util
import inspect
import json
import multiprocessing
import os
import random
import re
import subprocess
import sys
import textwrap
import tomllib
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path

import pytest

from tau_emotion.core.manager import PluginUnavailable
from tau_emotion.core.reward import check_task, gold_messages, replay, score
from tau_emotion.core.tools import Toolset
from tau_emotion.domain_packs import classic
from tau_emotion.domain_packs.classic import PLUGINS, calculator
from tau_emotion.domain_packs.classic.adapter import VALUES_TABLE, ClassicData, ClassicTool
from tests.domain_packs.classic_parity import STOP, native_env, native_reward, our_reward, their_gold_trajectory

ROOT = Path(__file__).resolve().parents[2]
# importing tau_trait for real needs OPENAI_API_KEY, so probe with find_spec instead of importorskip
needs_tau_trait = pytest.mark.skipif(importlib.util.find_spec("tau_trait") is None,
                                     reason="tau-trait is not installed: pip install 'tau-emotion[classic]'")
TAU_TRAIT = [PLUGINS[name] for name in ("tautrait-airline", "tautrait-retail", "tautrait-telecom", "tautrait-telehealth")]
TAU_BENCH = [PLUGINS["taubench-airline"], PLUGINS["taubench-retail"]]
TEST_TASKS = {"tautrait-airline": 60, "tautrait-retail": 120, "tautrait-telecom": 2, "tautrait-telehealth": 12}
SAMPLE = 6  # test tasks per domain whose rewards are compared with their env's
PERTURBED = 2  # of those, the ones also played with perturbed trajectories
SEED = 17


def sample(domain):
    """The seeded sample of a domain's test tasks that is compared with their env."""
    tasks = domain.tasks("test")
    return random.Random(SEED).sample(tasks, min(SAMPLE, len(tasks)))


def perturbations(domain, task):
    """Trajectories that should not all score 1: outputs withheld, the last write dropped or made twice
    (with the outputs said with thousands separators, which both scorers ignore)."""
    gold = [(a.name, a.arguments) for a in task.gold.actions]
    writes = [i for i, (name, _) in enumerate(gold) if domain.toolset[name].writes]
    said = ["; ".join(task.gold.outputs)] if task.gold.outputs else []
    variants = {"outputs withheld": (gold, [])} if said else {}
    if writes:
        last = writes[-1]
        variants["last write dropped"] = (gold[:last] + gold[last + 1:], said)
        variants["last write twice"] = (gold[:last + 1] + gold[last:],
                                        [re.sub(r"\b(\d)(\d{3})\b", r"\1,\2", s) for s in said])
    return variants


@cache
def gold_scores(suite):
    """Our reward for the gold trajectory of every test task (a replay and a hash: cheap)."""
    domain = suite.domain()
    return {t.id: score(domain, t, replay(domain, t), gold_messages(domain, t), STOP)[0] for t in domain.tasks("test")}


_ENVS = {}  # their env per domain, made before the workers fork


def their_reward(job):
    name, task_id, index, label, calls, said = job
    gc.disable()  # their hash builds millions of tuples; pausing the collector halves the time, changes nothing
    try:
        return (name, task_id, label), native_reward(PLUGINS[name], _ENVS[name], index, calls, said)
    finally:
        gc.enable()


@pytest.fixture(scope="module", autouse=True)
def their_side(request):
    """Their reward for every sampled trajectory, computing in forked workers from the module's first test on.

    Their side is most of this file's CPU time, so it runs while the tests that do not need it do
    (nothing in their package or ours runs a thread that a fork could break); `native` waits for it.
    """
    wanted = any("native" in item.fixturenames for item in request.session.items
                 if getattr(item, "module", None) is request.module)
    if not wanted or importlib.util.find_spec("tau_trait") is None:
        yield []
        return
    jobs = []
    for suite in TAU_TRAIT:
        domain = suite.domain()
        _ENVS[suite.name] = env = native_env(suite, "test")
        for n, task in enumerate(sample(domain)):
            index = task.meta["task_index"]
            jobs.append((suite.name, task.id, index, "gold", *their_gold_trajectory(env.tasks[index])))
            if n < PERTURBED:
                jobs.extend((suite.name, task.id, index, label, calls, said)
                            for label, (calls, said) in perturbations(domain, task).items())
    pool = ProcessPoolExecutor(min(len(os.sched_getaffinity(0)), 4), mp_context=multiprocessing.get_context("fork"))
    try:
        yield [pool.submit(their_reward, job) for job in jobs]
    finally:
        pool.shutdown(cancel_futures=True)


@pytest.fixture(scope="module")
def native(their_side):
    """{(domain, task id, "gold" or a perturbation): their reward}."""
    return dict(future.result() for future in their_side)


# --------------------------------------------------------------------------- tau-trait: the adapter


@pytest.mark.slow
@needs_tau_trait
def test_tasks_tools_policy_and_database_are_theirs():
    airline = PLUGINS["tautrait-airline"].domain()
    task = airline.tasks("test")[0]
    assert task.user.known["user_id"] == task.meta["user_id"] == "mia_li_3668"
    assert task.user.instruction.startswith("Your user id is mia_li_3668")
    book = airline.toolset["book_reservation"]
    assert book.writes and not book.terminal
    assert book.schema == PLUGINS["tautrait-airline"].env.tool_classes[0].get_info()  # verbatim, unknown keys kept
    assert airline.toolset.is_terminal("transfer_to_human_agents")
    assert not airline.toolset["search_onestop_flight"].writes
    assert "airline agent" in airline.policy.lower()
    assert {name: len(rows) for name, rows in airline.database.tables.items()} == {
        "flights": 300, "reservations": 2000, "users": 502}
    # the user id is known to the user only when the instruction says it (retail users give name and zip)
    retail = PLUGINS["tautrait-retail"].domain().tasks("test")[0]
    assert "user_id" not in retail.user.known and retail.user.known["zip_code"] == "19122"
    # a gold call of a tool that does not exist does nothing in their env; it is dropped and kept in meta
    broken_call = next(t for t in airline.tasks("test") if "dropped_gold_actions" in t.meta)
    assert broken_call.meta["dropped_gold_actions"][0]["name"] == "update_reservation_baggage"


@pytest.mark.slow
@needs_tau_trait
def test_splits_and_the_telecom_dev_split_that_does_not_import():
    assert PLUGINS["tautrait-retail"].domain().splits == ["dev", "test", "train"]
    telecom = PLUGINS["tautrait-telecom"].domain()
    assert telecom.splits == ["test", "train"]
    assert "TASKS_DEV" in telecom.meta["skipped_splits"]["dev"]
    assert "'dev' split left out: the tau-trait package's own 'dev' tasks do not load" in telecom.description
    assert "AttributeError" not in telecom.description  # the reason is in meta, not in the listing


CALLS_PER_TOOL = 3


@pytest.mark.slow
@needs_tau_trait
@pytest.mark.parametrize("suite", TAU_TRAIT, ids=lambda s: s.name)
def test_write_flags_cover_every_tool_that_changes_data(suite):
    """Gold calls made in write mode (every row read is copied, so it may change): a tool that changed a row
    must be marked `writes`. The first CALLS_PER_TOOL calls of each tool, over all splits in task order, each
    on the state its task's gold left before it; other calls run as usual."""
    domain = suite.domain()
    all_writes = Toolset([ClassicTool(cls, writes=True) for cls in suite.env.tool_classes])
    checked = Counter()
    changed = set()
    for task in domain.tasks(None):
        state = domain.database.state()
        for action in task.gold.actions:
            if checked[action.name] == CALLS_PER_TOOL:
                domain.toolset.call(state, action.name, action.arguments)
                continue
            checked[action.name] += 1
            before = state.changed()
            all_writes.call(state, action.name, action.arguments)
            if state.changed() != before:
                changed.add(action.name)
    assert changed
    assert {name for name in changed if not domain.toolset[name].writes} == set()


@pytest.mark.slow
@needs_tau_trait
def test_loading_a_classic_domain_imports_no_model_library(tmp_path):
    script = textwrap.dedent("""
        import sys
        from tau_emotion.domain_packs import classic
        assert "tau_trait" not in sys.modules
        for name in ("tautrait-airline", "tautrait-retail", "tautrait-telecom", "tautrait-telehealth"):
            domain = classic.PLUGINS[name].domain()
            _ = domain.tasks(None), domain.toolset, domain.policy, domain.database
        print(",".join(m for m in ("litellm", "openai", "tau_trait", "tau_trait.envs.base") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


@pytest.mark.slow
@needs_tau_trait
def test_replays_leave_the_shared_snapshot_untouched():
    """Read-only tools see uncopied rows; after every replay and run above, the snapshot must be as loaded."""
    for suite in TAU_TRAIT:
        domain = suite.domain()
        for task in domain.tasks(None):
            replay(domain, task)
        assert domain.database.tables == suite.database().tables, suite.name


# --------------------------------------------------------------------------- calculate, without their eval

SAME_AS_THEIRS = ["2 + 2", "(65 + 83) * 2", "430 + 412 - (136 + 109)", "1/3", "10 / 4", "7 // 2", "-3 - -4", "+5",
                  "  12.5*3", "0.1 + 0.2", ".5 + 5.", "2**10", "(1 + 0.05)**12", "2**-1", "1.5**2.5", "(-2)**3",
                  "10**6**2", "(-8)**0.5", "0**-1", "999999.0**100", "1/0", "1..2", "", "   ", "01", "()", "...",
                  "1 2", "(1", "1e5", "abs(1)", "2 * (3 + 4", "3(4)", "()(*...)"]
REFUSED = ["9**9**9**9", "2**101", "(10**7)**2", "2**(99*99)", "1+" * 100 + "1"]


def their_calculate(tool, expression):
    with warnings.catch_warnings():  # their eval warns about `2(3)` ("perhaps you missed a comma?")
        warnings.simplefilter("ignore", SyntaxWarning)
        return tool.invoke(data={}, expression=expression)


@pytest.mark.slow
@needs_tau_trait
@pytest.mark.parametrize("suite", TAU_TRAIT, ids=lambda s: s.name)
def test_calculate_answers_as_their_tool_does_without_calling_it(suite):
    """Their `calculate` evals the expression; ours parses it. Same text for what both accept."""
    theirs = next(cls for cls in suite.env.tool_classes if cls.get_info()["function"]["name"] == "calculate")
    domain = suite.domain()
    assert domain.toolset["calculate"].fn is calculator.calculate
    state = domain.database.state()
    for expression in SAME_AS_THEIRS:
        ours, is_error = domain.toolset.call(state, "calculate", {"expression": expression})
        assert (ours, is_error) == (their_calculate(theirs, expression), False), expression
    for expression in REFUSED:
        assert domain.toolset.call(state, "calculate", {"expression": expression})[0].startswith("Error:")
    assert state.changed() == {}


@needs_tau_trait
def test_calculate_agrees_with_their_tool_on_random_expressions():
    theirs = next(cls for cls in TAU_TRAIT[0].env.tool_classes if cls.get_info()["function"]["name"] == "calculate")
    rng = random.Random(SEED)
    alphabet = "0123456789+-*/(). "
    compared = Counter()
    for _ in range(3000):
        expression = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24)))
        if "**" in expression:  # their eval has no bound on powers
            continue
        ours = calculator.calculate(None, expression)
        assert ours == their_calculate(theirs, expression), expression
        compared[ours.startswith("Error")] += 1
    assert compared[True] > 100 and compared[False] > 100


@needs_tau_trait
def test_every_tool_of_theirs_that_calls_eval_is_replaced():
    seen = 0
    for suite in TAU_TRAIT:
        toolset = suite.domain().toolset
        for cls in suite.env.tool_classes:
            if re.search(r"\b(eval|exec)\(", inspect.getsource(cls)):
                seen += 1
                assert toolset[cls.get_info()["function"]["name"]].fn is not cls.invoke, (suite.name, cls)
    assert seen == len(TAU_TRAIT)  # each domain's calculate


def test_huge_powers_are_refused_quickly_in_a_fresh_process():
    """In a subprocess, so that a regression fails with a timeout instead of hanging the test session."""
    script = textwrap.dedent(f"""
        import importlib.util, time
        spec = importlib.util.spec_from_file_location("calculator", {str(Path(calculator.__file__))!r})
        calculator = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(calculator)
        start = time.perf_counter()
        for expression in {REFUSED + ["1" * 201]!r}:
            print(calculator.calculate(None, expression))
        print(time.perf_counter() - start)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=20)
    assert out.returncode == 0, out.stderr
    *answers, seconds = out.stdout.splitlines()
    assert [a.split(":")[0] for a in answers] == ["Error"] * (len(REFUSED) + 1)
    assert "powers are limited" in answers[0] and "too long" in answers[-1]
    assert float(seconds) < 0.5


# --------------------------------------------------------------------------- plugins and entry points


def test_entry_points_are_the_suites_table():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    points = {name: value for name, value in config["project"]["entry-points"]["tau_emotion"].items()
              if value.startswith("tau_emotion.domain_packs.classic:")}
    assert set(points) == set(classic.SUITES) == set(PLUGINS)
    for name, value in points.items():
        module, _, attr = value.partition(":")
        assert getattr(importlib.import_module(module), attr) is PLUGINS[name]
    with pytest.raises(AttributeError):
        _ = classic.tautrait_nowhere


@pytest.mark.slow
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
        assert f"UNAVAILABLE: plugin '{suite.name}' is unavailable: pip install 'tau-emotion[classic]'" in line
    domains = tau("domains")
    assert domains.exit_code == 0 and "mock" in domains.output and "tautrait" not in domains.output
    assert tau("suites").exit_code == 0
    db = str(tmp_path / "r.sqlite")
    assert tau("run", "--plugins", "mock", "--trials", "1", "--no-progress", "--db", db).exit_code == 0
    failed = tau("run", "--suite", "tau-trait", "--db", db)
    assert failed.exit_code == 1 and len(failed.output.strip().splitlines()) == 1
    assert "pip install 'tau-emotion[classic]'" in failed.output


@pytest.mark.slow
def test_module_import_is_cheap():
    out = subprocess.run([sys.executable, "-c", "import sys, tau_emotion.domain_packs.classic; "
                          "print([m for m in ('tau_trait', 'tau_bench', 'litellm') if m in sys.modules])"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_tau_bench_plugins_say_how_to_install_when_absent(monkeypatch):
    monkeypatch.setitem(sys.modules, "tau_bench", None)
    for suite in TAU_BENCH:
        with pytest.raises(PluginUnavailable, match="tau-bench from source"):
            suite.check_available()


@pytest.mark.skipif(importlib.util.find_spec("tau_bench") is None, reason="tau_bench is not installed (from source)")
@pytest.mark.parametrize("suite", TAU_BENCH, ids=lambda s: s.name)
def test_tau_bench_sample_agrees_with_their_env(suite):
    domain = suite.domain()
    env = native_env(suite, "test")
    for task in sample(domain):
        calls, said = their_gold_trajectory(env.tasks[task.meta["task_index"]])
        theirs = native_reward(suite, env, task.meta["task_index"], calls, said)
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

        def calculate(data, expression):
            raise AssertionError("their calculate must never run")

        ALL_TOOLS = [tool(f.__name__, f) for f in
                     (find_user, rename_user, create_order, delete_order, explode, transfer_to_human, calculate)]
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
    yield classic.ClassicPlugin("fake-shop", "fakebench", "shop",
                                classic.Distribution("Fake", "fake", "pip install fakebench"))
    for name in [m for m in list(sys.modules) if m.split(".")[0] == "fakebench"]:
        del sys.modules[name]


def test_any_tau_bench_style_package_becomes_a_domain(fake_shop):
    fake_shop.check_available()
    domain = fake_shop.domain()
    source = fake_shop.env.source
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
    assert domain.database.tables[VALUES_TABLE] == {"log": [], "counter": 0}


def test_their_tools_mutate_rows_tables_and_top_level_values_through_state(fake_shop):
    domain = fake_shop.domain()
    task = domain.tasks()[0]
    state = replay(domain, task)
    data = dict(ClassicData(state))
    assert data["users"]["ann_1"] == {"name": {"first": "Anna"}, "email": "ann@x.org", "orders": ["o2"]}
    assert dict(data["orders"]) == {"o2": {"user_id": "ann_1", "total": 7}}
    assert data["log"] == ["created o2"] and data["counter"] == 1
    assert state.changed() == {"users": {"ann_1": data["users"]["ann_1"]}, "orders": {"o1": None, "o2": data["orders"]["o2"]},
                               VALUES_TABLE: {"log": ["created o2"], "counter": 1}}
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


def test_their_calculate_is_never_called(fake_shop):
    toolset = fake_shop.domain().toolset
    state = fake_shop.domain().database.state()
    assert toolset.call(state, "calculate", {"expression": "2 * (3 + 4) / 4"}) == ("3.5", False)
    text, is_error = toolset.call(state, "calculate", {"expression": "9**9**9**9"})
    assert text.startswith("Error: powers are limited") and not is_error
    assert toolset.call(state, "calculate", {"expression": "__import__('os')"}) == (
        "Error: invalid characters in expression", False)


# --------------------------------------------------------------------------- tau-trait: rewards, ours and theirs
# (last in the file, so that their side has run in the background while the tests above ran)


@pytest.mark.slow
@needs_tau_trait
@pytest.mark.parametrize("suite", TAU_TRAIT, ids=lambda s: s.name)
def test_gold_scores_one_for_every_test_task_and_their_env_agrees_on_a_sample(native, suite):
    tasks = suite.domain().tasks("test")
    assert len(tasks) == TEST_TASKS[suite.name]
    ours = gold_scores(suite)
    assert ours == dict.fromkeys(ours, 1.0)
    theirs = {task_id: r for (name, task_id, label), r in native.items() if name == suite.name and label == "gold"}
    assert sorted(theirs) == sorted(t.id for t in sample(suite.domain()))
    assert {task_id: ours[task_id] for task_id in theirs} == theirs
    assert re.fullmatch(rf"{suite.name}-test-\d{{3}}", tasks[17 % len(tasks)].id)


@pytest.mark.slow
@needs_tau_trait
@pytest.mark.parametrize("suite", TAU_TRAIT, ids=lambda s: s.name)
def test_perturbed_trajectories_agree_with_their_env(native, suite):
    """Dropped or doubled writes, outputs withheld or said with thousands separators: same reward as theirs."""
    domain = suite.domain()
    checked = []
    for task in sample(domain)[:PERTURBED]:
        for label, (calls, said) in perturbations(domain, task).items():
            theirs = native[suite.name, task.id, label]
            assert our_reward(domain, task, calls, said) == theirs, (task.id, label)
            checked.append(theirs)
    assert checked
    if suite.name != "tautrait-telecom":  # telecom's two tasks have no outputs and one write
        assert 0.0 in checked


@pytest.mark.slow
@needs_tau_trait
def test_tau_trait_suite_runs_and_every_reward_is_the_gold_score(tau, tmp_path, native):
    result = tau("run", "--suite", "tau-trait", "--agent", "oracle", "--user", "scripted", "--trials", "1",
                 "--summary-json", "s.json", "--no-progress", "--db", str(tmp_path / "runs.sqlite"))
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["n_tasks"] == sum(TEST_TASKS.values()) and summary["errors"] == 0
    assert set(summary["by_domain"]) == set(TEST_TASKS)
    shown = json.loads(tau("show", summary["run_id"], "--json", "--db", str(tmp_path / "runs.sqlite")).output)
    ours = {t["task_id"]: t["reward"] for t in shown["trials"]}
    assert ours == {task_id: r for suite in TAU_TRAIT for task_id, r in gold_scores(suite).items()}
    theirs = {task_id: r for (_, task_id, label), r in native.items() if label == "gold"}
    assert {task_id: ours[task_id] for task_id in theirs} == theirs


@pytest.mark.slow
@needs_tau_trait
@pytest.mark.parametrize("suite", TAU_TRAIT, ids=lambda s: s.name)
def test_tasks_check_lists_exactly_the_tasks_whose_gold_does_not_score_one(tau, native, suite):
    result = tau("tasks", suite.name, "--check")
    assert result.exit_code == 0, result.output
    listed = set(re.findall(rf"task '({suite.name}-test-\d+)'", result.output))
    assert listed == {task_id for task_id, r in gold_scores(suite).items() if r != 1.0}
    theirs = {task_id: r for (name, task_id, label), r in native.items() if name == suite.name and label == "gold"}
    assert listed & set(theirs) == {task_id for task_id, r in theirs.items() if r != 1.0}
    n = TEST_TASKS[suite.name]
    assert f"{n - len(listed)} of {n} task(s) in {suite.name}/test score 1" in result.output
