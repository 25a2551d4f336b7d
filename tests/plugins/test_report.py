"""The report plugin: run metadata in `tau runs`/`show`/`--summary-json`, the trial viewer, the
analyses, `tau compare`/`gate` and the HTML report (rendered in headless Chromium when installed)."""

import json
import os
import re
import shutil
import subprocess
import zlib

import pytest

from tau_emotion.core.domain import Domain
from tau_emotion.core.models import EpisodeResult, Message, RewardParts, RunConfig, Termination, ToolCall

STOP_THIRD = """
import os, signal
from tau_emotion.core import hookimpl
seen = []
@hookimpl
def tau_episode_end(episode, result):
    seen.append(result)
    if len(seen) == 3:  # Ctrl-C, as a user would press it
        os.kill(os.getpid(), signal.SIGINT)
"""

BOOM_AGENT = """
from tau_emotion.core import hookimpl
class Boom:
    def __init__(self, episode):
        self.task = episode.task
    async def act(self, messages):
        if self.task.id == "mock-002":
            raise RuntimeError("agent crashed")
        from tau_emotion.core.models import Message
        return Message(role="assistant", content="bye ###STOP###")
@hookimpl
def tau_register_agents(register):
    register("boom", Boom)
"""


def run_id_of(tau, *args):
    out = tau("run", "--plugins", "mock", "--trials", "2", "--no-progress", *args)
    return out, json.loads(tau("runs", "--json").output)[-1]["run_id"]


@pytest.mark.slow
def test_runs_tell_oracle_null_interrupted_and_errored_apart(tau, tmp_path, plugin_module):
    tau("run", "--plugins", "mock", "--trials", "2", "--no-progress", "--summary-json", "s.json",
        "--agent-api-key", "sk-very-secret", "--agent-model", "m1", "--agent-api-base", "http://127.0.0.1:9/v1")
    tau("run", "--plugins", "mock", "--trials", "2", "--no-progress", "--agent", "null")
    plugin_module("stop_third", STOP_THIRD)
    interrupted = tau("run", "--plugins", "mock,stop_third", "--trials", "2", "--no-progress", "--concurrency", "1")
    assert interrupted.exit_code == 130 and "interrupted" in interrupted.output  # as a shell reports Ctrl-C
    plugin_module("boom_agent", BOOM_AGENT)
    errored = tau("run", "--plugins", "mock,boom_agent", "--agent", "boom", "--trials", "1", "--no-progress")
    assert errored.exit_code == 1
    runs = json.loads(tau("runs", "--json").output)
    assert [(r["config"]["agent"], r["status"]) for r in runs] == [
        ("oracle", "complete"), ("null", "complete"), ("oracle", "interrupted"), ("boom", "errored")]
    stored = b"".join(p.read_bytes() for p in (tmp_path / ".tau").iterdir())  # the file and its WAL
    assert b"sk-very-secret" not in stored and b"9/v1" in stored
    meta = json.loads((tmp_path / "s.json").read_text())["meta"]
    assert meta["models"] == {"agent_model": "m1", "agent_api_base": "http://127.0.0.1:9/v1"}
    assert meta["options"]["agent"]["agent_api_key"] == "[redacted]"
    assert meta["status"] == "complete" and meta["seed"] == 0 and meta["harness_version"]
    assert meta["n_trials_stored"] == 8 and meta["started"] <= meta["ended"]
    table = tau("runs").output
    assert runs[2]["n_trials"] < 8
    for word in ("oracle", "null", "interrupted", "errored", "complete", f"{runs[2]['n_trials']}/8", "agent_model=m1"):
        assert word in table
    shown = json.loads(tau("show", runs[0]["run_id"], "--json").output)
    assert shown["meta"]["agent"] == "oracle"
    text = tau("show", runs[3]["run_id"]).output
    assert "mock-002               trial=0 ERROR agent crashed" in text.replace("RuntimeError: ", "")
    assert "errors: 1 trial(s) ended in error" in text
    resumed = tau("run", "--resume", runs[2]["run_id"], "--no-progress")
    assert resumed.exit_code == 0, resumed.output
    again = json.loads(tau("runs", "--json").output)[2]
    assert again["status"] == "complete" and again["meta"]["started"] == runs[2]["meta"]["started"]
    assert len(again["meta"]["resumed"]) == 1
    deleted = tau("runs", "--delete", runs[1]["run_id"])
    assert deleted.exit_code == 0
    assert [r["run_id"] for r in json.loads(tau("runs", "--json").output)] == [runs[i]["run_id"] for i in (0, 2, 3)]


