"""The matcher's rules one at a time (core/telling.py, docs/scoring.md): negation, series, lists, text rivals,
the gold's own values, recitals; and the scripted user asking the same questions as the reward."""

import pytest

from tau_emotion.core.domain import Domain
from tau_emotion.core.models import Gold, Message
from tau_emotion.core.state import Database
from tau_emotion.core.telling import outputs_told, reasons_explained


def _said(*texts):
    return [Message(role="assistant", content=t) for t in texts]


def _told(outputs, *texts, gold=None, domain=None):
    return outputs_told(outputs, _said(*texts), gold=gold, domain=domain)[0]


@pytest.mark.parametrize(("text", "told"), [
    ("It is not 404 dollars.", False),
    ("It isn't $404.", False),
    ("You won't get $404 back.", False),
    ("That is not going to be $404.", False),
    ("There is no fee of $404.", False),
    ("It's not $400 but $404.", True),
    ("It isn't $400; it's $404.", True),
    ("There's no change fee, so you pay $404.", True),
    ("I couldn't find another charge. The total is $404.", True),
])
def test_a_negated_value_is_not_told(text, told):
    assert bool(_told(["404"], text)) is told


@pytest.mark.parametrize(("text", "told"), [
    ("The fare is $352, or $368 with the direct flight.", False),
    ("Between $352 and $352.50.", False),
    ("$340, $352 or $368.", False),
    ("It is $352 / $368.", False),
    ("$352; $368", False),
    ("It's $352. $368 with the direct flight.", False),
    ("You pay $352 or maybe 368.", False),
    ("The fare is $352, charged to your card ending 4421.", True),
    ("The fare is $352 for 2 passengers.", True),
    ("The fare is $352 and 2 bags are included.", True),
    ("The fare is $352; the trip is 3 days long.", True),
    ("The fare is $352, and your balance is now $4,321.50.", True),
    ("The fare is $351. The fare is $352. The fare is $353.", False),
    ("Your fare was $340; your fare is now $352.", True),
])
def test_a_value_offered_beside_another_candidate_is_not_told(text, told):
    assert bool(_told(["352"], text)) is told


def test_a_turn_with_many_other_figures_tells_nothing_and_the_next_turn_still_can():
    four = "Seats 12A is free; you have 3 bags, 2 passengers, 40 kg and 7 days. The fare is $352."
    assert _told(["352"], four)  # four others: allowed
    five = "Seats: 1, and also 3 bags, 2 passengers, 40 kg, 7 days and 9 lives. The fare is $352."
    assert not _told(["352"], five)
    assert _told(["352"], five, "To be clear: the fare is $352.")


def test_a_dump_of_values_tells_nothing():
    dump = "Here is everything I read: True; P598541; Uma; Okafor; CityCare Pharmacy; DR9903; Dr. Rafael Tran; " \
           "Bayside Clinic; in_person; video; INS_BASIC; INS_CAMPUS; physical_therapy; 35; DR5605; Dr. Hannah Park."
    assert not _told(["35"], dump)
    assert _told(["35"], "I checked Dr. Rafael Tran at Bayside Clinic (in person or video): the copay is $35.")
    assert _told(["35", "30"], "- Copay: $35\n- Refills: 30\n- Pharmacy: CityCare\n- Doctor: Dr. Tran")


def test_the_golds_own_values_are_no_rivals():
    gold = Gold(outputs=["169", "217"])
    assert _told(["169", "217"], "Refunds: $169 and $217.", gold=gold) == ["169", "217"]
    # the scripted user asks about one intent's output at a time: the other intent's figure is no rival
    assert _told(["169"], "Refunds: $169 and $217.", gold=gold) == ["169"]
    assert _told(["169"], "Refunds: $169 and $217.") == []


def _status_domain():
    flights = {"f1": {"status": "landed"}, "f2": {"status": "on time"}, "f3": {"status": "delayed"},
               "f4": {"status": "cancelled"}, "f5": {"status": "flying"}}
    return Domain("statuses", [], load_database=lambda: Database({"flights": flights}))


