"""Reverse refinement and feelings: templates by default, a model through litellm as an option."""

import json
import random
import re

import pytest

from tau_emotion.tracer.build import make_task
from tau_emotion.tracer.feelings import (
    EmotionLabeler,
    EmotionUnavailable,
    LLMFeelings,
    TemplateFeelings,
    agrees,
    cue_bank,
    feelings_misfit,
    situation,
)
from tau_emotion.tracer.graph import build_graph
from tau_emotion.tracer.grounding import DeadEnd, Grounder
from tau_emotion.tracer.hints import load_hints
from tau_emotion.tracer.refine import FIRST, SECOND, LLMRefiner, TemplateRefiner, say
from tau_emotion.tracer.sampling import profile_for
from tau_emotion.tracer.validate import Validator
from tests.tracer.test_build import EMOTIONS


def _grounded(airline, want=lambda c: True, start=0):
    grounder = Grounder(airline, build_graph(airline), load_hints(airline), profile_for("test"))
    for i in range(start, start + 500):
        try:
            cand = grounder.ground(random.Random(i), i, "test")
        except DeadEnd:
            continue
        if want(cand):
            return cand
    raise AssertionError("no candidate grounded")


@pytest.fixture(scope="module")
def candidate(airline):
    return _grounded(airline, lambda c: len(c.drafts) >= 2)


def test_phrases_render_in_both_persons():
    text = "{{I}} {{am}} sure {{my}} flight is fine, {{agent}} said so to {{me}}"
    assert say(text, FIRST) == "I am sure my flight is fine, you said so to me"
    assert say(text, SECOND) == "you are sure your flight is fine, the agent said so to you"
    assert say("{% if true %}{{my}} bag{% endif %}", SECOND) == "your bag"


def test_template_refiner_writes_one_line_per_intent_and_varies(airline, candidate):
    refiner = TemplateRefiner(airline)
    refined = refiner.refine(candidate, random.Random(1))
    handovers = sum(1 for d in candidate.drafts if d.refused and d.on_refusal == "transfer")
    assert len(refined.intents) == len(candidate.drafts) + handovers
    assert refined.instruction.startswith(f"You are {candidate.persona.name} (user id ")
    said = " ".join(refined.intents).lower()
    assert re.search(r"\b(my|me|i)\b", said) and not re.search(r"\byour\b", said)
    assert re.search(r"\byour?\b", refined.instruction.lower()) and not re.search(r"\bmy\b", refined.instruction)
    assert refined.known["user_id"] == candidate.persona.facts["user_id"]
    others = {refiner.refine(candidate, random.Random(s)).intents[0] for s in range(12)}
    assert len(others) >= 3, "the same intent should come out in several phrasings"
    cand = candidate
    cand.task = make_task(cand, refined, "template", 0)
    Validator(airline).check(cand)


def test_a_pack_words_the_instruction_facts(airline, candidate):
    """`fact_phrase` in the hints: a pack's own wording, the generic one on None, nothing said on ''; a fact the
    request's own words already say is not said again either way."""
    from tau_emotion.tracer.refine import already_said

    hints = load_hints(airline)

    def refined(fact_phrase):
        return TemplateRefiner(airline, hints.model_copy(update={"fact_phrase": fact_phrase})).refine(
            candidate, random.Random(1))

    generic = refined(None)  # a pack without fact_phrase: the Tracer's generic wording
    keys = [k for k in generic.known if k not in candidate.persona.facts and k != "preferences"]
    assert keys
    worded = refined(lambda key, value: f"<{key}>")
    assert worded.known == generic.known
    body = re.sub(r"<\w+>", "", worded.instruction)
    for k in keys:  # worded by the pack, or already said in the request's own words
        assert f"<{k}>" in worded.instruction or already_said(k, generic.known[k], f"<{k}>", body), (k, worded)
    assert refined(lambda key, value: None).instruction == generic.instruction
    unsaid = refined(lambda key, value: "")
    assert "<" not in unsaid.instruction and " , " not in unsaid.instruction and ". ." not in unsaid.instruction
    assert unsaid.known == generic.known