def test_a_killed_run_reads_as_interrupted(tau, tmp_path):
    from tau_emotion.plugins.sqlite_store import SqliteStore

    tau("run", "--plugins", "mock", "--trials", "1", "--no-progress")
    gone = subprocess.Popen(["true"])
    gone.wait()
    store = SqliteStore(tmp_path / ".tau" / "runs.db")
    run_id = store.run_ids()[0]
    meta = store.run_meta(run_id)
    store.save_run_meta(run_id, {**meta, "status": "running", "pid": gone.pid})  # as SIGKILL leaves it
    assert json.loads(tau("runs", "--json").output)[0]["status"] == "interrupted"
    store.save_run_meta(run_id, {**meta, "status": "running"})  # this very process: still running
    assert json.loads(tau("runs", "--json").output)[0]["status"] == "running"
    store.close()


def test_results_file_from_before_metadata_stays_readable(tau, tmp_path):
    import sqlite3

    tau("run", "--plugins", "mock", "--trials", "1", "--no-progress")
    db = tmp_path / ".tau" / "runs.db"
    with sqlite3.connect(db) as conn:  # as the store wrote it before run metadata existed
        conn.execute("DROP TABLE run_meta")
    runs = json.loads(tau("runs", "--json").output)
    assert runs[0]["meta"] is None and runs[0]["status"] == "complete"
    assert "complete" in tau("runs").output
    assert tau("show", runs[0]["run_id"], "mock-001").exit_code == 0


@pytest.mark.slow
def test_show_trial_and_failed(tau):
    tau("run", "--plugins", "mock", "--trials", "1", "--no-progress", "--agent", "null")
    run_id = json.loads(tau("runs", "--json").output)[-1]["run_id"]
    text = tau("show", run_id, "mock-001", "--trial", "0").output
    assert "[user] I'd like to move 200 dollars" in text and "[agent] I am sorry" in text
    assert "outputs_missing=['235.5']" in text and "error category: missing_action" in text
    assert "accounts[acc-1]" in text and "      balance: 1000.0 → 1200.0" in text  # a path, gold → trial
    failed = tau("show", run_id, "--failed")
    assert failed.output.count("== mock/") == 4
    data = json.loads(tau("show", run_id, "mock-001", "--json").output)
    assert data[0]["db_diff"][0]["fields"] == ["balance"] and data[0]["category"] == "missing_action"
    missing = tau("show", run_id, "mock-01")
    assert missing.exit_code == 1 and "Did you mean 'mock-001'?" in missing.output
    tau("run", "--plugins", "mock", "--trials", "1", "--no-progress")
    ok_run = json.loads(tau("runs", "--json").output)[-1]["run_id"]
    assert "0 trial(s) failed" in tau("show", ok_run, "--failed").output
    assert "reward +1" in tau("show", ok_run, "mock-002").output


@pytest.mark.slow
def test_compare_and_gate(tau, tmp_path):
    ids = []
    for agent in ("oracle", "null", "oracle"):
        tau("run", "--plugins", "mock", "--trials", "2", "--no-progress", "--agent", agent)
        ids.append(json.loads(tau("runs", "--json").output)[-1]["run_id"])
    compared = json.loads(tau("compare", ids[0], ids[1], "--json").output)
    assert compared["overall"]["avg_at_k"]["delta"] == -1.0 and compared["overall"]["mcnemar"]["lost"] == 4
    assert compared["overall"]["flipped"]["to_failure"] == ["mock/mock-001", "mock/mock-002", "mock/mock-003",
                                                            "mock/mock-004"]
    assert "McNemar lost=4 won=0" in tau("compare", ids[0], ids[1]).output
    dropped = tau("gate", "--baseline", ids[0], "--candidate", ids[1], "--junit", "gate.xml")
    assert dropped.exit_code == 1
    assert "FAIL overall: avg_at_k 1.000 -> 0.000" in dropped.output and "gate failed" in dropped.output
    xml = (tmp_path / "gate.xml").read_text()
    assert 'failures="4"' in xml and "<failure message=\"significant drop: overall: avg_at_k" in xml
    same = tau("gate", "--baseline", ids[0], "--candidate", ids[2], "--max-drop", "0.02", "--junit", "ok.xml")
    assert same.exit_code == 0 and "gate passed" in same.output
    assert 'failures="0"' in (tmp_path / "ok.xml").read_text()


