"""tau_emotion.core.env against `tau run`: the same tasks, plugins, user and scorer give the same episodes.

The parity tests drive the environment with the actions of the oracle and null agent plugins
themselves (their `act()` builds each action; the test passes it to `step()` in chat form) and run
the same tasks through `tau run`: rewards, terminations, conditions and the whole transcripts must match.
"""

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from tau_emotion.core.env import EnvError, Shaping, make, make_async, make_vec, to_message
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.runner import open_store
from tau_emotion.plugins.null_agent import NullAgent
from tau_emotion.plugins.oracle_agent import OracleAgent
from tests.core.test_contracts import _words
from tests.episodes import bare_episode

ROOT = Path(__file__).resolve().parents[2]
AIRLINE = ["airline-test-001", "airline-test-002", "airline-test-003", "airline-test-004", "airline-test-005"]


def _play(env, agent_cls, task_id):
    """One episode of `task_id` with the plugin agent's own actions; (reward, info, transcript)."""
    observation, info = env.reset(task_id, options={"trial": 0})  # tau run's first trial (the rng it seeds)
    assert info["task_id"] == task_id and info["trial"] == 0
    seen = [observation]
    _, view = bare_episode(env.session.run.pm, env.session.domain, env.task, env.session.config)
    agent = agent_cls(view)
    for _ in range(100):
        message = asyncio.run(agent.act([]))
        observation, reward, terminated, truncated, info = env.step(message.chat())
        seen.append(observation)
        if terminated or truncated:
            return reward, info, env.result
    raise AssertionError("the episode did not end")


def _tau_run(tau, tmp_path, agent):
    """The same tasks through `tau run` itself; its stored trials by task id."""
    db = str(tmp_path / f"{agent}.sqlite")
    result = tau("run", "--plugins", "airline,emotion", "--emotion", "random", "--agent", agent, "--user", "scripted",
                 "--split", "test", "--task-ids", ",".join(AIRLINE), "--trials", "1", "--seed", "0", "--no-progress",
                 "--db", db)
    assert result.exit_code == 0, result.output
    store = open_store(get_plugin_manager(), None, db, create=False)
    return {r.task_id: r for r in store.results(store.run_ids()[-1])}


@pytest.fixture(scope="module")
def airline_env():
    env = make("airline", split="test", user="scripted", emotion="random", seed=0)
    yield env
    env.close()


@pytest.mark.slow
@pytest.mark.parametrize(("agent_cls", "name", "expected"), [(OracleAgent, "oracle", 1.0), (NullAgent, "null", -1.0)])
def test_oracle_and_null_actions_score_as_tau_run_scores_them(tau, airline_env, tmp_path, agent_cls, name, expected):
    stored = _tau_run(tau, tmp_path, name)
    for task_id in AIRLINE:
        reward, info, result = _play(airline_env, agent_cls, task_id)
        assert reward == expected, (task_id, info)
        assert info["reward_parts"] == {"task": expected} and info["success"] is (expected == 1.0)
        theirs = stored[task_id]
        assert theirs.reward == reward and theirs.success == result.success, task_id
        assert theirs.termination.reason == result.termination.reason == info["termination"]["reason"]
        assert theirs.tags == result.tags and theirs.tags["emotion.condition"]  # the same condition was played
        # the same conversation, message by message (tool-call ids aside)
        assert [(m.role, m.content, [(c.name, c.arguments) for c in m.tool_calls]) for m in theirs.messages] == \
            [(m.role, m.content, [(c.name, c.arguments) for c in m.tool_calls]) for m in result.messages]
    assert name == "null" or info["termination"]["reason"] == "user_stop"