def test_one_voice_each_fact_once_and_no_form_block(airline):
    """Issue 21: no restatement block, no 'For more than one of these requests', no sentence said twice, a fact the
    request already says is not said again; the user's lines keep the user as the subject."""
    from tau_emotion.domain_packs.airline.tracer_hints import TODAY
    from tau_emotion.tracer.refine import _DETERMINERS, already_said, surfaces

    grounder = Grounder(airline, build_graph(airline), load_hints(airline), profile_for("test"))
    seen = 0
    for i in range(80):
        try:
            cand = grounder.ground(random.Random(i), i, "test")
        except DeadEnd:
            continue
        refined = TemplateRefiner(airline).refine(cand, random.Random(i))
        text = refined.instruction
        assert "If the agent needs to know" not in text and "more than one of these" not in text, text
        sentences = re.split(r"(?<=[.?!])\s+(?=[A-Z])", text)
        assert len(sentences) == len(set(sentences)), text
        assert not re.search(r"\b20\d\d-\d\d-\d\d\b", text.split(").", 1)[-1]), text
        for line in refined.intents:
            assert not re.match(r"(Could you please|Please) (see|book|cancel|change|know)\b", line), line
        for key in (k for k in refined.known if k not in cand.persona.facts and k != "preferences"):
            value = refined.known[key]
            # every fact the user knows is said somewhere in the instruction (in the request or on its own)
            # (ids, numbers and dates: free wording such as 'the whole gift card, the rest on ...' is the pack's)
            if not isinstance(value, (dict, list)) and re.fullmatch(r"#?[A-Z0-9][\w-]{2,}", str(value)) \
                    and any(c.isdigit() for c in str(value)):
                # a flight of today is said by its request's "today" (the airline's `fact_phrase` leaves its date out)
                today = str(value) == TODAY and " today" in text
                assert any(_DETERMINERS.sub("", f.lower()) in text.lower() for f in surfaces(value)) \
                    or already_said(key, value, "", text) or today \
                    or key.endswith("reason"), (key, value, text)
        seen += 1
    assert seen >= 20


def test_a_fact_whose_values_differ_by_request_is_said_in_each_request(airline):
    """Two requests with two reservations (or cards): each request's facts name its own, never a merged
    "your reservation numbers are A and B" that does not say which is whose."""
    from tau_emotion.tracer.grounding import plural_key

    def merged(c):
        return any(isinstance(c.known.get(plural_key(k)), list) and plural_key(k) != k
                   for d in c.drafts for k in d.facts)

    cand = _grounded(airline, lambda c: len(c.drafts) >= 2 and merged(c))
    hints = load_hints(airline).model_copy(update={"fact_phrase": lambda key, value: f"<{key}={value}>"})
    instruction = TemplateRefiner(airline, hints).refine(cand, random.Random(1)).instruction
    checked = 0
    for draft in cand.drafts:
        for key, value in draft.facts.items():
            plural = plural_key(key)
            if plural != key and isinstance(cand.known.get(plural), list) and key not in cand.persona.facts:
                # its own value: said by its own request's words, or in its own fact phrase
                assert f"<{key}={value}>" in instruction or str(value) in re.sub(r"<[^>]*>", "", instruction), \
                    (key, value, instruction)
                assert f"<{plural}=" not in instruction, instruction
                checked += 1
    assert checked >= 2