def test_mcnemar_exact():
    from tau_emotion.plugins.report.compare import mcnemar

    assert mcnemar(0, 0) == 1.0
    assert mcnemar(4, 0) == 0.125
    assert round(mcnemar(10, 2), 4) == 0.0386


@pytest.mark.slow
def test_jsonl_store_serves_every_reading_command(tau, tmp_path):
    store = ("--plugins", "tests.fixtures.jsonl_store", "--store", "jsonl", "--db", "res")
    for agent in ("oracle", "null"):
        tau("run", "--plugins", "mock,tests.fixtures.jsonl_store", "--store", "jsonl", "--db", "res",
            "--trials", "1", "--no-progress", "--agent", agent)
    runs = json.loads(tau("runs", "--json", *store).output)
    assert [r["meta"]["agent"] for r in runs] == ["oracle", "null"] and runs[1]["status"] == "complete"
    a, b = (r["run_id"] for r in runs)
    assert "accounts[acc-1]\n      balance: 1000.0 → 1200.0" in tau("show", b, "mock-001", *store).output
    assert "missing_action" in tau("analyze", b, *store).output
    assert tau("gate", "--baseline", a, "--candidate", b, *store).exit_code == 1
    assert tau("report", a, b, "--out", "r.html", *store).exit_code == 0
    assert tau("runs", "--delete", b, *store).exit_code == 0
    assert len(json.loads(tau("runs", "--json", *store).output)) == 1


# ----------------------------------------------------------------------------- analyses


def mock_domain(rules=()):
    return Domain("mock", tools="tau_emotion.domain_packs.mock.tools", package="tau_emotion.domain_packs.mock",
                  policy_rules=rules)


def result(task_id, calls, said="", user="", negative=False, success=False, missing=(), reason="user_stop", tags=None):
    messages = [Message(role="user", content=user or "hello")]
    for i, (name, args) in enumerate(calls):
        messages.append(Message(role="assistant", tool_calls=[ToolCall(id=f"c{i}", name=name, arguments=args)]))
        messages.append(Message(role="tool", tool_call_id=f"c{i}", name=name, content="ok"))
    if said:
        messages.append(Message(role="assistant", content=said))
    return EpisodeResult(task_id=task_id, domain="mock", trial=0, reward=1.0 if success else 0.0, success=success,
                         termination=Termination(reason=reason, negative=negative), messages=messages,
                         parts=RewardParts(db_match=success, outputs_missing=list(missing)), tags=tags or {})


def run_data(results, rules=()):
    from tau_emotion.plugins.report.reading import RunData

    domain = mock_domain(rules)
    return RunData("r", RunConfig(trials=1), {}, {}, results, {"mock": domain},
                   {("mock", t.id): t for t in domain.tasks(None)})


OWNER = ("find_owner", {"name": "Ada Park"})
GOLD_TRANSFER = ("transfer", {"from_account": "acc-1", "to_account": "acc-2", "amount": 200})


