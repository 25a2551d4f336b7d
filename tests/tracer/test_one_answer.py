"""One right answer (issue 21, item 3), on the telecom pack's real database and tools.

Liam Yilmaz (C304276) has two bills with a $15 data overage: B214295 (period February, issued March 1) and
B880450 (period January, issued February 1, overage on his own line). "Your February bill" fits both, and a
$15 overage credit is legal on either, so the task has two right answers; "your bill issued on March 1" fits
one. A 360-day medical suspension is refused by a rule capping it at 180 days: an agent offering 180 follows
the policy, so that refusal is not the one right answer; a credit on a bill outside the credit window has no
amount the rules accept, so its refusal is.
"""

import pytest

from tau_emotion.core.models import Action
from tau_emotion.tracer.answers import (
    DECLINE_LESS,
    DECLINED,
    alternative_bindings,
    check_task,
    compliant_variant,
    refusal_variants,
    task_calls,
)
from tau_emotion.tracer.build import build_tasks
from tau_emotion.tracer.feelings import EmotionLabeler
from tau_emotion.tracer.grounding import Refusal
from tau_emotion.tracer.hints import Choice, IntentDraft, Option, Output
from tau_emotion.tracer.validate import Reject, Validator
from tests.tracer.candidates import make_candidate

USER, PHONE, ACCOUNT, GOLD, OTHER = "C304276", "206-555-9364", "A922268", "B214295", "B880450"
READS = [("find_customer_by_phone", {"phone_number": PHONE}), ("get_customer_details", {"customer_id": USER}),
         ("get_bills", {"account_id": ACCOUNT})]
CREDIT = ("issue_bill_credit", {"bill_id": GOLD, "amount": 15, "reason": "overage_waiver"})


@pytest.fixture(scope="module")
def telecom(domains):
    return domains.get("telecom")


def _credit(telecom, says: dict, words: str):
    """The overage credit on GOLD, the bill picked among the account's bills by what the user `says` of it."""
    bills = [telecom.database.tables["bills"][b] for b in telecom.database.tables["accounts"][ACCOUNT]["bill_ids"]]
    choice = Choice("bill", GOLD, [Option(b["bill_id"], {k: b[k] for k in says}) for b in bills], says)
    draft = IntentDraft(kind="bill_credit", goal="issue_bill_credit", arguments=CREDIT[1], request=["x"],
                        choices=[choice], outputs=[Output("15", "how much is credited")])
    known = {"phone_number": PHONE, "disputed_charge": "the data overage charge", "reason": "overage_waiver"}
    cand = make_candidate(telecom, known, [*READS, CREDIT], outputs=["15"], drafts=[draft],
                          instruction=f"You are Liam Yilmaz (phone number {PHONE}). You need to have the data "
                                      f"overage charge on your {words} credited back.",
                          intents=[f"Can you credit back the data overage charge on my {words}?"])
    cand.persona.entity = USER
    return cand


def test_words_that_fit_another_bill_are_ambiguous_and_words_that_fit_one_are_not(telecom):
    february = _credit(telecom, {"period": "2025-02"}, "February bill")
    february.known["bill_month"] = february.task.user.known["bill_month"] = "February"
    with pytest.raises(Reject) as info:
        Validator(telecom).check(february)
    assert info.value.check == "ambiguous"
    assert GOLD in info.value.detail and OTHER in info.value.detail and "February" in info.value.detail

    issued = _credit(telecom, {"issue_date": "2025-03-01"}, "bill issued on March 1")
    Validator(telecom).check(issued)  # B880450 was issued on February 1: the words fit B214295 only


def test_the_other_bill_must_take_the_same_call(telecom):
    """Change the state so the credit is illegal on B880450 (it already has 50 of credits): no alternative."""
    words = "the data overage charge on your February bill"
    known = {"phone_number": PHONE, "bill_month": "February"}

    def about_gold(steps):
        return [f for f in alternative_bindings(telecom, USER, steps, [], words, [], known) if f"gold {GOLD}" in f]

    assert about_gold([*READS, CREDIT]) == [
        f"issue_bill_credit.bill_id: the user's words ({PHONE}, Data overage, February) fit {OTHER} as well as "
        f"the gold {GOLD}, and the same call is legal on {OTHER}"]
    full = ("issue_bill_credit", {"bill_id": OTHER, "amount": 50, "reason": "service_outage"})
    assert about_gold([*READS, full, CREDIT]) == []


