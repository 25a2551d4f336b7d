"""`--scoring strict` end to end: a run records its scoring and every trial's procedure part; the summary, `tau
score`, `tau analyze`, `tau report`, `tau compare`, `tau gate`, `--resume` and the environment read them."""

from __future__ import annotations

import json
import re

import pytest

SPLIT = "train"


@pytest.fixture(scope="module")
def cases():
    """Three airline train tasks, chosen by what they hold so a rebuild of the split does not move them: a booking,
    another write, and a read-only one with an answer and no refusal (hasty makes no call there and tells it
    unidentified). Train, not test: a test split of 58 may hold no read-only task without a refusal."""
    from tau_emotion.core.manager import get_plugin_manager

    domain = get_plugin_manager(["airline"]).catalog("domains").get("airline")
    tasks = domain.tasks(SPLIT)

    def writes(task):
        return [a.name for a in task.gold.actions if domain.toolset[a.name].writes]

    booking = next(t.id for t in tasks if writes(t)[:1] == ["book_reservation"])
    other = next(t.id for t in tasks if writes(t) and "book_reservation" not in writes(t))
    read = next(t.id for t in tasks if not writes(t) and t.gold.outputs and not (t.plan and t.plan.refusals))
    return {"booking": booking, "other": other, "read": read}


def _run(tau, tmp_path, cases, agent, scoring, name):
    result = tau("run", "--plugins", "airline,emotion", "--agent", agent, "--trials", "1", "--split", SPLIT,
                 "--task-ids", ",".join(cases.values()),
                 "--scoring", scoring, "--summary-json", f"{name}.json", "--no-progress")
    assert result.exit_code == 0, result.output
    return json.loads((tmp_path / f"{name}.json").read_text())


@pytest.fixture
def runs(tau, tmp_path, cases):
    return {"hasty_paper": _run(tau, tmp_path, cases, "hasty", "paper", "hp"),
            "hasty_strict": _run(tau, tmp_path, cases, "hasty", "strict", "hs"),
            "oracle_paper": _run(tau, tmp_path, cases, "oracle", "paper", "op")}


def test_strict_scoring_zeroes_what_breaks_the_procedure_and_the_summary_says_so(runs, tau):
    paper, strict = runs["hasty_paper"], runs["hasty_strict"]
    assert paper["avg_at_k"] > 0  # hasty reaches the gold database on the tasks it need not read for
    assert strict["avg_at_k"] == 0.0
    for summary, scoring in ((paper, "paper"), (strict, "strict")):
        p = summary["procedure"]
        assert p["scoring"] == scoring and p["n_trials"] == 3 and p["procedure_ok_rate"] == 0.0
        assert p["violation_rates"]["identify_before"] == 1.0 and p["violation_rates"]["confirm_before_write"] == 0.6667
        assert p["strict"]["avg_at_k"] == 0.0  # a paper run shows the strict figure too
        assert set(p["by_domain"]) == {"airline"} and "emotion.family" in p["by_tag"]
    row = json.loads(tau("export", strict["run_id"]).output.splitlines()[0])
    parts = row["parts"]
    assert parts["scoring"] == "strict" and parts["paper_reward"] in (-1.0, 0.0, 1.0)  # -1: the user gave up first
    assert {v["rule"] for v in parts["procedure"]["violations"]} >= {"identify_before", "confirm_before_write"}
    assert all(isinstance(v["message"], int) for v in parts["procedure"]["violations"])


def test_tau_score_reproduces_the_stored_verdict_and_lists_violations(runs, tau):
    run_id = runs["hasty_strict"]["run_id"]
    out = tau("score", run_id)
    assert out.exit_code == 0 and "0 of 3 trial(s) changed" in out.output and "strict scoring" in out.output
    listed = tau("score", run_id, "--violations").output
    assert "confirm_before_write at message 1 (" in listed
    paper = json.loads(tau("score", run_id, "--scoring", "paper", "--json").output)
    assert paper["scoring"] == "paper" and any(c["now"] == 1.0 for c in paper["changed"])


def test_analyze_lists_violations_with_the_turn(runs, tau, cases):
    out = tau("analyze", runs["hasty_strict"]["run_id"]).output
    assert "procedure followed in 0 of 3 trial(s)" in out
    assert re.search(rf"{cases['read']} #0 turn 1 \(message \d\) identify_before: told the customer's", out), out
    assert f"{cases['booking']} #0 turn 1 (message 1) confirm_before_write book_reservation" in out
    data = json.loads(tau("analyze", runs["hasty_strict"]["run_id"], "--json").output)["procedure"]
    assert data["by_rule"]["identify_before"] >= 2 and data["violations"][0]["turn"] == 1


def test_compare_and_gate_refuse_to_mix_scorings_silently(runs, tau):
    strict, paper = runs["hasty_strict"]["run_id"], runs["oracle_paper"]["run_id"]
    for command in ("compare", "gate"):
        refused = tau(command, paper, strict)
        assert refused.exit_code != 0 and "pass --scoring paper or --scoring strict" in refused.output
    under_strict = json.loads(tau("compare", paper, strict, "--scoring", "strict", "--json").output)
    # the oracle follows the procedure: its strict reward is its paper reward; hasty's is 0
    assert under_strict["scoring"] == "strict" and under_strict["overall"]["avg_at_k"]["baseline"] == 1.0
    assert under_strict["overall"]["avg_at_k"]["candidate"] == 0.0
    under_paper = json.loads(tau("compare", paper, strict, "--scoring", "paper", "--json").output)
    assert under_paper["overall"]["avg_at_k"]["baseline"] == 1.0  # the oracle under the paper's reward
    # the oracle as the baseline: under strict scoring hasty (which never asks) drops to 0 and the gate fails
    gated = tau("gate", paper, runs["hasty_paper"]["run_id"], "--scoring", "strict")
    assert gated.exit_code == 1, gated.output


