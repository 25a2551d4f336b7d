"""Property-based fuzz of task files, database files and tool-call arguments (hypothesis).

Whatever the bytes: a one-line error naming the file, a tool error for the agent, and no trial lost.
Examples are few (max_examples <= 50, deadline off) so the suite stays fast.
"""

from __future__ import annotations

import json
import math
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tau_emotion.core.domain import load_tasks_file
from tau_emotion.core.errors import TauError
from tau_emotion.core.limits import MAX_ERROR_TEXT
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import Message, RunConfig, ToolCall
from tau_emotion.core.runner import prepare_run, run_sync
from tau_emotion.core.state import Database
from tau_emotion.plugins.sqlite_store import SqliteStore
from tests.reliability.conftest import Agents, scripted

FAST = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
json_values = st.recursive(scalars, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids,
                                                                                            max_size=4), max_leaves=20)
VALID_TASK = {"id": "t1", "domain": "mock", "user": {"instruction": "hi", "known": {}, "intents": []},
              "gold": {"actions": [{"name": "find_owner", "arguments": {"name": "Ada Park"}}], "outputs": ["x"]}}


def _mutations():
    def mutate(path, value):
        task = json.loads(json.dumps(VALID_TASK))
        node = task
        for key in path[:-1]:
            node = node[key] if isinstance(node, dict) and key in node else node
        if isinstance(node, dict):
            node[path[-1]] = value
        return [task]

    paths = st.sampled_from([("id",), ("domain",), ("user",), ("user", "instruction"), ("user", "known"),
                             ("gold",), ("gold", "actions"), ("gold", "outputs"), ("meta",), ("split",), ("extra",)])
    return st.builds(mutate, paths, json_values)


def _one_line_naming(exc: BaseException, path: Path) -> None:
    text = str(exc)
    assert isinstance(exc, TauError), repr(exc)
    assert "\n" not in text and str(path) in text, text


@FAST
@given(content=st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode()) |
       _mutations().map(lambda v: json.dumps(v).encode()))
def test_any_task_file_loads_or_is_one_line_naming_it(content):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tasks.json"
        path.write_bytes(content)
        try:
            tasks = load_tasks_file(path, "mock")
        except Exception as exc:  # noqa: BLE001 - the property: only a one-line TauError
            _one_line_naming(exc, path)
        else:
            assert all(t.domain == "mock" for t in tasks)


@pytest.mark.slow
@FAST
@given(content=st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode()))
def test_any_database_json_loads_or_is_one_line_naming_it(content):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "db.json"
        path.write_bytes(content)
        try:
            Database.from_json(path).content_hash  # noqa: B018 - hashing walks every row
        except Exception as exc:  # noqa: BLE001
            _one_line_naming(exc, path)


@pytest.mark.slow
@FAST
@given(content=st.binary(max_size=4096), keep_header=st.booleans())
def test_any_results_file_opens_or_is_one_line_naming_it(content, keep_header):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "runs.sqlite"
        if keep_header:  # a damaged SQLite file rather than random bytes
            good = Path(tmp) / "good.sqlite"
            SqliteStore(good).close()
            content = good.read_bytes()[:100] + content
        path.write_bytes(content)
        try:
            store = SqliteStore(path, create=False)
            store.runs()
            store.results("x")
            store.close()
        except Exception as exc:  # noqa: BLE001
            _one_line_naming(exc, path)
        finally:
            sqlite3.connect(":memory:").close()


deep_or_wide = st.one_of(
    json_values,
    st.integers(1, 600).map(lambda n: json.loads('{"a":' * n + "1" + "}" * n)),
    st.sampled_from([math.nan, math.inf, -math.inf]).map(lambda x: {"amount": x, "from_account": "acc-1",
                                                                     "to_account": "acc-2"}),
    st.integers(1, 3).map(lambda k: {"name": "x" * (k * 70_000)}),
)
raw_arguments = st.one_of(deep_or_wide, deep_or_wide.map(lambda v: json.dumps(v)), st.text(max_size=60),
                          st.binary(max_size=60).map(lambda b: b.decode("latin-1")))
TOOLS = ["find_owner", "get_account", "transfer", "freeze_account", "transfer_to_human_agents", "no_such_tool", ""]


@pytest.mark.slow
@FAST
@given(name=st.sampled_from(TOOLS), arguments=raw_arguments)
def test_any_tool_call_is_a_result_or_a_bounded_tool_error(name, arguments):
    domain = get_plugin_manager(["mock"]).catalog("domains").get("mock")
    text, is_error = domain.toolset.call(domain.database.state(), name, arguments)
    assert isinstance(text, str)
    if is_error:
        assert text.startswith("Error") and len(text) <= MAX_ERROR_TEXT + 40


@pytest.mark.slow
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=st.lists(st.tuples(st.sampled_from(TOOLS), raw_arguments), min_size=1, max_size=4))
def test_no_trial_is_lost_whatever_the_agent_sends(calls):
    # model_construct: an agent plugin can hand the loop anything, validated or not
    messages = [Message(role="assistant", tool_calls=[ToolCall.model_construct(id=f"c{i}", name=n, arguments=a)])
                for i, (n, a) in enumerate(calls)]
    agent = scripted(*messages, Message(role="assistant", content="bye"))
    pm = get_plugin_manager(["mock"], extra=[Agents(fuzz=agent)])
    with tempfile.TemporaryDirectory() as tmp:
        run = prepare_run(RunConfig(plugins=["mock"], agent="fuzz", trials=1, max_steps=8,
                                    options={"progress": {"no_progress": True}}), str(Path(tmp) / "f.sqlite"), pm=pm)
        run_sync(run)
        rows = run.store.conn.execute("SELECT task_id, trial FROM trials").fetchall()
        run.store.close()
    assert len(rows) == len(set(rows)) == len(run.tasks)
