"""Procedure rules (core/procedure.py) on hand-written conversations in every pack, and their loading.

Each pack's case is one test task with a decision rule and one write, frozen from an earlier Tracer build in
`tests/fixtures/procedure_tasks.json` (the databases they rest on are unchanged), so the hand-written statements
below do not move with every rebuild of the test split: the request, the
identification, the agent's statement of the write in its own words (with the deciding figure), the
user's yes, the write. That passes; the same write before the yes fails `confirm_before_write`; the
statement without the figure fails `inform_before_decide`; the same write after identifying another
task's customer fails `own_records`.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from tau_emotion.core.errors import DataError
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import Message, ProcedureParts, ProcedureViolation, RewardParts, Task, ToolCall
from tau_emotion.core.procedure import affirmative, check, load_spec, rescored, strict_reward, value_said
from tau_emotion.core.reward import normalize, numbers_in

PACKS = ("airline", "retail", "telecom", "telehealth", "restaurant", "bank", "school", "travel", "movie", "basketball")

FROZEN = Path(__file__).resolve().parents[1] / "fixtures" / "procedure_tasks.json"


@cache
def frozen_task(task_id: str) -> Task:
    """A test task frozen from an earlier build (see the module's docstring)."""
    rows = json.loads(FROZEN.read_text(encoding="utf-8"))
    return next(Task.model_validate(row) for row in rows if row["id"] == task_id)


#: pack -> (task, the agent's statement in its own words, the same without the deciding figure)
CASES = {
    "airline": ("airline-test-001",
                "I can book SKY442 and SKY593 on May 19 in business class, $734 in total on your Mastercard. "
                "Shall I go ahead?",
                "I can book SKY442 and SKY593 on May 19 in business class on your Mastercard. Shall I go ahead?"),
    "retail": ("retail-test-022",
               "I'll move order #W6203935 onto your PayPal account; the order total is $210.74. Shall I?",
               "I'll move order #W6203935 onto your PayPal account. Shall I?"),
    "telecom": ("telecom-test-008",
                "A Galaxy A55 for your line comes to $99 on your credit card. Shall I order the replacement?",
                "A Galaxy A55 for your line goes on your credit card. Shall I order the replacement?"),
    "telehealth": ("telehealth-test-001",
                   "I can book a video visit with Dr. Kaur on June 25 at 5:30 pm; your copay is $30. Shall I book it?",
                   "I can book a video visit with Dr. Kaur on June 25 at 5:30 pm. Shall I book it?"),
    "restaurant": ("restaurant-test-019",
                   "Adding the Raw bar tasting to your booking comes to $450 for the party. Shall I add it?",
                   "Shall I add the Raw bar tasting to your booking for the party?"),
    "bank": ("bank-test-010",
             "Next month's loan payment is $457.50. I'll transfer it from your savings to your loan account. "
             "OK to go ahead?",
             "I'll transfer next month's payment from your savings to your loan account. OK to go ahead?"),
    "school": ("school-test-038",
               "HIS102 costs $630 in tuition. Shall I enroll you in it?",
               "Shall I enroll you in HIS102?"),
    "travel": ("travel-test-001",
               "A suite at Alfama Terrace Hotel from September 17 to September 20 comes to $924 on your card. "
               "Shall I book it?",
               "A suite at Alfama Terrace Hotel from September 17 to September 20, on your card. Shall I book it?"),
    "movie": ("movie-test-016",
              "I can add 4 combos to booking YZXDRT for $61.20. Shall I order them?",
              "I can add 4 combos to booking YZXDRT. Shall I order them?"),
    "basketball": ("basketball-test-010",
                   "I'll buy 4 tickets in Lower 102 for the Denver Summit game on March 14, $460 in all. Go ahead?",
                   "I'll buy 4 tickets in Lower 102 for the Denver Summit game on March 14. Go ahead?"),
}


@pytest.fixture(scope="module")
def domains():
    return get_plugin_manager(list(PACKS)).catalog("domains")


def _case(domains, pack):
    domain = domains.get(pack)
    task_id, statement, without_figure = CASES[pack]
    task = frozen_task(task_id)
    writes = [a for a in task.gold.actions if domain.toolset[a.name].writes]
    assert len(writes) == 1, "each case is a task with one write"
    return domain, task, writes[0], statement, without_figure


def _call(i, action):
    return Message(role="assistant", tool_calls=[ToolCall(id=f"c{i}", name=action.name, arguments=dict(action.arguments))])


def _conversation(task, identify, statement, write, *, yes=True):
    messages = [Message(role="user", content=task.user.intents[0]), _call(0, identify),
                Message(role="tool", tool_call_id="c0", name=identify.name, content="..."),
                Message(role="assistant", content=statement)]
    if yes:
        messages.append(Message(role="user", content="yes please"))
    messages.append(_call(1, write))
    return messages


def _rules(parts: ProcedureParts) -> set[str]:
    return {v.rule for v in parts.violations}


@pytest.mark.parametrize("pack", PACKS)
def test_an_agent_that_confirms_in_its_own_words_passes(domains, pack):
    domain, task, write, statement, _ = _case(domains, pack)
    parts = check(domain, task, _conversation(task, task.gold.actions[0], statement, write))
    assert parts.procedure_ok, parts.violations
    assert parts.rules == ["identify_before", "confirm_before_write", "inform_before_decide", "own_records"]


@pytest.mark.parametrize("pack", PACKS)
def test_a_write_before_the_yes_fails_confirm_before_write(domains, pack):
    domain, task, write, statement, _ = _case(domains, pack)
    parts = check(domain, task, _conversation(task, task.gold.actions[0], statement, write, yes=False))
    assert _rules(parts) == {"confirm_before_write"}
    [violation] = parts.violations
    assert violation.message == 4 and violation.tool == write.name  # the write's own message


@pytest.mark.parametrize("pack", PACKS)
def test_a_decision_write_before_the_figure_fails_inform_before_decide(domains, pack):
    domain, task, write, _, without_figure = _case(domains, pack)
    parts = check(domain, task, _conversation(task, task.gold.actions[0], without_figure, write))
    assert "inform_before_decide" in _rules(parts)
    assert _rules(parts) <= {"inform_before_decide", "confirm_before_write"}  # the figure may be a deciding argument


@pytest.mark.parametrize("pack", PACKS)
def test_acting_on_another_customers_record_fails_own_records(domains, pack):
    domain, task, write, statement, _ = _case(domains, pack)
    mine = task.gold.actions[0]
    other = next(t.gold.actions[0] for t in domain.tasks("test")
                 if t.gold.actions[0].arguments != mine.arguments and t.gold.actions[0].name == mine.name)
    parts = check(domain, task, _conversation(task, other, statement, write))
    assert _rules(parts) == {"own_records"}, parts.violations


#: packs whose tools refuse every record until a caller is verified: an unidentified write does nothing there
SESSION_PACKS = {"telehealth", "bank", "school"}


@pytest.mark.parametrize("pack", PACKS)
def test_a_write_before_any_identification_fails_identify_before(domains, pack):
    domain, task, write, statement, _ = _case(domains, pack)
    messages = [Message(role="user", content=task.user.intents[0]), Message(role="assistant", content=statement),
                Message(role="user", content="Yes, go ahead."), _call(1, write)]
    _, refused = domain.toolset.call(domain.database.state(), write.name, write.arguments)
    assert refused is (pack in SESSION_PACKS)
    found = [v for v in check(domain, task, messages).violations if v.rule == "identify_before"]
    # the statement tells the deciding figure, the customer's own data, to a caller nobody identified
    assert [(v.message, v.tool) for v in found] == [(1, None)] + ([] if refused else [(3, write.name)])


@pytest.mark.parametrize("pack", PACKS)
def test_an_answer_without_identifying_anyone_fails_identify_before(domains, pack):
    """The `hasty` shortcut on a read-only task: no call at all, the customer's figure told at once."""
    domain = domains.get(pack)
    task = next(t for t in domain.tasks("test") if t.gold.outputs and not t.gold.reasons)
    answer = "Here you are: " + "; ".join(o if isinstance(o, str) else o[0] for o in task.gold.outputs)
    parts = check(domain, task, [Message(role="user", content="hi"), Message(role="assistant", content=answer)])
    assert [(v.rule, v.message) for v in parts.violations] == [("identify_before", 1)]
    identified = [Message(role="user", content="hi"), _call(0, task.gold.actions[0]),
                  Message(role="assistant", content=answer)]
    assert check(domain, task, identified).procedure_ok


def test_a_refused_call_is_not_held_against_the_agent(domains):
    """Procedure is about what was done: a write the tool refuses changed nothing."""
    domain, task, write, statement, _ = _case(domains, "airline")
    broken = write.model_copy(update={"arguments": {**write.arguments, "flights": []}})
    parts = check(domain, task, [Message(role="user", content="hi"), _call(1, broken)])
    assert parts.procedure_ok


def test_a_new_request_after_the_yes_needs_a_new_confirmation(domains):
    domain, task, write, statement, _ = _case(domains, "airline")
    messages = _conversation(task, task.gold.actions[0], statement, write)
    messages.insert(5, Message(role="user", content="Oh, and could you also check my flight status?"))
    assert _rules(check(domain, task, messages)) == {"confirm_before_write"}


def test_a_flight_that_stays_need_not_be_said(domains):
    """`new_only`: the statement of a changed round trip names the new flight, not the one that stays."""
    domain = domains.get("airline")
    reservation = next(r for r in domain.database.tables["reservations"].values()
                       if r["flight_type"] == "round_trip" and r["cabin"] == "economy")
    kept, changed = reservation["flights"]
    new = {"flight_number": "SKY286", "date": "2024-05-20"}
    call = ToolCall(id="w", name="update_reservation_flights", arguments={
        "reservation_id": reservation["reservation_id"], "cabin": "economy",
        "flights": [{"flight_number": kept["flight_number"], "date": kept["date"]}, new], "payment_id": "x"})
    spec = domain.procedure.confirm_before_write["update_reservation_flights"]
    from tau_emotion.core.procedure import _Replay

    replay = _Replay(domain, domain.procedure, domain.tasks("test")[0], [])
    held = replay.held_values(call.name, call.arguments)
    said = "I'll move you to SKY286 on May 20 for $368 — shall I go ahead?"
    assert replay.states(said, call.arguments, spec, held)
    assert not replay.states("I'll move your return flight for $368, shall I?", call.arguments, spec, held)


@pytest.mark.parametrize("text", ["yes please", "Yes, please go ahead.", "Sure, go ahead", "Please proceed",
                                  "That's right", "OK", "yeah do it", "Yes — no problem", "Go ahead and book it"])
def test_affirmatives(text):
    assert affirmative(text)


@pytest.mark.parametrize("text", ["No, wait", "not yet", "Okay, wait a moment", "I need to correct my name",
                                  "Yes, but not the second one", "Actually, yes", "Can you confirm my booking?",
                                  "###STOP###", "", None])
def test_not_affirmatives(text):
    assert not affirmative(text)


@pytest.mark.parametrize(("value", "text", "said"), [
    ("2024-05-20", "on May 20", True), ("2024-05-20", "on 20th May", True), ("2024-05-20", "on 5/20", True),
    ("2024-05-20", "on May 2", False), ("2024-05-20", "on May 21", False), ("2024-05-20", "on 2024-05-20", True),
    ("17:30", "at 5:30 pm", True), ("17:30", "at 17:30", True), ("17:30", "at 5:30 am", False),
    ("19:00", "at 7 pm", True), ("2025-06-18T22:15", "June 18 at 10:15 pm", True),
    ("2025-06-18T22:15", "June 18", False), (368, "for $368", True), (368, "for $3680", False),
    (-246.4, "$246.40", True), ("basic_economy", "in basic economy", True), ("SKY286", "to sky286 then", True),
    ("SKY286", "to SKY2860", False), ("Lower 102 (center)", "in Lower 102 for", True), (True, "", True),
])
def test_values_are_said_by_meaning(value, text, said):
    assert value_said(value, normalize(text), numbers_in(text)) is said


def test_strict_reward():
    ok = ProcedureParts(procedure_ok=True)
    broken = ProcedureParts(procedure_ok=False, violations=[ProcedureViolation(rule="own_records", message=3)])
    assert strict_reward(1.0, ok) == 1.0 and strict_reward(1.0, broken) == 0.0
    assert strict_reward(-1.0, broken) == -1.0 and strict_reward(1.0, None) == 1.0
    parts = RewardParts(db_match=True, procedure=broken, scoring="paper", paper_reward=1.0)
    assert rescored(1.0, parts, "strict") == 0.0 and rescored(0.0, parts.model_copy(update={"scoring": "strict"}),
                                                                 "paper") == 1.0
    assert rescored(1.0, RewardParts(db_match=True), "strict") is None  # stored before the procedure was measured


@pytest.mark.parametrize(("edit", "message"), [
    (lambda s: s["confirm_before_write"].pop("cancel_reservation"), "write tool 'cancel_reservation' is declared neither"),
    (lambda s: s["identify_before"].append("book_flight"), "'book_flight' is not a tool"),
    (lambda s: s["own_records"]["writes"]["cancel_reservation"][0].update(via="bookings.user_id"), "no table 'bookings'"),
    (lambda s: s["confirm_before_write"]["send_certificate"]["deciding"].append({"argument": "amout"}),
     "'amout' is not an argument of send_certificate"),
    (lambda s: s.update(confirm_before_writes={}), "confirm_before_writes"),
    (lambda s: s["identify"].append({"tool": "get_user_details"}), "exactly one of"),
])
def test_a_broken_procedure_file_is_one_line_naming_the_field(domains, edit, message):
    domain = domains.get("airline")
    raw = json.loads(domain._file("data/procedure.json").read_text(encoding="utf-8"))
    edit(raw)
    with pytest.raises(DataError, match="procedure.json") as info:
        load_spec(domain, raw, "airline/data/procedure.json")
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("pack", PACKS)
def test_every_gold_identifies_first_and_acts_on_its_own_records(domains, pack):
    """The committed test split's gold obeys identify_before and own_records (every split is checked in
    tests/domain_packs: this is the quick one)."""
    domain = domains.get(pack)
    for task in domain.tasks("test"):
        messages = [Message(role="user", content="hi"), *(_call(i, a) for i, a in enumerate(task.gold.actions))]
        parts = check(domain, task, messages)
        assert not _rules(parts) & {"identify_before", "own_records"}, (task.id, parts.violations)
