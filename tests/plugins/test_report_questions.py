"""Issue 36, items 2, 3 and 5: the report answers the usual questions (success per emotion, family,
politeness, urgency and trust with intervals; tokens and cost per trial and per run, in the HTML and in
`tau runs` / `tau show`; A vs B), `latest` is the last evaluation, `tau show TASK` names the condition, and
`tau gate` gates each emotion family and the UNSATISFIED rate against a baseline named by tag."""

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from tau_emotion.core.models import EpisodeResult, Termination
from tests.plugins.test_report import CHROMIUM, chromium, png_is_blank

SPENDER = """
from tau_emotion.core import hookimpl
from tau_emotion.core.models import Message
class Spender:
    '''Answers at once, and reports the tokens and cost of a model call it did not make.'''
    def __init__(self, episode):
        pass
    async def act(self, messages):
        return Message(role="assistant", content="All done. ###STOP###",
                       usage={"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120, "cost": 0.0015})
@hookimpl
def tau_register_agents(register):
    register("spender", Spender)
"""


def runs_json(tau, *args):
    return json.loads(tau("runs", "--json", *args).output)


# ----------------------------------------------------------------------------- latest and run kinds


def played_run(db):
    """A stored run of kind `play` (what `tau play` stores), made through the runner without a terminal."""
    from tau_emotion.core.models import RunConfig
    from tau_emotion.core.runner import prepare_run, run_sync

    run = prepare_run(RunConfig(kind="play", plugins=["mock", "no:progress"], domains=["mock"], task_ids=["mock-001"],
                                trials=1), str(db))
    run_sync(run)
    return run.run_id


def test_latest_is_the_last_evaluation_not_a_played_episode(tau, tmp_path):
    db = tmp_path / ".tau" / "runs.db"
    assert tau("run", "--plugins", "mock", "--trials", "1", "--no-progress").exit_code == 0
    evaluation = runs_json(tau)[-1]["run_id"]
    played = played_run(db)
    assert [r["run_id"] for r in runs_json(tau)] == [evaluation, played]  # the played one is the newest
    assert json.loads(tau("analyze", "latest", "--json").output)["run_id"] == evaluation
    assert f"run {evaluation}: complete; kind=eval" in tau("show", "latest").output
    assert json.loads(tau("show", "latest:play", "--json").output)["trials"][0]["task_id"] == "mock-001"
    assert [r["run_id"] for r in runs_json(tau, "--kind", "play")] == [played]
    assert [r["run_id"] for r in runs_json(tau, "--kind", "eval")] == [evaluation]
    table = tau("runs").output
    assert re.search(rf"{evaluation}\s*│\s*eval\s*│", table) and re.search(rf"{played}\s*│\s*play\s*│", table)


def test_latest_with_only_played_runs_is_the_newest_and_a_missing_kind_is_named(tau, tmp_path):
    played = played_run(tmp_path / ".tau" / "runs.db")
    assert f"run {played}: complete; kind=play" in tau("show", "latest").output  # no evaluation to prefer
    out = tau("show", "latest:eval")
    assert out.exit_code == 1 and len(out.output.strip().splitlines()) == 1
    assert "no run of kind 'eval'" in out.output and f"the latest run, {played}, is of kind 'play'" in out.output
    assert "`latest:play` names it" in out.output


# ----------------------------------------------------------------------------- tokens and cost


