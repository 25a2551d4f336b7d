"""The emotion design (balanced, seeded, independent of the task) and `tau tracer audit`."""

from collections import Counter

import pytest
from click.testing import CliRunner

from tau_emotion.core.cli import build_cli
from tau_emotion.emotion_pack.taxonomy import DIMENSIONS, EMOTIONS
from tau_emotion.tracer.audit import audit_split
from tau_emotion.tracer.design import condition_id, design_conditions, occasion_fits, pick_occasion
from tau_emotion.tracer.plan import decision_branches, feeling_of, policy_challenge, refused_calls, request_kinds


@pytest.mark.parametrize("n", [22, 58, 100])
def test_design_is_balanced_and_has_no_repeated_condition(n, space):
    rows = design_conditions(n, "airline/test/2", space)
    assert rows == design_conditions(n, "airline/test/2", space) != design_conditions(n, "airline/test/3", space)
    emotions = Counter(r["emotion"] for r in rows)
    assert set(emotions) == set(EMOTIONS) and max(emotions.values()) - min(emotions.values()) <= 1
    for dim, values in DIMENSIONS.items():
        counts = Counter(r[dim] for r in rows)
        assert set(counts) == set(values) and max(counts.values()) - min(counts.values()) <= 1
    assert len({condition_id(r) for r in rows}) == n
    assert all(EMOTIONS[r["emotion"]] == r["family"] for r in rows)


def test_occasions_fit_the_feelings():
    joy = {"family": "enjoyment", "emotion": "excitement"}
    grief = {"family": "sadness", "emotion": "sorrow"}
    assert not occasion_fits("negative", joy) and occasion_fits("positive", joy)
    assert occasion_fits("negative", grief) and not occasion_fits("positive", grief)
    import random

    funeral = [("a funeral", 3, "negative"), ("a wedding", 3, "positive")]
    assert all(pick_occasion(funeral, grief, random.Random(s)) == ("a funeral", 3, "negative") for s in range(5))
    assert all(pick_occasion(funeral, joy, random.Random(s)) in (None, ("a wedding", 3, "positive")) for s in range(10))


#: phrases of the packs' misfortunes (negative moods of stakes 3) as the instruction states them
MISFORTUNES = ("hospital", "stolen", "you are sick", "cancelled by the airline", "the airline cancelled",
               "storm is forecast", "funeral", "surgery", "unwell", "lost your job", "money is tight")


@pytest.mark.slow
@pytest.mark.parametrize("pack", ["airline", "retail", "telecom", "telehealth", "restaurant", "bank", "school", "movie",
                                  "travel", "basketball"])
def test_feelings_fit_a_stated_misfortune(domains, pack):
    """No shipped Tracer task whose instruction states a misfortune has an excited feeling, or one that says there is
    no rush (`feeling_cues.json`: excitement is `positive`/`upbeat`, the calm low-urgency cues `calm`)."""
    from tau_emotion.tracer.feelings import cue_bank

    calm = [c["text"] for cues in cue_bank().values() if isinstance(cues, dict) for row in cues.values()
            if isinstance(row, list) for c in row if isinstance(c, dict) and c.get("when") == "calm"]
    assert calm
    for task in domains.get(pack).tasks(None):
        if task.meta.get("source") != "tracer" or not task.blocks.get("emotion"):
            continue
        text, feeling = task.user.instruction.lower(), feeling_of(task)
        if [m for m in MISFORTUNES if m in text]:
            assert task.blocks["emotion"]["emotion"] != "excitement", (task.id, text)
            assert not [c for c in calm if c in feeling], (task.id, feeling)


# Every committed split passes every check. The committed train splits predate issue 34's appraisal: their tasks
# record no situation for the coherence check, which says so (NOT CHECKED) until they are rebuilt
# (`test_a_split_built_before_the_appraisal_is_not_judged_but_said`).


@pytest.mark.slow
@pytest.mark.parametrize("split", ["test", "train"])
def test_committed_airline_splits_pass_the_audit(airline, split, space):
    result = audit_split(airline, split, space=space, transfer_tool="transfer_to_human_agents")
    assert not [c for c in result.checks if not c[1]]
    assert result.tables["label agreement"]["family+emotion"] == f"{result.tables['tasks']['n']}/" \
                                                                 f"{result.tables['tasks']['n']}"
    assert result.tables["users"][f"shared with {'train' if split == 'test' else 'test'}"] == 0


