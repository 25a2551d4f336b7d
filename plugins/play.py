"""The `play` plugin: a person in the loop, as the user or as the agent (`tau play`).

It registers a `human` user and a `human` agent that read their turns from the terminal, the `listener` agent
(a scripted partner that acts on what the person says), and the `tau play` command, which runs one task through
the ordinary runner and episode loop with one of them: the episode is stored, scored and summarised like any
trial (its results carry the tags `played_by=human` and `human.role`), so `tau show`, `tau report` and `tau
compare` read it.

Playing the user, a person sees their role, the task's instruction, the facts they know, their requests and
what plugins brief a player with (`tau_player_brief`: the emotion plugin's feeling, in words; never the prompt
block meant for a model), and ends with `/stop` or `/unsatisfied`. Playing the agent, a person sees the domain
policy and the tools, and calls them with `/call NAME {json}` or `/call NAME key=value ...`. Both sides have
`/help` and `/quit`.

Everything shown that came from a model, a user, a tool or the database goes through `core.terminal.safe`
(an escape sequence in a tool result cannot retitle, clear or write the clipboard of the player's terminal). A
line is read with readline where Python has it, so a paste longer than the terminal's 4,095-character line
limit is read whole; without readline such a line is refused, never stored cut. `tau play` exits 1 when the
stored trial is an error (end of input, `/quit`).
"""

from __future__ import annotations

import json
import re
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
from tau_emotion.core.protocols import GIVE_UP
from tau_emotion.core.terminal import reward as terminal_reward
from tau_emotion.core.terminal import safe

#: the negative ending's token: the text protocol users share (the `unsatisfied` plugin ends on it when loaded)
GREETING = "Hi! How can I help you today?"
#: the longest deadline a run takes (`--trial-timeout`, `--block-timeout`): a person playing is never cut off
MAX_WAIT = 1e7
HUMAN = "human"
#: the default partner of a person playing the user when no agent model is configured
LISTENER = "listener"

USER_KEYS = ("Type your message and press Enter. /stop ends the conversation satisfied; /unsatisfied ends it "
             "fed up (when a plugin that ends on giving up is loaded); /task shows your task again; /help shows "
             "this; /quit leaves (the trial is stored as an error).")
AGENT_KEYS = ("Type a message to the user and press Enter, or call a tool:\n"
              "  /call NAME {\"arg\": value, ...}    or    /call NAME arg=value arg2=\"two words\"\n"
              "/tools lists the tools, /tools NAME shows one's schema, /policy shows the policy again, /help shows "
              "this, /quit leaves (the trial is stored as an error).")
#: the longest line a terminal in canonical mode hands a program (Linux N_TTY): a longer paste arrives cut there
TTY_LINE_LIMIT = 4095


class PlayerLeft(TauError):
    """The person closed the input (end of file) or typed /quit in the middle of an episode."""


def _line_editor() -> bool:
    """Whether `input()` reads through readline (raw mode: no line limit); importing it switches that on."""
    try:
        import readline  # noqa: F401
    except ImportError:
        return False
    return True


def ask(prompt: str) -> str:
    """One line from the person; end of input ends the episode as an error row that says so.

    Ctrl-C raises KeyboardInterrupt at once, counted as the run's interrupt (not this trial's error):
    the runner's own SIGINT handler would only cancel the run at its next await, which a blocking read
    never reaches. A line at the terminal's line limit was cut by the terminal (no readline): it is refused."""
    from tau_emotion.core.containment import interrupt_now

    edited = _line_editor()
    try:
        previous = signal.signal(signal.SIGINT, interrupt_now)
    except ValueError:  # not the main thread: leave the handler alone
        previous = None
    try:
        while True:
            line = input(prompt)
            if edited or len(line) < TTY_LINE_LIMIT or not sys.stdin.isatty():
                return line
            say(f"that line reached the terminal's limit of {TTY_LINE_LIMIT} characters, so its end was cut; "
                f"nothing was sent: type it again in shorter parts")
    except EOFError:
        raise PlayerLeft("the player closed the input before the episode ended") from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def say(text: str) -> None:
    """Show `text` on the player's terminal: newlines kept, every other control character and escape sequence
    shown escaped (a model, a user, a tool result or the database may hold them)."""
    click.echo(safe(text, multiline=True))
    sys.stdout.flush()


