"""`tau play` in a real terminal: tmux runs the command, the test types with send-keys and reads the
screen with capture-pane, as a person would. Both parts end stored and scored, and `tau show` reads them."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid

import pytest

from tau_emotion.plugins.play import MAX_WAIT, parse_call

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)")

TAU = [sys.executable, "-c", "from tau_emotion.core.cli import main; main()"]


class Terminal:
    """One tmux session on a private server socket, 200 x 50."""

    def __init__(self, command: list[str], cwd: str, env: dict[str, str]):
        self.socket = f"tau-play-{uuid.uuid4().hex[:8]}"
        script = " ".join(shlex.quote(c) for c in command) + "; echo EXIT=$?; sleep 120"
        subprocess.run(["tmux", "-L", self.socket, "new-session", "-d", "-s", "play", "-x", "200", "-y", "50",
                        "-c", cwd, "bash", "-c", script], check=True, env=env)

    def screen(self) -> str:
        return subprocess.run(["tmux", "-L", self.socket, "capture-pane", "-p", "-J", "-S", "-500", "-t", "play"],
                              capture_output=True, text=True, check=True).stdout

    def wait_for(self, text: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} did not appear; the screen:\n{self.screen()}")

    def type(self, line: str) -> None:
        subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", "play", "-l", line], check=True)
        subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", "play", "Enter"], check=True)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


@pytest.fixture
def terminal(tmp_path):
    opened: list[Terminal] = []
    env = {**os.environ, "TAU_DB": str(tmp_path / "runs.db"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("TAU_PLUGINS", None)

    def start(*args: str) -> Terminal:
        opened.append(Terminal([*TAU, *args], str(tmp_path), env))
        return opened[-1]

    yield start
    for t in opened:
        t.close()


def tau_show(tmp_path, *args: str) -> str:
    out = subprocess.run([*TAU, "show", *args, "--db", str(tmp_path / "runs.db")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.slow
def test_a_person_plays_the_user_to_stop_and_the_run_is_stored(terminal, tmp_path):
    t = terminal("play", "mock", "--as", "user", "--agent", "oracle", "--plugins", "emotion", "--task", "mock-001")
    screen = t.wait_for("you> ")
    assert "You play the user (the customer)" in screen and "Your task: You are Ada Park." in screen
    assert "How you feel:" in screen and "Play it as:" in screen  # the emotion plugin's brief for a person
    assert "<emotion>" not in screen and "###" not in screen  # never the prompt block meant for a model
    assert "/unsatisfied" in screen and "/help" in screen
    t.type("Hi, I am Ada Park: please move 200 dollars from acc-1 to acc-2.")
    t.wait_for("Shall I go ahead?")  # the oracle states the write and waits for the player's yes
    t.type("Yes, please go ahead.")
    t.wait_for("agent> Here is what I found: 235.5.")
    t.type("/stop")
    screen = t.wait_for("EXIT=")
    assert "EXIT=0" in screen and "reward +1 (user_stop)" in screen

    shown = tau_show(tmp_path, "latest")
    assert "agent=oracle user=human" in shown and "mock-001" in shown and "reward=+1 user_stop" in shown
    trial = tau_show(tmp_path, "latest", "mock-001")
    assert "[user] Hi, I am Ada Park: please move 200 dollars" in trial and "###STOP###" in trial
    tags = subprocess.run([*TAU, "show", "latest", "mock-001", "--json", "--db", str(tmp_path / "runs.db")],
                          capture_output=True, text=True, check=True).stdout
    assert '"played_by": "human"' in tags and '"human.role": "user"' in tags


@pytest.mark.slow
def test_a_person_plays_the_agent_with_tool_calls_and_the_run_is_stored(terminal, tmp_path):
    t = terminal("play", "mock", "--as", "agent", "--user", "scripted", "--task", "mock-001")
    screen = t.wait_for("agent> ")
    assert "Mock bank policy" in screen and "transfer(from_account: string" in screen
    assert "user> I'd like to move 200 dollars" in screen
    t.type("/tools find_owner")
    t.wait_for('"required": [')
    t.type('/call find_owner name="Ada Park"')
    t.wait_for('tool find_owner> {"owner_id": "own-1"')
    t.type('/call transfer {"from_account": "acc-1", "to_account": "acc-2", "amount": 200}')
    t.wait_for("tool transfer> ")
    t.type("Done: the new balance of acc-2 is 235.5.")
    screen = t.wait_for("EXIT=")
    assert "###STOP###" in screen  # the user's last words are shown before the episode ends
    assert "EXIT=0" in screen and "reward +1 (user_stop)" in screen

    shown = tau_show(tmp_path, "latest")
    assert "agent=human user=scripted" in shown and "reward=+1 user_stop" in shown
    trial = tau_show(tmp_path, "latest", "mock-001")
    assert '[agent -> transfer] {"from_account": "acc-1", "to_account": "acc-2", "amount": 200}' in trial


def test_a_person_who_gives_up_ends_unsatisfied_with_reward_minus_one(terminal, tmp_path):
    t = terminal("play", "mock", "--as", "user", "--agent", "null", "--plugins", "emotion", "--task", "mock-002")
    t.wait_for("you> ")
    t.type("My card was stolen, freeze acc-3 now.")
    t.wait_for("agent> I am sorry, I cannot help with that.")
    t.type("/unsatisfied")
    screen = t.wait_for("EXIT=")
    assert "reward -1 (unsatisfied)" in screen
    # reading a person's turn holds the event loop by design: the run sets no block or trial deadline a
    # slow typist could meet (the defaults, 60 s and an hour, would stop the trial as an error)
    with sqlite3.connect(tmp_path / "runs.db") as db:
        [(config,)] = db.execute("SELECT config FROM runs").fetchall()
    assert json.loads(config)["block_timeout"] == json.loads(config)["trial_timeout"] == MAX_WAIT


def test_call_syntax():
    assert parse_call('transfer {"amount": 200}') == ("transfer", {"amount": 200})
    assert parse_call('find_owner name="Ada Park" n=3 ok=true') == ("find_owner", {"name": "Ada Park", "n": 3, "ok": True})
    assert parse_call("list_all") == ("list_all", {})
    with pytest.raises(ValueError, match="key=value"):
        parse_call("transfer 200")
    with pytest.raises(ValueError, match="JSON object"):
        parse_call("transfer [1]")
    with pytest.raises(ValueError, match="nests too deep"):  # a pasted "[[[[..." past the parser's recursion limit
        parse_call("transfer " + "[" * 100_000)


def test_ctrl_c_exits_130_and_says_how_to_resume(terminal, tmp_path):
    t = terminal("play", "mock", "--as", "agent", "--task", "mock-002")
    t.wait_for("agent> ")
    subprocess.run(["tmux", "-L", t.socket, "send-keys", "-t", "play", "C-c"], check=True)
    screen = t.wait_for("EXIT=")
    assert "EXIT=130" in screen and "Resume with: tau run --resume" in screen


def _stored(tmp_path):
    with sqlite3.connect(tmp_path / "runs.db") as db:
        return [json.loads(r[0]) for r in db.execute("SELECT result FROM trials")]


def test_unsatisfied_without_a_give_up_plugin_does_not_end_satisfied_and_quit_exits_1(terminal, tmp_path):
    """issue 36: without the emotion plugin the give-up token fell back to ###STOP###, a satisfied ending."""
    t = terminal("play", "mock", "--as", "user", "--agent", "null", "--task", "mock-002")
    t.wait_for("you> ")
    t.type("Freeze acc-3 please.")
    t.wait_for("agent> I am sorry")
    t.type("/unsatisfied")
    t.wait_for("no loaded plugin ends a conversation on giving up")
    t.type("/help")
    t.wait_for("/quit leaves")
    t.type("/quit")
    screen = t.wait_for("EXIT=")
    assert "EXIT=1" in screen and "stored as an error" in screen and "/quit" in screen
    [row] = _stored(tmp_path)
    assert row["status"] == "error" and not any("###STOP###" in (m["content"] or "") for m in row["messages"])


