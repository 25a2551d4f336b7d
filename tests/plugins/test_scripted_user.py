"""The scripted user moves on evidence (state, outputs, reasons), not on punctuation; neutral patience."""

import asyncio
import json
from functools import cache
from pathlib import Path

import pytest

from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import Message, Task
from tau_emotion.plugins.scripted_user import NEUTRAL_PATIENCE, ScriptedUser, already_said
from tests.episodes import bare_episode

# Two airline tasks frozen from an earlier Tracer build (the database they rest on is unchanged), so these
# tests do not move with every rebuild of the test split.
FROZEN = Path(__file__).resolve().parents[1] / "fixtures" / "airline_scripted_tasks.json"


@cache
def _loaded(plugins):
    """A plugin manager and its one domain, once per plugin list: the database snapshot is frozen, so the
    tests' episodes share it safely (loading a pack's database is most of these tests' time)."""
    pm = get_plugin_manager(list(plugins))
    return pm, pm.catalog("domains").get(plugins[0])


def _user(plugins=("airline", "unsatisfied"), task_id="airline-test-001"):
    pm, domain = _loaded(tuple(plugins))
    task = {t["id"]: Task.model_validate(t) for t in json.loads(FROZEN.read_text(encoding="utf-8"))}[task_id]
    episode, view = bare_episode(pm, domain, task)
    user = ScriptedUser(view)
    return user, episode


def _say(user, episode, text):
    message = Message(role="assistant", content=text)
    episode.messages.append(message)
    return asyncio.run(user.respond(message)).content


def _do(episode, actions):
    for action in actions:
        text, error = episode.toolset.call(episode.state, action.name, action.arguments)
        assert not error, text
        episode.messages.append(Message(role="tool", name=action.name, content=text))


def test_it_moves_on_only_when_the_intent_is_done_and_told():
    user, episode = _user()
    gold = episode.task.gold.actions
    assert "upgrade the cabin" in asyncio.run(user.start()).content
    reply = _say(user, episode, "All done! Anything else?")  # a statement with no evidence
    assert "has not been done" in reply and "upgrade the cabin" in reply and user.position == 0
    _do(episode, gold[:6])
    reply = _say(user, episode, "Your cabin is upgraded.")  # written, but the price difference was not told
    assert "not told me" in reply and user.position == 0
    reply = _say(user, episode, "The difference was $494.00, charged to your card.")
    assert "date of birth of Emeka Park" in reply and user.position == 1
    reply = _say(user, episode, "Is there anything else I can help with?")
    assert "has not been done" in reply
    _do(episode, gold[6:])
    assert "###STOP###" in _say(user, episode, "Fixed. Anything else?")
    assert user.patience.left == NEUTRAL_PATIENCE - 3


def test_questions_get_facts_preferences_and_checked_confirmations():
    user, episode = _user()
    asyncio.run(user.start())
    assert "yara_brooks_8482" in _say(user, episode, "Could you tell me your user id?")
    assert "credit card" in _say(user, episode, "Which one do you prefer?")
    assert _say(user, episode, "Shall I move reservation VVY4X9 to business on SKY892?").startswith("Yes")
    corrected = _say(user, episode, "Shall I upgrade reservation LLG8HN to economy?")
    assert corrected.startswith("No") and "upgrade the cabin" in corrected
    assert "don't know" in _say(user, episode, "What is your favourite colour?")


@pytest.mark.parametrize(("plugins", "token"), [(("airline", "unsatisfied"), "###UNSATISFIED###"),
                                                (("airline",), "###STOP###")])
def test_the_neutral_user_has_finite_patience(plugins, token):
    user, episode = _user(plugins)
    asyncio.run(user.start())
    replies = [_say(user, episode, "I am sorry, I cannot help with that.") for _ in range(NEUTRAL_PATIENCE)]
    assert all("###" not in r for r in replies[:-1]) and replies[-1].endswith(token)


def test_a_repeated_question_costs_more():
    user, episode = _user()
    asyncio.run(user.start())
    _say(user, episode, "What is your user id?")
    _say(user, episode, "What is your user id?")
    assert user.patience.left == NEUTRAL_PATIENCE - 2


def test_a_list_of_facts_reads_as_a_sentence():
    user, episode = _user(task_id="airline-test-037")
    asyncio.run(user.start())
    assert "My reservation ids are 1VHSAX, 36PQLF." in _say(user, episode, "What is the reservation id?")