@pytest.mark.slow
def test_acceptance_line_imports_no_heavy_library():
    script = ("import sys\nfrom tau_emotion.core.env import make\n"
              "e = make('airline', split='test', user='scripted', emotion='random', seed=0)\n"
              "obs, info = e.reset()\nprint(info['task_id'])\n"
              "print(','.join(m for m in ('torch', 'transformers', 'trl', 'datasets', 'litellm', 'vllm') if m in sys.modules))\n"
              "e.close()\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    task_id, heavy = (out.stdout.splitlines() + [""])[:2]
    assert task_id.startswith("airline-test-") and heavy == "", out.stdout
    assert "Task was destroyed" not in out.stderr


@pytest.mark.slow
def test_a_gymnasium_env_when_installed_a_plain_object_otherwise():
    gymnasium = pytest.importorskip("gymnasium")
    env = make("mock")
    assert isinstance(env, gymnasium.Env)
    env.close()
    # gymnasium.make through an entry point (no fixed-shape spaces: its passive checker is off)
    gymnasium.register("tau-emotion-test/Env-v0", entry_point="tau_emotion.core.env:make", disable_env_checker=True)
    env = gymnasium.make("tau-emotion-test/Env-v0", domain="mock", max_steps=5)
    observation, info = env.reset(seed=3)
    assert info["task_id"].startswith("mock-") and observation[0]["role"] == "user"
    assert env.step("Hello.")[1:4] == (0.0, False, False)
    env.close()
    script = ("import sys\nsys.modules['gymnasium'] = None\nfrom tau_emotion.core.env import make\n"
              "e = make('mock')\nprint(type(e).__mro__[-2].__name__, e.reset('mock-001')[1]['task_id'])\ne.close()\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["_Sync", "mock-001"]


def test_observations_are_what_the_agent_sees_next():
    env = make("mock", max_steps=20)
    observation, info = env.reset("mock-001")
    assert observation == [{"role": "user", "content": "I'd like to move 200 dollars from my account acc-1 to acc-2."}]
    assert {t["function"]["name"] for t in info["tools"]} >= {"transfer", "find_owner"}
    assert info["policy"].startswith("# Mock bank policy")
    action = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "find_owner", "arguments": '{"name": "Ada Park"}'}},
        {"id": "c2", "type": "function", "function": {"name": "no_such_tool", "arguments": "{}"}}]}
    observation, reward, terminated, truncated, info = env.step(action)
    assert [(m["role"], m["tool_call_id"]) for m in observation] == [("tool", "c1"), ("tool", "c2")]
    assert "Error" in observation[1]["content"] and reward == 0.0 and not terminated and not truncated
    observation, *_ = env.step("Which account should I look at?")
    assert [m["role"] for m in observation] == ["user"] and observation[0]["content"]
    env.close()


def test_a_cut_episode_is_scored_and_truncated():
    env = make("mock", max_steps=3)
    env.reset("mock-002")
    observation, reward, terminated, truncated, info = env.truncate()
    assert (terminated, truncated, observation, reward) == (False, True, [], 0.0)
    assert info["termination"]["reason"] == "truncated" and info["termination"]["by"] == "env"
    env.reset("mock-002")  # the step limit is the stop plugin's, as in tau run
    for _ in range(3):
        observation, reward, terminated, truncated, info = env.step("Hello there.")
        if terminated or truncated:
            break
    assert truncated and info["termination"]["reason"] == "max_steps"
    env.close()


