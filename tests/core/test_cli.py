import json
import os

import pytest


@pytest.fixture
def bad_pack(make_pack):
    """A third-party-style pack whose data files the test breaks."""
    return make_pack("badpack", "bad")


@pytest.mark.slow
def test_run_mock_writes_summary_json(tau, tmp_path):
    result = tau("run", "--plugins", "mock", "--trials", "2", "--summary-json", "s.json", "--no-progress")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["plugins"] == ["mock"]
    assert summary["n_tasks"] == 4 and summary["trials"] == 2
    assert summary["pass_hat_k"] == {"1": 1.0, "2": 1.0}
    assert summary["avg_at_k"] == 1.0
    assert set(summary["by_domain"]) == {"mock"}
    assert summary["terminations"] == {"terminal_tool": 2, "user_stop": 6}
    run_id = summary["run_id"]
    shown = tau("show", run_id, "--json")
    assert len(json.loads(shown.output)["trials"]) == 8
    exported = tau("export", run_id)
    lines = [json.loads(x) for x in exported.output.splitlines()]
    assert len(lines) == 8 and lines[0]["messages"][0]["role"] == "user"
    assert run_id in tau("runs").output


def test_task_selection_options(tau, tmp_path):
    result = tau("run", "--plugins", "mock", "--trials", "1", "--tasks", "2", "--summary-json", "a.json", "--no-progress")
    assert json.loads((tmp_path / "a.json").read_text())["n_tasks"] == 2
    result = tau("run", "--plugins", "mock", "--trials", "1", "--task-ids", "mock-003,mock-004",
                 "--summary-json", "b.json", "--no-progress")
    assert json.loads((tmp_path / "b.json").read_text())["n_tasks"] == 2
    result = tau("run", "--plugins", "mock", "--task-ids", "mock-999")
    assert result.exit_code == 1 and "unknown task id(s) in split 'test': mock-999" in result.output


@pytest.mark.slow
def test_tasks_json_and_domains(tau):
    tasks = json.loads(tau("tasks", "mock", "--json").output)
    assert [t["id"] for t in tasks] == ["mock-001", "mock-002", "mock-003", "mock-004"]
    assert "mock " in tau("domains").output
    result = tau("tasks", "mokc")
    assert result.exit_code == 1 and "Did you mean 'mock'?" in result.output


def test_unknown_plugin_and_domain_errors_are_one_line(tau):
    result = tau("run", "--plugins", "airlin")
    assert result.exit_code == 1
    assert result.output.strip().startswith("Error: unknown plugin 'airlin'. Did you mean 'airline'?")
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    result = tau("run")
    assert result.exit_code == 1 and "no domain selected" in result.output
    installed = result.output.split("installed domains:")[1].strip().split(", ")
    assert {"airline", "mock"} <= set(installed) and installed == sorted(installed)
    assert len(result.output.strip().splitlines()) == 1
    result = tau("run", "--plugins", "mock", "--agent", "orakle")
    assert "unknown agent 'orakle'. Did you mean 'oracle'?" in result.output


@pytest.mark.slow
@pytest.mark.parametrize(
    ("plugins", "tasks", "expected"),
    [
        ("badpack", '[{"id": "b-1", "domain": "bad", "user": {"instruction": "x", "intents": "nope"}}]',
         "tasks.json: task 'b-1': field 'user.intents': Input should be a valid list"),
        ("badpack", '[{"id": "b-2", "domain": "bad", "user": {"instruction": "x"}, "gold": {"outputs": ["x"]}, "colour": 1}]',
         "tasks.json: task 'b-2': unknown block 'colour': no installed plugin owns it"),
        ("badpack", '[{"id": "b-2", "domain": "bad", "user": {"instruction": "x"}, "gold": {"outputs": ["x"]}, "emotoin": {}}]',
         "tasks.json: task 'b-2': unknown block 'emotoin': no installed plugin owns it. Did you mean 'emotion'?"),
        # a block is validated by its plugin's model when that plugin is loaded
        ("emotion,badpack", '[{"id": "b-3", "domain": "bad", "user": {"instruction": "x"}, "gold": {"outputs": ["x"]}, "emotion": {"family": "fear"}}]',
         "tasks.json: task 'b-3': block 'emotion': field 'emotion': Field required"),
        ("badpack", '[{"id": "b-4", "domain": "bad", "user": {"instruction": "x"}, "gold": {"outputs": ["x"]}', "tasks.json: invalid JSON at line 1"),
        ("badpack", b'[{"id": "b-5", "domain": "bad", "user": {"instruction": "Zo\xeb"}}]', "tasks.json: not UTF-8 text"),
    ],
)
def test_malformed_task_file_is_one_line_naming_file_task_and_field(tau, bad_pack, plugins, tasks, expected):
    if isinstance(tasks, bytes):
        (bad_pack / "tasks.json").write_bytes(tasks)
    else:
        (bad_pack / "tasks.json").write_text(tasks)
    result = tau("run", "--plugins", plugins)
    assert result.exit_code == 1
    assert expected in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_malformed_db_file_and_debug_traceback(tau, bad_pack):
    (bad_pack / "tasks.json").write_text('[{"id": "b-1", "domain": "bad", "user": {"instruction": "x"}, "gold": {"outputs": ["x"]}}]')
    (bad_pack / "db.json").write_text('{"owners": [1, 2]}')
    result = tau("run", "--plugins", "badpack", "--no-progress")
    assert result.exit_code == 1
    assert "db.json: table 'owners' row 0 has no 'id' field" in result.output
    with pytest.raises(Exception, match="has no 'id' field"):
        tau("run", "--plugins", "badpack", "--debug")


