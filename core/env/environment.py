"""The environments: `AsyncTauEnv` (the one implementation), `TauEnv` (Gymnasium's synchronous API over it)
and `TauVectorEnv` (many episodes stepped together on one event loop).

An episode is the runner's `run_one` on a task of the session, running as an asyncio task whose agent
is the caller (`bridge.BridgeAgent`): `reset` starts it and returns what the agent sees first (the
user's opening message), `step(action)` hands one assistant message to the loop and returns what the
agent sees next (the tool results, or the user's reply) once the loop asks for the next action or the
episode ends. The reward arrives at the end: the scorer's reward (1 success, -1 a negative ending
before success, else 0) plus any shaping terms switched on.

Actions and observations are chat-completions messages: an action is
`{"role": "assistant", "content": str | None, "tool_calls": [{"id", "type": "function",
"function": {"name", "arguments"}}]}` (a plain string is a message to the user; a core `Message`
works too), an observation is the list of `{"role": "tool" | "user", ...}` messages that followed it.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import random
from collections import Counter
from typing import Any

from tau_emotion.core.env.bridge import CHANNEL, CUT, Channel, EnvError
from tau_emotion.core.env.session import Session, prepare
from tau_emotion.core.env.shaping import Shaping, terms
from tau_emotion.core.episode import task_tags
from tau_emotion.core.models import EpisodeResult, Message, Task, ToolCall
from tau_emotion.core.runner import run_one

Observation = list[dict[str, Any]]
Step = tuple[Observation, float, bool, bool, dict[str, Any]]
#: terminations that cut an episode short rather than end it (Gymnasium's `truncated`)
CUT_SHORT = ("max_steps", CUT)


def to_message(action: Any, step: int) -> Message:
    """An assistant `Message` from a chat-completions dict, a string or a `Message`; a malformed one is an EnvError.

    An action of another role is passed on as it is: the episode loop's one check of what an agent says
    (`episode.own_message`) ends the episode as an error naming it, as `tau run` does with an agent plugin."""
    if isinstance(action, Message):
        return action
    if isinstance(action, str):
        return Message(role="assistant", content=action)
    if not isinstance(action, dict):
        raise EnvError(f"an action is an assistant message (a dict with content and/or tool_calls) or a string, "
                       f"got {type(action).__name__}")
    role = action.get("role", "assistant")
    content = action.get("content")
    if role != "assistant":  # not refused here: the loop's check refuses it, as it refuses a plugin's
        return Message.model_construct(role=role, content=content, tool_calls=[])
    if content is not None and not isinstance(content, str):
        raise EnvError(f"an action's content is text or null, got {type(content).__name__}")
    listed = action.get("tool_calls") or []
    if not isinstance(listed, (list, tuple)):
        raise EnvError(f"an action's tool_calls is a list of calls, got {type(listed).__name__}")
    calls = []
    for i, call in enumerate(listed):
        function = call.get("function", call) if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise EnvError(f"tool call {i} of the action has no function name: {str(call)[:120]}")
        arguments = function.get("arguments", {})
        if isinstance(arguments, str):  # the wire form; text that is not a JSON object stays raw (a tool error)
            try:
                parsed = json.loads(arguments) if arguments.strip() else {}
                arguments = parsed if isinstance(parsed, dict) else arguments
            except (ValueError, RecursionError):  # "[" * 100000 nests past the parser's recursion limit
                pass
        elif not isinstance(arguments, dict):
            raise EnvError(f"tool call {i} ({function['name'][:60]}): arguments are a JSON object or its text, "
                           f"got {type(arguments).__name__}")
        calls.append(ToolCall(id=str(call.get("id") or f"call-{step}-{i}"), name=function["name"], arguments=arguments))
    return Message(role="assistant", content=content, tool_calls=calls)


def _check_reset(task_id: Any, seed: Any, options: Any) -> None:
    """A wrong reset argument is one EnvError line, not a TypeError from deep in the session."""
    if task_id is not None and not isinstance(task_id, str):
        raise EnvError(f"reset() takes a task id (text) or None, got {type(task_id).__name__} {str(task_id)[:60]}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise EnvError(f"reset(seed=...) takes an integer or None, got {type(seed).__name__} {str(seed)[:60]}")
    if options is not None and not isinstance(options, dict):
        raise EnvError(f"reset(options=...) takes a dict or None, got {type(options).__name__}")
    if options and options.get("task_id") is not None and not isinstance(options["task_id"], str):
        raise EnvError(f"options['task_id'] is a task id (text), got {type(options['task_id']).__name__}")


def _dump(value: Any) -> Any:
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


class AsyncTauEnv:
    """One episode at a time of a prepared session; `await reset()`, then `await step(action)` until it ends."""

    def __init__(self, session: Session, shaping: Shaping | dict[str, Any] | None = None, seed: int | None = None):
        self.session = session
        self.shaping = shaping if isinstance(shaping, Shaping) else Shaping.model_validate(shaping or {})
        self._rng = random.Random(session.config.seed if seed is None else seed)
        self._trials: Counter[str] = Counter()
        self._episode: asyncio.Task[EpisodeResult] | None = None
        self._channel: Channel | None = None
        self._seen = 0
        self._steps = 0
        self.task: Task | None = None
        self.trial = 0
        #: the finished episode's result, as `tau run` would store it
        self.result: EpisodeResult | None = None

    @property
    def done(self) -> bool:
        return self._episode is None or self.result is not None

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The domain's tool schemas (chat-completions `tools`)."""
        return self.session.domain.toolset.schemas

    @property
    def policy(self) -> str:
        return self.session.domain.policy

    async def reset(self, task_id: str | None = None, *, seed: int | None = None,
                    options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        """Start an episode of `task_id` (else one drawn with the env's seeded rng); returns the first
        observation (the user's opening) and info (task id, trial, condition tags, blocks, tools, policy).

        The k-th reset of a task is its trial k-1, as in `tau run` (the trial seeds the episode's rng);
        `options={"trial": k}` picks one."""
        _check_reset(task_id, seed, options)
        if seed is not None:
            self._rng.seed(seed)
        options = dict(options or {})
        task_id = task_id or options.get("task_id") or self._rng.choice(self.session.task_ids)
        task = self.session.task(task_id)
        trial = options.get("trial", self._trials[task_id])
        if isinstance(trial, bool) or not isinstance(trial, int) or trial < 0:
            raise EnvError(f"options['trial'] is a trial number (0, 1, ...), got {trial!r}")
        self._trials[task_id] = max(self._trials[task_id], trial + 1)
        await self.aclose()
        self.task, self.trial, self.result, self._seen, self._steps = task, trial, None, 0, 0
        self._channel = Channel()
        context = contextvars.copy_context()
        context.run(CHANNEL.set, self._channel)
        self._episode = asyncio.get_running_loop().create_task(run_one(self.session.run, task, trial), context=context)
        observation, result = await self._advance(skip=0)
        info = {**self._info(), "condition": task_tags(self.session.run.pm, task),
                "blocks": {k: _dump(v) for k, v in task.blocks.items()}, "tools": self.tools, "policy": self.policy,
                "user": self.session.config.user, "plugins": list(self.session.config.plugins)}
        if result is not None:  # ended before the agent acted (a user that quits at once)
            *_, end = self._finish(observation, result)
            info.update(end)
        return observation, info

    async def step(self, action: Any) -> Step:
        """Hand `action` (an assistant message) to the episode; returns (observation, reward, terminated,
        truncated, info). The reward is 0 until the step that ends the episode."""
        channel = self._live()
        message = to_message(action, self._steps)
        self._steps += 1
        channel.answer(message)
        observation, result = await self._advance(skip=1)
        if result is None:
            return observation, 0.0, False, False, self._info()
        return self._finish(observation, result)

    async def truncate(self) -> Step:
        """End the episode now (a token or turn budget of the caller ran out) and score it as it stands:
        termination `truncated`, reported as `truncated=True`."""
        channel = self._live()
        channel.cut = True
        channel.answer(Message(role="assistant", content=""))
        observation, result = await self._advance(skip=1)
        if result is None:  # a plugin's hook spoke first and the episode went on: cut at the next turn
            return await self.truncate()
        return self._finish(observation, result)

    async def aclose(self) -> None:
        """Stop an episode in flight (it is not scored)."""
        episode, self._episode = self._episode, None
        if episode is not None and not episode.done():
            episode.cancel()
            try:
                await episode
            except asyncio.CancelledError:
                pass

    # ----------------------------------------------------------------- internals

    def _live(self) -> Channel:
        if self._episode is None or self._channel is None:
            raise EnvError("no episode: call reset() first")
        if self.result is not None:
            raise EnvError(f"the episode of task '{self.result.task_id}' is over: call reset() for another")
        return self._channel

    def _info(self) -> dict[str, Any]:
        assert self.task is not None
        return {"task_id": self.task.id, "trial": self.trial, "domain": self.task.domain, "steps": self._steps}

    async def _advance(self, skip: int) -> tuple[Observation, EpisodeResult | None]:
        """Run the episode until it wants the next action (or ends); the messages added since the last action."""
        assert self._channel is not None and self._episode is not None
        turn = self._channel.turn
        await asyncio.wait({turn, self._episode}, return_when=asyncio.FIRST_COMPLETED)
        if turn.done():
            messages = turn.result()
            observation = [m.chat() for m in messages[self._seen + skip:]]
            self._seen = len(messages)
            return observation, None
        result = self._episode.result()
        return [m.chat() for m in result.messages[self._seen + skip:]], result

    def _finish(self, observation: Observation, result: EpisodeResult) -> Step:
        self.result = result
        shaped = terms(result, self.shaping.not_known)
        weights = self.shaping.weights()
        parts = {"task": result.reward, **{k: weights[k] * shaped[k] for k in shaped if weights[k]}}
        reward = sum(parts.values())
        cut = result.termination.reason in CUT_SHORT or result.status == "error"
        info = {**self._info(), "reward_parts": parts, "shaping": shaped,
                "scoring": result.parts.model_dump() if result.parts else None,
                "termination": result.termination.model_dump(), "success": result.success, "status": result.status,
                "error": result.error, "n_tool_calls": result.n_tool_calls, "n_user_turns": result.n_user_turns,
                "tags": dict(result.tags)}
        return observation, reward, not cut, cut, info


def _env_base() -> type:
    """gymnasium.Env when the optional dependency is installed (`pip install tau-emotion[rl]`), else object."""
    try:
        import gymnasium
    except ImportError:
        return object
    return gymnasium.Env


class _Sync:
    """Runs coroutines on a private event loop, for callers that are not in one."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()

    def _run(self, coro: Any) -> Any:
        if self._loop.is_closed():
            coro.close()
            raise EnvError("the environment is closed: make a new one (make(...)) to go on")
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._loop.run_until_complete(coro)
        coro.close()
        raise EnvError("this environment is synchronous and an event loop is running here: use make_async()")

    def _close_loop(self) -> None:
        if not self._loop.is_closed():
            self._loop.close()

    def __del__(self) -> None:  # an env dropped without close(): stop its episode quietly
        loop = getattr(self, "_loop", None)
        if loop is not None and not loop.is_closed() and not loop.is_running():
            try:
                self.close()  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - interpreter shutdown may have torn the loop's parts down
                pass


class TauEnv(_Sync, _env_base()):  # type: ignore[misc]
    """Gymnasium's API over one `AsyncTauEnv`: reset() -> (observation, info); step(action) ->
    (observation, reward, terminated, truncated, info). Observations and actions are chat messages,
    so there is no fixed-shape space; `observation_space` and `action_space` stay unset."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, session: Session, shaping: Shaping | dict[str, Any] | None = None, seed: int | None = None):
        _Sync.__init__(self)
        self.env = AsyncTauEnv(session, shaping, seed)

    def reset(self, task_id: str | None = None, *, seed: int | None = None,  # type: ignore[override]
              options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        _check_reset(task_id, seed, options)  # before gymnasium sees the seed
        if hasattr(super(), "reset"):
            super().reset(seed=seed)  # gymnasium seeds its np_random
        return self._run(self.env.reset(task_id, seed=seed, options=options))

    def step(self, action: Any) -> Step:  # type: ignore[override]
        return self._run(self.env.step(action))

    def truncate(self) -> Step:
        return self._run(self.env.truncate())

    def close(self) -> None:
        if not self._loop.is_closed():
            self._run(self.env.aclose())
        self._close_loop()

    @property
    def task(self) -> Task | None:
        return self.env.task

    @property
    def result(self) -> EpisodeResult | None:
        return self.env.result

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self.env.tools

    @property
    def policy(self) -> str:
        return self.env.policy

    @property
    def session(self) -> Session:
        return self.env.session


class TauVectorEnv(_Sync):
    """`n` environments of one session stepped together: their tool calls and users run concurrently on one
    event loop. `step(actions)` takes one action per environment, None for one whose episode is over
    (its entries come back as None, 0.0, False, False, {})."""

    def __init__(self, session: Session, n: int, shaping: Shaping | dict[str, Any] | None = None,
                 seed: int | None = None):
        super().__init__()
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise EnvError(f"a vector of environments needs n >= 1, got {n}")
        base = session.config.seed if seed is None else seed
        self.envs = [AsyncTauEnv(session, shaping, seed=base + i) for i in range(n)]

    def __len__(self) -> int:
        return len(self.envs)

    def reset(self, task_ids: list[str | None] | None = None, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[list[Observation], list[dict[str, Any]]]:
        if task_ids is not None and not isinstance(task_ids, (list, tuple)):
            raise EnvError(f"reset() takes a list of task ids (or None), got {type(task_ids).__name__}")
        _check_reset(None, seed, options)
        ids = list(task_ids) if task_ids is not None else [None] * len(self.envs)
        if len(ids) != len(self.envs):
            raise EnvError(f"reset() got {len(ids)} task ids for {len(self.envs)} environments")

        async def all_reset() -> list[Any]:
            return list(await asyncio.gather(*(env.reset(task_id, seed=None if seed is None else seed + i, options=options)
                                               for i, (env, task_id) in enumerate(zip(self.envs, ids, strict=True)))))

        out = self._run(all_reset())
        return [o for o, _ in out], [i for _, i in out]

    def step(self, actions: list[Any]) -> tuple[list[Any], list[float], list[bool], list[bool], list[dict[str, Any]]]:
        if not isinstance(actions, (list, tuple)):
            raise EnvError(f"step() takes a list of {len(self.envs)} actions (None for a finished episode), "
                           f"got {type(actions).__name__}")
        if len(actions) != len(self.envs):
            raise EnvError(f"step() got {len(actions)} actions for {len(self.envs)} environments")

        async def skipped() -> Any:
            return None, 0.0, False, False, {}

        async def all_step() -> list[Any]:
            return list(await asyncio.gather(*(env.step(a) if a is not None else skipped()
                                               for env, a in zip(self.envs, actions, strict=True))))

        out = self._run(all_step())
        return tuple(list(column) for column in zip(*out, strict=True))  # type: ignore[return-value]

    def close(self) -> None:
        async def all_close() -> None:
            await asyncio.gather(*(env.aclose() for env in self.envs))

        if not self._loop.is_closed():
            self._run(all_close())
        self._close_loop()


def make(domain: str, *, split: str = "test", user: str = "scripted", seed: int = 0,
         shaping: Shaping | dict[str, Any] | None = None, **settings: Any) -> TauEnv:
    """A synchronous environment over `domain`'s `split`, with `tau run`'s plugins, user and scorer.

    `settings`: `plugins` (a plugin list as `--plugins` takes it), `task_ids`, `n_tasks`, `max_steps`,
    `max_tool_errors`, `tool_timeout`, `skip_broken`, `scoring` ("paper" or "strict", docs/procedure.md), and any plugin option by field name (as
    `tau run -o FIELD=VALUE`); a plugin option loads the plugin that owns it."""
    return TauEnv(prepare(domain, split=split, user=user, seed=seed, **settings), shaping=shaping)


def make_async(domain: str, *, split: str = "test", user: str = "scripted", seed: int = 0,
               shaping: Shaping | dict[str, Any] | None = None, **settings: Any) -> AsyncTauEnv:
    """As `make`, for callers inside an event loop (`await env.reset()`, `await env.step(a)`)."""
    return AsyncTauEnv(prepare(domain, split=split, user=user, seed=seed, **settings), shaping=shaping)


def make_vec(n: int, domain: str, *, split: str = "test", user: str = "scripted", seed: int = 0,
             shaping: Shaping | dict[str, Any] | None = None, **settings: Any) -> TauVectorEnv:
    """`n` environments sharing one prepared session, stepped together (`TauVectorEnv`)."""
    return TauVectorEnv(prepare(domain, split=split, user=user, seed=seed, **settings), n, shaping=shaping)