@pytest.mark.slow
def test_every_installed_tracer_built_split_passes_the_audit(domains, space):
    """The audit every pack's conformance once ran (conformance no longer imports the Tracer): every installed
    domain's Tracer-built splits, with the handoff tool its hints name."""
    from tau_emotion.tracer.hints import load_hints

    audited, problems = [], []
    for name in domains.names():
        domain = domains.get(name)
        for split in sorted({t.split for t in domain.tasks(None) if t.meta.get("source") == "tracer"}):
            result = audit_split(domain, split, space=space, transfer_tool=load_hints(domain).handoff_tool)
            audited.append(f"{name}/{split}")
            problems += [f"{name}/{split}: {check}: {detail}" for check, ok, detail in result.checks if not ok]
    assert not problems, problems
    assert {f"{p}/{s}" for p in ("airline", "retail", "telecom", "telehealth") for s in ("test", "train")} <= set(audited)


@pytest.mark.slow
def test_audit_command_prints_tables_and_fails_on_a_broken_split(airline, monkeypatch, space):
    done = CliRunner().invoke(build_cli(), ["tracer", "audit", "airline", "--split", "test"])
    assert done.exit_code == 0, done.output  # the committed test split passes every check
    assert not [line for line in done.output.splitlines() if line.startswith("  FAIL")], done.output
    assert "label agreement" in done.output and "challenge kinds" in done.output
    assert "gold calls by family" in done.output and "id leak" in done.output  # the pack declares visible ids
    tasks = airline.tasks(None)
    broken = [t.with_block("emotion", {**t.blocks["emotion"], "emotion": "annoyance", "family": "anger"})
              if t.split == "test" else t for t in tasks]
    monkeypatch.setattr(type(airline), "tasks", lambda self, split=None: broken if split is None else
                        [t for t in broken if t.split == split])
    result = audit_split(airline, "test", space=space)
    failed = {name for name, ok, _ in result.checks if not ok}
    assert {"emotion balance", "label agreement", "distinct conditions"} <= failed


def test_committed_tasks_are_consistent(airline):
    """No task states the status it asks about, names a gift card by its balance, or gives a cancellation an occasion."""
    import re

    from tau_emotion.tracer.hints import load_hints

    fits = load_hints(airline).occasion_intents
    occasions = [o[0].split("}} ")[-1] for o in load_hints(airline).occasions]
    for task in airline.tasks("test") + airline.tasks("train"):
        words = " ".join([task.user.instruction, *task.user.intents]).lower()
        for output in task.gold.outputs:
            if re.fullmatch(r"[A-Za-z ]+", output):
                assert not re.search(rf"\b{output.lower()}\b", words), (task.id, output)
        assert "dollars on it" not in words, task.id
        if any(kind not in fits for kind in request_kinds(task)):
            assert not any(o.lower() in words for o in occasions), task.id
        assert all(f.key in task.user.known for r in task.plan.requests for f in r.facts), task.id


def test_decision_rules_follow_the_data(airline):
    """A rule's branch is what the looked-up amount implies; a declined request leaves its goal call out."""
    import random

    from tau_emotion.tracer.decisions import attach_decision
    from tau_emotion.tracer.hints import IntentDraft, Output

    for seed in range(40):
        draft = IntentDraft(kind="change", goal="update_reservation_flights", arguments={}, request=["x"],
                            outputs=[Output("150", "the fare difference"),
                                     Output("40", "the balance afterwards", from_goal=True)], decline="keep {{my}} flight")
        attach_decision(draft, random.Random(seed))
        if draft.decision:
            above = 150 > draft.decision["threshold"]
            assert draft.declined == above == (draft.decision["branch"] == "decline")
            # a declined write returns nothing, so nothing it would return is asked for (school-test-001 asked for the
            # balance after a registration the user turned down)
            assert [o.text for o in draft.outputs] == (["150"] if above else ["150", "40"])
    tasks = airline.tasks("test")
    ruled = [t for t in tasks if decision_branches(t)]
    assert len(ruled) >= 0.2 * len(tasks)
    assert {b for t in ruled for b in decision_branches(t)} == {"proceed", "decline"}
    for task in ruled:
        for d in (r.decision for r in task.plan.requests if r.decision):
            assert (float(d.amount) > d.threshold) == (d.outcome == "over"), task.id
            assert f"more than ${d.threshold:g}" in task.user.instruction, task.id
            assert d.amount in task.gold.outputs, task.id
            if d.outcome == "over":
                assert any(step.startswith("~") for step in task.meta["graph_path"]), task.id


