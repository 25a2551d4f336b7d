"""Scripted models for the loopback OpenAI server: an "expert" agent that replays each task's gold
tool calls, a "novice" that gives up, and a user model that states the task and answers.

The server calls each responder with the request body; the task is found from the instruction in
the user model's system prompt, or from the user's opening message in the agent's conversation.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

from tau_emotion.core.reward import gold_statement

QUESTION = "Before I start, may I look up your account and reservations now?"


def _task_for(text: str, tasks: list[Any]) -> Any:
    for task in tasks:
        if task.user.instruction in text:
            return task
    raise AssertionError(f"no task matches: {text[:120]!r}")


def user(tasks: list[Any]):
    """States the instruction, agrees to questions, stops after the agent's closing message."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        system = body["messages"][0]["content"]
        task = _task_for(system, tasks)
        turns = [m for m in body["messages"][1:] if m["role"] == "user"]  # the agent's messages (roles flipped)
        if len(turns) == 1:
            return {"content": task.user.instruction}
        last = turns[-1]["content"]
        if last.startswith("Sorry"):
            return {"content": "That is useless. ###UNSATISFIED###"}
        if "?" in last:
            return {"content": "Yes, please go ahead."}
        return {"content": "Thank you. ###STOP###"}

    return reply


@functools.cache
def _domains() -> Any:
    from tau_emotion.core.manager import load_all_plugins

    return load_all_plugins(["tests.trainers.bank_pack"]).catalog("domains")


def _domain(task: Any) -> Any:
    return _domains().get(task.domain)


def expert(tasks: list[Any]):
    """Asks one follow-up question, then replays the gold tool calls one per step and tells the outputs (with the
    handover, when the gold ends in one)."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        task = _task_for(next(m["content"] for m in messages if m["role"] == "user"), tasks)
        if not any(m["role"] == "assistant" for m in messages):
            return {"content": QUESTION}
        done = sum(m["role"] == "tool" for m in messages)
        if done < len(task.gold.actions):
            action = task.gold.actions[done]
            call = {"tool_calls": [{"name": action.name, "arguments": action.arguments}]}
            if _domain(task).toolset.is_terminal(action.name):  # a handover ends the talk: tell the figures first
                return {"content": gold_statement(_domain(task), task), **call}
            return call
        return {"content": f"All done. {gold_statement(_domain(task), task)}".strip()}

    return reply


def novice(tasks: list[Any]):
    """Asks the same question, then gives up (the user answers ###UNSATISFIED###)."""

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        if not any(m["role"] == "assistant" for m in body["messages"]):
            return {"content": QUESTION}
        return {"content": "Sorry, I cannot help with that."}

    return reply


def collect(tau: Any, server: Any, db: str, tasks: list[Any], agent: str = "expert", *extra: str) -> str:
    """Run `tau tracer collect` on the trainers' `ledger` domain with `agent` playing; returns the run id."""
    server.respond("expert", globals()[agent](tasks))
    server.respond("user", user(tasks))
    before = set(_run_ids(db))
    result = tau("tracer", "collect", "ledger", "--plugins", "tests.trainers.bank_pack", "--agent-model", "openai/expert",
                 "--agent-api-base", server.base_url, "--user-model", "openai/user", "--user-api-base", server.base_url,
                 "--db", db, "-o", "no_progress=true", *extra)
    assert result.exit_code == 0, result.output
    [run_id] = set(_run_ids(db)) - before
    return run_id


@contextlib.contextmanager
def serving():
    """A loopback server and a `tau` invoker for module-scoped fixtures (the `tau` fixture is per test)."""
    from click.testing import CliRunner

    from tau_emotion.core.cli import build_cli
    from tests.openai_server import ScriptedOpenAI

    server = ScriptedOpenAI().start()
    cli, runner = build_cli(), CliRunner()
    try:
        yield server, lambda *args: runner.invoke(cli, list(args), catch_exceptions=False)
    finally:
        server.stop()


def _run_ids(db: str) -> list[str]:
    import os

    from tau_emotion.core.manager import get_plugin_manager
    from tau_emotion.core.runner import open_store

    if not os.path.exists(db):
        return []
    return open_store(get_plugin_manager(), None, db, create=False).run_ids()


def bank_tasks() -> list[Any]:
    from tests.trainers.bank_pack import _tasks

    return _tasks()
