"""Issue 21 item 5 on real builds: the scripted user answers what its instruction states, per request.

Tasks are built by the Tracer from the real airline and travel packs (their databases and hints); every argument of
the first request's gold calls is asked as the `asker` agent asks it, and the replies are judged with
`benchmarks/asker_unknowns.py`'s own rules: no "I don't know" to a value the instruction states for that request,
and no value that only another request's words or calls name.
"""

import asyncio
import importlib.util
import re
from functools import cache
from pathlib import Path

import pytest

from tau_emotion.core.manager import get_plugin_manager, load_all_plugins
from tau_emotion.core.models import Message
from tau_emotion.plugins.asker_agent import argument_names
from tau_emotion.plugins.scripted_user import ScriptedUser
from tests.episodes import bare_episode

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "asker_unknowns.py"


@cache
def _bench():
    spec = importlib.util.spec_from_file_location("asker_unknowns", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def _built(pack, n, seed, **flags):
    from tau_emotion.tracer.build import build_tasks
    from tau_emotion.tracer.feelings import condition_space
    from tau_emotion.tracer.hints import load_hints

    pm = load_all_plugins()
    domain = pm.catalog("domains").get(pack)
    load_hints(domain, pm)
    space = condition_space(get_plugin_manager(["emotion"], defaults=False))
    return pm, domain, build_tasks(domain, "test", n, seed, space=space, **flags).tasks


def _ask_first_request(pm, domain, task):
    """(question, reply) for every argument name of the first request's gold calls, asked before anything is done."""
    episode, view = bare_episode(pm, domain, task)
    user = ScriptedUser(view)
    opening = asyncio.run(user.start())
    episode.messages.append(opening)
    calls = [task.gold.actions[j] for j in task.plan.requests[0].actions]
    names = list(dict.fromkeys(n for a in calls for n in argument_names(a.arguments)))
    out = [{"role": "user", "content": opening.content}]
    for name in names:
        question = Message(role="assistant", content=f"Could you tell me the {name.replace('_', ' ')}?")
        episode.messages.append(question)
        reply = asyncio.run(user.respond(question))
        episode.messages.append(reply)
        user.patience.left = 10 ** 6  # every question gets an answer, not a give-up
        out += [{"role": "assistant", "content": question.content}, {"role": "user", "content": reply.content}]
    return out


@pytest.mark.parametrize(("pack", "n", "seed", "flags"), [
    ("airline", 24, 5, ()),
    ("travel", 16, 1, (("min_calls", 6), ("challenge_rate", 0.4))),
])
def test_no_unknown_stated_fact_and_no_other_requests_value(pack, n, seed, flags):
    bench = _bench()
    pm, domain, tasks = _built(pack, n, seed, **dict(flags))
    unknown, foreign, asked, several = [], [], 0, 0
    for task in tasks:
        row = task.model_dump(mode="json")
        messages = _ask_first_request(pm, domain, task)
        several += len(task.user.intents) > 1
        for ask, reply in zip(messages[1::2], messages[2::2], strict=True):
            asked += 1
            name = re.match(r"Could you tell me the (.+)\?", ask["content"]).group(1)
            if any(p in reply["content"] for p in bench.DONT_KNOW) and bench.stated(row, name, 0):
                unknown.append(f"{task.id}: {name}")
        foreign += [f"{task.id}: {hit}" for hit in bench.foreign_values(row, messages)]
    assert asked > 5 * len(tasks) and several > len(tasks) // 2  # the check had questions and multi-request tasks
    assert unknown == []
    assert foreign == []


def test_a_trip_the_request_names_gives_its_cities_as_known_facts():
    """airline: 'your Miami to Denver trip' makes origin and destination known (the asker asks for both)."""
    _, _, tasks = _built("airline", 24, 5)
    named = 0
    for task in tasks:
        for line, request in zip(task.user.intents, task.plan.requests, strict=False):
            m = re.search(r"my ([A-Z][A-Za-z .]+?) to ([A-Z][A-Za-z .]+?) (?:round )?trip", line)
            if not m:
                continue
            named += 1
            facts = {f.key: task.user.known[f.key] for f in request.facts}
            origins = [v for k, v in facts.items() if k in ("trip_origin", "trip_origins")]
            destinations = [v for k, v in facts.items() if k in ("trip_destination", "trip_destinations")]
            assert any(m.group(1) in (v if isinstance(v, list) else [v]) for v in origins), (task.id, line, facts)
            assert any(m.group(2) in (v if isinstance(v, list) else [v]) for v in destinations), (task.id, line, facts)
    assert named >= 10


def _answer(pm, domain, task, question):
    episode, view = bare_episode(pm, domain, task)
    user = ScriptedUser(view)
    episode.messages.append(asyncio.run(user.start()))
    message = Message(role="assistant", content=question)
    episode.messages.append(message)
    return asyncio.run(user.respond(message)).content


def test_a_qualified_question_gets_the_requests_part_not_a_near_namesake():
    """'the first name?' while adding a passenger is the newcomer's, not the caller's; 'the nonfree baggages?' is
    not answered with the total the user wants (a different number)."""
    pm, domain, tasks = _built("airline", 58, 5)
    def newcomer(task):  # the first name of a passenger the first request gives whole (known once, issue 34)
        return next((f.value["first_name"] for f in task.plan.requests[0].facts
                     if isinstance(f.value, dict) and "first_name" in f.value and f.answers), None)

    answers = {t.id: {p.rpartition(".")[2] for f in t.plan.requests[0].facts for p in f.answers} for t in tasks}
    first = [t for t in tasks if newcomer(t) not in (None, t.user.known["first_name"])]
    bags = [t for t in tasks if "total_baggages" in answers[t.id] and "nonfree_baggages" not in answers[t.id]]
    assert first and bags
    for task in first:
        reply = _answer(pm, domain, task, "Could you tell me the first name?")
        assert newcomer(task) in reply and task.user.known["first_name"] not in reply, (task.id, reply)
    for task in bags:
        reply = _answer(pm, domain, task, "Could you tell me the nonfree baggages?")
        assert "baggages" not in reply, reply


def test_scripted_user_turns_down_a_smaller_offer_when_its_instruction_says_so():
    """Issue 21 item 3: a refused request with a compliant smaller variant keeps the refusal as gold only because the
    instruction says the user turns down less; the offline user must act on it (a $50 credit offered for a refused
    $75 one, 180 days for a refused 360) and still say yes to a confirmation of what it asked."""
    from tau_emotion.tracer.answers import DECLINE_LESS

    pm, domain, tasks = _built("telecom", 20, 1, challenge_rate=0.6)
    said = DECLINE_LESS.replace("{{I}}", "you")
    task = next(t for t in tasks if said in t.user.instruction)
    # the user holds to the refusal of the request it is making: the conversation is at that request
    at, refusal = next((k, r.refusal) for k, r in enumerate(task.plan.requests) if r.refusal and r.refusal.declines_smaller)
    asked = max(float(v) for v in refusal.call.arguments.values() if re.fullmatch(r"\d+(?:\.\d+)?", str(v)))
    episode, view = bare_episode(pm, domain, task)
    user = ScriptedUser(view)
    asyncio.run(user.start())
    user.position = at
    unit = "days" if "suspend" in refusal.call.name else "dollars"
    less = f"${asked / 2:g}" if unit == "dollars" else f"{asked / 2:g} days"
    offer = Message(role="assistant", content=f"I can't do that, but I can do {less} instead. Shall I proceed?")
    reply = asyncio.run(user.respond(offer)).content
    assert "go ahead" not in reply.lower() and "yes" not in reply.lower(), reply
    same = f"${asked:g}" if unit == "dollars" else f"{asked:g} days"
    yes = Message(role="assistant", content=f"I will do {same} as you asked. Shall I proceed?")
    assert user.offers_less(offer.content) and not user.offers_less(yes.content)


def test_the_benchmark_hears_a_whole_amount_said_without_its_decimal_point():
    """A fact of 250.0 said as "250" was said: the said-already count must not miss it (nor take 250.5 for it)."""
    forms = _bench().forms
    assert "250" in forms(250.0) and "250.0" in forms(250.0)
    assert "250" not in forms(250.5) and "September 16" in forms("2025-09-16")
