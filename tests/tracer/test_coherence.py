"""The coherence audit against its corpus: every defect a skeptical reading of the generated tasks quoted (issue 34) is
caught with the rule that names it, and feelings and anchors that do have a cause in their situation are not flagged."""

import pytest

from tau_emotion.tracer.coherence import check_task_feelings, check_text

NEUTRAL = {"events": ["I want to swap the notebook for another colour"], "valence": "neutral", "stakes": 1,
           "days_left": None, "pressing": False, "misfortune": False}


def situation(**changes):
    return {**NEUTRAL, **changes}


#: (text, kind, situation, the rule that must flag it) — each quoted in issue 34's reading of 100 generated tasks
DEFECTS = [
    # the held-out reading of the rebuilt airline and bank test splits (session 2026-12-02)
    ("My card was blocked; I'm begging you, I'm out of options. There's no rush at all.", "feeling",
     situation(events=["my card was blocked"], valence="negative", stakes=3, misfortune=True), "contradiction"),
    ("I'm panicked about the transfer. Time is not an issue for me.", "feeling",
     situation(events=["my transfer has not arrived"], valence="negative", stakes=3, misfortune=True), "contradiction"),
    ("You would like this settled within the next few days.", "anchor", situation(days_left=0), "urgency against situation"),
    ("You hope to have it sorted by the end of the week.", "anchor", situation(days_left=1), "urgency against situation"),
    ("You feel exasperated and your patience has finally snapped.", "anchor", situation(), "presupposition"),
    ("Past letdowns have left you bitter.", "anchor", situation(), "presupposition"),
    ("You are heartbroken after a recent loss.", "anchor", situation(), "missing cause"),
    ("You remind the agent how long you have been a customer.", "anchor", situation(), "presupposition"),
    ("I want to swap the notebook. I'm begging you, I'm desperate.", "feeling", situation(), "intensity against stakes"),
    ("I want to change my seat. I'll be argumentative if I have to, I won't accept that.", "feeling",
     situation(refused=False), "presupposition"),
    ("I lost my card. I'm proud of myself for getting ahead of this.", "feeling",
     situation(events=["I lost my card"], valence="negative", stakes=2), "contradiction"),
    ("I want to rent an SUV. Frankly, I find the whole business revolting and disgusting.", "feeling",
     situation(events=["I want to rent an SUV"]), "missing cause"),
    ("I am going on a long-awaited holiday next month. I'm dreading it, I have a sense of doom.", "feeling",
     situation(events=["I am going on a long-awaited holiday next month"], valence="positive", days_left=30,
               upcoming=True), "missing cause"),
    ("I will not be at the old address when the parcel arrives. I am recovering from surgery and stuck at home.",
     "feeling", situation(events=["I will not be at the old address when the parcel arrives"]), "contradiction"),
    ("I need to move my booking. I'm relaxed and at peace. It's urgent.", "feeling", situation(), "contradiction"),
    ("I need a refund. I'll wait however long it takes. Time is running out.", "feeling", situation(days_left=2,
                                                                                                  pressing=True),
     "contradiction"),
    ("I want to change my plan. I've heard promises like that before.", "feeling", situation(), "presupposition"),
    ("I want to cancel my order. I've had enough, this is exasperating.", "feeling", situation(), "presupposition"),
    ("I want to add a bag. It's close, but I won't rush you.", "feeling", situation(days_left=40),
     "urgency against situation"),
    ("I want to add a bag. Even so, I'm not in a hurry.", "feeling", situation(), "dangling reference"),
    ("It makes me cringe, I can't stand it.", "feeling", situation(events=[]), "dangling reference"),
    ("It makes me cringe, I can't stand it.", "feeling", situation(events=[]), "missing cause"),
    ("I no longer need to travel. I'm excited to get this done! Time is running out, so I need it done immediately.",
     "feeling", situation(events=["I no longer need to travel"]), "urgency against situation"),
    ("Stay in this state for the whole conversation: being blocked again has left you thwarted, and you keep "
     "mentioning how many times you have already tried.", "anchor", situation(), "presupposition"),
    ("You have a deadline within the next hour or two.", "anchor",
     situation(events=["I need to book appointments on 11 and 27 June"], days_left=20), "urgency against situation"),
    ("Stay in this state: you are sorrowful after a recent loss.", "anchor", situation(), "missing cause"),
    ("You expect the same shabby treatment as last time.", "anchor", situation(), "presupposition"),
    # the lead's reading of the rebuilt test splits (issue 34): anchors that still invented a history
    ("You are thwarted: the same problem keeps coming back no matter what you do.", "anchor", situation(),
     "presupposition"),
    ("You are stuck and fed up because every attempt to fix this has hit a wall, and you vent about being bounced "
     "between departments.", "anchor", situation(), "presupposition"),
    ("You feel full of pride; you earned this through hard work.", "anchor", situation(), "presupposition"),
    ("You feel triumphant because someone close to you did something great. You mention your achievement whenever "
     "it fits.", "anchor", situation(), "presupposition"),
    ("You feel fretful; this has been on your mind for days. You mention that you have been losing sleep over this.",
     "anchor", situation(), "presupposition"),
    ("You are glad the worst is over, since the scare is finally behind you.", "anchor", situation(),
     "presupposition"),
    # the lead's reading of the rebuilt test splits, second round: a history, a deadline within hours for a change
    # days away, pleasant feelings tied to a misfortune, a routine matter beside an extreme feeling
    ("You have tried several times already and you are stuck and fed up.", "anchor", situation(), "presupposition"),
    ("You have a deadline within the next hour or two and say so.", "anchor",
     situation(events=["I need to change my flight on May 20"], days_left=5, pressing=True), "urgency against situation"),
    ("You feel a clock ticking: something is about to close and you say so.", "anchor", situation(days_left=4),
     "urgency against situation"),
    ("I found a charge I paid twice on my account. I cannot find my card, and I'm really looking forward to it!",
     "feeling", situation(events=["I cannot find my card"], valence="negative", stakes=2, setback=True),
     "contradiction"),
    ("My phone was stolen, and I'm quite content, taking it as it comes.", "feeling",
     situation(events=["My phone was stolen"], valence="negative", stakes=2, misfortune=True), "contradiction"),
    ("I need to move some money around. I'm relieved, because I think the fee was unfair.", "feeling",
     situation(events=["I think the fee was unfair"], valence="negative", stakes=1), "contradiction"),
    ("It is just a routine matter. I'm at my wit's end because Hiro has run out of Bupropion.", "feeling",
     situation(events=["Hiro has run out of Bupropion"], valence="negative", stakes=2), "contradiction"),
    ("I have run out of Omeprazole. It is just a routine matter. I have run out of Omeprazole; I have a sinking "
     "feeling and I fear the worst.", "feeling",  # telehealth-test-004 (session 2026-12-04)
     situation(events=["I have run out of Omeprazole"], valence="negative", stakes=2), "contradiction"),
    ("It is nothing out of the ordinary. My flight was cancelled by the airline; please help me, I have nowhere "
     "else to turn.", "feeling", situation(events=["My flight was cancelled by the airline"], valence="negative",
                                           stakes=3), "contradiction"),
    ("Throughout the chat, the thought of the matter going wrong leaves you frantic. You beg for exceptions and "
     "special help.", "anchor", situation(events=["I need to pay City of Cambridge Water"]),
     "presupposition"),  # bank-test-021 (session 2026-12-04): nothing refused, nothing to except
    # the held-out reading of the ten test splits (session 2026-12-03, sample seed 20261203)
    ("I want to know where I stand before the month ends. It is just a routine matter. My phone service is not "
     "working properly, and frankly I find it disgusting.", "feeling",  # telecom-test-018
     situation(events=["my phone service is not working properly"], valence="negative", stakes=2, setback=True),
     "contradiction"),
    ("I need General Biology I for my program. I am struggling with US History I this term, and I'll question "
     "anything that makes no sense to me. Skip the pleasantries and get on with it; I'll take your word for it.",
     "feeling", situation(events=["I am struggling with US History I this term"], valence="negative", stakes=3),
     "contradiction"),  # school-test-057
    ("Time is not an issue for you. Today you are quarrelsome, eager to prove that you are right, so you quote the "
     "policy back and insist it says something else. You keep an icy, distant tone; you give the agent the benefit "
     "of the doubt.", "anchor", situation(events=["I think the fee was unfair"], valence="negative"),
     "contradiction"),  # bank-test-054
    ("Stay in this state for the whole conversation: you feel thwarted that this is harder to sort out than it "
     "should be. Time is not an issue for you, and you keep pointing out how much this is holding you up.", "anchor",
     situation(events=["the knit scarf I ordered is not what I hoped for"], valence="negative", days_left=92),
     "contradiction"),  # basketball-test-009
    ("As the customer, you are fed up: this matter is standing in your way. You make clear it is not urgent; you "
     "keep pointing out how much this is holding you up.", "anchor",
     situation(events=["my plans for that day fell through"], valence="negative", days_left=4),
     "contradiction"),  # restaurant-test-003
    ("My phone broke. My phone was stolen, and it all feels rather hopeless.", "feeling",
     situation(events=["my phone broke", "my phone was stolen"], valence="negative", stakes=3), "contradiction"),
    ("I am moving to a new home. I am recovering from surgery and stuck at home; please help me.", "feeling",
     situation(events=["I am moving to a new home"], valence="negative", stakes=2), "contradiction"),  # retail-035
    ("My plans changed and I need another time. It's really frustrating that my plans for that day fell through.",
     "feeling", situation(events=["my plans for that day fell through"], valence="negative"),
     "dangling reference"),  # restaurant-test-001
    ("I want the meal sorted before the day, and I'm a little nervous about getting it right.", "feeling",
     situation(events=["I want the meal sorted before the day"]), "dangling reference"),  # restaurant-test-011
    # anchors stitched slot by slot (held-out reading of the 6a3a89d splits): each clause about another label
    ("You are devastated and close to tears, and you need a moment before answering hard questions. You make no "
     "effort to be friendly. You insist on speed and cut short anything that slows you down.", "anchor",
     situation(events=["my mother died last month"], valence="negative", stakes=3, loss=True), "contradiction"),
    ("Stay in this state for the whole conversation: you are exasperated. You keep your tone plain and businesslike. "
     "You say this needs sorting now, and you raise your voice in writing, with exclamation marks.", "anchor",
     situation(events=["the Sunglasses did not work out"], valence="negative", stakes=2), "contradiction"),
    ("You are revolted by the whole matter, and you demand that something so repulsive be dealt with at once. You "
     "are in no hurry and say the matter can wait.", "anchor",
     situation(events=["I was charged a late fee I think is unfair"], valence="negative", stakes=2), "contradiction"),
    ("You are fed up, so you push to get past each obstacle instead of hearing explanations. You are quick to "
     "believe explanations.", "anchor",
     situation(events=["my plans for that day fell through"], valence="negative", stakes=2), "contradiction"),
]


