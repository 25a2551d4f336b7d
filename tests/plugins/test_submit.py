"""The `submit` plugin (issue 36, item 6): `tau submit prepare` writes one self-contained file, `tau submit
verify` re-scores it with the current scorer and checks its task hashes (a round trip shows 0 differences;
a tampered reward, task or summary is reported), and `tau leaderboard` prints Avg@k / Pass^k by domain,
seen/unseen and family, as Markdown and JSON. Every task has a content hash in `tau tasks --json`."""

import json
from pathlib import Path

import pytest

import tau_emotion.domain_packs.mock as mock

MOCK = Path(mock.__file__).parent / "data"


def stored_runs(tau):
    return [r["run_id"] for r in json.loads(tau("runs", "--json").output)]


@pytest.fixture
def submission(tau, tmp_path):
    """Two stored runs of the mock with the emotion plugin and its control arm, prepared into one file."""
    for agent in ("oracle", "null"):
        out = tau("run", "--plugins", "mock,emotion", "--emotion-control", "--agent", agent, "--trials", "2",
                  "--no-progress", "--agent-api-key", "sk-submit-secret-123456")
        assert out.exit_code == 0, out.output
    out = tau("submit", "prepare", *stored_runs(tau), "--out", "sub/results.json")
    assert out.exit_code == 0, out.output
    return tmp_path / "sub" / "results.json"


def test_tasks_have_content_hashes(tau):
    from tau_emotion.core.manager import get_plugin_manager
    from tau_emotion.core.models import Task, task_set_hash

    listed = json.loads(tau("tasks", "mock", "--json").output)
    hashes = [t.pop("content_hash") for t in listed]
    assert len(set(hashes)) == 4 and all(len(h) == 64 for h in hashes)
    assert [Task.model_validate(t).content_hash for t in listed] == hashes  # the hash of what is listed
    changed = Task.model_validate({**listed[0], "gold": {**listed[0]["gold"], "outputs": ["999"]}})
    assert changed.content_hash != hashes[0]
    tasks = get_plugin_manager(["mock"]).catalog("domains").get("mock").tasks("test")
    assert f"content hash of the set {task_set_hash(tasks)}" in tau("tasks", "mock").output


def test_prepare_then_verify_round_trips_with_no_difference(tau, submission):
    from tau_emotion.core import __version__
    from tau_emotion.core.manager import get_plugin_manager
    from tau_emotion.core.models import task_set_hash

    text = submission.read_text()
    assert "sk-submit-secret-123456" not in text  # the config travels without its secrets
    bundle = json.loads(text)
    assert bundle["format"] == "tau-emotion-submission" and bundle["harness_version"] == __version__
    assert len(bundle["runs"]) == 2
    run = bundle["runs"][0]
    assert run["scoring"] == "paper" and run["kind"] == "eval" and run["config"]["agent"] == "oracle"
    assert "host" not in run["meta"] and "pid" not in run["meta"]
    assert run["summary"]["avg_at_k"] == 1.0 and len(run["trajectories"]) == 16  # 4 tasks x 2 arms x 2 trials
    assert {t["reward"] for t in run["trajectories"]} == {1.0}
    tasks = get_plugin_manager(["mock"]).catalog("domains").get("mock").tasks("test")
    assert run["task_sets"] == {"mock/test": {"domain": "mock", "split": "test", "n_tasks": 4,
                                              "content_hash": task_set_hash(tasks)}}
    listed = {t["id"]: t["content_hash"] for t in json.loads(tau("tasks", "mock", "--json").output)}
    assert {k: v["content_hash"] for k, v in run["tasks"].items()} == {f"mock/{i}": h for i, h in listed.items()}
    out = tau("submit", "verify", str(submission))
    assert out.exit_code == 0, out.output
    assert out.output.strip().splitlines()[-1].endswith(
        "2 run(s), 32 of 32 trajectories re-scored (0 errored, not scored), 8 task(s) and 2 task set(s) checked: "
        "0 difference(s)")
    result = json.loads(tau("submit", "verify", str(submission), "--json").output)
    assert result["differences"] == [] and result["rescored"] == 32


def test_a_tampered_reward_is_reported(tau, submission, tmp_path):
    bundle = json.loads(submission.read_text())
    bad = bundle["runs"][1]["trajectories"][3]  # the null agent's: it failed
    was = bad["reward"]
    assert was < 1
    bad["reward"], bad["success"] = 1.0, True
    (tmp_path / "bad.json").write_text(json.dumps(bundle))
    out = tau("submit", "verify", "bad.json")
    assert out.exit_code == 1
    lines = out.output.strip().splitlines()
    assert "file: its digest does not match its runs (edited after `tau submit prepare`)" in lines
    run_id = bundle["runs"][1]["run_id"]
    assert any(line.startswith(f"run {run_id}: mock/{bad['task_id']} trial {bad['trial']}: stored reward +1 "
                               f"(success True), re-scored {was:+.0f}") for line in lines), lines
    # resealing the digest does not hide it: the trajectory is re-scored, and the summary is recomputed
    from tau_emotion.core.models import content_hash

    bundle["digest"] = content_hash(bundle["runs"])
    (tmp_path / "resealed.json").write_text(json.dumps(bundle))
    lines = tau("submit", "verify", "resealed.json").output.strip().splitlines()
    assert not any(line.startswith("file:") for line in lines)
    assert any(f"stored reward +1 (success True), re-scored {was:+.0f}" in line for line in lines)
    assert any(line.startswith(f"run {run_id}: summary avg_at_k is 0.0, its trajectories give") for line in lines)
    # the trajectory, and the summary's Avg@k and Pass^1 (its Pass^2 holds: one of the task's two trials still fails)
    assert lines[-1].endswith("3 difference(s)")