@pytest.mark.slow
def test_an_installed_broken_plugin_is_listed_and_only_fails_runs_that_select_it(tmp_path):
    """A real distribution on the path whose entry point fails to import (what `pip install` of it leaves)."""
    import subprocess
    import sys

    site = tmp_path / "site"
    info = site / "tau_emotion_broken-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tau-emotion-broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[tau_emotion]\nbroken = tau_emotion_broken\n")
    (site / "tau_emotion_broken.py").write_text("raise RuntimeError('boom at import')\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    tau = [sys.executable, "-c", "from tau_emotion.core.cli import main; main()"]

    def run(*args):
        return subprocess.run([*tau, *args], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)

    listed = run("plugins")
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.startswith("broken "))
    assert "tau-emotion-broken 0.1" in line and "UNAVAILABLE" in line and "RuntimeError: boom at import" in line
    assert run("run", "--plugins", "mock", "--trials", "1", "--no-progress").returncode == 0
    failed = run("run", "--plugins", "broken,mock")
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert failed.stderr.strip() == ("Error: plugin 'broken' (tau_emotion_broken) failed to import: "
                                     "RuntimeError: boom at import")


def test_help_lists_run_options(tau):
    out = tau("run", "--help").output
    for flag in ("--plugins", "--agent-model", "--user-api-base", "--trials", "--resume", "--summary-json"):
        assert flag in out


def test_tasks_check_lists_tasks_whose_gold_does_not_score(tau, bad_pack):
    (bad_pack / "db.json").write_text('{"owners": {}, "accounts": {"a": {"owner": "o", "balance": 5, "status": "open"}}}')
    (bad_pack / "tasks.json").write_text(
        '[{"id": "b-1", "domain": "bad", "user": {"instruction": "x"}, "gold": {"outputs": ["x"]},'
        '  "gold": {"actions": [{"name": "get_account", "arguments": {"account_id": "a"}}]}},'
        ' {"id": "b-2", "domain": "bad", "user": {"instruction": "x"}, "gold": {"outputs": ["x"]},'
        '  "gold": {"actions": [{"name": "get_account", "arguments": {"account_id": "zz"}}]}}]')
    result = tau("tasks", "bad", "--check", "--plugins", "badpack")
    assert "task 'b-2': gold action 0 (get_account) failed: Error: account zz not found" in result.output
    assert "b-1" not in result.output.split("1 of 2")[0]
    assert "1 of 2 task(s) in bad/test score 1" in result.output


def test_tasks_check_mock_all_score(tau):
    result = tau("tasks", "mock", "--check")
    assert "4 of 4 task(s) in mock/test score 1" in result.output


def test_a_broken_graph_file_is_one_line_naming_it(tau, bad_pack):
    (bad_pack / "tasks.json").write_text('[{"id": "b-1", "domain": "bad", "user": {"instruction": "x"}, "gold": {"outputs": ["x"]}}]')
    (bad_pack / "graph.json").write_text('{"edges": [["get_account"]]}')
    result = tau("tracer", "graph", "bad", "--plugins", "badpack")
    assert result.exit_code == 1
    assert result.output.strip().endswith('graph.json: expected {"edges": [[tool, tool], ...]} (pairs of tool names)')
    (bad_pack / "graph.json").write_text('{"edges": [')
    result = tau("tracer", "graph", "bad", "--plugins", "badpack")
    assert result.exit_code == 1 and "graph.json: invalid JSON at line 1" in result.output


def test_the_core_prints_only_its_own_counts_when_no_plugin_gives_summary_rows(tau, tmp_path):
    result = tau("run", "--plugins", "mock,no:metrics,no:report", "--trials", "1", "--no-progress",
                 "--summary-json", "s.json")
    assert result.exit_code == 0, result.output
    assert "no plugin gives summary rows" in result.output and "terminations: " in result.output
    assert "Avg@k" not in result.output and "avg_at_k" not in json.loads((tmp_path / "s.json").read_text())
    shown = tau("run", "--plugins", "mock", "--trials", "1", "--no-progress")
    assert "Avg@k" in shown.output and "Pass^1" in shown.output and "scope" in shown.output
    runs = tau("runs").output
    for column in ("run", "agent", "trials", "errors", "status", "Avg@k"):  # the core's and the plugins' cells
        assert column in runs