def test_ctrl_d_stores_an_error_and_exits_1(terminal, tmp_path):
    t = terminal("play", "mock", "--as", "agent", "--task", "mock-002")
    t.wait_for("agent> ")
    t.type("/help")
    t.wait_for("/quit leaves")
    subprocess.run(["tmux", "-L", t.socket, "send-keys", "-t", "play", "C-d"], check=True)
    screen = t.wait_for("EXIT=")
    assert "EXIT=1" in screen and "closed the input" in screen
    assert _stored(tmp_path)[0]["status"] == "error"


@pytest.mark.slow
def test_the_default_partner_listens_to_the_persons_answers(terminal, tmp_path):
    """No --agent and no model: the listener fills each call from what the person says, wrong answers included."""
    t = terminal("play", "mock", "--as", "user", "--task", "mock-001")
    t.wait_for("you> ")
    t.type("Hi, I am Ada Park and I want to move some money.")
    t.wait_for("agent> Could you tell me the from account?")
    t.type("From acc-1.")
    t.wait_for("agent> Could you tell me the to account?")
    t.type("acc-3")  # not the task's acc-2: the listener must use it
    t.wait_for("agent> Could you tell me the amount?")
    t.type("200 dollars")
    t.wait_for("Shall I proceed?")
    t.type("yes")
    t.wait_for("agent> Done.")
    t.type("/stop")
    screen = t.wait_for("EXIT=")
    assert "EXIT=0" in screen and "reward +0 (user_stop)" in screen
    [row] = _stored(tmp_path)
    transfer = [c for m in row["messages"] for c in m.get("tool_calls") or [] if c["name"] == "transfer"]
    assert transfer[0]["arguments"] == {"from_account": "acc-1", "to_account": "acc-3", "amount": 200}

    t = terminal("play", "mock", "--as", "user", "--task", "mock-001", "--db", str(tmp_path / "right.db"))
    t.wait_for("you> ")
    t.type("I am Ada Park: please move 200 dollars from acc-1 to acc-2.")
    t.wait_for("Shall I proceed?")
    t.type("yes please")
    t.wait_for("agent> Done. Here is what I found: 235.5.")
    t.type("/stop")
    screen = t.wait_for("EXIT=")
    assert "EXIT=0" in screen and "reward +1 (user_stop)" in screen