def test_error_categories():
    from tau_emotion.core.domain import rule
    from tau_emotion.plugins.report.analysis import error_category

    @rule
    def no_big_transfers(state, name, args):
        return "over 100 needs approval" if name == "transfer" and args.get("amount", 0) > 100 else None

    cases = {
        "wrong_arguments": result("mock-001", [OWNER, ("transfer", {**GOLD_TRANSFER[1], "amount": 20})]),
        "missing_action": result("mock-001", [OWNER]),
        "extra_action": result("mock-003", [OWNER, ("get_account", {"account_id": "acc-1"}),
                                            ("freeze_account", {"account_id": "acc-1", "reason": "x"})]),
        "wrong_output": result("mock-001", [OWNER, GOLD_TRANSFER], said="done", missing=["235.5"]),
        "incomplete": result("mock-001", [], reason="max_steps"),
        "gave_up": result("mock-001", [], negative=True, reason="unsatisfied"),
    }
    data = run_data(list(cases.values()))
    assert {name: error_category(data, r) for name, r in cases.items()} == {name: name for name in cases}
    strict = run_data([cases["wrong_output"]], rules=[no_big_transfers])
    assert error_category(strict, cases["wrong_output"]) == "policy_violation"
    assert error_category(data, result("mock-001", [OWNER, GOLD_TRANSFER], success=True)) is None


def test_a_user_who_gives_up_midway_is_not_a_wrong_argument():
    """Issue 36: the gold looks up two accounts; the agent looked up the first, rightly, and the user quit. The
    second lookup is missing and its tool was called, but never with wrong arguments: the user gave up."""
    from tau_emotion.core.models import Task
    from tau_emotion.plugins.report.analysis import analyze, error_category

    task = Task.model_validate({"id": "two-lookups", "domain": "mock", "user": {"instruction": "balances"},
                                "gold": {"actions": [{"name": "find_owner", "arguments": {"name": "Ada Park"}},
                                                     {"name": "get_account", "arguments": {"account_id": "acc-1"}},
                                                     {"name": "get_account", "arguments": {"account_id": "acc-2"}}]}})
    data = run_data([])
    data.tasks[("mock", task.id)] = task
    first = ("get_account", {"account_id": "acc-1"})
    quit_midway = result(task.id, [OWNER, first], negative=True, reason="unsatisfied")
    assert error_category(data, quit_midway) == "gave_up"
    # a wrong lookup before the quit is the agent's error, whoever ended the conversation
    wrong = result(task.id, [OWNER, ("get_account", {"account_id": "acc-9"})], negative=True, reason="unsatisfied")
    assert error_category(data, wrong) == "wrong_arguments"
    # the user stayed, the agent stopped after one lookup: a missing action, not a quit
    assert error_category(data, result(task.id, [OWNER, first])) == "missing_action"
    data.results = [quit_midway, wrong]
    assert analyze(data)["error_categories"] == {"gave_up": 1, "wrong_arguments": 1}  # what `tau analyze` prints


def test_unsatisfied_and_hallucination_audits():
    from tau_emotion.plugins.report.analysis import analyze

    fam = "emotion.family"
    results = [
        # quit while on the gold path with no question asked: a false quit
        result("mock-001", [OWNER], negative=True, reason="unsatisfied", tags={fam: "anger"}),
        # quit after a wrong call: a fair quit
        result("mock-001", [("get_account", {"account_id": "acc-9"})], negative=True, reason="unsatisfied",
               tags={fam: "anger"}),
        # twelve calls for a two-action task, failed, and the user stayed: a missed quit
        result("mock-001", [OWNER] * 12, tags={fam: "fear"}),
        # the user states an account and an amount the task never gave
        result("mock-002", [], user="Please freeze acc-3 and also acc-77, I lost 5000 dollars", tags={fam: "fear"}),
    ]
    out = analyze(run_data(results))
    anger, fear = out["unsatisfied_audit"]["groups"]["anger"], out["unsatisfied_audit"]["groups"]["fear"]
    assert (anger["quits"], anger["false_quits"], anger["false_quit_rate"]) == (2, 1, 0.5)
    assert (fear["missed_quits"], fear["missed_quit_rate"]) == (1, 0.5)
    flagged = [t["hallucinations"] for t in out["trials"] if t["hallucinations"]]
    assert [h["tokens"] for h in flagged[0]] == [["acc-77", "5000"]]
    assert out["hallucination_audit"]["trials"] == ["mock-002#0"]


# ----------------------------------------------------------------------------- HTML report

XSS = "<script>document.title='PWNED'</script><img src=x onerror=\"document.title='PWNED'\">"