def test_challenge_fits_keeps_a_family_near_the_running_share():
    from tau_emotion.tracer.design import challenge_fits

    # 10 tasks so far, 3 of them challenges; enjoyment has 3 tasks and none of them a challenge
    counts = {"enjoyment": [3, 0], "anger": [7, 3]}
    assert challenge_fits(counts, "enjoyment", True)
    assert not challenge_fits(counts, "enjoyment", False)  # 0 of 4 against 3/11 of 4 = 1.09: more than 1 away
    assert challenge_fits(counts, "anger", False)  # 3 of 8 against 3/11 of 8 = 2.18
    assert not challenge_fits(counts, "anger", True)  # 4 of 8 against 4/11 of 8 = 2.91
    assert challenge_fits({}, "fear", True) and challenge_fits({}, "fear", False)
    # from a balanced state one of the two kinds always fits: a family never waits for a task that cannot come
    for tasks in range(1, 12):
        for c in range(tasks + 1):
            if abs(c - (c + 6) / (tasks + 20) * tasks) > 1:
                continue
            state = {"sadness": [tasks, c], "anger": [20, 6]}
            assert challenge_fits(state, "sadness", True) or challenge_fits(state, "sadness", False)


def test_kinds_fit_keeps_each_request_kind_near_the_running_share():
    from collections import Counter

    from tau_emotion.tracer.design import kinds_fit, length_bin

    # 20 tasks: anger holds 4 of the 5 refunds in 10 tasks; enjoyment none in 10
    kinds = {"anger": Counter(refund=4, cancel=6), "enjoyment": Counter(refund=1, cancel=9)}
    sizes = Counter(anger=10, enjoyment=10)
    assert not kinds_fit(kinds, sizes, "anger", ["refund"])  # 5 of 11 against 6/21 of 11 = 3.1
    assert kinds_fit(kinds, sizes, "enjoyment", ["refund"])  # brings enjoyment closer
    assert kinds_fit(kinds, sizes, "anger", ["cancel"])
    assert kinds_fit(kinds, sizes, "anger", ["refund"], slack=2.0)  # a stalled build relaxes the kinds
    assert kinds_fit({}, Counter(), "fear", ["refund", "cancel"])
    assert [length_bin(c) for c in (3, 6, 7, 8, 9, 12)] == [0, 0, 1, 1, 2, 2]


def _family_challenges(tasks):
    by_family = {}
    for t in tasks:
        tally = by_family.setdefault(t.blocks["emotion"]["family"], [0, 0])
        tally[0] += 1
        tally[1] += int(policy_challenge(t))
    return by_family


@pytest.mark.slow
@pytest.mark.parametrize(("pack", "seed", "rate"), [("airline", 5, None), ("retail", 3, 0.45)])
def test_a_fresh_small_split_balances_challenges_across_families(domains, pack, seed, rate, space):
    from tau_emotion.tracer.audit import CHALLENGE_TOLERANCE
    from tau_emotion.tracer.build import build_tasks
    from tau_emotion.tracer.feelings import EmotionLabeler

    report = build_tasks(domains.get(pack), "test", 40, seed, challenge_rate=rate,
                         labeler=EmotionLabeler.from_space(space), space=space)
    tasks = report.tasks
    share = sum(policy_challenge(t) for t in tasks) / len(tasks)
    assert share > 0.1
    for family, (n, c) in _family_challenges(tasks).items():
        assert abs(c - share * n) <= CHALLENGE_TOLERANCE, (family, c, n, share)
    # one task per user and one write per entity (issue 21), five labels read back
    from tau_emotion.tracer.audit import task_user, written_entities

    domain = domains.get(pack)
    assert len({task_user(t) for t in tasks}) == len(tasks)
    seen: set = set()
    for t in tasks:
        assert not written_entities(domain, t) & seen, t.id
        seen |= written_entities(domain, t)
    assert all(t.meta["emotion_reading"] == {k: v for k, v in t.blocks["emotion"].items() if k != "anchor"}
               for t in tasks)
    # and so are the tasks of 1, 2 and 3+ intents
    strata = Counter(min(len(t.user.intents), 3) for t in tasks)
    for family, (n, _) in _family_challenges(tasks).items():
        mine = Counter(min(len(t.user.intents), 3) for t in tasks if t.blocks["emotion"]["family"] == family)
        for k in (1, 2, 3):
            assert abs(mine[k] - strata[k] / len(tasks) * n) <= CHALLENGE_TOLERANCE, (family, k, mine, strata)
    # the emotion design is still balanced: the build only reorders it
    emotions = Counter(t.blocks["emotion"]["emotion"] for t in tasks)
    assert set(emotions) == set(EMOTIONS) and max(emotions.values()) - min(emotions.values()) <= 1


