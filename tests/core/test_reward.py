import pytest

from tau_emotion.core.models import Message, Termination
from tau_emotion.core.plugins import get_plugin_manager
from tau_emotion.core.reward import GoldReplayError, outputs_told, replay, score


def _said(text):
    return [Message(role="assistant", content=text)]


@pytest.mark.parametrize(
    ("output", "text", "found"),
    [
        ("10", "Your refund is 100 dollars.", False),
        ("10", "Your refund is $10.", True),
        ("10", "It costs 10.50 now.", False),
        ("1234", "A total of 1,234 dollars.", True),
        ("1,234", "A total of 1234 dollars.", True),
        ("1234567", "That is 1,234,567 points.", True),
        ("Economy", "You are in ECONOMY class.", True),
        ("yes", "yesterday it was fine", False),
        ("235.5", "balance 235.5.", True),
    ],
)
def test_outputs_match_on_word_and_number_boundaries(output, text, found):
    hit, miss = outputs_told([output], _said(text))
    assert (hit == [output]) is found
    assert (miss == [output]) is not found


def test_outputs_only_count_what_the_agent_said():
    hit, _ = outputs_told(["235.5"], [Message(role="user", content="is it 235.5?"),
                                      Message(role="tool", content="235.5")])
    assert hit == []


def _mock():
    pm = get_plugin_manager(["mock"])
    return pm.catalog("domains").get("mock")


def test_reward_parts_and_negative_termination():
    domain = _mock()
    task = {t.id: t for t in domain.tasks()}["mock-001"]
    good = replay(domain, task)
    stop = Termination(reason="user_stop")
    fed_up = Termination(reason="unsatisfied", negative=True)
    assert score(domain, task, good, _said("235.5"), stop)[0] == 1.0
    assert score(domain, task, good, _said("235.5"), fed_up)[0] == 1.0  # success stands
    reward, parts = score(domain, task, good, _said("nothing"), fed_up)
    assert reward == -1.0 and parts.db_match and parts.outputs_missing == ["235.5"]
    untouched = domain.database.state()
    reward, parts = score(domain, task, untouched, _said("235.5"), stop)
    assert reward == 0.0 and not parts.db_match


def test_gold_replay_error_names_task_and_action():
    domain = _mock()
    task = {t.id: t for t in domain.tasks()}["mock-001"].model_copy(deep=True)
    task.gold.actions[1].arguments["amount"] = 10**9
    with pytest.raises(GoldReplayError, match=r"task 'mock-001': gold action 1 \(transfer\) failed: .*insufficient"):
        replay(domain, task)


def test_transfer_tasks_need_the_transfer():
    domain = _mock()
    task = {t.id: t for t in domain.tasks()}["mock-004"]
    state = domain.database.state()
    stop = Termination(reason="user_stop")
    reward, parts = score(domain, task, state, _said("ok"), stop)
    assert reward == 0.0 and parts.db_match and parts.terminal_done is False
    handed = [Message(role="tool", name="transfer_to_human_agents", content="Transfer successful")]
    assert score(domain, task, state, handed, stop)[0] == 1.0
