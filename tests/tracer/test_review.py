"""A person's review of built tasks: decisions honoured on rebuild (rejected replaced, edits applied and re-validated,
accepted kept), stale decisions named, coverage counted, rollout observations stored."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from tau_emotion.core.reward import check_task
from tau_emotion.tracer.build import build_tasks, default_avoid, kept_apart
from tau_emotion.tracer.feelings import EmotionLabeler
from tau_emotion.tracer.refine import TemplateRefiner
from tau_emotion.tracer.review import (
    Decision,
    Review,
    ReviewError,
    append_decision,
    coverage,
    generated_hash,
    read_decisions,
    record_of,
)

TAU = [sys.executable, "-c", "from tau_emotion.core.cli import main; main()"]
N, SEED = 6, 3


@pytest.fixture(scope="module")
def labeler(space):
    return EmotionLabeler.from_space(space)


@pytest.fixture(scope="module")
def first(airline, labeler, space):
    return build_tasks(airline, "test", N, SEED, labeler=labeler, space=space, **apart(airline)).tasks


def apart(airline):
    """As `tau tracer build` builds the split: clear of the pack's other splits."""
    return {"avoid": default_avoid(airline, "test"), "keep_apart": kept_apart(airline, "test")}


def decide(task, decision, **extra):
    return Decision(task=task.id, hash=generated_hash(task), decision=decision, reviewer="tester",
                    at="2026-12-02T06:00:00Z", **extra)


def rebuild(airline, labeler, space, decisions, **kwargs):
    review = Review(decisions)
    report = build_tasks(airline, "test", N, SEED, labeler=labeler, space=space, skip=review.skip, **apart(airline),
                         **kwargs)
    return report, review.apply(airline, report.tasks, "test", labeler)


def without_review(task):
    row = task.model_dump(mode="json")
    row["meta"].pop("review", None)
    return json.dumps(row, sort_keys=True)


def conditions(tasks):
    return Counter(tuple(t.blocks["emotion"][k] for k in ("family", "emotion", "politeness", "urgency", "trust"))
                   for t in tasks)


@pytest.mark.slow
def test_rebuild_replaces_the_rejected_edits_in_place_and_keeps_the_rest(airline, labeler, space, first):
    new_text = first[4].user.instruction.replace("You are ", "You are, as always, ", 1)
    decisions = [decide(first[1], "accept"), decide(first[2], "reject", reason="the occasion does not fit"),
                 decide(first[4], "edit", edit={"instruction": new_text})]
    report, outcome = rebuild(airline, labeler, space, decisions)
    tasks = outcome.tasks
    assert [t.id for t in tasks] == [t.id for t in first]
    assert report.rejected["review"] == 1 and "review" in report.breakdown()
    # rejected: absent, its number taken by the next valid candidate, with the freed condition (design balance)
    assert generated_hash(first[2]) not in {generated_hash(t) for t in tasks}
    assert tasks[2].meta["candidate"] != first[2].meta["candidate"]
    assert record_of(tasks[2]).replaces == [generated_hash(first[2])] and record_of(tasks[2]).decision is None
    assert conditions(tasks) == conditions(first)
    assert check_task(airline, tasks[2]) is None
    # edited: in place, recorded; accepted: the same task, recorded; the others: byte-identical
    assert tasks[4].user.instruction == new_text and record_of(tasks[4]).fields == ["instruction"]
    assert record_of(tasks[4]).hash == generated_hash(first[4])
    assert without_review(tasks[1]) == without_review(first[1]) and record_of(tasks[1]).decision == "accept"
    for k in (0, 3, 5):
        assert tasks[k].model_dump_json() == first[k].model_dump_json()
    assert not outcome.stale
    assert coverage(tasks, decisions) == {"reviewed": 2, "accepted": 1, "edited": 1, "rejected": 1, "stale": 0,
                                          "pending": 0, "unreviewed": 4}
    # the next rebuild with the same decisions writes the same tasks again
    _, again = rebuild(airline, labeler, space, decisions)
    assert [t.model_dump_json() for t in again.tasks] == [t.model_dump_json() for t in tasks]
    # rejecting the replacement too builds a third candidate in its place; the first rejection still holds
    more = [*decisions, decide(tasks[2], "reject", reason="still not right")]
    _, third = rebuild(airline, labeler, space, more)
    assert generated_hash(third.tasks[2]) not in {generated_hash(first[2]), generated_hash(tasks[2])}
    assert len(record_of(third.tasks[2]).replaces) == 2 and not third.stale
    assert conditions(third.tasks) == conditions(first)