def test_misuse_is_one_readable_error():
    env = make("mock")
    with pytest.raises(EnvError, match="call reset"):
        env.step("hi")
    with pytest.raises(EnvError, match="Did you mean 'mock-001'"):
        env.reset("mock-01")
    env.reset("mock-002")
    with pytest.raises(EnvError, match="tool call 0 of the action has no function name"):
        env.step({"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]})
    env.close()
    with pytest.raises(EnvError, match="unknown option 'emotoin'.*Did you mean 'emotion'"):
        make("mock", emotoin="random")
    with pytest.raises(Exception, match="Did you mean 'mock'"):
        make("mokc")


def test_an_episode_over_asks_for_reset():
    env = make("mock", max_steps=2)
    env.reset("mock-001")
    env.step("Hello.")
    *_, terminated, truncated, _info = env.step("Hello.")
    assert terminated or truncated
    with pytest.raises(EnvError, match="is over: call reset"):
        env.step("Hello.")
    env.close()


def test_shaping_terms_are_reported_always_and_added_only_when_weighted():
    questions = ["What is your favourite colour?", "What is your shoe size?"]

    def play(shaping):
        env = make("mock", plugins="unsatisfied", shaping=shaping)
        env.reset("mock-002")
        for text in questions * 10:
            _, reward, terminated, truncated, info = env.step(text)
            if terminated or truncated:
                env.close()
                return reward, info
        raise AssertionError("the user never gave up")

    reward, info = play(None)
    assert info["termination"]["reason"] == "unsatisfied" and reward == -1.0 and info["reward_parts"] == {"task": -1.0}
    unanswered = info["shaping"]["unanswered"]
    assert unanswered <= -2 and info["shaping"]["negative_end"] == -1.0 and info["shaping"]["balance"] == -1.0
    reward, info = play(Shaping(negative_end=1.0, unanswered=0.5, balance=0.25))
    assert info["reward_parts"] == {"task": -1.0, "negative_end": -1.0, "unanswered": 0.5 * unanswered, "balance": -0.25}
    assert reward == pytest.approx(-1.0 - 1.0 + 0.5 * unanswered - 0.25)


def test_vector_and_async_envs_step_many_episodes_at_once():
    vec = make_vec(3, "mock", max_steps=5)
    observations, infos = vec.reset(["mock-001", "mock-002", "mock-001"])
    assert [i["task_id"] for i in infos] == ["mock-001", "mock-002", "mock-001"]
    assert observations[0] == observations[2] != observations[1]
    obs, rewards, terminated, truncated, infos = vec.step(["Hello.", None, "Hello."])
    assert obs[1] is None and infos[1] == {} and obs[0] == obs[2] and len(rewards) == 3
    vec.close()

    async def main():
        env = make_async("mock", max_steps=5)
        await env.reset("mock-004")
        action = {"role": "assistant", "tool_calls": [  # the gold, with arguments as objects rather than JSON text
            {"function": {"name": "find_owner", "arguments": {"name": "Ben Ortiz"}}},
            {"function": {"name": "transfer_to_human_agents", "arguments": {"summary": "mortgage application"}}}]}
        _, reward, terminated, truncated, info = await env.step(action)
        return reward, terminated, info

    reward, terminated, info = asyncio.run(main())
    assert (reward, terminated, info["termination"]["reason"]) == (1.0, True, "terminal_tool")
    assert info["shaping"] == {"negative_end": 0.0, "unanswered": 0.0, "balance": 1.0}


def test_to_message_reads_chat_dicts_strings_and_raw_arguments():
    message = to_message({"content": "ok", "tool_calls": [{"function": {"name": "f", "arguments": "not json"}}]}, 3)
    assert message.content == "ok" and message.tool_calls[0].arguments == "not json" and message.tool_calls[0].id == "call-3-0"
    assert to_message("hi", 0).content == "hi"


def test_the_env_package_names_no_domain_vendor_or_condition():
    offences = {f"{p.name}:{line} {word}" for p in (ROOT / "core" / "env").glob("*.py") for line, word in _words(p)}
    assert not offences, sorted(offences)


def test_the_llm_user_through_a_loopback_server_plays_the_episode(openai_server):
    """The LLM user plugin (its model client, its prompt with the task's condition) answers the caller's actions."""
    openai_server.script("user-model", {"content": "Please move 200 from acc-1 to acc-2."},
                         {"content": "My name is Ada Park."}, {"content": "Thanks. ###STOP###"})
    env = make("mock", user="llm", user_model="openai/user-model", user_api_base=openai_server.base_url,
               emotion="emotion:anxiety")
    observation, info = env.reset("mock-001")
    assert observation == [{"role": "user", "content": "Please move 200 from acc-1 to acc-2."}]
    assert info["condition"]["emotion.emotion"] == "anxiety"
    observation, *_ = env.step("What is your full name?")
    assert observation == [{"role": "user", "content": "My name is Ada Park."}]
    observation, reward, terminated, truncated, info = env.step({"tool_calls": [
        {"function": {"name": "find_owner", "arguments": {"name": "Ada Park"}}},
        {"function": {"name": "transfer", "arguments": {"from_account": "acc-1", "to_account": "acc-2", "amount": 200}}}]})
    assert [m["role"] for m in observation] == ["tool", "tool"] and not terminated
    observation, reward, terminated, truncated, info = env.step("Done. The new balance of acc-2 is 235.5.")
    assert (reward, terminated, info["termination"]["reason"]) == (1.0, True, "user_stop")
    user_prompt = openai_server.requests[0]["messages"][0]["content"]
    assert "anxi" in user_prompt.lower()  # the emotion plugin conditioned the LLM user's prompt
    env.close()


def test_an_episode_has_no_wall_clock_deadline_the_caller_could_meet_between_steps():
    """The caller is the agent: two hours between steps (a long training step, here the loop's clock moved
    on) must not stop the episode as the runner stops a plugin agent at --trial-timeout (an hour)."""
    env = make("mock", max_steps=20)
    env.reset("mock-001")
    real = env._loop.time
    env._loop.time = lambda: real() + 7200.0
    for _ in range(2):  # the overdue deadline would fire once the first step's reply is out
        observation, reward, terminated, truncated, info = env.step("Which account should I look at?")
        assert [m["role"] for m in observation] == ["user"] and not terminated and not truncated
    env.close()