def test_resume_cannot_change_the_scoring(runs, tau):
    out = tau("run", "--resume", runs["hasty_paper"]["run_id"], "--scoring", "strict")
    assert out.exit_code != 0 and "--scoring 'paper' -> 'strict'" in out.output


def test_the_report_shows_the_procedure_section(runs, tau, tmp_path):
    out = tau("report", runs["hasty_strict"]["run_id"], runs["oracle_paper"]["run_id"], "--out", "r.html")
    assert out.exit_code == 0, out.output
    page = (tmp_path / "r.html").read_text()
    section = page[page.index('id="procedure"'):page.index('id="heatmaps"')]
    assert "Pass^1 strict" in section and "confirm_before_write" in section and "(strict scoring)" in section
    assert section.count("<tr>") >= 1 + 2 * 2  # header, then per run: all, airline and a row per family


def test_the_environment_scores_strict_when_asked():
    """The same actions: a verified, consented write is not needed to see it; an unidentified one is 0 under strict."""
    from tau_emotion.core.env import make

    write = {"role": "assistant", "content": None, "tool_calls": [{"id": "w", "type": "function", "function": {
        "name": "update_reservation_passengers", "arguments": json.dumps({
            "reservation_id": "42WWRE", "passengers": [{"first_name": "Omar", "last_name": "Vargas", "dob": "1952-03-19"}]})}}]}
    seen = {}
    for scoring in ("paper", "strict"):
        env = make("airline", task_ids=["airline-test-003"], scoring=scoring)
        env.reset("airline-test-003")
        env.step(write)
        _, reward, _, _, info = env.truncate()
        seen[scoring] = (reward, info["scoring"]["scoring"], info["scoring"]["procedure"]["procedure_ok"])
        env.close()
    assert seen["paper"][1:] == ("paper", False) and seen["strict"][1:] == ("strict", False)
    assert seen["strict"][0] == 0.0 and seen["paper"][0] >= seen["strict"][0]


@pytest.mark.slow
def test_the_procedure_section_renders_in_chromium_with_rates_by_domain_and_family(runs, tau, tmp_path, cases):
    """`tau report` on a hasty and an oracle run, in headless Chromium: the section's rows per run, domain and
    emotion family, hasty's violations and the oracle's none, and a page that is not blank."""
    from tests.plugins.test_report import CHROMIUM, chromium, png_is_blank

    if CHROMIUM is None:
        pytest.skip("headless Chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    oracle_strict = _run(tau, tmp_path, cases, "oracle", "strict", "os")
    out = tau("report", runs["hasty_strict"]["run_id"], oracle_strict["run_id"], "--out", "r.html")
    assert out.exit_code == 0, out.output
    page, shot = tmp_path / "r.html", tmp_path / "procedure.png"
    dom = chromium("--dump-dom", page.as_uri(), home=tmp_path / "browser")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "data-js-error" not in re.search(r"<body[^>]*>", dom.stdout).group(0)
    # the picture: the section alone, with the report's own styles
    html = page.read_text()
    start, end = html.index('<h2 id="procedure"'), html.index('id="heatmaps"')
    alone = tmp_path / "procedure.html"
    alone.write_text(html[:html.index("<body")] + "<body>" + html[start:html.rindex("<", 0, end)] + "</body></html>")
    picture = chromium(f"--screenshot={shot}", "--window-size=1280,900", alone.as_uri(), home=tmp_path / "browser")
    assert picture.returncode == 0 and shot.stat().st_size > 20_000 and not png_is_blank(shot)
    section = dom.stdout[dom.stdout.index('id="procedure"'):dom.stdout.index('id="heatmaps"')]
    header = re.search(r"<tr><th>run</th>(.*?)</tr>", section, re.S).group(1)
    rules = re.findall(r"<th>(\w+)</th>", header)[-4:]
    assert rules == ["identify_before", "confirm_before_write", "inform_before_decide", "own_records"]
    by_agent = {"hasty": [], "oracle": []}
    agent = None
    for cells in re.findall(r"<tr>(<td.*?)</tr>", section, re.S):
        values = re.findall(r"<td[^>]*>(.*?)</td>", cells, re.S)
        agent = next((a for a in by_agent if values[0].startswith(a)), agent)
        by_agent[agent].append(values)
    families = {"anger", "disgust", "enjoyment", "fear", "sadness"}
    for agent, found in by_agent.items():
        scopes = [(v[1], v[2]) for v in found]
        assert scopes[0] == ("all", "") and ("airline", "") in scopes
        assert {g for d, g in scopes if d == "airline" and g} <= families and len(scopes) >= 3
        rates = [v[-4:] for v in found]
        if agent == "oracle":  # it follows the procedure: no rule broken anywhere, strict Pass^1 100%
            assert all(r == "0.0%" for row in rates for r in row) and found[0][5] == "1.000"
        else:  # hasty: the identification and the consent broken on the whole run
            assert rates[0][0] == "100.0%" and rates[0][1] != "0.0%" and found[0][5] == "0.000"