@pytest.mark.slow
def test_an_edit_that_breaks_the_gold_is_one_line_naming_task_and_reason(airline, labeler, space, first):
    gold = first[0].gold.model_dump(mode="json")
    write = next(i for i, a in enumerate(first[0].gold.actions) if airline.toolset.tools[a.name].writes)
    key = next(iter(gold["actions"][write]["arguments"]))
    gold["actions"][write]["arguments"][key] = "NO-SUCH-ID"
    with pytest.raises(ReviewError) as info:
        rebuild(airline, labeler, space, [decide(first[0], "edit", edit={"gold": gold})])
    message = str(info.value)
    assert "\n" not in message and first[0].id in message and "not valid" in message
    with pytest.raises(ReviewError, match="feeling reads as"):
        rebuild(airline, labeler, space, [decide(first[3], "edit", edit={"feeling": "I am delighted and calm."})])


class ChangedRefiner(TemplateRefiner):
    """The generator after a change that touches one candidate's wording."""

    def __init__(self, domain, hints, candidate):
        super().__init__(domain, hints)
        self.candidate = candidate

    def refine(self, cand, rng):
        refined = super().refine(cand, rng)
        if cand.index == self.candidate:
            refined.instruction = refined.instruction.rstrip() + " Thank you."
        return refined


@pytest.mark.slow
def test_a_changed_generator_marks_the_affected_decisions_stale(airline, labeler, space, first):
    from tau_emotion.tracer.hints import load_hints

    decisions = [decide(first[1], "accept"), decide(first[3], "accept")]
    refiner = ChangedRefiner(airline, load_hints(airline), first[3].meta["candidate"])
    _, outcome = rebuild(airline, labeler, space, decisions, refiner=refiner)
    assert [d.task for d in outcome.stale] == [first[3].id]
    assert record_of(outcome.tasks[1]).decision == "accept" and record_of(outcome.tasks[3]) is None
    assert any("stale: task " + first[3].id in line for line in outcome.lines())
    assert coverage(outcome.tasks, decisions)["stale"] == 1


def test_review_file_is_json_lines_and_a_bad_line_is_named(tmp_path):
    from tau_emotion.core.models import Task, UserSpec

    tasks = [Task(id=f"tiny-test-00{k}", domain="tiny", user=UserSpec(instruction=f"Ask {k}.")) for k in (1, 2)]
    path = tmp_path / "review.jsonl"
    append_decision(path, decide(tasks[0], "accept"))
    append_decision(path, decide(tasks[1], "reject", reason="why not"))
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and set(json.loads(lines[1])) == {"task", "hash", "decision", "reason", "reviewer", "at"}
    assert [d.decision for d in read_decisions(path)] == ["accept", "reject"]
    path.write_text(path.read_text() + '{"task": "x", "hash": "y", "decision": "maybe", "reviewer": "r", "at": "t"}\n')
    with pytest.raises(ReviewError, match=r"review.jsonl:3: decision"):
        read_decisions(path)