def xss_report(tmp_path, tau):
    """An oracle run plus a stored trial whose every text field carries markup; the report of both."""
    from tau_emotion.plugins.sqlite_store import SqliteStore

    tau("run", "--plugins", "mock,emotion", "--emotion-control", "--trials", "2", "--no-progress")
    store = SqliteStore(tmp_path / ".tau" / "runs.db")
    run_id = store.run_ids()[-1]
    bad = result("mock-001", [("find_owner", {"name": XSS})], said=XSS, user=XSS, tags={"emotion.family": XSS})
    bad.trial, bad.error, bad.termination.detail = 5, None, XSS
    store.save_result(run_id, bad)
    store.close()
    out = tau("report", run_id, "--out", "report.html")
    assert out.exit_code == 0, out.output
    return tmp_path / "report.html"


def test_report_escapes_text_and_holds_every_section(tau, tmp_path):
    html = xss_report(tmp_path, tau).read_text()
    assert "<script>document.title" not in html and "<img src=x" not in html
    assert "&lt;script&gt;document.title=" in html
    for section in ('id="summary"', 'id="heatmaps"', 'id="unsatisfied"', 'id="control"', 'id="behaviour"',
                    'id="passk"', 'id="analysis"', 'id="tasks"', 'id="trajectories"', "<svg", "emotion.politeness",
                    "more tool calls than questions", 'href="#r0-t0"', 'id="r0-t0"', "emotional",
                    "UNSATISFIED rate by domain and emotion.family</figcaption>", "paired delta (emotional &minus; control) per domain",
                    "domain mock", "Wilson 95% interval", 'id="traj-data"'):
        assert section in html, section
    assert html.count("<script>") == 1  # ours, and only ours (the data block is JSON, never run)
    assert re.search(r"<td>oracle vs scripted [0-9a-f]{6}</td>", html)  # runs are labelled by who ran and a short id
    # the dimension bars keep each axis's natural order
    bars = html.split('id="unsatisfied"', 1)[1].split('id="control"', 1)[0]
    assert [m for m in re.findall(r">(warm|neutral|cold|low|moderate|high|trusting|cautious|skeptical)</text>", bars)
            if m in ("low", "moderate", "high")] in (["low", "moderate", "high"], ["low", "moderate"],
                                                     ["low", "high"], ["moderate", "high"], ["low"], ["moderate"],
                                                     ["high"])


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def chromium(*args, home, timeout=60):
    """Headless Chromium with its profile, caches and NSS database under `home` (a temporary folder): by
    default it writes them into $HOME (~/.cache/chromium-headless, ~/.config, ~/.pki)."""
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_CACHE_HOME": str(home / ".cache")}
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                           "--v=0", "--virtual-time-budget=1000", f"--user-data-dir={home / 'profile'}",
                           f"--crash-dumps-dir={home / 'crashes'}", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def png_is_blank(path):
    """True when every pixel row of an RGB(A) PNG is the same (a blank page)."""
    data = path.read_bytes()
    chunks, pos = [], 8
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        if kind == b"IDAT":
            chunks.append(data[pos + 8:pos + 8 + length])
        pos += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    return len(set(raw[i:i + 64] for i in range(0, len(raw), 4096))) <= 2


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (apt-get install -y chromium; "
                                              ".ci/run installs it)")