def _unplanned(t, **meta):
    """`t` without its plan, what the audit reads of it back in `meta` (as a candidate carries it), `meta` over that."""
    old = {"refused": refused_calls(t), "intents": request_kinds(t),
           "decisions": [{"branch": b} for b in decision_branches(t)]}
    return t.model_copy(update={"plan": None, "meta": {**t.meta, **old, **meta}})


def test_audit_fails_a_split_whose_challenges_sit_in_some_families(airline, monkeypatch, space):
    """Retail test before the stratified build: 0 of 9 enjoyment tasks with a challenge, 43% of the rest."""
    tasks = airline.tasks(None)
    test = [t for t in tasks if t.split == "test"]
    moved = sum(policy_challenge(t) for t in test)
    skewed, given = [], 0
    for t in tasks:  # the same number of challenges, none of them in enjoyment
        if t.split == "test":
            wants = t.blocks["emotion"]["family"] != "enjoyment" and given < moved
            given += wants
            t = _unplanned(t, refused=[{"name": "cancel_reservation", "arguments": {}, "after": 0}] if wants else [])
        skewed.append(t)
    monkeypatch.setattr(type(airline), "tasks", lambda self, split=None: skewed if split is None else
                        [t for t in skewed if t.split == split])
    result = audit_split(airline, "test", space=space, transfer_tool="transfer_to_human_agents")
    failed = {name: detail for name, ok, detail in result.checks if not ok}
    assert "challenge balance" in failed and "enjoyment" in failed["challenge balance"]
    assert result.tables["challenges by family"]["enjoyment"].startswith("0/")


def test_a_family_the_share_left_behind_takes_what_brings_it_back():
    """Anger at 6 challenges in 40 tasks while the split's share fell to 54/503: one task without a challenge
    leaves it 1.6 away, but closer than before, so it fits (the telecom train build once stalled here)."""
    from tau_emotion.tracer.design import challenge_fits

    counts = {"anger": [40, 6], "fear": [463, 48]}
    assert challenge_fits(counts, "anger", False) and not challenge_fits(counts, "anger", True)


def test_audit_fails_a_split_whose_families_differ_in_intents(airline, monkeypatch, space):
    """Every anger task cut to its first intent: anger holds the single-intent tasks the others lack."""
    skewed = [t.model_copy(update={"user": t.user.model_copy(update={"intents": t.user.intents[:1]})})
              if t.split == "test" and t.blocks["emotion"]["family"] == "anger" else t for t in airline.tasks(None)]
    monkeypatch.setattr(type(airline), "tasks", lambda self, split=None: skewed if split is None else
                        [t for t in skewed if t.split == split])
    result = audit_split(airline, "test", space=space, transfer_tool="transfer_to_human_agents")
    failed = {name: detail for name, ok, detail in result.checks if not ok}
    assert "intent balance" in failed and "anger" in failed["intent balance"]
    assert "challenge balance" not in failed


# ---- issue 21's checks: what was promised (every committed split passes them)

def _patched(monkeypatch, domain, tasks):
    monkeypatch.setattr(type(domain), "tasks", lambda self, split=None: tasks if split is None else
                        [t for t in tasks if t.split == split])


def _failed(domain, space, split="test", **kwargs):
    result = audit_split(domain, split, space=space, transfer_tool="transfer_to_human_agents", **kwargs)
    return result, {name: detail for name, ok, detail in result.checks if not ok}


def test_balance_checks_fail_what_sits_in_one_family_and_state_their_tolerance(airline, monkeypatch, space):
    """Decision rules, gold length and request kind all piled on anger: each balance check fails, and says the
    tolerance it used comes from seeded shuffles of the family labels."""
    def skew(t):
        if t.split != "test":
            return t
        anger = t.blocks["emotion"]["family"] == "anger"
        rule = [{"intent": 0, "ask": "x", "threshold": 1, "amount": "2", "branch": "decline"}] if anger else []
        actions = t.gold.actions * 3 if anger else t.gold.actions[:2]
        return _unplanned(t, decisions=rule, intents=["compensation"] * 3 if anger else request_kinds(t)).model_copy(
            update={"gold": t.gold.model_copy(update={"actions": actions})})
    _patched(monkeypatch, airline, [skew(t) for t in airline.tasks(None)])
    result, failed = _failed(airline, space)
    for name in ("decision rule balance", "gold length balance", "request kind balance"):
        assert name in failed and "2000 seeded shuffles" in failed[name] and "p=0.000" in failed[name], name
    n_anger = result.tables["families"]["anger"]
    assert result.tables["decision rules by family"]["anger"] == f"{n_anger}/{n_anger}"
    assert result.tables["decision rules by family"]["fear"].startswith("0/")
    assert result.tables["gold calls by family"]["anger"] > 3 * result.tables["gold calls by family"]["fear"]
    # the same split audited twice gives the same tolerances (the shuffles are seeded)
    assert _failed(airline, space)[1] == failed