def test_llm_refiner_is_checked_against_the_grounded_task(airline, candidate, openai_server):
    template = TemplateRefiner(airline).refine(candidate, random.Random(2))
    rewrite = {"instruction": "You are a traveller with a few requests.", "known": template.known,
               "intents": [f"Rewritten line {chr(65 + i)}." for i in range(len(template.intents))]}
    dropped = dict(rewrite, known={"user_id": template.known["user_id"]})
    invented_number = dict(rewrite, instruction="You are a traveller; you will pay at most $437.")
    invented_fact = dict(rewrite, known={**template.known, "loyalty_id": "ZX9_1234"})
    openai_server.script("refiner", {"content": "Here you go:\n" + json.dumps(rewrite)},
                         {"content": json.dumps(dropped)}, {"content": json.dumps(invented_number)},
                         {"content": json.dumps(invented_fact)}, {"content": "no json at all"})
    refiner = LLMRefiner(airline, _client("openai/refiner", openai_server.base_url))
    refined = refiner.refine(candidate, random.Random(2))
    assert refined.instruction == rewrite["instruction"] and refined.intents == rewrite["intents"]
    assert refined.source == "llm"
    prompt = openai_server.requests[0]["messages"][0]["content"]
    assert template.instruction in prompt and candidate.persona.facts["user_id"] in prompt
    for why in ("dropped the known fact", "'437'", "adds the fact", "no usable answer"):
        fallback = refiner.refine(candidate, random.Random(2))
        assert fallback.instruction == template.instruction and fallback.intents == template.intents
        assert fallback.source.startswith("template (llm rewrite refused") and why in fallback.source, why


def test_feelings_follow_the_situation(airline):
    """The feelings text states the cause the appraisal found, in the customer's words, beside the other events."""
    from tau_emotion.tracer.appraisal import cause

    refusal = _grounded(airline, lambda c: any(d.mood.valence == "negative" and d.mood.stakes >= 2 for d in c.drafts))
    facts = situation(refusal)
    assert facts["valence"] == "negative" and facts["stakes"] >= 2
    condition = {"family": "fear", "emotion": "anxiety", "politeness": "warm", "urgency": "high", "trust": "cautious"}
    found = cause(condition, facts)
    assert found is not None and found["valence"] == "negative"
    texts = {TemplateFeelings().describe(refusal, random.Random(s), condition) for s in range(8)}
    assert len(texts) > 3 and all(found["text"][1:20].lower() in t.lower() for t in texts)
    # nobody is excited that their flight was cancelled: excitement does not fit a misfortune
    if facts["misfortune"]:
        joy = {**condition, "family": "enjoyment", "emotion": "excitement"}
        assert feelings_misfit(joy, facts) is not None
        with pytest.raises(EmotionUnavailable, match="excitement"):
            TemplateFeelings().describe(refusal, random.Random(0), joy)
    bank = cue_bank()["emotion"]
    assert {e for emotions in EMOTIONS.values() for e in emotions} == set(bank)


#: words that name a situation or presume a fault or a sum; a line with one would not fit every task whose cause it states
SITUATION_WORDS = re.compile(r"\b(trip|travel|flight|fly|holiday|order|parcel|deliver\w*|item|phone|line|plan|bill|"
                             r"refund|appointment|doctor|visit|prescription|booking|reservation|bags?|fix\w*|broken|"
                             r"figures?|price|fee)\b", re.IGNORECASE)
#: what a line may not presume: an earlier contact, a promise, repeated tries, loyalty, something already refused
PRESUMED = re.compile(r"\b(again|(been|heard|that|it) before|last time|promis\w*|loyal\w*|as usual|had enough|"
                      r"last straw|every turn|round in circles|you said|was refused|turned me down)\b", re.IGNORECASE)


def test_feeling_lines_name_no_situation_and_presume_nothing():
    bank = cue_bank()
    lines = [c if isinstance(c, str) else c["text"] for section in ("emotion", "if_refused", "urgency", "voice")
             for cs in bank[section].values() for c in cs]
    assert not [c for c in lines if SITUATION_WORDS.search(c)]
    assert not [c for c in lines if PRESUMED.search(c)]
    # every emotion line states its cause; an anger or disgust line at a refusal is conditional
    assert all("{cause}" in c or "{Cause}" in c for s in ("emotion", "if_refused") for cs in bank[s].values()
               for c in (x if isinstance(x, str) else x["text"] for x in cs))
    assert all(re.search(r"\b(if|would|I.d|told no|being refused|refusing)\b", c, re.I)
               for e, cs in bank["if_refused"].items() if e != "argumentativeness" for c in cs)