def test_tokens_and_cost_per_trial_and_per_run(tau, plugin_module, tmp_path):
    plugin_module("spender_agent", SPENDER)
    out = tau("run", "--plugins", "mock,spender_agent", "--agent", "spender", "--trials", "2", "--no-progress")
    assert out.exit_code == 0, out.output
    run = runs_json(tau)[-1]
    rows = [json.loads(line) for line in tau("export", run["run_id"]).output.splitlines()]
    replies = [sum(m["role"] == "assistant" for m in r["messages"]) for r in rows]  # the user answers each one
    assert len(replies) == 8 and len(set(replies)) == 1
    n = replies[0]
    total, cost = 8 * n * 120, 8 * n * 0.0015
    assert run["summary"]["conversation"]["total_tokens"] == total
    table = tau("runs").output
    assert re.search(rf"│\s+{total:,}\s+│\s+\${cost:.4f}\s+│", table), table
    shown = " ".join(tau("show", run["run_id"]).output.split())
    assert (f"model calls counted {total:,} tokens, ${cost:.4f} ({n * 120:,} tokens, ${n * 0.0015:.4f} per trial)"
            in shown)
    assert shown.count(f"tokens={n * 120} cost=${n * 0.0015:.4f}") == 8  # each trial's line
    assert json.loads(tau("show", run["run_id"], "--json").output)["trials"][0]["usage"]["cost"] == n * 0.0015
    one = tau("show", run["run_id"], "mock-001", "--trial", "1").output
    assert f"usage: {n * 120} tokens ({n * 100} prompt + {n * 20} completion), ${n * 0.0015:.4f}" in one
    assert tau("report", run["run_id"], "--out", "r.html").exit_code == 0
    html = (tmp_path / "r.html").read_text()
    usage = html.split('id="usage"', 1)[1].split('id="conditions"', 1)[0]
    assert re.search(rf"<td>run</td><td class=\"num\">8</td><td class=\"num\">{total:,}</td>\s*"
                     rf"<td class=\"num\">{8 * n * 100:,}</td><td class=\"num\">{8 * n * 20:,}</td>"
                     rf"<td class=\"num\">\${cost:.4f}</td>", usage), usage
    assert f"{n * 120} / {n * 120} / {n * 120}" in usage and "domain mock" in usage
    assert html.count(f"&middot; {n * 120} tokens, ${n * 0.0015:.4f}</span></summary>") == 8  # each trajectory's line


# ----------------------------------------------------------------------------- the report's new sections


def test_report_answers_by_condition_and_compares_two_runs(tau, tmp_path):
    for agent in ("oracle", "null"):
        out = tau("run", "--plugins", "mock,emotion", "--emotion-control", "--agent", agent, "--trials", "2",
                  "--no-progress")
        assert out.exit_code == 0, out.output
    runs = runs_json(tau)
    a, b = (r["run_id"] for r in runs)
    ran = set(runs[0]["summary"]["by_tag"]["emotion.emotion"])  # the emotions the mock's 4 tasks drew
    assert tau("report", a, b, "--out", "r.html").exit_code == 0
    html = (tmp_path / "r.html").read_text()
    conditions = html.split('id="conditions"', 1)[1].split('id="heatmaps"', 1)[0]
    tables = dict(re.findall(r'<table class="cond-table" data-tag="([^"]+)">(.*?)</table>', conditions, re.S)[:5])
    assert list(tables) == ["emotion.family", "emotion.emotion", "emotion.politeness", "emotion.urgency", "emotion.trust"]
    emotions = re.findall(r'<tr class="cond-row"><td>([a-z]+)</td><td>([a-z]+)</td>', tables["emotion.emotion"])
    assert len(emotions) == 22 and ("anxiety", "fear") in emotions and ("pride", "enjoyment") in emotions
    assert tables["emotion.emotion"].count("no trials") == 22 - len(ran) and 1 <= len(ran) <= 4
    assert re.findall(r'<tr class="cond-row"><td>([a-z]+)</td>', tables["emotion.urgency"]) == [
        "low", "moderate", "high"]
    # the oracle solves every task: Avg@k 1 with its interval, beside the value's UNSATISFIED rate
    assert re.search(r"<td class=\"num\">1\.000 \[1\.00, 1\.00\]</td>", tables["emotion.family"])
    versus = html.split('id="versus"', 1)[1].split('id="behaviour"', 1)[0]
    assert "B = oracle vs scripted" not in versus and "B = null vs scripted" in versus
    scopes = set(re.findall(r"<tr><td>([^<]+)</td><td class=\"num\">\d+</td><td>Avg@k</td>", versus))
    assert {"all", "domain mock"} <= scopes and any(s.startswith("emotion.family=") for s in scopes)
    assert re.search(r"<td>all</td><td class=\"num\">8</td><td>Avg@k</td><td class=\"num\">1\.000</td>"
                     r"<td class=\"num\">0\.000</td>\s*<td class=\"num fail\">-1\.000</td>", versus)
    assert "<td>UNSATISFIED rate</td>" in versus and "lost 8, won 0" in versus
    assert "Flipped to failure in B (8 task(s))" in versus
    one = tau("report", a, "--out", "one.html")
    assert one.exit_code == 0 and "One run: give two" in (tmp_path / "one.html").read_text()