def test_report_renders_in_chromium_without_errors_or_xss(tau, tmp_path):
    page = xss_report(tmp_path, tau)
    shot = tmp_path / "report.png"
    # the DOM after scripts ran and a screenshot, with filters given in the address
    html = page.read_text()
    bad = re.search(r'<details class="traj" id="(r0-t\d+)"[^>]*>\s*<summary>[^<]*mock-001 trial 5:', html).group(1)
    dom = chromium("--dump-dom", f"--screenshot={shot}", "--window-size=1280,2000", page.as_uri() + "?failed=1&domain=mock",
                   home=tmp_path / "browser")
    assert dom.returncode == 0, dom.stderr[-2000:]
    body = re.search(r"<body[^>]*>", dom.stdout).group(0)
    assert 'data-ready="1"' in body and "data-js-error" not in body  # our script ran to its end, with no error
    assert re.search(r"<title>(.*?)</title>", dom.stdout).group(1).startswith("tau report: ")  # not 'PWNED'
    assert "<img src=\"x\"" not in dom.stdout and "<script>document" not in dom.stdout
    consoles = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    assert consoles == []
    assert shot.stat().st_size > 20_000 and not png_is_blank(shot)
    # the filters: ?failed=1 hides every task row and trajectory that succeeded, and only those
    rows = re.findall(r'<tr class="task-row( hidden)?"[^>]*data-failed="(\d)"', dom.stdout)
    assert rows and all((hidden == " hidden") == (failed == "0") for hidden, failed in rows)
    assert any(failed == "1" for _, failed in rows)
    # the trajectory named in the address opened and was unpacked on demand, its markup shown as text
    dom = chromium("--dump-dom", page.as_uri() + f"?failed=1&domain=mock#{bad}", home=tmp_path / "browser")
    assert dom.returncode == 0 and "data-js-error" not in re.search(r"<body[^>]*>", dom.stdout).group(0)
    assert re.search(r"<title>(.*?)</title>", dom.stdout).group(1).startswith("tau report: ")
    opened = re.search(rf'<details class="traj( hidden)?" id="{bad}"[^>]*open="">(.*?)</details>', dom.stdout, re.S)
    assert opened and opened.group(1) is None, "the trajectory in the address did not open"
    assert 'data-rendered="1"' in opened.group(2) and "&lt;script&gt;document.title=" in opened.group(2)
    assert "find_owner(" in opened.group(2) and "Gold actions" in opened.group(2)


FAKE_JUDGE = """
import json
from tau_emotion.core import hookimpl
from tau_emotion.core.models import Message
PROMPTS = []
class Judge:
    def __init__(self, settings, config):
        self.settings = settings
    async def complete(self, messages, tools=None):
        PROMPTS.append(messages[0]["content"])
        if "card was stolen" in PROMPTS[-1]:
            return Message(role="assistant", content="no json here")
        return Message(role="assistant", content='Verdict: {"intent_misreading": false, "emotion_neglect": true, '
                                                 '"reason": "ignored the anger"}')
@hookimpl
def tau_register_model_clients(register):
    register("fakejudge", Judge)
"""


def test_analyze_with_a_judge_model(tau, plugin_module):
    plugin_module("fake_judge", FAKE_JUDGE)
    tau("run", "--plugins", "mock,emotion", "--emotion", "family:anger", "--trials", "1", "--no-progress",
        "--agent", "null", "--max-steps", "3")
    run_id = json.loads(tau("runs", "--json").output)[-1]["run_id"]
    out = tau("analyze", run_id, "--json", "--judge-model", "j", "--judge-client", "fakejudge", "--plugins", "fake_judge")
    judged = json.loads(out.output)["judge"]
    assert judged["judged"] == 4 and judged["counts"] == {"intent_misreading": 0, "emotion_neglect": 3, "unparsable": 1}
    assert judged["trials"]["mock-001#0"]["reason"] == "ignored the anger"
    import fake_judge

    assert "emotion.family=anger" in fake_judge.PROMPTS[0] and "[user]" in fake_judge.PROMPTS[0]
    assert "emotion_neglect=3" in tau("analyze", run_id, "--judge-model", "j", "--judge-client", "fakejudge",
                                      "--plugins", "fake_judge").output


def test_path_diff_names_the_leaf_that_changed():
    from tau_emotion.plugins.report.reading import MISSING, path_diff

    days = {f"2024-05-{d}": {"status": "available", "available_seats": {"economy": 11, "business": 2}} for d in (18, 19)}
    after = json.loads(json.dumps(days))
    after["2024-05-19"]["available_seats"]["economy"] = 13
    assert path_diff({"flight": "HAT001", "dates": days}, {"flight": "HAT001", "dates": after}) == [
        ("dates.2024-05-19.available_seats.economy", 11, 13)]
    assert path_diff({"passengers": [{"name": "A"}, {"name": "B"}]}, {"passengers": [{"name": "A"}, {"name": "C"}]}) \
        == [("passengers.1.name", "B", "C")]
    assert path_diff({"a": 1}, {"a": 1, "b": 2}) == [("b", MISSING, 2)]
    assert path_diff(None, {"a": 1}) == [("(row)", None, {"a": 1})]