def test_appraisal_gives_each_emotion_its_cause_at_its_intensity():
    from tau_emotion.tracer.appraisal import appraisal_data, cause, misfit

    def facts(*causes, **kw):
        base = {"events": [c[0] for c in causes], "occasion": None, "valence": "neutral", "stakes": 1,
                "days_left": None, "pressing": False, "setback": False, "misfortune": False, "upcoming": False,
                "refusals": [], "insisted": None, "accepts_refusal": False,
                "causes": [{"text": t, "valence": v, "stakes": k, "source": "event"} for t, v, k in causes]}
        if causes:
            base["stakes"] = max(c[2] for c in causes)
        return {**base, **kw}

    def fits(emotion, f, urgency="moderate"):
        family = {e: fam for fam, es in EMOTIONS.items() for e in es}[emotion]
        return misfit({"family": family, "emotion": emotion, "urgency": urgency}, f) is None

    swap = facts(("I want to swap the notebook for another colour", "neutral", 1))
    broke = facts(("my phone broke", "negative", 2), setback=True)
    stolen = facts(("my card was stolen and someone used it", "negative", 3), misfortune=True, pressing=True)
    wedding = facts(("I am going to my sister's wedding", "positive", 2), days_left=20, upcoming=True)
    # no anger, fear, sadness or disgust over swapping a notebook; calm, pride and relief fit it
    assert not [e for e in ("annoyance", "frustration", "argumentativeness", "anxiety", "desperation", "sorrow",
                            "repugnance", "disappointment") if fits(e, swap)]
    assert fits("peace", swap) and fits("relief", swap) and not fits("excitement", swap)
    # a broken phone is an obstacle and a threat, not yet a misfortune to beg over
    assert fits("frustration", broke) and fits("anxiety", broke) and not fits("desperation", broke)
    assert fits("desperation", stolen) and fits("dread", stolen) and not fits("peace", stolen)
    assert not fits("pride", stolen) and not fits("excitement", stolen)
    assert fits("excitement", wedding) and not fits("frustration", wedding)
    # a refusal the user accepts gives no argument; one they insist on does, said as "if I'm told no"
    refused = facts(("I want to cancel my booking", "neutral", 1), refusals=["I want to cancel my booking"],
                    insisted="I want to cancel my booking")
    assert fits("argumentativeness", refused) and not fits("repugnance", refused)
    # pride rests on something that matters, even beside a weightier neutral event (retail-test-008: "I am thinking
    # of buying something; I'm proud to be on top of things")
    browsing = ("I am thinking of buying something", "positive", 0)
    assert not fits("pride", facts(browsing, stakes=1)) and fits("pride", facts(("I found a version I like better",
                                                                                "positive", 1)))
    # repugnance at a refusal needs a request that matters (basketball-test-054: a refused downgrade, stakes 1)
    assert fits("repugnance", {**refused, "stakes": 2}) and fits("distaste", refused)
    assert cause({"emotion": "argumentativeness"}, refused)["source"] == "refusal"
    assert not fits("argumentativeness", {**refused, "accepts_refusal": True, "insisted": None})
    # urgency: no "no rush" beside a date tomorrow or a misfortune; a high urgency fits anywhere
    assert not fits("relief", facts(("I want to book a table", "positive", 1), days_left=1, pressing=True), "low")
    assert not fits("dread", stolen, "low") and fits("peace", swap, "high")
    # a stalled build accepts a cause one step weaker, never no cause
    assert not fits("desperation", broke) and fits("desperation", {**broke, "relax": 1})
    assert not fits("annoyance", {**swap, "relax": 1})
    # stalled three times over, a pleasant feeling still never rests on a misfortune (no excitement over a lost
    # card), nor a distressing one on good news
    lost = facts(("I cannot find my card", "negative", 2), valence="negative", setback=True)
    assert not [e for e in ("excitement", "peace", "relief", "pride") if fits(e, {**lost, "relax": 3})]
    assert fits("disappointment", {**lost, "relax": 3})
    assert not fits("frustration", {**wedding, "relax": 3}) and fits("excitement", {**wedding, "relax": 3})
    assert len(appraisal_data()["emotions"]) == 22


