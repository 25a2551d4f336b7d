"""Wrong results without a crash and tracebacks instead of one line (issue 24, items 9 and 10)."""

from __future__ import annotations

import json
import sqlite3
import xml.etree.ElementTree as ET

import pytest

from tau_emotion.core import hookimpl
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import RunConfig
from tau_emotion.core.runner import RunError, non_finite, prepare_run, run_sync
from tau_emotion.plugins.report.compare import junit


def _one_line(result, code=None):
    assert "Traceback" not in result.output, result.output
    if code is not None:
        assert result.exit_code == code, result.output
    return result.output


def test_gate_refuses_a_nan_max_drop(tau):
    out = _one_line(tau("gate", "--baseline", "a", "--candidate", "b", "--max-drop", "nan"), 2)
    assert "--max-drop" in out and "finite" in out


@pytest.mark.parametrize("args", [["--tool-timeout", "nan"], ["--trial-timeout", "nan"], ["--block-timeout", "inf"],
                                  ["--trials", "1000000000"]])
def test_non_finite_or_absurd_core_flags_are_one_line(tau, tmp_path, args):
    _one_line(tau("run", "--plugins", "mock", "--db", str(tmp_path / "r.sqlite"), *args), 2)
    assert not (tmp_path / "r.sqlite").exists()


def test_non_finite_plugin_option_values_are_found():
    assert non_finite({"a": 1.0, "b": {"c": [0.5, float("nan")]}}) == "b.c[1]"
    assert non_finite({"a": 1.0, "b": "nan"}) is None


def test_a_binary_config_file_is_one_line(tau, tmp_path):
    (tmp_path / "bin.toml").write_bytes(b"\x00\x01\xff\xfe")
    out = _one_line(tau("run", "--config", str(tmp_path / "bin.toml")), 2)
    assert "not a UTF-8 TOML file" in out


def test_output_folders_are_made_before_the_run_or_refused_before_it(tau, tmp_path):
    db = str(tmp_path / "o.sqlite")
    nested = tmp_path / "a" / "b" / "summary.json"
    _one_line(tau("run", "--plugins", "mock", "--trials", "1", "--tasks", "1", "--db", db, "--no-progress",
                  "--summary-json", str(nested)), 0)
    assert json.loads(nested.read_text())["n_tasks"] == 1
    refused = _one_line(tau("run", "--plugins", "mock", "--trials", "1", "--tasks", "1", "--db", db, "--no-progress",
                            "--summary-json", "/proc/nope/s.json"), 2)
    assert "--summary-json" in refused
    assert len(json.loads(tau("runs", "--json", "--db", db).output)) == 1  # no second run was started
    run_id = json.loads(tau("runs", "--json", "--db", db).output)[0]["run_id"]
    out = tmp_path / "x" / "y" / "trials.jsonl"
    _one_line(tau("export", run_id, "--db", db, "--out", str(out)), 0)
    assert out.read_text().count("\n") == 1
    report = tmp_path / "r" / "report.html"
    _one_line(tau("report", run_id, "--db", db, "--out", str(report)), 0)
    assert report.stat().st_size > 0


class RaisingHooks:
    def __init__(self, where):
        self.where = where

    @hookimpl
    def tau_configure(self, config):
        if self.where == "tau_configure":
            raise ValueError("configure broke")

    @hookimpl
    def tau_modify_tasks(self, tasks, config, pluginmanager):
        if self.where == "tau_modify_tasks":
            raise KeyError("modify broke")

    @hookimpl
    def tau_run_start(self, run):
        if self.where == "tau_run_start":
            raise ZeroDivisionError("start broke")


@pytest.mark.parametrize("where", ["tau_configure", "tau_modify_tasks", "tau_run_start"])
def test_a_hook_raising_before_the_trials_is_one_line_naming_it(where, tmp_path):
    pm = get_plugin_manager(["mock"], extra=[RaisingHooks(where)])
    config = RunConfig(plugins=["mock"], trials=1, options={"progress": {"no_progress": True}})
    with pytest.raises(RunError, match=f"plugin hook {where} failed"):
        run_sync(prepare_run(config, str(tmp_path / "h.sqlite"), pm=pm))


def test_a_raising_metric_keeps_the_summary_and_every_trial(tmp_path, capsys):
    class BrokenMetric:
        @hookimpl
        def tau_register_metrics(self, register):
            register("broken", lambda results, config: 1 / 0)

    pm = get_plugin_manager(["mock"], extra=[BrokenMetric()])
    config = RunConfig(plugins=["mock"], trials=2, options={"progress": {"no_progress": True}})
    run = prepare_run(config, str(tmp_path / "m.sqlite"), pm=pm)
    summary = run_sync(run)
    assert len(run.store.results(run.run_id)) == len(run.tasks) * 2
    assert "ZeroDivisionError" in summary["metric_errors"][0] and "avg_at_k" in summary
    assert run.store.summary(run.run_id)["metric_errors"]
    assert "metric 'broken'" in capsys.readouterr().err


def test_damaged_rows_do_not_crash_the_readers(tau, tmp_path):
    db = str(tmp_path / "d.sqlite")
    tau("run", "--plugins", "mock", "--trials", "1", "--tasks", "1", "--db", db, "--no-progress")
    run_id = json.loads(tau("runs", "--json", "--db", db).output)[0]["run_id"]
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET config = '{not json', summary = '[1,'")
        conn.execute("UPDATE trials SET result = '{\"task_id\": 5}'")
    listed = _one_line(tau("runs", "--db", db), 1)  # listed, and the damaged row counted (issue 31 item 7)
    assert run_id in listed and "1 unreadable trial row(s)" in listed
    shown = _one_line(tau("show", run_id, "--db", db))
    assert "stored config cannot be read" in shown
    resumed = _one_line(tau("run", "--resume", run_id, "--db", db))
    assert "stored config cannot be read" in resumed


def test_junit_xml_stays_well_formed_with_control_characters_in_names():
    checks = [{"scope": "domain evil\x01\x1b[2J", "metric": "Avg@1", "failed": True, "message": "drop \x00 0.5"}]
    root = ET.fromstring(junit(checks))
    assert root.find("testcase").get("name").startswith("domain evil\\x01")


def test_tool_results_pair_with_calls_by_position_when_ids_are_reused():
    """Failure: a model reusing `call_0` made one failed call mark every call with that id failed."""
    from tau_emotion.core.models import Message, ToolCall
    from tau_emotion.plugins.report.reading import actions

    def step(name, error):
        return [Message(role="assistant", tool_calls=[ToolCall(id="call_0", name=name, arguments={})]),
                Message(role="tool", tool_call_id="call_0", name=name, content="x", error=error)]

    messages = [Message(role="user", content="hi"), *step("a", True), *step("b", False), *step("c", False)]
    assert actions(messages) == [("a", {}, False), ("b", {}, True), ("c", {}, True)]