@pytest.mark.parametrize(("text", "told"), [
    ("Your flight has landed.", True),
    ("Your flight landed on time.", True),
    ("HAT001 landed at 9:05; your other flight is delayed.", True),
    ("It has either landed or been cancelled.", False),
    ("It is landed, on time, delayed or cancelled.", False),
    ("HAT001 landed, HAT002 is delayed and HAT003 is on time.", False),
    ("It has not landed.", False),
])
def test_a_text_answer_is_not_told_beside_its_rivals_from_the_database(text, told):
    assert bool(_told(["landed"], text, domain=_status_domain())) is told


def test_rivals_also_come_from_the_transcripts_tool_results():
    messages = [Message(role="tool", content='{"result": "fault cleared"}'),
                Message(role="tool", content='{"result": "no fault on this line"}'),
                Message(role="assistant", content="Result: fault cleared / no fault on this line.")]
    assert outputs_told(["fault cleared"], messages)[0] == []
    messages[-1] = Message(role="assistant", content="Good news: the fault cleared.")
    assert outputs_told(["fault cleared"], messages)[0] == ["fault cleared"]


_NAMES = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
_REASONS = {f"r{i}": [f"reason {name}"] for i, name in enumerate(_NAMES)}


def _reasons_domain():
    return Domain("reasons", [], load_refusal_reasons=lambda: _REASONS)


def test_a_recital_explains_no_reason_in_one_turn_or_spread_over_turns():
    domain = _reasons_domain()
    assert reasons_explained(domain, ["r0"], _said("Sorry: reason alpha."))[0] == ["r0"]
    three_others = "reason alpha, reason bravo, reason charlie, reason delta"
    assert reasons_explained(domain, ["r0"], _said(three_others))[0] == ["r0"]
    assert reasons_explained(domain, ["r0"], _said(three_others + ", reason echo"))[0] == []
    spread = _said(*(f"reason {name}" for name in _NAMES[:6]))  # one a turn: five besides the gold's
    assert reasons_explained(domain, ["r0"], spread)[0] == []
    assert reasons_explained(domain, ["r0"], spread[:5])[0] == ["r0"]  # four besides the gold's
    # a recital turn is a list: it tells no output either
    assert outputs_told(["352"], _said(three_others + ", reason echo. It is $352."), domain=domain)[0] == []


def test_the_gold_reasons_of_other_parts_are_no_rivals():
    domain = _reasons_domain()
    gold = Gold(reasons=["r0", "r1", "r2", "r3", "r4"])
    text = "reason alpha, reason bravo, reason charlie, reason delta, reason echo"
    assert reasons_explained(domain, ["r0"], _said(text), gold=gold)[0] == ["r0"]
    assert reasons_explained(domain, ["r0"], _said(text))[0] == []


def test_the_scripted_user_and_the_reward_agree_on_a_list(tmp_path):
    """The user asks the reward's matcher: a list does not move it on, the answer does."""
    from tau_emotion.core.manager import get_plugin_manager
    from tau_emotion.core.models import RunConfig
    from tau_emotion.core.runner import prepare_run, run_sync

    class Agent:
        def __init__(self, view, say):
            self.say, self.n = say, 0

        async def act(self, messages):
            self.n += 1
            return Message(role="assistant", content=self.say(self.n))

    from tau_emotion.core import hookimpl

    class Agents:
        @hookimpl
        def tau_register_agents(self, register):
            register("lists", lambda view: Agent(view, lambda n: "Maybe " + ", ".join(str(i) for i in range(300))))
            register("answers", lambda view: Agent(view, lambda n: "The balance is $1,200." if n > 1 else "Let me see."))

    results = {}
    for agent in ("lists", "answers"):
        config = RunConfig(plugins=["mock"], trials=1, agent=agent, task_ids=["mock-003"],
                           options={"progress": {"no_progress": True}})
        pm = get_plugin_manager(["mock"], extra=[Agents()])
        run = prepare_run(config, str(tmp_path / f"{agent}.db"), pm=pm)
        run_sync(run)
        results[agent] = run.store.results(run.run_id)[0]
    listed, answered = results["lists"], results["answers"]
    assert not listed.success and listed.parts.outputs_missing == ["1200"]
    assert listed.n_user_turns > 3  # the user restated its request until its patience ran out
    assert answered.success and answered.n_user_turns < listed.n_user_turns