def quit_now() -> None:
    raise PlayerLeft("the player quit (/quit) before the episode ended")


# ----------------------------------------------------------------------------- the person as the user


class HumanUser:
    """The person plays the customer: their role, the task, known facts, requests and feeling are shown once."""

    def __init__(self, view: EpisodeView):
        self.view = view

    def briefing(self) -> str:
        task = self.view.task
        lines = [f"== You play the user (the customer): task {task.id} ({task.domain}) ==",
                 f"Your task: {task.user.instruction}"]
        if task.user.known:
            lines.append("What you know: " + "; ".join(f"{k} = {v}" for k, v in task.user.known.items()))
        if task.user.intents:
            lines.append("Your requests, in order:")
            lines += [f"  {i}. {intent}" for i, intent in enumerate(task.user.intents, 1)]
        lines += self.view.player_sections()  # the feeling, in words for a person (not the model's prompt block)
        lines.append(USER_KEYS)
        return "\n".join(lines)

    def _turn(self) -> Message:
        while True:
            text = ask("you> ").strip()
            if text == "/task":
                say(self.briefing())
                continue
            if text == "/help":
                say(USER_KEYS)
                continue
            if text == "/quit":
                quit_now()
            tokens = self.view.end_tokens  # declared by the terminator plugins the run loaded
            if text == "/stop" and tokens.done:
                text = tokens.done
            elif text == "/unsatisfied":
                # the give-up token itself: `tokens.give_up` falls back to the done token, which would end a
                # fed-up player's conversation as satisfied
                give_up = tokens.get(GIVE_UP)
                if not give_up:
                    say("no loaded plugin ends a conversation on giving up (add --plugins emotion or unsatisfied)")
                    continue
                text = give_up
            if text:
                return Message(role="user", content=text)

    async def start(self) -> Message:
        say(self.briefing())
        say(f"agent> {GREETING}")
        return self._turn()

    async def respond(self, message: Message) -> Message:
        say(f"agent> {message.content or ''}")
        return self._turn()


# ----------------------------------------------------------------------------- the default partner of a player


