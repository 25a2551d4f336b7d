"""The `play` plugin: a person in the loop, as the user or as the agent (`tau play`).

It registers a `human` user and a `human` agent that read their turns from the terminal, and the
`tau play` command, which runs one task through the ordinary runner and episode loop with one of
them: the episode is stored, scored and summarised like any trial (its results carry the tags
`played_by=human` and `human.role`), so `tau show`, `tau report` and `tau compare` read it.

Playing the user, a person sees the task's instruction, the facts they know, their requests and
every section other plugins add to a user's prompt (`tau_user_prompt`: the emotion plugin's
feeling and condition), and ends with `/stop` or `/unsatisfied`. Playing the agent, a person sees
the domain policy and the tools, and calls them with `/call NAME {json}` or `/call NAME key=value ...`.
"""

from __future__ import annotations

import json
import shlex
import signal
import sys
from typing import Any

import click

from tau_emotion.core import hookimpl
from tau_emotion.core.episode import EpisodeView
from tau_emotion.core.errors import TauError
from tau_emotion.core.models import Message, ToolCall
from tau_emotion.core.plugin_cli import db_option, debug_option, guarded, store_option

#: the negative ending's token: the text protocol users share (the `unsatisfied` plugin ends on it when loaded)
GREETING = "Hi! How can I help you today?"
#: the longest deadline a run takes (`--trial-timeout`, `--block-timeout`): a person playing is never cut off
MAX_WAIT = 1e7
HUMAN = "human"

USER_KEYS = ("Type your message and press Enter. /stop ends the conversation satisfied; /unsatisfied ends it "
             "fed up (when a plugin that ends on giving up is loaded); /task shows your task again.")
AGENT_KEYS = ("Type a message to the user and press Enter, or call a tool:\n"
              "  /call NAME {\"arg\": value, ...}    or    /call NAME arg=value arg2=\"two words\"\n"
              "/tools lists the tools, /tools NAME shows one's schema, /policy shows the policy again.")


class PlayerLeft(TauError):
    """The person closed the input (end of file) in the middle of an episode."""


def ask(prompt: str) -> str:
    """One line from the person; end of input ends the episode as an error row that says so.

    Ctrl-C raises KeyboardInterrupt at once, counted as the run's interrupt (not this trial's error):
    the runner's own SIGINT handler would only cancel the run at its next await, which a blocking read
    never reaches."""
    from tau_emotion.core.containment import interrupt_now

    try:
        previous = signal.signal(signal.SIGINT, interrupt_now)
    except ValueError:  # not the main thread: leave the handler alone
        previous = None
    try:
        return input(prompt)
    except EOFError:
        raise PlayerLeft("the player closed the input before the episode ended") from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def say(text: str) -> None:
    click.echo(text)
    sys.stdout.flush()


# ----------------------------------------------------------------------------- the person as the user


class HumanUser:
    """The person plays the customer: the task, known facts, requests and feeling are shown once."""

    def __init__(self, view: EpisodeView):
        self.view = view

    def briefing(self) -> str:
        task = self.view.task
        lines = [f"== You play the user: task {task.id} ({task.domain}) ==", f"Your task: {task.user.instruction}"]
        if task.user.known:
            lines.append("What you know: " + "; ".join(f"{k} = {v}" for k, v in task.user.known.items()))
        if task.user.intents:
            lines.append("Your requests, in order:")
            lines += [f"  {i}. {intent}" for i, intent in enumerate(task.user.intents, 1)]
        lines += self.view.prompt_sections(task.user.instruction)  # the feeling and condition, when loaded
        lines.append(USER_KEYS)
        return "\n".join(lines)

    def _turn(self) -> Message:
        while True:
            text = ask("you> ").strip()
            if text == "/task":
                say(self.briefing())
                continue
            tokens = self.view.end_tokens  # declared by the terminator plugins the run loaded
            if text == "/stop" and tokens.done:
                text = tokens.done
            elif text == "/unsatisfied":
                if not tokens.give_up:
                    say("no loaded plugin ends a conversation on giving up (add --plugins emotion or unsatisfied)")
                    continue
                text = tokens.give_up
            if text:
                return Message(role="user", content=text)

    async def start(self) -> Message:
        say(self.briefing())
        say(f"agent> {GREETING}")
        return self._turn()

    async def respond(self, message: Message) -> Message:
        say(f"agent> {message.content or ''}")
        return self._turn()


