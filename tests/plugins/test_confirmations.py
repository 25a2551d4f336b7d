"""Issue 32 items 4 and 5: users confirm what they want, and the oracle and asker follow the procedure.

The scripted user answers a confirmation request with an opening yes only when the stated action is its current
request's and, with a decision rule, only once it has heard the deciding figure (before that it asks for it; over
its threshold it declines). The oracle identifies the caller, states each write with its arguments and the figure,
and writes only after the yes, so it passes `--scoring strict` in every pack; the asker does the same after its
questions.
"""

from __future__ import annotations

import asyncio

import pytest

from tau_emotion.core.consent import decide, decision_words
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import DecisionRule, Message, RunConfig
from tau_emotion.core.procedure import affirmative
from tau_emotion.core.runner import prepare_run, run_sync
from tau_emotion.plugins.scripted_user import ScriptedUser
from tau_emotion.templates import render
from tests.core.test_procedure import frozen_task
from tests.episodes import bare_episode


@pytest.fixture(scope="module")
def airline():
    pm = get_plugin_manager(["airline"])
    return pm, pm.catalog("domains").get("airline")


def _user(pm, domain, task, at: int = 0):
    episode, view = bare_episode(pm, domain, task)
    user = ScriptedUser(view)
    episode.messages.append(asyncio.run(user.start()))
    user.position = at  # the conversation is at request `at`

    def reply(text: str) -> str:
        episode.messages.append(Message(role="assistant", content=text))
        answer = asyncio.run(user.respond(episode.messages[-1]))
        episode.messages.append(answer)
        return answer.content

    return reply


UPGRADE = ("I will update reservation flights (reservation id PAQUTC, cabin business, flight number SKY267, "
           "date 2024-05-17, flight number SKY253, date 2024-05-23, payment id credit_card_8119828). Shall I go ahead?")


def test_with_a_decision_rule_the_user_decides_only_after_hearing_the_figure(airline):
    pm, domain = airline
    task = frozen_task("airline-test-020")
    rule = task.plan.requests[0].decision
    assert rule is not None and rule.outcome == "under"
    reply = _user(pm, domain, task)
    unheard = reply(UPGRADE)
    assert unheard == decision_words(rule, "ask") and not affirmative(unheard)
    heard = reply(f"The price difference is ${rule.amount}. " + UPGRADE)
    assert heard == "Yes, please go ahead." and affirmative(heard)


def test_over_the_threshold_the_user_declines(airline):
    pm, domain = airline
    # the first request over its threshold, whichever request of its task it is
    task, at, rule = next((t, k, r.decision) for t in domain.tasks("test") if t.plan
                          for k, r in enumerate(t.plan.requests) if r.decision and r.decision.outcome == "over")
    answer = _user(pm, domain, task, at)(f"{rule.figure.capitalize()} is {rule.amount}. Shall I go ahead with it?")
    assert answer.startswith("No, ") and rule.amount in answer and not affirmative(answer)


def test_a_confirmation_of_another_requests_action_is_turned_down(airline):
    pm, domain = airline
    task = frozen_task("airline-test-020")  # the new birth date is request 2's
    answer = _user(pm, domain, task)("I will update reservation passengers (dob 1990-03-07). Shall I go ahead?")
    assert answer.startswith("No, that is not what I asked for") and not affirmative(answer)


def test_decide_reads_the_figure_by_value():
    rule = DecisionRule(figure="the fee", amount="50", threshold=40, over="skip it", outcome="over")
    said = [Message(role="assistant", content="The fee is $50.00.")]
    assert decide(None, []) == "yes" and decide(rule, []) == "ask"
    assert decide(rule, [Message(role="user", content="is it 50?")]) == "ask"  # the user's own words are not heard
    assert decide(rule, said) == "no"
    assert decide(rule.model_copy(update={"outcome": "under"}), said) == "yes"


def test_the_llm_users_prompt_agrees_only_to_what_its_instruction_wants():
    prompt = render("user_system.j2", instruction="x", known={}, stop_token="###STOP###", plan=[])
    assert "agree only to what your instruction wants" in prompt and 'start your message with "Yes"' in prompt
    assert 'start with "No"' in prompt


def decision_task(domain) -> str:
    """The first test task whose every write is under a decision rule (the run tests' case, whatever the build)."""
    for task in domain.tasks("test"):
        writes = [i for i, a in enumerate(task.gold.actions) if domain.toolset[a.name].writes]
        if task.plan and writes and all(any(r.decision and w in r.actions for r in task.plan.requests) for w in writes):
            return task.id
    raise AssertionError(f"{domain.name}: no test task whose every write is under a decision rule")


def _run(tmp_path, pack, agent, task_ids, scoring="strict"):
    config = RunConfig(plugins=["emotion", pack], trials=1, agent=agent, task_ids=task_ids, split="test",
                       scoring=scoring, options={"progress": {"no_progress": True}})
    run = prepare_run(config, str(tmp_path / "r.db"))
    run_sync(run)
    return run, run.store.results(run.run_id)


#: packs whose test split holds a task with every write under a decision rule (bank's rebuilt split has none)
RUN_PACKS = ["airline", "telecom"]


@pytest.mark.slow
@pytest.mark.parametrize("pack", RUN_PACKS)
def test_the_oracle_identifies_states_and_waits_for_the_yes_before_each_write(tmp_path, pack):
    task_id = decision_task(get_plugin_manager([pack]).catalog("domains").get(pack))
    run, [result] = _run(tmp_path, pack, "oracle", [task_id])
    assert result.reward == 1.0 and result.parts.procedure.procedure_ok, result.parts.procedure
    domain = run.domains[pack]
    spec, task = domain.procedure, next(t for t in domain.tasks("test") if t.id == task_id)
    messages = result.messages
    calls = [(i, c) for i, m in enumerate(messages) for c in m.tool_calls]
    assert calls[0][1].name in {x.tool for x in spec.identify}  # the caller first
    for i, call in calls:
        if not domain.toolset[call.name].writes:
            continue
        yes = max(j for j in range(i) if messages[j].role == "user")
        asked = max(j for j in range(yes) if messages[j].role == "assistant")
        assert affirmative(messages[yes].content) and messages[asked].content.endswith("Shall I go ahead?")
        [request] = [r for r in task.plan.requests if any(task.gold.actions[j].arguments == call.arguments
                                                           for j in r.actions)]
        assert request.decision.amount in messages[asked].content  # the deciding figure, said with the question
        assert any(v in messages[asked].content for v in map(str, call.arguments.values()) if v)
        assert not any(c for m in messages[asked:yes] for c in m.tool_calls)


@pytest.mark.slow
@pytest.mark.parametrize("pack", RUN_PACKS)
def test_the_asker_asks_then_follows_the_procedure(tmp_path, pack):
    task_id = decision_task(get_plugin_manager([pack]).catalog("domains").get(pack))
    _, [result] = _run(tmp_path, pack, "asker", [task_id])
    texts = [m.content or "" for m in result.messages if m.role == "assistant"]
    assert texts[0].startswith("Could you tell me the ")
    assert result.parts.procedure.procedure_ok, result.parts.procedure