def test_a_structured_fact_is_said_in_words_not_json():
    pm, domain = _loaded(("retail",))
    task = next(t for t in domain.tasks("test") if isinstance(t.user.known.get("new_address"), dict))
    episode, view = bare_episode(pm, domain, task)
    user = ScriptedUser(view)
    asyncio.run(user.start())
    reply = _say(user, episode, "Sure. What is the new address you would like to use?")
    address = task.user.known["new_address"]
    assert "{" not in reply and all(str(v) in reply for v in address.values() if v)
    assert f"{address['address1']}, " in reply


@pytest.mark.parametrize(("pack", "key", "question"), [
    ("telehealth", "specialty", "Which specialty are you looking for?"),
    ("airline", "payment_methods", "Which payment method would you like to use?"),  # a merged, plural fact
    ("telehealth", "specialties", "What specialty is the doctor?"),
])
def test_a_question_in_the_singular_finds_its_fact(pack, key, question):
    pm, domain = _loaded((pack,))
    task = next((t for split in ("test", "train") for t in domain.tasks(split) if key in t.user.known), None)
    assert task is not None, f"no {pack} task knows {key}"
    episode, view = bare_episode(pm, domain, task)
    user = ScriptedUser(view)
    asyncio.run(user.start())
    reply = _say(user, episode, question)
    values = task.user.known[key]
    assert any(str(v) in reply for v in (values if isinstance(values, list) else [values])), reply
    assert "don't know" not in reply and "do not know" not in reply


def test_the_current_requests_part_answers_before_the_callers_own():
    """Issue 21: during an address change 'the zip?' is the new address's zip (the plan says the request's address
    gives the call's `zip`), not the caller's own identifying zip; before a request owns it the caller's zip is the
    answer."""
    pm, domain = _loaded(("retail",))
    task = next(t for t in domain.tasks("test") if isinstance(t.user.known.get("new_address"), dict)
                and "zip" in t.user.known and t.plan is not None
                and t.user.known["new_address"].get("zip") != t.user.known["zip"])  # a move to another zip
    address = task.user.known["new_address"]
    owner = next(i for i, r in enumerate(task.plan.requests) if any(f.key == "new_address" for f in r.facts))
    fact = next(f for f in task.plan.requests[owner].facts if f.key == "new_address")
    assert any(a.endswith(".zip") for a in fact.answers), fact
    episode, view = bare_episode(pm, domain, task)
    user = ScriptedUser(view)
    asyncio.run(user.start())
    user.position = owner
    # the agent found the caller first (a successful lookup); before that "the zip?" is the caller's own
    # (tests/plugins/test_scripted_user_owns.py)
    episode.messages.append(Message(role="tool", name="find_user_id_by_name_zip", tool_call_id="c1", content="x"))
    reply = _say(user, episode, "What is the zip?")
    assert address["zip"] in reply and task.user.known["zip"] not in reply, reply
    if owner > 0:
        user.position = 0
        assert task.user.known["zip"] in _say(user, episode, "And your zip code?")


def test_what_the_user_volunteers_varies_by_trial_and_is_seeded():
    """Issue 21: the scripted user volunteers 0-2 of the current request's facts, in its own words (the plan's
    `words`), chosen by the trial's rng, so trials of one task differ (Pass^k measures something offline) and a trial
    repeats itself exactly; issue 33: never one the line says already, never one value twice."""
    pm, domain = _loaded(("airline",))
    tasks = [t for t in domain.tasks("test") if t.plan is not None
             and any(f.words and not already_said(f, t.user.intents[0]) for f in t.plan.requests[0].facts)][:10]

    def opening(task, trial):
        episode, view = bare_episode(pm, domain, task, trial=trial)
        user = ScriptedUser(view)
        return asyncio.run(user.start()).content, set(user.told)

    varied = 0
    for task in tasks:
        seen = {opening(task, trial)[0] for trial in range(4)}
        assert opening(task, 1) == opening(task, 1)
        varied += len(seen) > 1
        facts = {f"{f.key}={json.dumps(f.value, sort_keys=True)}": f for f in task.plan.requests[0].facts}
        for trial in range(4):
            text, told = opening(task, trial)
            assert told <= set(facts)
            assert all(facts[m].words[1:] in text for m in told)
            assert len({json.dumps(facts[m].value) for m in told}) == len(told)
    assert varied >= 3