def test_model_text_cannot_drive_the_players_terminal_and_a_model_makes_tool_calling_the_default(
        terminal, tmp_path, openai_server):
    hostile = "\x1b]2;owned\x07\x1b[2J\x1b]52;c;ZXZpbA==\x07Hello \u202edlrow"
    openai_server.respond("agent-model", {"content": hostile})
    t = terminal("play", "mock", "--as", "user", "--task", "mock-001", "-o", "agent_model=openai/agent-model",
                 "-o", f"agent_api_base={openai_server.base_url}")
    t.wait_for("you> ")
    t.type("Hello")
    screen = t.wait_for("Hello \\u202edlrow")
    assert "\\x1b]2;owned\\x07" in screen and "\\x1b]52;c;" in screen  # shown, not obeyed
    title = subprocess.run(["tmux", "-L", t.socket, "display", "-p", "-t", "play", "#{pane_title}"],
                           capture_output=True, text=True, check=True).stdout
    assert "owned" not in title
    assert "Your task: You are Ada Park." in t.screen()  # the screen was not cleared
    assert any(r.get("model") == "agent-model" for r in openai_server.requests)  # tool_calling, not the listener
    t.type("/stop")
    assert "EXIT=0" in t.wait_for("EXIT=")


def test_a_line_longer_than_the_terminal_limit_is_read_whole(terminal, tmp_path):
    long = "I need help with a long story: " + "word " * 1500  # ~7,500 characters, past the tty's 4,095
    t = terminal("play", "mock", "--as", "user", "--agent", "null", "--task", "mock-002")
    t.wait_for("you> ")
    t.type(long.strip())
    t.wait_for("agent> I am sorry")
    t.type("/stop")
    t.wait_for("EXIT=")
    [row] = _stored(tmp_path)
    assert row["messages"][0]["content"] == long.strip()
