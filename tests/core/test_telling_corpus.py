"""The phrasing corpus (issue 31, item 1): natural correct answers to real test tasks of the ten packs score 1;
lists, negations, hedges and the full refusal list score 0.

Each answer is scored as the reward scores a trial: the task's gold calls replayed (so the database matches),
their tool messages, then the one assistant turn written here. The answers are written as an agent would say
them (currency and number formats, itemised multi-output answers, a reason in the agent's own words around a
declared phrasing); the rule they are held to is docs/scoring.md.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from tau_emotion.core.manager import load_all_plugins
from tau_emotion.core.models import Message, Task, Termination
from tau_emotion.core.reward import replay, score

STOP = Termination(reason="user_stop")

# (pack, task, answer): each scores 1
CORRECT = [
    # airline
    ("airline", "airline-test-001", "Your one-way business trip from Miami to Washington is booked; the total comes to "
                                    "$734, charged to your card. And your Orlando to Charlotte flight today is on time."),
    ("airline", "airline-test-001", "Booked! That's $734.00 in total. The flight from Orlando to Charlotte is on time."),
    ("airline", "airline-test-001", "All set: 734 dollars for the new trip, and today's Orlando flight is running on time."),
    ("airline", "airline-test-004", "The upgrade to business costs $1,405 and has been charged to your Discover card. I've "
                                    "also cancelled the San Diego round trip; your refund total is $2,380."),
    ("airline", "airline-test-004", "- Upgrade price: 1405 dollars\n- Refund for the cancelled trip: 2380 dollars"),
    ("airline", "airline-test-002", "I'm sorry, I can't change the dates: your Washington to Los Angeles ticket is basic "
                                    "economy, which can't be modified. Your new JFK to Dallas booking is confirmed at $258."),
    ("airline", "airline-test-018", "Your bag has been added. As for your Orlando to Washington flight today, it's flying "
                                    "right now."),
    ("airline", "airline-test-042", "Your Denver to San Diego flight is in the air: it's flying now. The nonstop evening "
                                    "flight to Orlando is booked for $114. Unfortunately your JFK to Salt Lake City flight "
                                    "on May 23 was cancelled."),
    ("airline", "airline-test-044", "I can't cancel the Salt Lake City trip for a refund: it was booked more than 24 hours "
                                    "ago and has no travel insurance. For the cancelled Charlotte flight I've issued a $100 "
                                    "certificate. Switching your Boston trip to economy gives you $2,766 back on your card."),
    ("airline", "airline-test-006", "The 2 extra bags are added for $50, paid with your gift card. I can't cancel the "
                                    "Boston to Denver trip because part of it has already been flown. Your Charlotte to "
                                    "San Diego flight on May 21 has been cancelled."),
    # bank
    ("bank", "bank-test-003", "Your monthly loan payment is $500, and I've paid it from your savings. Your last payment "
                              "to Eversource Energy was $246.40, and I've sent them the same amount from checking."),
    ("bank", "bank-test-003", "Done: the loan payment of 500 dollars went through, and Eversource got another $246.40, "
                              "the same as last time."),
    ("bank", "bank-test-005", "I've refunded the foreign transaction fee: $0.84 is back in your checking account ending "
                              "9787. The $1,000 transfer from the account ending 8392 is done as well."),
    ("bank", "bank-test-010", "I can't open a dispute on the Amazon charge yet because it's still pending; you can "
                              "dispute it once it settles. Your monthly loan payment is $457.50 and it's been paid from "
                              "savings. I also can't raise your card limit to $5,000: that is above the maximum limit "
                              "for your tier."),
    ("bank", "bank-test-001", "The Hotel Marlowe charge is too old: it's outside the 60-day window, so I can't open a "
                              "dispute. The MA Dept of Revenue payment has already settled, so it can't be reversed; "
                              "you'd need to contact the payee. Your $75 payment to Harbor Property Mgmt has been sent."),
    # basketball
    ("basketball", "basketball-test-001", "Jonas is out of the Winter league U17, and $190 comes back to your card. Your "
                                          "Courtside ticket for the Salt Lake Peaks game on March 1 is booked on your "
                                          "American Express; it costs $260."),
    ("basketball", "basketball-test-001", "You'll get 190 back on your card. The ticket comes to 260 dollars."),
    ("basketball", "basketball-test-003", "Ximena has been withdrawn from the Winter league U10 and $160 will come back to "
                                          "your card. I can't cancel Tara's place in the Thanksgiving mini camp since "
                                          "it's less than 3 days before the camp starts. And to register Rosa for the "
                                          "Spring break camp, you'd first need to sign the waiver."),
    ("basketball", "basketball-test-005", "Your 2 tickets in Lower 104 for the Los Angeles Stars game on April 3 are "
                                          "booked on your Visa; the total is $212.50. I've also sent order HT-1466942 "
                                          "to Chloe Yilmaz."),
    ("basketball", "basketball-test-026", "Here's the summary: the move to Lower 103 costs you $440 in all, fee "
                                          "included; the Upper 202 ticket for the Dallas Drillers game is $60; and the "
                                          "4 Lower 104 tickets for the Oklahoma Storm game come to $340."),
    ("basketball", "basketball-test-026", "Upgrade: $440.00. Dallas ticket: $60.00. Oklahoma tickets: $340.00."),
    # movie
    ("movie", "movie-test-001", "Your 2 adult tickets for Dragon Kite on Thursday, June 19 at 19:00 are booked with your "
                                "gift card and cost $36. The Deep Quiet booking is cancelled: you get $19.50 back. The "
                                "Hollow Creek tickets (1 adult, 2 seniors) come to $37, so I haven't booked those."),
    ("movie", "movie-test-003", "Your booking 4SB9T5 is exchanged for the 13:00 showing at Riverside Screens; the "
                                "exchange costs you $8 in all. The Paws and Whiskers booking is refunded and $48 comes "
                                "back to you."),
    ("movie", "movie-test-003", "The exchange cost is 8 dollars. Your refund is 48 dollars."),
    ("movie", "movie-test-004", "The exchange to Orbit of Ash costs $5 in all. I'm afraid booking 5PL55Y can't be "
                                "refunded because the showtime has already started. The Big Shot exchange comes to $20, "
                                "and it's done."),
    ("movie", "movie-test-010", "I can't add sodas to The Deep Quiet booking: that showing has already started. And "
                                "Hollow Creek is rated R, so the child tickets on your booking can't move to it."),
    ("movie", "movie-test-002", "The 2 adult tickets for Orbit of Ash on Saturday cost $36 on your credit card. The "
                                "Night Desk booking is a group booking, and group bookings can only be refunded up to "
                                "48 hours before the show, so I can't refund it."),
    # restaurant
    ("restaurant", "restaurant-test-021", "Your Lotus Garden booking is cancelled. The Royal thali for the whole party at "
                                          "Spice Route comes to $168, which is over your limit, so I left the booking "
                                          "without it. The 20:30 seating at Le Petit Bistro is full, so you're on the "
                                          "waitlist at position 1."),
    ("restaurant", "restaurant-test-050", "The late-cancellation fee is $50, more than you wanted, so I kept the "
                                          "booking. The Izakaya sharing menu for everyone comes to $360. You're number "
                                          "3 on the waitlist at Lotus Garden."),
    ("restaurant", "restaurant-test-018", "The Fiesta sharing menu costs $90 for the whole party, and it's on your "
                                          "booking now. Your June 26 booking is cancelled. There's no need to join the "
                                          "waitlist: a table is available at 20:30, so you can book it instead."),
    ("restaurant", "restaurant-test-009", "I'm sorry, the Maharaja feast can't be added now: pre-orders close 24 hours "
                                          "before the booking. Your booking ZFPJ9A is moved to Thursday, June 19 at "
                                          "19:00."),
    ("restaurant", "restaurant-test-002", "The Royal thali for everyone on your July 5 booking comes to $126 for the "
                                          "whole party; it's pre-ordered. Booking 5QVZGC is cancelled."),
    ("restaurant", "restaurant-test-002", "That's $126.00 for the party. The other booking is called off."),
    # retail
    ("retail", "retail-test-002", "Order #W9044593 is cancelled and your refund total is $1,054.98. The Desk Lamp and "
                                  "Hiking Boots are being returned, with $187.18 going back to your PayPal account."),
    ("retail", "retail-test-002", "Refunds: 1054.98 dollars for the cancelled order, 187.18 dollars for the return."),
    ("retail", "retail-test-003", "The shipping address of order #W2296037 is updated. Your other order is cancelled "
                                  "and you'll get $751.86 back."),
    ("retail", "retail-test-001", "I can't start a return for the Notebook yet: order #W7420060 has not been delivered. "
                                  "The keyboard exchange is placed; the price difference is $20.35, charged to your "
                                  "credit card."),
    ("retail", "retail-test-004", "The order total is $105.05, now on your credit card. The Electric Kettle can't be "
                                  "exchanged: that order already has a return, and only one return or exchange is "
                                  "allowed per order. For the Office Chair, $314.59 will be refunded to your credit "
                                  "card."),
    ("retail", "retail-test-055", "Order #W3939572 is now on your credit card; the order total is $327.58. The T-Shirt "
                                  "swap is done, and the price difference is $2.34 on your PayPal account. The "
                                  "Wristwatch in metal strap with the white dial costs $222.11."),
    # school
    ("school", "school-test-001", "You're withdrawn from PSY101. $630 of tuition is refunded, and your balance is now "
                                  "$2,002.50. For SOC101, nothing is kept back: $0 is not refunded, so I dropped it."),
    ("school", "school-test-013", "Your mailed transcript is ordered: the fee is $10, and your balance afterwards is "
                                  "$220. I couldn't register you for PSY101 because that section is full."),
    ("school", "school-test-013", "Transcript fee: $10. Balance afterwards: $220. PSY101 (CRN 54238): the section is "
                                  "full, so no seat."),
    ("school", "school-test-023", "The 2 emailed transcripts cost $10, which is now on your account. A payment plan "
                                  "needs a balance of at least $300, so I can't split yours. HIS102 is booked: the "
                                  "tuition is $630 and your balance afterwards is $640."),
    ("school", "school-test-019", "I can't register Felix for MATH151: he hasn't met the prerequisite yet. HLT110 is "
                                  "not possible either, because that section is full."),
    ("school", "school-test-003", "Kira is enrolled in BIO101 on Mondays and Wednesdays at 13:00; the tuition is $840. "
                                  "I've paid the whole balance with the debit card."),
    # telecom
    ("telecom", "telecom-test-002", "Your new iPhone 16e costs you $599, paid from your bank account. Your January "
                                    "bill's amount due is $65, and it's paid now."),
    ("telecom", "telecom-test-003", "You have 26.8 GB of data left on line 415-555-1264. Line 415-555-0403 is resumed."),
    ("telecom", "telecom-test-004", "Your line 305-555-5231 can't change plans while it is suspended; we'd need to "
                                    "resume the line first. Good news on 305-555-0500: the fault cleared after the "
                                    "reset."),
    ("telecom", "telecom-test-019", "I ran the fix on 305-555-2539 and the fault cleared, so your mobile data should "
                                    "work again. International Calling is added for $15 a month."),
    ("telecom", "telecom-test-029", "Your February bill is paid: the amount due was $250. Moving to Student 20 changes "
                                    "your monthly price by $5. The Fairphone 5 costs you $649, charged to your credit "
                                    "card."),
    ("telecom", "telecom-test-037", "Device Protection is added for $12 a month. The Nokia Flip costs $89, more than "
                                    "your $50, so I kept your current phone. I can credit at most $50 of the overage "
                                    "charge, which is less than you asked."),
    # telehealth
    ("telehealth", "telehealth-test-001", "Your video appointment with Dr. Emma Kaur on June 25 at 17:30 is booked. The "
                                          "copay of the visit is $30."),
    ("telehealth", "telehealth-test-004", "Your Amlodipine refill is requested; you have 0 refills left after it. The "
                                          "cancellation fee for Dr. Owens would be $40. The copay for Dr. Vance is $10."),
    ("telehealth", "telehealth-test-005", "The Omeprazole refill is on its way, and 4 refills are left afterwards. A "
                                          "visit with Dr. Paula Estrada would cost you a $35 copay."),
    ("telehealth", "telehealth-test-010", "Dr. Thornton's diagnosis from your March 30 visit was hypertension. I can't "
                                          "refill Hiro's Amlodipine: there are no refills left, so it needs a new "
                                          "prescription."),
    ("telehealth", "telehealth-test-014", "The diagnosis from your February 11 visit with Dr. Keller is high "
                                          "cholesterol."),
    ("telehealth", "telehealth-test-019", "Dr. Nolan diagnosed eczema at Rosa's January 6 visit. Your Sertraline refill "
                                          "is in, with 2 refills left."),
    ("telehealth", "telehealth-test-027", "Hiro's Tretinoin cream refill is done: 1 refill left. Dr. Thornton diagnosed "
                                          "acute bronchitis at your November 13 visit. The Bupropion refill is done "
                                          "too, and that leaves 0 refills."),
    ("telehealth", "telehealth-test-002", "Dr. Frank Cruz is out of network for your plan, so I can't book that visit. "
                                          "Your Omeprazole refill is requested; after it you have 0 refills left."),
    # travel
    ("travel", "travel-test-001", "The suite at Alfama Terrace Hotel is booked for September 17 to 20; you pay $924 by "
                                  "card. I can't add a night at Bolhao Rooms: changes have to be made at least 3 days "
                                  "before check-in."),
    ("travel", "travel-test-002", "The Prado guided visit for 4 is added; after your points, you pay $120."),
    ("travel", "travel-test-004", "Your compact car rental is cancelled and $205 comes back to your card. The economy "
                                  "car for January 16 to 17 is booked with Samir Haddad driving; the total with every "
                                  "fee is $32."),
    ("travel", "travel-test-008", "The stay at Gracia Courtyard is on a non-refundable saver rate, so I can't add a "
                                  "night. For the van, points can not be used for car rentals; I can only take your "
                                  "card."),
    ("travel", "travel-test-017", "The Prado Garden suite costs $924 by card, and it's booked. I can't add the night in "
                                  "Florence: we're too close to check-in. The SUV rental's total with every fee would "
                                  "be $128, over your limit, so I didn't book it."),
    ("travel", "travel-test-036", "The Sintra day trip is cancelled: $190 comes back to your card. The vintage tram "
                                  "for 2 people on September 16 is booked; you pay $78 by card. Your Alfama Terrace "
                                  "stay is cancelled too, and $530 comes back to your card."),
    ("travel", "travel-test-036", "1. Sintra refund: 190 dollars\n2. Tram tour: 78 dollars\n3. Hotel refund: 530 dollars"),
]


def _domain(pack):
    return _domains()[pack]


@functools.cache
def _domains():
    pm = load_all_plugins()
    return {name: pm.catalog("domains").get(name) for name in {pack for pack, *_ in CORRECT}}


#: the test tasks the answers were written for, as they were then (a rebuild of the splits changes what a task id
#: holds; the corpus keeps its own copy, read as the pack reads a task file)
CORPUS_TASKS = Path(__file__).parent.parent / "fixtures" / "telling_corpus_tasks.json"


@functools.cache
def _corpus_tasks():
    return {t["id"]: Task.model_validate(t) for t in json.loads(CORPUS_TASKS.read_text(encoding="utf-8"))}


def _task(pack, task_id):
    return _corpus_tasks()[task_id]


def _score(pack, task_id, text):
    """`task_id`: a corpus task's id, or a task of the pack's committed split itself."""
    domain, task = _domain(pack), _task(pack, task_id) if isinstance(task_id, str) else task_id
    messages = [Message(role="tool", name=a.name, content="ok") for a in task.gold.actions]
    messages.append(Message(role="assistant", content=text))
    return score(domain, task, replay(domain, task), messages, STOP)


def test_the_corpus_is_large_and_spans_the_ten_packs():
    assert len(CORRECT) >= 60
    assert len({pack for pack, *_ in CORRECT}) == 10


@pytest.mark.parametrize(("pack", "task_id", "text"), CORRECT, ids=[f"{t}-{i}" for i, (_, t, _x) in enumerate(CORRECT)])
def test_a_natural_correct_answer_scores_1(pack, task_id, text):
    reward, parts = _score(pack, task_id, text)
    assert reward == 1.0, parts


def _integers(upto=5000):
    return " ".join(str(i) for i in range(upto + 1))


# (pack, task, answer): each scores 0, though the calls were made and every gold value or reason is in the text
WRONG = [
    ("airline", "airline-test-004", "It is not $1,405 and the refund isn't 2380 dollars."),
    ("airline", "airline-test-004", "The upgrade is $1,405, or $1,421 with the other fare. The refund is $2,380 or "
                                    "$2,396."),
    ("airline", "airline-test-004", "Between $1,405 and $1,500; the refund is somewhere from 2380 to 2400."),
    ("airline", "airline-test-001", "The total is $718, $734 or $750, and the flight is on time."),
    ("airline", "airline-test-001", "Your flight is landed, on time, delayed or cancelled; the total is $734."),
    ("airline", "airline-test-018", "It is either flying or landed."),
    ("airline", "airline-test-018", "Your flight has not been flying today."),
    ("bank", "bank-test-005", f"Possible refunds: {_integers(1000)} and 0.84."),
    ("bank", "bank-test-003", "Your payment is $500 and the last one was $246.40; or maybe $262.40."),
    ("movie", "movie-test-003", "The exchange cost is not 8 dollars. Your refund is $48."),
    ("movie", "movie-test-003", "1. $8 2. $16 3. $24 4. $32 5. $40 6. $48"),
    ("retail", "retail-test-003", "You'll get $751.86 back, or $767.86 if the shipping is refunded too."),
    ("school", "school-test-013", "The fee is 10, 20 or 30 and the balance 220. The section is full."),
    ("telecom", "telecom-test-018", "The result was no fault cleared."),
    ("telehealth", "telehealth-test-014", "It could be high cholesterol, hypertension, eczema or low vitamin D."),
    ("telehealth", "telehealth-test-014", "The diagnosis was not high cholesterol."),
    ("travel", "travel-test-002", "You pay $120 or $136, depending on the points."),
]


@pytest.mark.parametrize(("pack", "task_id", "text"), WRONG, ids=[f"{t}-{i}" for i, (_, t, _x) in enumerate(WRONG)])
def test_a_list_a_hedge_or_a_negation_scores_0(pack, task_id, text):
    reward, parts = _score(pack, task_id, text)
    assert reward == 0.0, parts


@pytest.mark.parametrize("pack", sorted({pack for pack, *_ in CORRECT}))
def test_the_full_refusal_list_explains_no_reason(pack):
    domain = _domain(pack)
    task = next(t for t in domain.tasks("test") if t.gold.reasons)
    recital = "; ".join(p for ps in domain.refusal_reasons.values() for p in ps)
    assert _score(pack, task, recital)[1].reasons_found == []
    one_turn_each = [Message(role="assistant", content="; ".join(ps)) for ps in domain.refusal_reasons.values()]
    from tau_emotion.core.reward import reasons_explained

    assert reasons_explained(domain, task.gold.reasons, one_turn_each, gold=task.gold)[0] == []


def test_the_lister_turn_tells_nothing_and_the_list_alone_solves_no_read_only_task():
    for pack in sorted({pack for pack, *_ in CORRECT}):
        domain = _domain(pack)
        phrasings = "; ".join(p for ps in domain.refusal_reasons.values() for p in ps)
        for task in domain.tasks("test"):
            reward, parts = _score(pack, task, f"Numbers: {_integers()}. Reasons: {phrasings}.")
            assert parts.outputs_found == [] and parts.reasons_found == [], (task.id, parts)
            assert reward == (1.0 if not task.gold.outputs and not task.gold.reasons and parts.db_match
                              and parts.terminal_done is not False else 0.0)
