"""The episode loop: every call of a message runs in order, error limits, max steps, failures recorded."""

from tau_emotion.core import hookimpl
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import Message, RunConfig, ToolCall
from tau_emotion.core.runner import prepare_run, run_sync


class ScriptedAgents:
    """In-test agents: each replays a fixed list of messages, then repeats the last one."""

    def __init__(self, **scripts):
        self.scripts = scripts

    @hookimpl
    def tau_register_agents(self, register):
        for name, script in self.scripts.items():
            register(name, self._factory(script))

    @staticmethod
    def _factory(script):
        class Agent:
            def __init__(self, episode):
                self.i = 0

            async def act(self, messages):
                if isinstance(script, Exception):
                    raise script
                message = script[min(self.i, len(script) - 1)]
                self.i += 1
                return message

        return Agent


def _run(agent, tmp_path, **kw):
    pm = get_plugin_manager(["mock"], extra=[ScriptedAgents(a=agent)])
    config = RunConfig(plugins=["mock"], trials=1, agent="a", task_ids=["mock-001"], options={"progress": {"no_progress": True}}, **kw)
    run = prepare_run(config, str(tmp_path / "r.sqlite"), pm=pm)
    summary = run_sync(run)
    return run.store.results(run.run_id)[0], summary


def _call(tool, **arguments):
    return ToolCall(id=tool, name=tool, arguments=arguments)


def test_every_tool_call_in_a_message_runs_in_order(tmp_path):
    first = Message(role="assistant", tool_calls=[
        _call("transfer", from_account="acc-1", to_account="acc-2", amount=200),
        _call("get_account", account_id="acc-2"),
        _call("find_owner", name="Ada Park"),
    ])
    result, _ = _run([first, Message(role="assistant", content="acc-2 now holds 235.5.")], tmp_path)
    tools = [m for m in result.messages if m.role == "tool"]
    assert [m.name for m in tools] == ["transfer", "get_account", "find_owner"]
    assert '"balance": 235.5' in tools[1].content  # the second call saw the first call's write
    assert result.reward == 1.0 and result.n_tool_calls == 3


def test_ten_consecutive_tool_errors_end_the_episode(tmp_path):
    bad = Message(role="assistant", tool_calls=[_call("no_such_tool")])
    result, _ = _run([bad], tmp_path)
    assert result.termination.reason == "too_many_tool_errors"
    assert result.n_tool_calls == 10 and result.status == "ok" and result.reward == 0.0


def test_max_steps_cuts_the_episode(tmp_path):
    chatter = Message(role="assistant", tool_calls=[_call("get_account", account_id="acc-1")])
    result, _ = _run([chatter], tmp_path, max_steps=7)
    assert result.termination.reason == "max_steps" and result.n_steps == 7


def test_agent_failure_is_an_error_result_not_a_crash(tmp_path):
    result, summary = _run(RuntimeError("model exploded"), tmp_path)
    assert result.status == "error" and result.error == "RuntimeError: model exploded"
    assert summary["errors"] == 1