def test_show_task_names_the_emotion_condition(tau):
    condition = "fear.anxiety/warm/high/cautious"
    out = tau("run", "--plugins", "mock,emotion", "--emotion", condition, "--trials", "1", "--no-progress")
    assert out.exit_code == 0, out.output
    shown = tau("show", "latest", "mock-001").output
    assert f"emotion.condition={condition}" in shown and "emotion.family=fear" in shown
    assert "emotion.politeness=warm" in shown


# ----------------------------------------------------------------------------- the gate


def trial(task, family, success, negative=False, trial=0):
    return EpisodeResult(task_id=task, domain="d", trial=trial, reward=1.0 if success else (-1.0 if negative else 0.0),
                         success=success, termination=Termination(reason="unsatisfied" if negative else "user_stop",
                                                                  negative=negative),
                         tags={"emotion.family": family})


def test_gate_holds_each_family_and_the_unsatisfied_rate():
    """Thirty fear tasks hold and ten anger tasks fail with the user quitting: overall Avg@k drops 0.25 (within
    a 0.3 allowance), anger drops 1.0 and its UNSATISFIED rate rises 1.0, both significantly."""
    from tau_emotion.plugins.report.compare import compare, gate, junit

    tasks = [(f"t{i:02d}", "anger" if i < 10 else "fear") for i in range(40)]
    baseline = [trial(t, f, True, trial=k) for t, f in tasks for k in range(2)]
    candidate = [trial(t, f, f == "fear", negative=f == "anger", trial=k) for t, f in tasks for k in range(2)]
    comparison = compare(baseline, candidate)
    checks = {(c["scope"], c["metric"]): c for c in gate(comparison, max_drop=0.3, max_unsat_rise=0.3)}
    assert not checks[("overall", "avg_at_k")]["failed"] and checks[("overall", "avg_at_k")]["delta"] == -0.25
    assert checks[("emotion.family=anger", "avg_at_k")]["failed"]
    assert checks[("emotion.family=anger", "unsat_rate")]["failed"]
    assert checks[("emotion.family=anger", "unsat_rate")]["delta"] == 1.0
    assert not any(c["failed"] for (scope, _), c in checks.items() if scope == "emotion.family=fear")
    assert not checks[("overall", "unsat_rate")]["failed"]  # +0.25 within the 0.3 allowed
    # without the families, the same candidate passes at this allowance
    assert not any(c["failed"] for c in gate(comparison, 0.3, 0.3, by_tag=False))
    # the UNSATISFIED rate alone fails a candidate whose success held
    quitters = [trial(t, f, True, negative=(f == "anger" and k == 0), trial=k) for t, f in tasks for k in range(2)]
    alone = [c for c in gate(compare(baseline, quitters), 0.02, 0.02) if c["failed"]]
    assert {c["metric"] for c in alone} == {"unsat_rate"}
    assert '<failure message="significant rise: overall: unsat_rate 0.000 -&gt; 0.125' in junit(alone)


