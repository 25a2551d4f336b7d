"""The Tracer's plan (tracer/plan.py): one function for a build and the migration, typed, read by the user."""

import asyncio
import json
from importlib.resources import files

import pytest

from tau_emotion.core.manager import get_plugin_manager, load_all_plugins
from tau_emotion.core.models import Message
from tau_emotion.plugins.scripted_user import ScriptedUser
from tau_emotion.tracer.plan import PLAN_META, first_person, migrate_file, with_plan
from tests.episodes import bare_episode


@pytest.fixture(scope="module")
def telecom():
    pm = load_all_plugins()
    domain = pm.catalog("domains").get("telecom")
    from tau_emotion.tracer.hints import load_hints

    load_hints(domain, pm)
    return pm, domain


def test_no_committed_task_keeps_what_its_plan_carries():
    for pack in ("airline", "bank", "basketball", "movie", "restaurant", "retail", "school", "telecom", "telehealth",
                 "travel"):
        rows = json.loads(files(f"tau_emotion.domain_packs.{pack}").joinpath("data/tasks.json").read_text())
        assert all(row.get("plan") for row in rows), pack
        assert not [row["id"] for row in rows if set(row.get("meta") or {}) & set(PLAN_META)], pack


def test_a_phone_known_by_name_answers_its_model_code_with_the_name():
    pm = get_plugin_manager(["telecom"])
    domain = pm.catalog("domains").get("telecom")
    task = next(t for t in domain.tasks("test") for r in t.plan.requests[:1] for f in r.facts
                if f.key == "new_phone_model" and f.known_as == "name")
    fact = next(f for f in task.plan.requests[0].facts if f.key == "new_phone_model")
    assert fact.names == ["replace_device.model_code"] and fact.answers == []
    episode, view = bare_episode(pm, domain, task)
    user = ScriptedUser(view)
    episode.messages.append(asyncio.run(user.start()))
    ask = Message(role="assistant", content="Could you tell me the model code?")
    reply = asyncio.run(user.respond(ask)).content
    assert reply.startswith("I don't have the model code;") and fact.value in reply, reply


def test_the_migration_and_a_build_apply_the_same_function(telecom, tmp_path):
    """A task with the build's meta keys, migrated from a file, comes out as `with_plan` makes it in a build."""
    pm, domain = telecom
    task = next(t for t in domain.tasks("test") if t.plan.refusals)
    plan = task.plan
    legacy = task.model_copy(update={"plan": None, "meta": {
        **task.meta, "intents": [r.kind for r in plan.requests if r.kind != "handover"],
        "refused": [{"name": r.call.name, "arguments": r.call.arguments, "after": r.after} for r in plan.refusals],
        "intent_gold": [{"actions": r.actions, "outputs": r.outputs, "reasons": r.reasons,
                         "facts": [f.key for f in r.facts]} for r in plan.requests],
        "decisions": [{"intent": i, "ask": "the fee", "threshold": r.decision.threshold, "amount": r.decision.amount,
                       "branch": "decline" if r.decision.outcome == "over" else "proceed", "decline": "keep {{my}} line"}
                      for i, r in enumerate(plan.requests) if r.decision],
        "feeling": plan.situation.feeling if plan.situation else "", "policy_challenge": True}})
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([legacy.model_dump(mode="json")]))
    assert migrate_file(domain, path) == 1
    migrated = json.loads(path.read_text())[0]
    assert migrated == with_plan(domain, legacy).model_dump(mode="json")
    assert not set(migrated["meta"]) & set(PLAN_META)
    again = with_plan(domain, legacy).plan
    assert [r.refusal for r in again.requests] == [r.refusal for r in plan.requests]
    assert [[f.model_dump() for f in r.facts] for r in again.requests] == \
        [[f.model_dump() for f in r.facts] for r in plan.requests]


def test_facts_are_said_in_the_customers_voice():
    assert first_person("your reservation number is 7HEXVD") == "my reservation number is 7HEXVD"
    assert first_person("you are cancelling because you were sick") == "I am cancelling because I was sick"


def test_the_llm_users_prompt_carries_the_plan():
    from tau_emotion.plugins.llm_user import plan_notes

    domain = get_plugin_manager(["telecom"]).catalog("domains").get("telecom")
    task = next(t for t in domain.tasks("test") if any(r.refusal and r.refusal.declines_smaller
                                                       for r in t.plan.requests))
    notes = " ".join(plan_notes(task))
    assert "turn down any offer of less than you ask for" in notes
    assert "if it is refused" in notes