def test_a_tampered_task_is_reported(tau, tmp_path, make_pack):
    data = make_pack("submitpack", "sub", db=(MOCK / "db.json").read_text())
    tasks = [{**t, "domain": "sub"} for t in json.loads((MOCK / "tasks.json").read_text())]
    (data / "tasks.json").write_text(json.dumps(tasks))
    out = tau("run", "--plugins", "submitpack", "--trials", "1", "--no-progress")
    assert out.exit_code == 0, out.output
    assert tau("submit", "prepare", "latest", "--out", "s.json", "--plugins", "submitpack").exit_code == 0
    assert tau("submit", "verify", "s.json", "--plugins", "submitpack").exit_code == 0
    # one task of the pack changes after the run: a gold output the oracle never told
    tasks[0]["gold"]["outputs"] = ["999"]
    (data / "tasks.json").write_text(json.dumps(tasks))
    out = tau("submit", "verify", "s.json", "--plugins", "submitpack")
    assert out.exit_code == 1
    lines = out.output.strip().splitlines()
    run_id = json.loads((tmp_path / "s.json").read_text())["runs"][0]["run_id"]
    assert any(line.startswith(f"run {run_id}: task set sub/test differs from the installed one") for line in lines)
    assert f"run {run_id}: the installed task sub/mock-001 differs from the one the run used, in gold.outputs" in lines
    assert any(line.startswith(f"run {run_id}: sub/mock-001 trial 0: stored reward +1 (success True), re-scored +0 "
                               "(outputs_missing=['999'])") for line in lines), lines
    assert not any("mock-002" in line for line in lines)
    # the file's own copy of a task, edited: its hash no longer matches it
    tasks[0]["gold"]["outputs"] = ["235.5"]
    (data / "tasks.json").write_text(json.dumps(tasks))
    bundle = json.loads((tmp_path / "s.json").read_text())
    bundle["runs"][0]["tasks"]["sub/mock-002"]["task"]["gold"]["actions"] = []
    (tmp_path / "edited.json").write_text(json.dumps(bundle))
    lines = tau("submit", "verify", "edited.json", "--plugins", "submitpack").output.strip().splitlines()
    assert (f"run {run_id}: task sub/mock-002 in the file does not match its recorded content hash (edited; it "
            "differs from the installed task in gold.actions)") in lines


def test_verify_refuses_what_is_not_a_submission_and_names_an_unknown_scoring(tau, submission, tmp_path):
    (tmp_path / "other.json").write_text('{"runs": []}')
    out = tau("submit", "verify", "other.json")
    assert out.exit_code == 1 and "not a tau-emotion submission" in out.output
    assert len(out.output.strip().splitlines()) == 1
    missing = tau("submit", "verify", "nowhere.json")
    assert missing.exit_code == 1 and len(missing.output.strip().splitlines()) == 1
    bundle = json.loads(submission.read_text())
    bundle["runs"][0]["scoring"] = "strict"
    (tmp_path / "strict.json").write_text(json.dumps(bundle))
    lines = tau("submit", "verify", "strict.json").output.strip().splitlines()
    assert any("scoring 'strict' is not one this harness re-scores (paper)" in line for line in lines)
    assert tau("submit", "prepare", "nope", "--out", "x.json").exit_code == 1


def test_leaderboard_in_markdown_and_json(tau, submission):
    out = tau("leaderboard", str(submission))
    assert out.exit_code == 0, out.output
    text = out.output
    for heading in ("## Overall", "## By domain (Avg@k / Pass^k)", "## By emotion.family (Avg@k / Pass^k)"):
        assert heading in text
    rows = [line for line in text.splitlines() if line.startswith("| 1 |") or line.startswith("| 2 |")]
    assert rows[0].startswith("| 1 | oracle vs scripted") and "| 2 | 8 | 16 | 1.000 [1.000, 1.000] | 1.000 |" in rows[0]
    assert rows[1].startswith("| 2 | null vs scripted") and "| 0.000 [0.000, 0.000] | 0.000 |" in rows[1]
    board = json.loads(tau("leaderboard", str(submission), "--json").output)
    first = board["entries"][0]
    assert first["overall"]["avg_at_k"] == 1.0 and first["by_domain"]["mock"]["tasks"] == 8
    assert first["by_tag"]["tag"] == "emotion.family" and first["by_tag"]["groups"]
    assert all(g["trials"] == 2 * g["tasks"] for g in first["by_tag"]["groups"].values())
    assert first["digest_ok"] and board["seen_suite"] == "tau-emotion-seen"
    # the mock is in neither suite: no seen/unseen split to show
    assert first["seen_unseen"] == {} and "## Seen / unseen" not in text
