"""The build as a row of stages (issue 34 item 8) and what makes it fast without changing what it makes (issue 33
item 4): the stages by hand give the build's tasks, options are typed, the audit's split checks are the
validator's, and a result's cached walk gives the sources walking it again would."""

import json
import random

import pytest

from tau_emotion.tracer import build as stages
from tau_emotion.tracer.audit import audit_split
from tau_emotion.tracer.build import BuildOptions, build_tasks, prepare
from tau_emotion.tracer.provenance import Knowledge
from tau_emotion.tracer.validate import Reject, SplitChecks


def test_the_stages_by_hand_give_the_tasks_build_tasks_gives(domains, space):
    airline = domains.get("airline")
    report = build_tasks(airline, "test", 4, 7, space=space)
    build = prepare(airline, "test", 4, 7, space, BuildOptions())
    index, rejected = 0, {}
    while len(build.accepted) < 4:
        try:
            grounded = stages.ground(build, index)
            designed = stages.design(build, grounded)
            felt = stages.feel(build, stages.refine(build, designed))
            stages.select(build, stages.validate(build, felt))
        except Reject as exc:
            rejected[exc.check] = rejected.get(exc.check, 0) + 1
        index += 1
    tasks = stages.finish(build)
    assert [t.model_dump(mode="json") for t in tasks] == [t.model_dump(mode="json") for t in report.tasks]
    assert index == report.candidates and rejected == dict(report.rejected)


def test_a_misspelt_build_option_is_an_error_naming_it(domains, space):
    with pytest.raises(TypeError, match="challange_rate"):
        build_tasks(domains.get("airline"), "test", 2, 0, space=space, challange_rate=0.5)


def test_the_audit_fails_what_the_validators_split_checks_reject(domains, monkeypatch, space):
    airline = domains.get("airline")
    tasks = airline.tasks(None)
    test = [t for t in tasks if t.split == "test"]
    train = [t for t in tasks if t.split == "train"]
    # the first test task takes a train task's user: the validator rejects it, so the audit fails it
    shared = train[0].meta["user"]
    moved = [t.model_copy(update={"meta": {**t.meta, "user": shared}}) if t.id == test[0].id else t for t in tasks]
    checks = SplitChecks(airline, "test", apart=train)
    with pytest.raises(Reject) as info:
        checks.check_apart_user(shared)
    assert info.value.check == "split"
    monkeypatch.setattr(type(airline), "tasks", lambda self, split=None: [t for t in moved
                                                                          if split is None or t.split == split])
    result = audit_split(airline, "test", space=space)
    failed = {name: detail for name, ok, detail in result.checks if not ok}
    assert "user overlap" in failed and test[0].id in failed["user overlap"]


def _random_result(rng, depth=0):
    kind = rng.random()
    if depth > 2 or kind < 0.3:
        return rng.choice(["A1", "a1", "B2", 44, "44", 44.0, True, None, "", "one_way", "One way", 7, "x y"])
    if kind < 0.6:
        return [_random_result(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if kind < 0.8:  # a keyed map of records
        return {rng.choice(["A1", "B2", "C3", "u1"]): {"id": _random_result(rng, 3), "n": rng.randint(1, 3)}
                for _ in range(rng.randint(1, 3))}
    return {rng.choice(["id", "name", "A1", "total", "rows"]): _random_result(rng, depth + 1)
            for _ in range(rng.randint(1, 3))}


def test_a_results_cached_walk_gives_the_sources_a_fresh_walk_gives():
    rng = random.Random(3)
    for trial in range(300):
        texts = [json.dumps(_random_result(rng)) for _ in range(rng.randint(1, 4))] + ["plain text A1", "[not json"]
        walked, cached = Knowledge(), Knowledge()
        for k in (walked, cached):
            k.add_known({"user_id": "u1", "note": "B2 and 44"})
        wanted = {("s", "a1"), ("n", 44.0), ("s", "b2"), ("s", "one way")}
        for step, text in enumerate(texts):
            args = {"id": rng.choice(["A1", "u1", "zz"])}
            assert walked.gains(json.loads(text) if text[0] in "[{" and text != "[not json" else text, wanted) \
                == cached.gains_text(text, wanted), (trial, text)
            walked.add_result(step, json.loads(text) if text[0] in "[{" and text != "[not json" else text, args)
            cached.add_result_text(step, text, args)
            assert cached.sources == walked.sources, (trial, text)
            assert cached.keys_of_text(text) == walked.keys_of(json.loads(text) if text[0] in "[{"
                                                                 and text != "[not json" else text)


def _grounded_with(build, mood):
    """The first grounded candidate of `build`, its first intent lived as `mood`, its others as a plain request."""
    from tau_emotion.tracer.drafts import Mood

    for index in range(300):
        try:
            grounded = stages.ground(build, index)
        except Reject:
            continue
        for i, draft in enumerate(grounded.cand.drafts):
            draft.mood = mood if i == 0 else Mood("{{I}} need some help", "neutral", 1, None)
            draft.refused = None if i else draft.refused
        if not grounded.cand.drafts[0].refused:
            return grounded
    raise AssertionError("no grounded candidate without a refusal")


def test_the_design_takes_another_way_an_intent_may_be_lived_when_its_own_gives_no_cause(airline, space):
    from tau_emotion.tracer.drafts import Mood
    from tau_emotion.tracer.feelings import EmotionLabeler

    happy = Mood("{{I}} {{am}} off on a long-awaited holiday", "positive", 2, None)
    lost = Mood("{{my}} bag was lost on the way", "negative", 2, None)
    excited = {"family": "enjoyment", "emotion": "excitement", "politeness": "warm", "urgency": "moderate",
               "trust": "trusting"}
    for others, taken in (((happy,), happy), ((), None)):
        build = prepare(airline, "test", 4, 7, space, BuildOptions(labeler=EmotionLabeler.from_space(space)))
        build.design[:] = [dict(excited) for _ in build.design]  # only excitement is open: a lost bag gives it no cause
        grounded = _grounded_with(build, Mood(lost.event, lost.valence, lost.stakes, None, others=others))
        if taken is None:
            with pytest.raises(Reject) as info:
                stages.design(build, grounded)
            assert info.value.check == "feelings" and grounded.cand.drafts[0].mood.event == lost.event
        else:
            designed = stages.design(build, grounded)
            assert designed.condition["emotion"] == "excitement" and designed.cand.drafts[0].mood is taken
