"""`tau tracer graph` and `tau tracer build` as a user runs them."""

import json
import re

import pytest
from click.testing import CliRunner

from tau_emotion.core.cli import build_cli

TINY = ["--plugins", "tests.tracer.tiny_pack"]


def invoke(*args):
    return CliRunner().invoke(build_cli(), list(args))


@pytest.mark.slow
def test_graph_prints_tools_edges_density_and_writes_files(tmp_path):
    result = invoke("tracer", "graph", "airline", "--json", str(tmp_path / "g.json"), "--dot", str(tmp_path / "g.dot"))
    assert result.exit_code == 0, result.output
    assert "airline: 15 tools," in result.output and "density 0.4" in result.output
    assert "transfer_to_human_agents         terminal -> (none)" in result.output
    data = json.loads((tmp_path / "g.json").read_text())
    assert data["tools"] == 15 and data["n_edges"] > 70
    assert (tmp_path / "g.dot").read_text().startswith("digraph")


def test_graph_of_a_domain_without_edges_warns(tmp_path):
    result = invoke("tracer", "graph", "tiny_nograph", *TINY)
    assert result.exit_code == 0, result.output
    assert "warning: domain 'tiny_nograph' declares no tool graph" in result.output


@pytest.mark.slow
def test_build_reports_rejections_and_writes_the_tasks(tmp_path):
    out = tmp_path / "tasks.json"
    result = invoke("tracer", "build", "airline", "--split", "test", "--n", "12", "--seed", "5", "--out", str(out),
                    "--no-emotion")
    assert result.exit_code == 0, result.output
    candidates = int(re.search(r"12 task\(s\) accepted of (\d+) candidate", result.output).group(1))
    rejected = int(re.search(r"rejected: (\d+)", result.output).group(1))
    assert rejected == candidates - 12 > 0
    per_check = [int(n) for n in re.findall(r"^    [a-z]+ +(\d+)   e\.g\. ", result.output, re.M)]
    assert sum(per_check) == rejected
    rows = json.loads(out.read_text())
    assert [r["id"] for r in rows] == [f"airline-test-{k:03d}" for k in range(1, 13)]


def test_build_without_a_long_enough_path_is_a_one_line_error(tmp_path):
    result = invoke("tracer", "build", "tiny_chain", "--n", "2", "--no-emotion", "--out", str(tmp_path / "t.json"), *TINY)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: domain 'tiny_chain': no workflow of 5-12 calls in its tool graph; "
        "the longest path found has 2 call(s): look -> mark"]


def test_short_builds_succeed_on_a_tiny_domain(tmp_path):
    out = tmp_path / "t.json"
    result = invoke("tracer", "build", "tiny_chain", "--split", "train", "--n", "1", "--min-calls", "2",
                    "--no-emotion", "--out", str(out), *TINY)
    assert result.exit_code == 0, result.output
    task = json.loads(out.read_text())[0]
    assert [a["name"] for a in task["gold"]["actions"]] == ["look", "mark"]
    assert task["gold"]["outputs"] == ["red box"] and task["user"]["known"]["note"] == "fragile"


def test_build_for_a_domain_without_hints_says_what_to_do():
    result = invoke("tracer", "build", "mock", "--n", "1", "--no-emotion")
    assert result.exit_code == 1
    assert "domain 'mock' gives the Tracer no grounding hints" in result.output


def test_build_into_a_pack_without_a_package_needs_out():
    result = invoke("tracer", "build", "tiny_chain", "--n", "1", "--min-calls", "2", "--no-emotion", *TINY)
    assert result.exit_code == 1 and "has no package to write tasks into; use --out FILE" in result.output


def test_build_when_no_goal_is_reachable_names_the_longest_path(tmp_path):
    result = invoke("tracer", "build", "tiny_nograph", "--n", "1", "--no-emotion", "--out", str(tmp_path / "t.json"),
                    *TINY)
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == (
        "Error: domain 'tiny_nograph': no workflow in its tool graph reaches a goal tool (mark) from an entry tool; "
        "the longest path found has 1 call(s): look")


BAD = ["--plugins", "tests.tracer.bad_hints_pack"]
PACK = "tracer hints of pack 'tests.tracer.bad_hints_pack'"


@pytest.mark.parametrize(("domain", "problem"), [
    ("bad_typo", "unknown field 'goal_weight' (did you mean 'goal_weights'?)"),
    ("bad_old_style", "unknown field 'GOAL_WEIGHTS' (did you mean 'goal_weights'?)"),
    ("bad_type", "field 'goal_weights.mark': Input should be a valid number, unable to parse string as a number"),
    ("bad_weight", "goal_weights names look, which is not among the goals"),
    ("bad_module", "tau_tracer_hints returned str, not a TracerHints (see tau_emotion.tracer.hints)"),
])
def test_wrong_tracer_hints_fail_the_build_with_one_line_naming_field_and_pack(tmp_path, domain, problem):
    result = invoke("tracer", "build", domain, "--n", "1", "--no-emotion", "--out", str(tmp_path / "t.json"), *BAD)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [f"Error: {PACK} (domain '{domain}'): {problem}"]
    assert not (tmp_path / "t.json").exists()