def test_balance_checks_pass_when_families_are_alike(airline, monkeypatch, space):
    """Every task with one rule, the same length and the same kinds: no family spread at all."""
    def even(t):
        if t.split != "test":
            return t
        return _unplanned(t, decisions=[{"branch": "proceed"}], intents=["cancel"]).model_copy(
            update={"gold": t.gold.model_copy(update={"actions": t.gold.actions[:1]})})
    _patched(monkeypatch, airline, [even(t) for t in airline.tasks(None)])
    _, failed = _failed(airline, space)
    assert not {"decision rule balance", "gold length balance", "request kind balance"} & set(failed)


def test_five_labels_users_and_entity_writes(airline, monkeypatch, space):
    tasks = airline.tasks(None)
    test = [t for t in tasks if t.split == "test"]
    first, second = test[0], test[1]
    before = audit_split(airline, "test", space=space).tables["entities written"]["by more than one task"]
    def agree(t):
        return {**t.blocks["emotion"]} | {"anchor": None}
    fixed = []
    for i, t in enumerate(tasks):
        if t.split == "test":
            reading = {k: v for k, v in agree(t).items() if k != "anchor"}
            if t.id == first.id:
                reading["urgency"] = "high" if reading["urgency"] != "high" else "low"
            meta = {**t.meta, "emotion_reading": reading, "user": f"user_{i}"}
            if t.id == second.id:  # the first task's user and its writes
                meta["user"] = f"user_{tasks.index(first)}"
                t = t.model_copy(update={"gold": first.gold})
            t = t.model_copy(update={"meta": meta})
        fixed.append(t)
    _patched(monkeypatch, airline, fixed)
    result, failed = _failed(airline, space)
    n = len(test)
    assert failed["five-label agreement"].startswith(f"{n - 1}/{n}")
    assert failed["distinct users"].startswith(f"{n - 1} distinct users in {n}")
    assert "entity writes" in failed
    assert result.tables["entities written"]["by more than one task"] > before


def test_sentence_templates_mask_values_and_catch_a_shared_frame(airline, monkeypatch, space):
    from tau_emotion.tracer.audit import sentence_template, sentences

    said = "You are Ana Li (user id ana_li_1). Then you want to cancel 4NHQLN on May 19. Do not make up details."
    assert sentences(said)[1] == "Then you want to cancel 4NHQLN on May 19."
    assert sentence_template("If the agent needs to know for this, the trip goes to Chicago.", ["Chicago"]) == \
        sentence_template("If the agent needs to know for this, you leave on May 21.", ["May 21"])
    assert sentence_template("You fly to Chicago.", []) == sentence_template("You fly to Dallas.", [])
    assert sentence_template("You fly to Chicago.", []) != sentence_template("You want a refund.", [])
    varied = [t.model_copy(update={"user": t.user.model_copy(update={
        "instruction": f"You are someone. Sentence number {i} says the same {'abcdefghij'[i % 10]} here. "
                       f"Then {'abcdefghij'[i % 10]} {'klmnopqrst'[i % 7]} differs."})})
        if t.split == "test" else t for i, t in enumerate(airline.tasks(None))]
    _patched(monkeypatch, airline, varied)
    result, failed = _failed(airline, space)
    n = result.tables["tasks"]["n"]
    assert f"'sentence number _ says the' {n}/{n}" in failed["sentence templates"]
    assert "then" not in failed["sentence templates"]  # 70 variants, none over the share


