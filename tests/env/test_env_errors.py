"""Every wrong use of the environment is one `EnvError` line (issue 35 item 4): a bad action, bad arguments, a bad
seed or task id, a call after `close()`. None of them may escape as RecursionError, pydantic's ValidationError,
TypeError or asyncio's "Event loop is closed"."""

from __future__ import annotations

import pytest

from tau_emotion.core.env import EnvError, make, make_vec

CALL = {"id": "c1", "type": "function", "function": {"name": "find_owner", "arguments": '{"name": "Ada Park"}'}}

BAD_ACTIONS = {
    "a number": 12,
    "None": None,
    "a list": [{"role": "assistant", "content": "hi"}],
    "content a dict": {"role": "assistant", "content": {"text": "hi"}},
    "tool_calls a number": {"role": "assistant", "tool_calls": 5},
    "tool_calls a text": {"role": "assistant", "tool_calls": "find_owner"},
    "a call without a name": {"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]},
    "a name that is a number": {"role": "assistant", "tool_calls": [{"function": {"name": 3, "arguments": "{}"}}]},
    "arguments a JSON list object": {"role": "assistant", "tool_calls": [{"function": {"name": "find_owner",
                                                                                        "arguments": [1, 2]}}]},
    "arguments a number": {"role": "assistant", "tool_calls": [{"function": {"name": "find_owner", "arguments": 7}}]},
}


@pytest.fixture
def env():
    e = make("mock", task_ids=["mock-001"])
    yield e
    e.close()


def _one_line(exc: pytest.ExceptionInfo[EnvError]) -> None:
    assert type(exc.value) is EnvError and "\n" not in str(exc.value) and len(str(exc.value)) < 300


@pytest.mark.parametrize("kind", sorted(BAD_ACTIONS))
def test_a_malformed_action_is_one_env_error(env, kind):
    env.reset("mock-001")
    with pytest.raises(EnvError) as exc:
        env.step(BAD_ACTIONS[kind])
    _one_line(exc)
    observation, reward, terminated, truncated, info = env.step("Hello, how can I help?")  # the episode goes on
    assert not terminated and observation[0]["role"] == "user"


@pytest.mark.parametrize("arguments", ["[" * 100_000, "[1, 2, 3]", '{"name": ', "{" * 5000 + "}" * 5000])
def test_arguments_text_that_is_not_an_object_is_a_tool_error_the_agent_sees(env, arguments):
    env.reset("mock-001")
    action = {"role": "assistant", "tool_calls": [{"id": "x", "function": {"name": "find_owner", "arguments": arguments}}]}
    observation, reward, terminated, truncated, info = env.step(action)
    assert observation[0]["role"] == "tool" and observation[0]["content"].startswith("Error")
    assert not terminated


@pytest.mark.parametrize("call", [
    lambda e: e.reset(12),
    lambda e: e.reset(["mock-001"]),
    lambda e: e.reset("no-such-task"),
    lambda e: e.reset(seed="seven"),
    lambda e: e.reset(seed=1.5),
    lambda e: e.reset(seed=True),
    lambda e: e.reset(options=["trial", 1]),
    lambda e: e.reset(options={"trial": -1}),
    lambda e: e.reset(options={"trial": True}),
    lambda e: e.reset(options={"trial": "0"}),
    lambda e: e.reset(options={"task_id": 5}),
], ids=["id-int", "id-list", "id-unknown", "seed-text", "seed-float", "seed-bool", "options-list", "trial-negative",
        "trial-bool", "trial-text", "options-id-int"])
def test_a_bad_reset_is_one_env_error(env, call):
    with pytest.raises(EnvError) as exc:
        call(env)
    _one_line(exc)


def test_steps_out_of_order_and_after_close_are_env_errors():
    e = make("mock", task_ids=["mock-001"])
    with pytest.raises(EnvError, match="reset"):
        e.step("hello")  # before reset
    e.reset("mock-001")
    e.step({"role": "assistant", "tool_calls": [CALL]})
    e.close()
    for after in (lambda: e.step("hello"), lambda: e.reset("mock-001"), e.truncate):
        with pytest.raises(EnvError, match="closed") as exc:
            after()
        _one_line(exc)
    e.close()  # closing twice is fine


def test_the_vector_env_refuses_bad_shapes_in_one_line():
    vec = make_vec(2, "mock", task_ids=["mock-001"])
    try:
        for call in (lambda: vec.step("hello"), lambda: vec.step(["hello"]), lambda: vec.reset("mock-001"),
                     lambda: vec.reset(["mock-001"]), lambda: vec.reset(seed="x")):
            with pytest.raises(EnvError) as exc:
                call()
            _one_line(exc)
    finally:
        vec.close()
    with pytest.raises(EnvError, match="closed"):
        vec.step([None, None])
    with pytest.raises(EnvError):
        make_vec(0, "mock")