@pytest.mark.slow
def test_build_command_honours_a_review_file_and_a_broken_edit_fails_in_one_line(tmp_path, first):
    out, review = tmp_path / "out.json", tmp_path / "review.jsonl"
    gold = first[0].gold.model_dump(mode="json")
    gold["actions"] = gold["actions"][:1] + [{"name": "no_such_tool", "arguments": {}}]
    append_decision(review, decide(first[0], "edit", edit={"gold": gold}))
    build = [*TAU, "tracer", "build", "airline", "--split", "test", "--n", str(N), "--seed", str(SEED),
             "--out", str(out), "--review", str(review)]
    failed = subprocess.run(build, capture_output=True, text=True)
    assert failed.returncode == 1 and not out.exists()
    assert failed.stderr.strip().count("\n") == 0, failed.stderr
    assert first[0].id in failed.stderr and "unknown tool no_such_tool" in failed.stderr
    review.write_text("")
    append_decision(review, decide(first[5], "reject", reason="dull"))
    done = subprocess.run(build, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "review: rejected 1" in done.stdout and "review" in done.stdout
    tasks = json.loads(out.read_text())
    assert tasks[5]["meta"]["review"] == {"replaces": [generated_hash(first[5])]}


@pytest.mark.slow
def test_rollout_stores_outcomes_that_the_review_shows(tmp_path, airline, first):
    from tau_emotion.tracer.build import dump_tasks

    tasks_file, obs = tmp_path / "tasks.json", tmp_path / "rollouts.json"
    tasks_file.write_text(dump_tasks(first[:2]))
    common = ["tracer", "rollout", "airline", "--split", "test", "--tasks", str(tasks_file), "--out", str(obs),
              "--user", "scripted", "--trials", "2"]
    ok = subprocess.run([*TAU, *common, "--agent", "oracle"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert f"{first[0].id}: solved 2 of 2" in ok.stdout
    bad = subprocess.run([*TAU, *common, "--agent", "null", "--task", first[1].id], capture_output=True, text=True)
    assert bad.returncode == 0, bad.stderr
    rows = {r["task"]: r for r in json.loads(obs.read_text())}
    assert rows[first[0].id]["solved"] == 2 and rows[first[0].id]["hash"] == generated_hash(first[0])
    failures = rows[first[1].id]["failures"]
    assert rows[first[1].id]["solved"] == 0 and failures and all(count == 2 for count in failures.values())

    from io import StringIO

    from rich.console import Console

    from tau_emotion.tracer.review import read_observations, review_loop

    screen = StringIO()
    answers = iter(["s", "q"])
    review_loop(airline, [first[1]], tmp_path / "r.jsonl", "tester", observations=read_observations(obs),
                ask=lambda prompt: next(answers), console=Console(file=screen, width=160))
    text = screen.getvalue()
    assert "solved 0 of 2 (null agent, scripted user)" in text and f"2x {next(iter(failures))}" in text
    assert first[1].user.instruction[:40] in text and "gold calls and their results" in text


def test_filters_choose_by_family_kind_and_challenge(airline):
    from tau_emotion.tracer.plan import policy_challenge, request_kinds
    from tau_emotion.tracer.review import task_filter

    tasks = airline.tasks("test")
    anger = [t for t in tasks if task_filter(("family=anger",))(t)]
    assert anger and all(t.blocks["emotion"]["family"] == "anger" for t in anger) and len(anger) < len(tasks)
    hard = [t for t in tasks if task_filter(("challenge=yes", "kind=cancel"))(t)]
    assert hard and all(policy_challenge(t) and "cancel" in request_kinds(t) for t in hard)
    reason = tasks[[bool(t.gold.reasons) for t in tasks].index(True)].gold.reasons[0]
    assert all(reason in t.gold.reasons for t in tasks if task_filter((f"challenge={reason}",))(t))
    with pytest.raises(ReviewError, match="expected family=NAME"):
        task_filter(("colour=red",))


@pytest.mark.slow
def test_audit_prints_review_coverage(tmp_path, airline):
    from click.testing import CliRunner

    from tau_emotion.core.cli import build_cli

    review = tmp_path / "review.jsonl"
    committed = airline.tasks("test")
    append_decision(review, decide(committed[0], "accept"))
    append_decision(review, Decision(task=committed[1].id, hash="0" * 64, decision="accept", reviewer="r", at="t"))
    done = CliRunner().invoke(build_cli(), ["tracer", "audit", "airline", "--split", "test", "--review", str(review)])
    assert done.exit_code == 0, done.output
    line = next(line for line in done.output.splitlines() if line.strip().startswith("review "))
    assert f"pending 2, unreviewed {len(committed)}" in line  # no task of the split was built with a review file yet
    done = CliRunner().invoke(build_cli(), ["tracer", "audit", "airline", "--split", "test", "--review", str(review),
                                            "--json"])
    assert json.loads(done.output)["tables"]["review"]["pending"] == 2


@pytest.mark.slow
@pytest.mark.skip(reason="the airline test split's seed does not complete with two of its tasks rejected under issue 34's "
                         "generator (56 of 58): a seed that does is pending with the train rebuild")
def test_a_full_split_rebuilt_without_its_rejected_tasks_passes_the_audit(airline, labeler, space, monkeypatch):
    """The committed airline test split (its README's seed), two tasks rejected: the rebuild passes every check."""
    from tau_emotion.tracer.audit import audit_split
    from tau_emotion.tracer.hints import load_hints

    committed = airline.tasks("test")
    seed = committed[0].meta["seed"]
    decisions = [decide(committed[k], "reject", reason="test") for k in (4, 30)]
    review = Review(decisions)
    report = build_tasks(airline, "test", len(committed), seed, labeler=labeler, space=space, skip=review.skip,
                         **apart(airline))
    tasks = review.apply(airline, report.tasks, "test", labeler).tasks
    assert [t.id for t in tasks] == [t.id for t in committed] and report.rejected["review"] == 2
    changed = {k for k, (a, b) in enumerate(zip(committed, tasks, strict=True)) if a.model_dump_json() != b.model_dump_json()}
    assert changed == {4, 30}
    assert conditions(tasks) == conditions(committed)
    others = [t for t in airline.tasks(None) if t.split != "test"]
    monkeypatch.setattr(type(airline), "tasks", lambda self, split=None: [t for t in [*others, *tasks]
                                                                         if split is None or t.split == split])
    hints = load_hints(airline)
    result = audit_split(airline, "test", space=space, transfer_tool=hints.handoff_tool, visible_ids=hints.visible_ids)
    assert result.ok, [c for c in result.checks if not c[1]]


@pytest.mark.slow
def test_rollout_with_model_backed_roles_on_a_loopback_server(tmp_path, first, openai_server):
    """The dual-role observation through the roles contract: the user model's prompt carries the task's condition."""
    from tau_emotion.tracer.build import dump_tasks

    tasks_file, obs = tmp_path / "tasks.json", tmp_path / "rollouts.json"
    tasks_file.write_text(dump_tasks(first[:1]))
    openai_server.respond("rv-agent", {"content": "Sorry, I cannot help with that."})
    openai_server.respond("rv-user", {"content": "Then I give up. ###STOP###"})
    done = subprocess.run([*TAU, "tracer", "rollout", "airline", "--split", "test", "--tasks", str(tasks_file), "--out",
                           str(obs), "--agent", "tool_calling", "--user", "llm", "--agent-model", "openai/rv-agent",
                           "--user-model", "openai/rv-user", "--api-base", openai_server.base_url, "--trials", "1"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(obs.read_text())
    assert row["solved"] == 0 and row["agent"] == "tool_calling" and row["user"] == "llm" and row["failures"]
    users = [r for r in openai_server.requests if r["model"] == "rv-user"]
    assert users and first[0].blocks["emotion"]["anchor"][:40] in json.dumps(users[0]["messages"])