def test_every_option_of_every_command_has_help_text():
    import click

    from tau_emotion.core.cli import build_cli

    missing = []

    def walk(command, path):
        missing.extend(f"{path} {p.opts[0]}" for p in command.params
                       if isinstance(p, click.Option) and not p.hidden and not (p.help or "").strip())
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(build_cli(), "tau")
    assert not missing, missing


def _run_ids(tau):
    return [r["run_id"] for r in json.loads(tau("runs", "--json").output)]


def test_run_references_accept_latest_and_unique_prefixes_everywhere(tau, tmp_path):
    for agent in ("oracle", "null"):
        assert tau("run", "--plugins", "mock", "--agent", agent, "--trials", "1", "--no-progress").exit_code == 0
    first, last = _run_ids(tau)
    tail = last.rsplit("-", 1)[1]
    assert f"run {last}:" in tau("show", "latest").output
    assert f"run {first}:" in tau("show", first[:-2]).output  # a unique prefix of the id
    assert f"run {last}:" in tau("show", tail[:4]).output  # or of its random tail
    ambiguous = tau("show", first[:8])
    assert ambiguous.exit_code == 1 and "ambiguous" in ambiguous.output and first in ambiguous.output
    unknown = tau("show", "zz-nothing")
    assert unknown.exit_code == 1 and "`latest` or a unique prefix" in unknown.output
    compared = tau("compare", first[:-2], tail)
    assert compared.exit_code == 0 and f"candidate {last} vs baseline {first}" in compared.output
    gated = tau("gate", first[:-2], "latest", "--junit", "gate.xml")
    assert gated.exit_code == 1 and (tmp_path / "gate.xml").is_file()  # the null agent drops every task
    assert tau("gate", "--baseline", first, "--candidate", first).exit_code == 0  # the older spelling still works
    assert tau("gate", "latest").exit_code == 2
    assert tau("export", "latest", "--out", "t.jsonl").exit_code == 0
    assert json.loads((tmp_path / "t.jsonl").read_text().splitlines()[0])["task_id"] == "mock-001"
    assert "0 of " in tau("score", "latest").output
    assert tau("report", "latest", tail, "--out", "r.html").exit_code == 0
    resumed = tau("run", "--resume", "latest", "--no-progress")
    assert resumed.exit_code == 0 and f"run {last}" in resumed.output
    assert tau("runs", "--delete", tail).exit_code == 0 and _run_ids(tau) == [first]


def test_the_default_results_file_is_one_per_user_whatever_the_folder(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from tau_emotion.core.cli import build_cli

    monkeypatch.delenv("TAU_DB", raising=False)
    monkeypatch.delenv("TAU_PLUGINS", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    runner, cli = CliRunner(), build_cli()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    assert runner.invoke(cli, ["run", "--plugins", "mock", "--trials", "1", "--no-progress"]).exit_code == 0
    assert (tmp_path / "data" / "tau" / "runs.db").is_file() and not (tmp_path / "a" / ".tau").exists()
    monkeypatch.chdir(tmp_path / "b")
    shown = runner.invoke(cli, ["show", "latest"])
    assert shown.exit_code == 0 and "mock-001" in shown.output
    # a folder holding an earlier version's ./.tau/runs.db keeps reading it, and says so
    legacy = tmp_path / "b" / ".tau" / "runs.db"
    assert runner.invoke(cli, ["run", "--plugins", "mock", "--trials", "1", "--no-progress", "--db", str(legacy)]
                         ).exit_code == 0
    listed = runner.invoke(cli, ["runs", "--json"])
    assert len(json.loads(listed.stdout)) == 1 and "note: using .tau/runs.db" in listed.stderr
    monkeypatch.setenv("TAU_DB", str(tmp_path / "env.db"))
    assert runner.invoke(cli, ["run", "--plugins", "mock", "--trials", "1", "--no-progress"]).exit_code == 0
    assert (tmp_path / "env.db").is_file()


def test_tables_fit_80_columns(tau, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = tau("run", "--plugins", "emotion,mock", "--trials", "5", "--no-progress").output
    tau("run", "--plugins", "emotion,mock", "--trials", "5", "--no-progress", "--agent", "null", "--agent-model", "m" * 30)
    ids = _run_ids(tau)
    for text in (out, tau("show", "latest").output, tau("compare", *ids).output):  # `tau runs`: plugins' columns
        lines = text.splitlines()
        assert lines and all(len(line) <= 80 for line in lines), max(lines, key=len)
        assert "…" not in text
    assert "P^5" in out and "emotion:" in out