# ----------------------------------------------------------------------------- the person as the agent


def tool_line(schema: dict[str, Any]) -> str:
    fn = schema.get("function", schema)
    props = fn.get("parameters", {}).get("properties", {})
    required = set(fn.get("parameters", {}).get("required", []))
    args = ", ".join(f"{name}{'' if name in required else '?'}: {spec.get('type', 'any')}" for name, spec in props.items())
    return f"  {fn['name']}({args})  {(fn.get('description') or '').splitlines()[0] if fn.get('description') else ''}"


def parse_call(text: str) -> tuple[str, dict[str, Any]]:
    """`NAME {json}` or `NAME key=value ...` (each value JSON when it parses, else text) -> (name, arguments)."""
    name, _, rest = text.strip().partition(" ")
    rest = rest.strip()
    if not name:
        raise ValueError("name the tool: /call NAME {...}")
    if not rest:
        return name, {}
    if rest.startswith(("{", "[")):
        arguments = json.loads(rest)
        if not isinstance(arguments, dict):
            raise ValueError("the arguments must be a JSON object")
        return name, arguments
    arguments: dict[str, Any] = {}
    for item in shlex.split(rest):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"expected key=value, got {item!r}")
        try:
            arguments[key] = json.loads(value)
        except ValueError:
            arguments[key] = value
    return name, arguments


class HumanAgent:
    """The person plays the assistant: sees the policy and tools, messages the user or calls tools."""

    def __init__(self, view: EpisodeView):
        self.view = view
        self.seen = 0
        self.calls = 0
        self.briefed = False

    def tools_text(self, name: str | None = None) -> str:
        schemas = self.view.tools.schemas
        if name:
            found = [s for s in schemas if s.get("function", s).get("name") == name]
            return json.dumps(found[0], indent=2) if found else f"no tool '{name}'"
        return "Tools:\n" + "\n".join(tool_line(s) for s in schemas)

    def briefing(self) -> str:
        task = self.view.task
        return "\n".join([f"== You play the agent: task {task.id} ({task.domain}) ==", "Policy:",
                          self.view.policy.strip(), self.tools_text(), AGENT_KEYS])

    def _show_new(self, messages: list[Message]) -> None:
        for m in messages[self.seen:]:
            if m.role == "user":
                say(f"user> {m.content or ''}")
            elif m.role == "tool":
                say(f"tool {m.name}{' (error)' if m.error else ''}> {m.content or ''}")
        self.seen = len(messages)

    async def act(self, messages: list[Message]) -> Message:
        if not self.briefed:
            self.briefed = True
            say(self.briefing())
        self._show_new(messages)
        while True:
            text = ask("agent> ").strip()
            if not text:
                continue
            command, _, rest = text.partition(" ")
            if command == "/policy":
                say(self.view.policy.strip())
            elif command == "/tools":
                say(self.tools_text(rest.strip() or None))
            elif command == "/call":
                try:
                    name, arguments = parse_call(rest)
                except ValueError as exc:
                    say(f"not a call: {exc}")
                    continue
                self.calls += 1
                return Message(role="assistant", tool_calls=[ToolCall(id=f"human-{self.calls}", name=name,
                                                                      arguments=arguments)])
            elif command.startswith("/") and command not in ("/",):
                say(f"unknown command {command}. {AGENT_KEYS}")
            else:
                return Message(role="assistant", content=text)


@hookimpl
def tau_register_agents(register):
    register(HUMAN, HumanAgent)