def test_gate_against_a_baseline_named_by_tag(tau, tmp_path):
    for agent in ("oracle", "null", "oracle"):
        assert tau("run", "--plugins", "mock", "--trials", "1", "--no-progress", "--agent", agent).exit_code == 0
    first, bad, good = (r["run_id"] for r in runs_json(tau))
    missing = tau("gate", "tag:release", good)
    assert missing.exit_code == 1 and "no run tagged 'release'" in missing.output and "tau tag RUN release" in missing.output
    assert tau("tag", first, "release").exit_code == 0
    assert runs_json(tau)[0]["meta"]["tags"] == ["release"]
    assert re.search(rf"{first}.*│ release\s*│", tau("runs").output)
    assert tau("gate", "tag:release", good).exit_code == 0
    failed = tau("gate", "--baseline", "tag:release", "--candidate", bad, "--junit", "gate.xml")
    assert failed.exit_code == 1 and f"candidate {bad} vs baseline {first}" in failed.output
    assert "FAIL overall: unsat_rate" not in failed.output  # the null agent's users do not quit: no rise
    # the newest run carrying a tag is the one it names
    assert tau("tag", good, "release").exit_code == 0
    assert json.loads(tau("compare", "tag:release", bad, "--json").output)["baseline"] == good
    assert tau("tag", good, "release", "--remove").exit_code == 0
    assert json.loads(tau("compare", "tag:release", bad, "--json").output)["baseline"] == first
    assert tau("tag", first, "bad tag!").exit_code == 2


# ----------------------------------------------------------------------------- the new sections in a browser


def bands_drawn(path, bands=4):
    """For each horizontal band of an RGB(A) PNG, whether it holds more than a blank background."""
    import zlib

    data = path.read_bytes()
    chunks, pos = [], 8
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        if data[pos + 4:pos + 8] == b"IDAT":
            chunks.append(data[pos + 8:pos + 8 + length])
        pos += 12 + length
    raw = zlib.decompress(b"".join(chunks))
    size = len(raw) // bands
    return [len({raw[i:i + 64] for i in range(b * size, (b + 1) * size, 512)}) > 2 for b in range(bands)]


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (apt-get install -y chromium; "
                                              ".ci/run installs it)")
def test_new_sections_render_in_chromium(tau, plugin_module, tmp_path):
    """Tokens and cost, success by condition and A vs B, drawn by headless Chromium: the page's own sections,
    cut out of the report with its stylesheet (a headless screenshot only paints the top of a long page)."""
    plugin_module("spender_agent", SPENDER)
    for agent in ("spender", "oracle"):
        out = tau("run", "--plugins", "mock,emotion,spender_agent", "--emotion-control", "--agent", agent,
                  "--trials", "2", "--no-progress")
        assert out.exit_code == 0, out.output
    assert tau("report", *(r["run_id"] for r in runs_json(tau)), "--out", "r.html").exit_code == 0
    html = (tmp_path / "r.html").read_text()
    head = html.split("<body", 1)[0]
    parts = [f'<h2 id="{a}"' + html.split(f'<h2 id="{a}"', 1)[1].split(f'<h2 id="{b}"', 1)[0]
             for a, b in (("usage", "heatmaps"), ("versus", "behaviour"))]
    page = tmp_path / "sections.html"
    page.write_text(head + "<body>" + "".join(parts) + "</body></html>")
    shot = tmp_path / "sections.png"
    dom = chromium("--dump-dom", f"--screenshot={shot}", "--window-size=1280,4200", page.as_uri(),
                   home=tmp_path / "browser")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert [line for line in dom.stderr.splitlines() if ":CONSOLE" in line] == []
    for needle in ("Tokens and cost", "emotion.emotion: ", "B = oracle vs scripted", "UNSATISFIED rate", "no trials",
                   '<td class="num ok">+1.000</td>'):
        assert needle in dom.stdout, needle
    assert shot.stat().st_size > 50_000 and not png_is_blank(shot)
    assert bands_drawn(shot) == [True] * 4, "a band of the sections drew nothing"
    shutil.copy(shot, Path(os.environ.get("TAU_SCREENSHOT_DIR", tmp_path)) / "report-sections.png")