_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")
_NO = re.compile(r"\b(no|nope|don'?t|do not|stop|cancel|wait)\b", re.I)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\w@]+(?:[.\-'][\w@]+)*", text.lower()))  # acc-1, a.b@c.org, 2024-05-19: one word each


def heard(value: Any, text: str) -> Any:
    """The argument value `text` (what the person said) gives for a gold `value`, or None when it gives none.

    The gold value when the person said it (a number by value, a text when all its words are there, in any
    order); else what they said: the first number for a number, the answer itself for a text."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    if isinstance(value, (int, float)):
        numbers = [float(n.replace(",", ".")) for n in _NUMBER.findall(text)]
        if float(value) in numbers:
            return value
        return None
    wanted = _words(value)
    if wanted and wanted <= _words(text):
        return value
    return None


def answer_value(value: Any, answer: str) -> Any:
    """What the person's answer to a question about `value` makes of it (their own value when it is not gold)."""
    found = heard(value, answer)
    if found is not None:
        return found
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        numbers = _NUMBER.findall(answer)
        if numbers:
            number = float(numbers[0].replace(",", "."))
            return int(number) if isinstance(value, int) and number.is_integer() else number
        return answer.strip()
    return answer.strip().rstrip(".!")


class ListenerAgent:
    """A scripted agent that acts on what the person playing the user says (`tau play --as user` without a
    model): it takes each gold call in turn and fills each top-level text or number argument from the person's
    words, asking for those not said yet, confirms each write (a "no" skips it), then tells what it found.
    Wrong answers give wrong calls, so a person's play is scored on what they said, unlike the `asker`."""

    def __init__(self, view: EpisodeView):
        from tau_emotion.core.reward import gold_statement

        self.view = view
        self.actions = [(a.name, dict(a.arguments)) for a in view.task.gold.actions]
        self.statement = gold_statement(view.domain, view.task)
        self.asking: tuple[str, str] | None = None  # (argument, question) waiting for the person's answer
        self.filled: dict[str, Any] = {}
        self.confirming = False
        self.all_gold = True
        self.calls = 0
        self.last_result = ""
        self.told = False

    def _said(self, messages: list[Message]) -> str:
        return " ".join(m.content or "" for m in messages if m.role == "user")

    def _next_missing(self, arguments: dict[str, Any], said: str) -> str | None:
        for name, value in arguments.items():
            if name in self.filled or isinstance(value, (dict, list)) or value is None:
                continue
            found = heard(value, said)
            if found is None:
                return name
            self.filled[name] = found
        return None

    async def act(self, messages: list[Message]) -> Message:
        last = messages[-1] if messages else None
        if last is not None and last.role == "tool":
            self.last_result = last.content or ""
        reply = (last.content or "") if last is not None and last.role == "user" else ""
        if self.asking is not None and reply:
            name, _ = self.asking
            self.filled[name] = answer_value(self.actions[0][1][name], reply)
            self.asking = None
        if self.confirming and reply:
            self.confirming = False
            if _NO.search(reply):
                self.actions.pop(0)
                self.filled, self.all_gold = {}, False
                return Message(role="assistant", content="All right, I will not do that. Anything else?")
            return self._call()
        while self.actions:
            name, arguments = self.actions[0]
            missing = self._next_missing(arguments, self._said(messages))
            if missing is not None:
                question = f"Could you tell me the {missing.replace('_', ' ')}?"
                self.asking = (missing, question)
                return Message(role="assistant", content=question)
            if self.view.tools.writes(name):
                self.confirming = True
                shown = ", ".join(f"{k.replace('_', ' ')} {self._merged(arguments)[k]}" for k in arguments
                                  if not isinstance(arguments[k], (dict, list)))
                return Message(role="assistant",
                               content=f"I am about to {name.replace('_', ' ')} ({shown}). Shall I proceed?")
            return self._call()
        if not self.told:
            self.told = True
            if self.all_gold and self.statement:
                return Message(role="assistant", content=f"Done. Here is what I found: {self.statement}.")
            return Message(role="assistant", content=f"Done. {self.last_result}".strip())
        return Message(role="assistant", content="Is there anything else I can help you with?")

    def _merged(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return {**arguments, **{k: v for k, v in self.filled.items() if k in arguments}}

    def _call(self) -> Message:
        name, arguments = self.actions.pop(0)
        used = self._merged(arguments)
        self.all_gold = self.all_gold and used == arguments
        self.filled = {}
        self.calls += 1
        return Message(role="assistant", tool_calls=[ToolCall(id=f"listener-{self.calls}", name=name, arguments=used)])


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
        try:
            arguments = json.loads(rest)
        except RecursionError:  # a pasted "[[[[..." past the parser's recursion limit
            raise ValueError("the JSON nests too deep") from None
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
            if command == "/help":
                say(AGENT_KEYS)
            elif command == "/quit":
                quit_now()
            elif command == "/policy":
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
    register(LISTENER, ListenerAgent)


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
@click.option("--agent", default=None,
              help="The agent plugin you talk to when you play the user (default: tool_calling when an agent model "
                   "is configured with -o agent_model=..., else listener, a scripted agent that acts on your answers).")
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
def play_command(domain: str, role: str, task_id: str | None, split: str, agent: str | None, user: str,
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
    if agent is None:
        agent = "tool_calling" if options.get("agent", {}).get("agent_model") else LISTENER
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
    if result is not None and result.status == "error":
        raise TauError(f"the episode was stored as an error ({safe(result.error or 'no reason given')}); "
                       f"see it with: tau show {run.run_id} {task_id}")
    if result is not None:
        say(f"reward {terminal_reward(result.reward)} ({result.termination.reason}); "
            f"see it with: tau show {run.run_id} {task_id}")