def test_id_leak_catches_an_internal_ids_tail(airline, monkeypatch, space):
    from tau_emotion.tracer.audit import id_tails, leaked_ids

    assert id_tails("paypal_1488918") == {"paypal_1488918", "8918"} and id_tails("2PGB8L") == {"2PGB8L"}
    task = next(t for t in airline.tasks("test") if any("payment_id" in a.arguments for a in t.gold.actions))
    pay = next(a.arguments["payment_id"] for a in task.gold.actions if "payment_id" in a.arguments)
    tail = pay[-4:]
    told = task.model_copy(update={"user": task.user.model_copy(update={
        "instruction": f"You are someone. You pay with the card ending in {tail}."})})
    assert leaked_ids(told, frozenset({"reservation_id", "user_id"})) == [f"payment_id={pay} (as '{tail}')"]
    assert leaked_ids(told, frozenset({"reservation_id", "user_id", "payment_id"})) == []
    clean = told.model_copy(update={"user": told.user.model_copy(update={"instruction": "You pay with your Visa."})})
    assert leaked_ids(clean, frozenset()) == []
    # the same four digits closing a phone number the user knows are not the id's tail (telecom-train: 415-555-7059
    # beside bill B537059)
    phone = told.model_copy(update={"user": told.user.model_copy(update={"instruction": f"Call me on 415-555-{tail}."})})
    assert leaked_ids(phone, frozenset({"reservation_id", "user_id"})) == []
    born = told.model_copy(update={"user": told.user.model_copy(update={"instruction": f"Born {tail}-04-05."})})
    assert leaked_ids(born, frozenset({"reservation_id", "user_id"})) == []
    # nor are they when the user knows them in their own right (a card's last four, 9641, beside card_739641)
    own = told.model_copy(update={"user": told.user.model_copy(update={"known": {"card_last_four_digits": tail}})})
    assert leaked_ids(own, frozenset({"reservation_id", "user_id"})) == []
    _patched(monkeypatch, airline, [told if t.id == task.id else t for t in airline.tasks(None)])
    _, failed = _failed(airline, space, visible_ids=frozenset({"reservation_id", "user_id"}))
    assert task.id in failed["id leak"]
    _, failed = _failed(airline, space)  # undeclared: not checked
    assert "id leak" not in failed


def test_coherence_check_fails_a_feeling_without_its_cause_and_passes_one_with_it(airline, monkeypatch, space):
    """Issue 34: the audit reads each task's feeling and anchor against the situation its plan records."""
    from tau_emotion.core.models import Situation

    def with_feeling(t, feeling, anchor, **facts):
        if t.split != "test" or t.plan is None:
            return t
        situation = Situation(feeling=feeling, events=["I want to swap the notebook"],  # as the build records it
                              **{"valence": "neutral", "stakes": 1, **facts})
        emotion = {**t.blocks["emotion"], "anchor": anchor}
        return t.model_copy(update={"plan": t.plan.model_copy(update={"situation": situation})}).with_block(
            "emotion", emotion)

    bad = [with_feeling(t, "I want to swap the notebook. I'm begging you, I'm desperate.",
                        "You have a deadline within the next hour or two.") for t in airline.tasks(None)]
    _patched(monkeypatch, airline, bad)
    result, failed = _failed(airline, space)
    assert "coherence" in failed and "begging" in failed["coherence"]
    assert result.tables["coherence"]["intensity against stakes"] == result.tables["tasks"]["n"]
    good = [with_feeling(t, "I want to swap the notebook, and it's a bit annoying. There's no rush at all.",
                         "You are mildly irritated and patient.", valence="negative") for t in airline.tasks(None)]
    _patched(monkeypatch, airline, good)
    result, failed = _failed(airline, space)
    assert "coherence" not in failed and result.tables["coherence"]["tasks clean"].startswith(
        f"{result.tables['tasks']['n']}/")


def test_a_split_built_before_the_appraisal_is_not_judged_but_said(airline):
    """A task whose plan records only its feeling (built before issue 34's appraisal) is left out of the coherence
    check, and the check's line says how many it could not judge; one that records its situation is judged."""
    from tau_emotion.core.models import Situation
    from tau_emotion.tracer.audit import coherence_findings, recorded

    old = airline.tasks("test")[0]
    assert old.plan is not None and old.plan.situation is not None
    bare = Situation.model_validate({"feeling": "I want to add a bag. I've heard promises like that before."})
    full = Situation.model_validate({"feeling": bare.feeling, "valence": "neutral", "stakes": 1})
    assert not recorded(bare) and recorded(full)
    with_bare = old.model_copy(update={"plan": old.plan.model_copy(update={"situation": bare})})
    with_full = old.model_copy(update={"plan": old.plan.model_copy(update={"situation": full})})
    assert coherence_findings([with_bare]) == {}
    assert "presupposition" in [f.rule for f in coherence_findings([with_full])[old.id]]