@pytest.mark.parametrize("text,kind,where,rule", DEFECTS, ids=[f"{i}-{d[3]}" for i, d in enumerate(DEFECTS)])
def test_every_quoted_defect_is_caught_by_its_rule(text, kind, where, rule):
    rules = {f.rule for f in check_text(text, where, kind)}
    assert rule in rules, (text, rules)


#: (feeling, anchor, situation) that hold together: each feeling has its cause, tempo and history in the situation
CLEAN = [
    ("My phone screen cracked this morning and I need it for work. This is so frustrating. I need it sorted today.",
     "Stay in this state for the whole conversation: you are frustrated by the cracked screen and want it fixed quickly.",
     situation(events=["My phone screen cracked this morning"], valence="negative", stakes=2, days_left=0, pressing=True)),
    ("I'm flying to my sister's wedding on Friday and the flight was cancelled. I'm really anxious about missing it. "
     "Please hurry, time is running out.", "You are anxious and keep asking how soon it can be fixed.",
     situation(events=["the flight on Friday was cancelled"], valence="negative", stakes=3, days_left=2, pressing=True)),
    ("I no longer need the car for the weekend. It's a small hassle, but I'm a bit irritated. No rush, I'm not in a "
     "hurry.", "You are mildly irritated and patient.", situation(events=["I no longer need the car"], days_left=12)),
    ("My grandmother passed away last week, so I need to cancel the trip we planned together. I'm heartbroken. Please "
     "bear with me.", "Stay in this state: you are grieving your grandmother and speak softly.",
     situation(events=["my grandmother passed away"], valence="negative", stakes=3, misfortune=True, loss=True)),
    ("Last time I called, I was promised a refund that never came. I've heard promises like that before. I want it "
     "done properly this time.", "You are skeptical because of the earlier promise.",
     situation(events=["I was promised a refund that never came"], valence="negative", stakes=2, history=True)),
    ("I've been told I can't cancel, and I think that's unfair. I won't accept that without a reason.",
     "You are ready to argue the point.",
     situation(events=["I was told I can't cancel"], valence="negative", stakes=2, refused=True)),
    ("I'm off to Lisbon next month for a long-awaited holiday. I'm excited, I can't wait to go! No rush at all.",
     "You are cheerful and in no hurry.",
     situation(events=["I'm off to Lisbon next month"], valence="positive", days_left=30, upcoming=True)),
    ("My card was stolen yesterday and someone used it. I'm scared they will take more. I need it blocked right now.",
     "You are frightened and want the card stopped at once.",
     situation(events=["my card was stolen"], valence="negative", stakes=3, pressing=True, misfortune=True)),
    ("I want to add a dessert to my booking on Saturday. I'm happy with the service so far. Take your time.",
     "You are content and polite.", situation(events=["I want to add a dessert"], days_left=3)),
    ("The hotel charged me twice for the same night, which is appalling. I'd like the extra charge refunded.",
     "You are disgusted by the double charge.",
     situation(events=["the hotel charged me twice"], valence="negative", stakes=2)),
    ("My son's school trip is on Monday and the payment is overdue. I'm worried, and it's urgent.",
     "You are worried about the trip on Monday.",
     situation(events=["the payment is overdue"], valence="negative", stakes=2, days_left=2, pressing=True)),
    ("I need to move my appointment with Dr. Upton to next week. Thank you for your help.", "You are polite.",
     situation(events=["I need to move my appointment"])),
    ("My flight on Friday was cancelled by the airline. I'm furious about it.", "You are furious about the cancellation.",
     situation(events=["My flight on Friday was cancelled"], valence="negative", stakes=3, days_left=3, pressing=True)),
    ("My flight leaves tomorrow morning. Even so, I'm not in a hurry, I know you will sort it.",
     "You trust the agent and stay calm.", situation(events=["My flight leaves tomorrow"], days_left=1)),
    ("I returned the jacket two weeks ago and the refund still hasn't arrived. I'm annoyed.",
     "You are annoyed about the late refund.",
     situation(events=["the refund still hasn't arrived"], valence="negative", stakes=2, history=True)),
    ("My plans changed and I need another time; I'm relieved I can take care of it now.", "You are relieved and polite.",
     situation(events=["My plans changed"], stakes=1)),
    ("My plans for Friday, June 20 fell through, and that day is now free. It's frustrating; I want it sorted.",
     "You are frustrated and want it sorted.", situation(events=["my plans for Friday, June 20 fell through"],
                                                          valence="negative", stakes=2)),
    ("My flight leaves this evening and I missed the connection. I need it sorted within the next hour or two.",
     "You have a deadline within the next hour or two and say so.",
     situation(events=["I missed the connection"], valence="negative", stakes=2, days_left=0, pressing=True)),
]


@pytest.mark.parametrize("feeling,anchor,where", CLEAN, ids=[str(i) for i in range(len(CLEAN))])
def test_a_feeling_with_its_cause_is_not_flagged(feeling, anchor, where):
    assert check_task_feelings(feeling, anchor, where) == []


def test_no_anchor_of_the_bank_contradicts_itself():
    """The phrase banks' `not_with` tags keep every generated anchor free of the pairs the audit holds apart."""
    from tau_emotion.emotion_pack.anchors import anchor_rows
    where = situation(events=["my plans changed"], valence="positive", stakes=3, days_left=1, pressing=True)
    clashes = [(r["condition"], f.quote) for r in anchor_rows()
               for f in check_text(r["anchor"], where, "anchor") if f.rule == "contradiction"]
    assert clashes == []


def test_findings_quote_the_words_that_show_the_defect():
    [finding] = check_text("I want to swap the notebook. I'm begging you.", situation())
    assert finding.rule == "intensity against stakes" and "begging" in finding.quote and "begging" in str(finding)