@hookimpl
def tau_register_users(register):
    register(HUMAN, HumanUser)


@hookimpl
def tau_episode_end(episode, result):
    """Tag what a person played, so every breakdown can tell people from simulators."""
    roles = [role for role, name in (("user", episode.config.user), ("agent", episode.config.agent)) if name == HUMAN]
    if roles:
        result.tags["played_by"] = HUMAN
        result.tags["human.role"] = ",".join(roles)
        agent = episode.__dict__.get("agent")
        if isinstance(agent, HumanAgent):  # the user's last words, which ended the episode
            agent._show_new(episode.messages)
        say(f"== episode ended: {result.termination.reason}" + (f" ({result.error})" if result.error else ""))


@hookimpl
def tau_register_commands(cli):
    if "play" not in cli.commands:
        cli.add_command(play_command)


@click.command("play")
@click.argument("domain")
@click.option("--as", "role", type=click.Choice(["user", "agent"]), required=True,
              help="The part you play: the user (against --agent) or the agent (against --user).")
@click.option("--task", "task_id", default=None, help="The task to play (default: the split's first).")
@click.option("--split", default="test", show_default=True, help="Task split.")
@click.option("--agent", default="asker", show_default=True, help="The agent plugin you talk to when you play the user.")
@click.option("--user", default="scripted", show_default=True, help="The user plugin you serve when you play the agent.")
@click.option("--plugins", "plugins", multiple=True,
              help="Plugins to add, comma separated (e.g. emotion, to play with a feeling and condition).")
@click.option("--option", "-o", "raw_options", multiple=True,
              help="A plugin option as KEY=VALUE (repeatable), e.g. -o agent_model=... -o emotion=family:anger.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed (the condition a random emotion draws).")
@click.option("--max-steps", default=200, show_default=True, type=click.IntRange(1), help="Agent steps before the episode is cut.")
@store_option
@db_option
@debug_option
@guarded
def play_command(domain: str, role: str, task_id: str | None, split: str, agent: str, user: str,
                 plugins: tuple[str, ...], raw_options: tuple[str, ...], seed: int, max_steps: int, db_path: str,
                 store: str | None) -> None:
    """Play one task yourself, as the user or as the agent; the episode is stored and scored like any trial."""
    from tau_emotion.core.manager import Selection
    from tau_emotion.core.models import RunConfig
    from tau_emotion.core.plugin_cli import command_pm, execute_run, raw_plugin_options
    from tau_emotion.core.runner import prepare_run, run_lock

    items = [*plugins, domain, "play", "no:progress"]  # the progress bar would draw over the conversation
    pm = command_pm(plugins)
    options: dict[str, dict[str, Any]] = {}
    for group, name, value, _key in raw_plugin_options(pm, raw_options):
        options.setdefault(group, {})[name] = value
    pm.select(Selection.parse(items))
    if task_id is None:
        tasks = pm.catalog("domains").get(domain).tasks(split)
        if not tasks:
            raise TauError(f"no tasks in split '{split}' of domain '{domain}'")
        task_id = tasks[0].id
    config = RunConfig(kind="play", plugins=Selection.parse(items).items(), domains=[domain], split=split, task_ids=[task_id],
                       trials=1, agent=HUMAN if role == "agent" else agent, user=HUMAN if role == "user" else user,
                       concurrency=1, seed=seed, max_steps=max_steps, options=options, store=store,
                       # a person takes their time: reading a turn holds the loop by design (no block deadline)
                       trial_timeout=MAX_WAIT, block_timeout=MAX_WAIT)
    run = prepare_run(config, db_path, pm=pm)
    with run_lock(db_path, run.run_id):
        execute_run(run, "play", f"tau run --resume {run.run_id} --db {db_path}")
    result = run.results[0] if run.results else None
    if result is not None:
        say(f"reward {result.reward:+.0f} ({result.termination.reason}); see it with: tau show {run.run_id} {task_id}")