def test_appraisal_refuses_the_held_out_readings_misfits():
    """Each feeling the held-out reading of the ten test splits (session 2026-12-03) found without its kind of cause
    is refused by the appraisal itself, stalled or not; the same situations still carry a fitting emotion."""
    from tau_emotion.tracer.appraisal import cause
    from tau_emotion.tracer.build import MAX_RELAX

    def facts(events, occasion=None, relax=0, **kw):
        causes = [{"text": t, "valence": v, "stakes": k, "source": "event"} for t, v, k in events]
        if occasion:
            causes.append({"text": occasion[0], "valence": occasion[2], "stakes": occasion[1], "source": "occasion"})
        stakes = max(c["stakes"] for c in causes) + (occasion[1] // 2 if occasion else 0)
        return {"causes": causes, "stakes": min(stakes, 3), "relax": relax, "refusals": [], "insisted": None,
                "misfortune": bool(occasion and occasion[2] == "negative"), "pressing": False, **kw}

    def fits(emotion, f):
        return cause({"emotion": emotion}, f) is not None

    fell = facts([("my plans for that day fell through", "negative", 2)], days_left=2, pressing=True)
    assert not fits("anxiety", fell) and not fits("dislike", fell)  # restaurant-test-012, -018
    assert fits("frustration", fell) and fits("disappointment", fell)
    running_out = facts([("Hiro will run out of Bupropion soon", "negative", 2)], days_left=4)
    assert fits("dislike", running_out) and fits("anxiety", running_out)  # unwelcome and still ahead
    unsure = facts([("I am not sure my flight today is going as planned", "negative", 2)], pressing=True)
    assert not fits("disappointment", unsure) and fits("anxiety", unsure)  # airline-test-012
    tablet = facts([("the Tablet is not quite what I wanted", "neutral", 1), ("I want to use up my gift card",
                                                                              "neutral", 1)])
    assert cause({"emotion": "pride"}, tablet)["text"] == "I want to use up my gift card"  # retail-test-057
    assert not fits("pride", facts([("the Tablet is not quite what I wanted", "neutral", 1)]))
    surgery = facts([("I am moving to a new home", "positive", 1)], ("I am recovering from surgery", 3, "negative"))
    jobless = facts([("I need to pay Harbor Property Mgmt", "neutral", 1)],
                    ("I lost my job last month and every dollar counts", 3, "negative"))
    tight = facts([("I want better seats for the game", "positive", 1)], ("money is tight for me this month", 2,
                                                                          "negative"))
    for stalled in range(MAX_RELAX + 1):  # retail-test-035, bank-test-035, basketball-test-020: no occasion of its own
        assert not fits("desperation", {**surgery, "relax": stalled}) and not fits("desperation", {**jobless,
                                                                                                   "relax": stalled})
        assert not fits("dread", {**tight, "relax": stalled})
        assert not fits("sorrow", {**tight, "relax": stalled})  # retail-test-054: money being tight is no loss
        assert not fits("repugnance", {**tight, "relax": stalled})  # school-test-054
    assert fits("anxiety", tight)
    broken = facts([("my phone service is not working properly", "negative", 2)], setback=True)
    assert not fits("repugnance", broken) and fits("frustration", broken)  # telecom-test-018
    assert fits("repugnance", facts([("I think I was charged unfairly on my June bill", "negative", 2)]))
    hospital = facts([("I want to see the Herons play", "positive", 1)],
                     ("my father is in hospital and this may be the last game I see with him", 3, "negative"))
    assert not fits("exasperation", {**hospital, "relax": MAX_RELAX})  # basketball-test-047: no anger at it
    assert fits("sorrow", hospital) and fits("desperation", hospital)
    farewell = facts([("I want better seats for the game", "positive", 1)],
                     ("my best friend is moving away next month", 1, "negative"))
    assert not fits("hopelessness", {**farewell, "relax": MAX_RELAX})  # basketball-test-027: out of scale
    assert fits("disappointment", farewell)


def test_feeling_lines_fit_their_situation():
    from tau_emotion.tracer.feelings import cue_options

    def facts(**kw):
        base = {"events": ["my phone broke"], "occasion": None, "valence": "negative", "stakes": 2, "days_left": None,
                "pressing": False, "setback": True, "misfortune": False, "upcoming": False, "refusals": [],
                "insisted": None, "accepts_refusal": False,
                "causes": [{"text": "my phone broke", "valence": "negative", "stakes": 2, "source": "event"}]}
        return {**base, **kw}

    anxious = {"family": "fear", "emotion": "anxiety", "politeness": "neutral", "urgency": "high", "trust": "cautious"}
    plain = cue_options({**anxious}, facts(setback=False))
    assert plain["emotion"] and all("my phone broke" in c.lower() for c in plain["emotion"])
    assert not [c for c in plain["urgency"] if re.search(r"urgent|running out", c)]
    near = cue_options(anxious, facts(days_left=2, pressing=True))
    assert [c for c in near["urgency"] if "in 2 days" in c]
    low = cue_options({**anxious, "urgency": "low"}, facts(setback=False, days_left=20))
    assert low["urgency"] and [c for c in low["urgency"] if "in 20 days" in c]
    cold = cue_options({**anxious, "politeness": "cold", "urgency": "low"}, facts(setback=False))
    assert cold["voice"] and not [c for c in cold["voice"] if re.search(r"get on with it|waste my time|please", c, re.I)]


def test_template_feelings_are_read_back_as_their_emotion(airline, candidate, space):
    """Nearly every emotion whose cause the candidate's situation gives survives the real classifier with the build's
    retries (the cause, in the customer's words, can pull a reading elsewhere: that condition waits for another)."""
    from tau_emotion.tracer.build import FEELINGS_TRIES

    labeler = EmotionLabeler.from_space(space)
    said, unread = 0, []
    for family, emotions in EMOTIONS.items():
        for emotion in emotions:
            condition = {"family": family, "emotion": emotion, "politeness": "cold", "urgency": "moderate",
                         "trust": "skeptical"}
            if feelings_misfit(condition, situation(candidate)) is not None:
                continue  # the build gives the condition another task
            rng = random.Random(emotion)
            texts = [TemplateFeelings().describe(candidate, rng, condition) for _ in range(FEELINGS_TRIES)]
            if not any(agrees(condition, labeler.read(t)) for t in texts):
                unread.append(emotion)  # the build tries the condition on another candidate
            said += 1
    assert said >= 5 and len(unread) <= said // 4, unread


def _client(model, base):
    from tau_emotion.core.manager import get_plugin_manager
    from tau_emotion.core.models import ModelSettings, RunConfig

    config = RunConfig(options={"model_calls": {"retry_wait": 0.01}})
    return get_plugin_manager().model_client(ModelSettings.for_role("tracer", model, base), config)


def test_llm_feelings_and_labeler(airline, candidate, openai_server, space):
    openai_server.script("feeler", {"content": "I'm worried sick and I need this fixed today."})
    feelings = LLMFeelings(_client("openai/feeler", openai_server.base_url), space)
    condition = {"family": "fear", "emotion": "anxiety", "politeness": "neutral", "urgency": "high", "trust": "skeptical"}
    text = feelings.describe(candidate, random.Random(0), condition)
    assert text == "I'm worried sick and I need this fixed today."
    prompt = openai_server.requests[0]["messages"][0]["content"]
    assert "Situation:" in prompt and "anxiety" in prompt and "worried" in prompt
    seen = []

    def classify(t):
        seen.append(t)
        return space.condition(family="fear", emotion="anxiety", politeness="neutral", urgency="high",
                               trust="skeptical")

    labeler = EmotionLabeler(classify, lambda c, rng: f"{c['emotion']} anchor {rng.randrange(3)}")
    reading = labeler.read(text)
    assert seen == [text] and agrees(condition, reading) and reading["trust"] == "skeptical"
    block = labeler.block(condition, random.Random(0))
    assert block["family"] == "fear" and block["urgency"] == "high" and block["anchor"].startswith("anxiety anchor")


def test_known_holds_each_fact_once_and_the_plan_ties_its_parts_to_the_arguments(airline):
    """Issue 34 item 7 (replacing issue 21's parts): a fact given whole (a companion, a new passenger) is known once,
    not also field by field (`new_passenger_first_name`), and a value a write takes under another name is not known
    again under that name (`total_baggages` beside `checked_bags`); the plan's facts name the arguments they answer,
    so the scripted user still answers "the first name?" or "how many bags?" from them."""
    from tau_emotion.tracer.plan import build_plan

    def whole(c):
        return any(isinstance(c.known.get(k), dict) for d in c.drafts for k in d.facts)

    cand = _grounded(airline, whole)
    refined = TemplateRefiner(airline).refine(cand, random.Random(3))
    dicts = [k for d in cand.drafts for k in d.facts if isinstance(cand.known.get(k), dict)]
    assert dicts
    for key in dicts:
        assert not [k for k in refined.known if k.startswith(f"{key}_")], refined.known
    cand.task = make_task(cand, refined, "template", 0)
    Validator(airline).check(cand)
    plan = build_plan(airline, cand.task)
    facts = {f.key: f for r in plan.requests for f in r.facts}
    for key in dicts:
        fields = {p.rpartition(".")[2] for p in facts[key].answers}
        assert fields & set(cand.known[key]), (key, facts[key].answers)

    booking = _grounded(airline, lambda c: any(d.goal == "book_reservation" and not d.refused for d in c.drafts))
    known = TemplateRefiner(airline).refine(booking, random.Random(3)).known
    book = next(s for s in booking.steps if s.name == "book_reservation")
    bags = book.arguments["total_baggages"]
    if any(str(v) == str(bags) for v in booking.known.values() if not isinstance(v, (dict, list))):
        assert "total_baggages" not in known
    assert not any(k.endswith("_id") and k not in booking.known for k in known)  # no internal id becomes a fact


def test_a_part_two_requests_disagree_on_is_known_under_its_plural_by_both():
    from types import SimpleNamespace

    from tau_emotion.tracer.grounding import Step
    from tau_emotion.tracer.refine import answer_parts

    drafts = [SimpleNamespace(), SimpleNamespace()]
    steps = [Step("update_bags", {"total_baggages": 3}, "{}", 0, "goal"),
             Step("update_bags", {"total_baggages": 1}, "{}", 1, "goal"),
             Step("update_address", {"address": {"city": "Tucson", "zip": "85701"}}, "{}", 1, "goal")]
    cand = SimpleNamespace(drafts=drafts, steps=steps)
    known = {"bags_a": 3, "bags_b": 1, "new_address": {"city": "Tucson", "zip": "85701"}}
    # what the requests' own facts hold is known once: no 'total_baggages' beside 'bags_a', no 'new_address_city'
    # or 'city' beside 'new_address' (the plan's answers tie those facts to the arguments; issue 34 item 7)
    parts, owners = answer_parts(cand, known, [["bags_a"], ["bags_b", "new_address"]],
                                 texts=["3 bags in all", "1 bag, and my new address is in Tucson 85701"])
    assert parts == {} and owners == [[], []]
    steps[:] = [Step("search", {"date": "2024-05-19"}, "[]", 0, "read"), Step("search", {"date": "2024-05-22"}, "[]", 1, "read")]
    parts, owners = answer_parts(cand, {}, [[], []], texts=["move my trip to May 19", "move my other trip to May 22"])
    assert parts == {"dates": ["2024-05-19", "2024-05-22"]} and owners == [["dates"], ["dates"]]  # 'date' -> 'dates'
    parts, _ = answer_parts(cand, {"travel_date": "2024-05-19"}, [["travel_date"], []],
                            texts=["move my trip to May 19", "move my other trip to May 22"])
    assert parts == {"date": "2024-05-22"}  # May 19 is the first request's 'travel_date' already
    steps.append(Step("search", {"date": "2024-05-20"}, "[]", 0, "read"))
    parts, _ = answer_parts(cand, {}, [[], []], texts=["move my trip from May 20 to May 19", "move it to May 22"])
    assert parts == {}  # one request says two dates for it: it could not say which one is asked


def test_agreement_takes_all_five_labels():
    condition = {"family": "fear", "emotion": "anxiety", "politeness": "warm", "urgency": "high", "trust": "cautious"}
    assert agrees(condition, dict(condition))
    for label, other in (("politeness", "cold"), ("urgency", "low"), ("trust", "skeptical"), ("emotion", "panic")):
        assert not agrees(condition, {**condition, label: other}), label


def test_a_date_the_request_says_is_known_under_its_argument_name():
    from types import SimpleNamespace

    from tau_emotion.tracer.grounding import Step
    from tau_emotion.tracer.refine import answer_parts

    steps = [Step("search", {"origin": "JFK", "destination": "PDX", "date": "2024-05-19"}, "[]", 0, "read"),
             Step("status", {"flight_number": "SKY1", "date": "2024-05-02"}, "{}", 0, "read")]
    cand = SimpleNamespace(drafts=[SimpleNamespace()], steps=steps)
    parts, owners = answer_parts(cand, {}, [[]], texts=["move your New York JFK to Portland trip to May 19"])
    assert parts == {"date": "2024-05-19"} and owners == [["date"]]  # not May 2 (unsaid), no airport codes


def test_a_question_the_request_already_asks_is_not_asked_again():
    from tau_emotion.tracer.refine import ask_in_request

    assert ask_in_request("the copay", "know my copay for seeing Dr. Hannah Park")
    assert ask_in_request("the diagnosis", "learn what Dr. Kevin Adler diagnosed at my December 9 visit")
    assert not ask_in_request("the price difference", "exchange the Electric Kettle for the steel one")
    assert not ask_in_request("how many GB of data are left", "check the data I have left on my line")


def test_an_amount_said_with_its_dollar_sign_is_not_said_again():
    from tau_emotion.tracer.refine import already_said

    assert already_said("amount", 75, "the amount is $75", "send $75 to Harbor Property Mgmt")
    assert already_said("amount", "1250.5", "the amount is $1,250.50", "pay $1,250.50 toward the loan")
    assert not already_said("amount", 75, "the amount is $75", "send $750 to Harbor Property Mgmt")
    assert not already_said("amount", 75, "the amount is $75", "send $75.50 to Harbor Property Mgmt")
    assert not already_said("checked_bags", 5, "you want 5 checked bags", "pay the $5 fee")  # a count is no amount


@pytest.mark.parametrize(("pack", "seed", "flags"), [
    ("bank", 1, {"min_calls": 6, "challenge_rate": 0.25}),
    ("airline", 5, {}),
])
def test_built_instructions_say_each_amount_and_preference_once(domains, space, pack, seed, flags):
    """Real builds: no 'The amount is $75.' after 'send $75', no 'Your preference is the same as for the earlier
    request.'; a preference two requests share is still stated (once)."""
    import re

    from tau_emotion.tracer.build import build_tasks

    tasks = build_tasks(domains.get(pack), "test", 20, seed, space=space, **flags).tasks
    for task in tasks:
        text = task.user.instruction
        assert "same as for the earlier request" not in text and "same preference as before" not in text, task.id
        for amount in re.findall(r"[Tt]he amount is (\$[\d,.]+)\.", text):
            assert text.count(amount) == 1, (task.id, text)
        prefs = task.user.known.get("preferences") or ""
        for pref in filter(None, prefs.split("; ")):
            said = re.sub(r"\bI\b", "you", pref.replace("my ", "your ").replace(" me", " you"))
            assert said in text, (task.id, pref, text)
    assert len(tasks) == 20