def _suspension(telecom, days: int, turns_down_less: bool = False):
    line = next(row for row in telecom.database.tables["lines"].values() if row["phone_number"] == PHONE)
    calls = [*READS[:2], ("get_account_details", {"account_id": ACCOUNT}),
             ("get_line_details", {"line_id": line["line_id"]})]
    args = {"line_id": line["line_id"], "reason": "medical", "days": days}
    refusal = Refusal(intent=0, at=len(calls), name="suspend_line", arguments=args)
    draft = IntentDraft(kind="suspend_too_long", goal="suspend_line", arguments=args, request=["x"], refused=True,
                        outputs=[Output("180 days", reason="suspension_too_long")],
                        preferences=[DECLINE_LESS] if turns_down_less else [])
    said = " You would rather turn down any offer of less than you ask for." if turns_down_less else ""
    known = {"phone_number": PHONE, "suspension_days": days, "suspension_reason": "a hospital treatment"}
    cand = make_candidate(telecom, known, calls, refusals=[refusal], drafts=[draft], evidence=["get_line_details"],
                          instruction=f"You want to suspend your line {PHONE} for {days} days.{said}")
    cand.task.gold.reasons = ["suspension_too_long"]
    cand.persona.entity = USER
    return cand


def test_refusal_with_a_compliant_variant_is_rejected(telecom):
    with pytest.raises(Reject) as info:
        Validator(telecom).check(_suspension(telecom, 360))
    assert info.value.check == "policy" and "days=360" in info.value.detail and "days=180" in info.value.detail
    Validator(telecom).check(_suspension(telecom, 360, turns_down_less=True))  # the user says what they do: gold


def test_a_build_says_the_user_turns_down_less_exactly_where_the_rules_accept_less(telecom, space):
    """Grounding gives a refused request with a compliant smaller variant the `DECLINE_LESS` preference; a built
    split has no task the one-right-answer checks flag."""
    labeler = EmotionLabeler.from_space(space)
    report = build_tasks(telecom, "test", 12, 1, challenge_rate=0.9, labeler=labeler, space=space)
    variants = {}
    for task in report.tasks:
        steps, refused = task_calls(task)
        variants[task.id] = bool(refusal_variants(telecom, steps, refused))
        assert check_task(telecom, task) == []
        said = DECLINED in task.user.instruction.lower()
        assert said == variants[task.id], (task.id, task.user.instruction)
    assert 0 < sum(variants.values()) < len(variants)


def test_refusal_without_a_compliant_variant_stands(telecom):
    """A credit on a bill issued more than 60 days ago: no amount makes it legal, so refusing is the answer."""
    state = telecom.database.state()
    late = {"bill_id": "B173785", "amount": 15, "reason": "overage_waiver"}
    assert [v.rule for v in telecom.violations(state, Action(name="issue_bill_credit", arguments=late))] \
        == ["credit_limits"]
    assert compliant_variant(telecom, state, "issue_bill_credit", late) is None
    assert compliant_variant(telecom, state, "issue_bill_credit",
                             {"bill_id": GOLD, "amount": 75, "reason": "overage_waiver"}) == ("amount", 75, 50)


@pytest.mark.parametrize("pack", ["airline", "retail", "telecom", "telehealth"])
def test_committed_test_splits_have_one_right_answer(domains, pack):
    """The splits rebuilt with the checks pass them (before: telecom-test-018's two February bills, and refusals of
    a 75 credit or a 210-day suspension that a smaller variant would have satisfied)."""
    domain = domains.get(pack)
    flagged = [(t.id, found) for t in domain.tasks("test") if (found := check_task(domain, t))]
    assert flagged == []
