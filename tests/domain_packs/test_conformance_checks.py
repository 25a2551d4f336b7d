"""The conformance checks themselves fail what they are meant to catch."""

from tau_emotion.domain_packs.conformance import policy_problems
from tests.domain_packs.test_conformance import DOMAINS


def test_the_policy_check_fails_a_bad_policy_and_a_rule_gold_breaks():
    from tau_emotion.core.domain import Domain, rule

    mock = DOMAINS.get("mock")
    vague = Domain("vague", "tau_emotion.domain_packs.mock.tools", load_database=lambda: mock.database,
                   load_policy=lambda: "Be helpful, be polite and always do what the customer asks of you today.",
                   load_tasks=lambda: mock.tasks(None))
    problems = policy_problems(vague)
    assert any("never speaks of freeze_account" in p for p in problems)
    assert any("never speaks of transfer_to_human_agents" in p for p in problems)

    @rule
    def no_transfers(state, action_name, arguments):
        return "transfers are closed" if action_name == "transfer" else None

    strict = Domain("strict", "tau_emotion.domain_packs.mock.tools", load_database=lambda: mock.database,
                    load_policy=lambda: mock.policy, load_tasks=lambda: mock.tasks(None), policy_rules=[no_transfers])
    assert any("breaks no_transfers: transfers are closed" in p for p in policy_problems(strict))


def test_check_domain_names_the_failing_check_instead_of_raising():
    from tau_emotion.core.domain import Domain
    from tau_emotion.domain_packs.conformance import check_domain

    mock = DOMAINS.get("mock")
    task = mock.tasks(None)[0]
    bad = task.model_copy(update={"gold": task.gold.model_copy(update={"actions": [
        task.gold.actions[0].model_copy(update={"arguments": {"name": "Nobody Here"}})]})})
    broken = Domain("mock", "tau_emotion.domain_packs.mock.tools", load_database=lambda: mock.database,
                    load_policy=lambda: mock.policy, load_tasks=lambda: [bad])
    problems = check_domain(broken)
    assert any(p.startswith("every_gold_sequence_replays: ") and task.id in p for p in problems), problems


def test_a_policy_rule_must_be_a_rule():
    """Core's policy rules contract is typed: a bare function is refused with one line naming the domain."""
    import pytest

    from tau_emotion.core.domain import Domain
    from tau_emotion.core.errors import DataError

    def bare(state, action_name, arguments):
        return None

    with pytest.raises(DataError, match=r"domain 'loose': policy_rules\[0\] \('bare'\) is not a Rule; declare it with @rule"):
        Domain("loose", "tau_emotion.domain_packs.mock.tools", policy_rules=[bare])


def test_domain_violations_names_each_broken_rule_and_its_reason():
    from tau_emotion.core.domain import Domain, Violation, rule
    from tau_emotion.core.models import Action

    @rule
    def no_transfers(state, action_name, arguments):
        """Transfers are closed."""
        return "transfers are closed" if action_name == "transfer" else None

    @rule
    def small_amounts(state, action_name, arguments):
        return "over 100" if arguments.get("amount", 0) > 100 else None

    mock = DOMAINS.get("mock")
    strict = Domain("strict", "tau_emotion.domain_packs.mock.tools", load_database=lambda: mock.database,
                    policy_rules=[no_transfers, small_amounts])
    state = strict.database.state()
    assert strict.violations(state, Action(name="transfer", arguments={"amount": 500})) == [
        Violation("no_transfers", "transfers are closed"), Violation("small_amounts", "over 100")]
    assert strict.violations(state, Action(name="get_account", arguments={"amount": 5})) == []
    assert no_transfers(state, "transfer", {}) == "transfers are closed"  # a Rule is still a plain callable


def test_write_then_raise_check_catches_a_core_without_savepoints(monkeypatch):
    """The check is not vacuous: with the savepoint switched off, a write followed by an error keeps its write."""
    from contextlib import nullcontext

    from tau_emotion.core.state import State
    from tau_emotion.domain_packs.conformance import write_then_raise_changes_nothing

    mock = DOMAINS.get("mock")
    assert write_then_raise_changes_nothing(mock) == []
    monkeypatch.setattr(State, "atomic", lambda self: nullcontext())
    problems = write_then_raise_changes_nothing(mock)
    assert any("transfer raising ToolError after its write left the state changed" in p for p in problems), problems
    assert any("raising InjectedFault" in p for p in problems) and any("raising ToolTimeout" in p for p in problems)


def test_write_then_raise_check_names_a_write_tool_no_gold_exercises():
    from tau_emotion.core.domain import Domain
    from tau_emotion.domain_packs.conformance import write_then_raise_changes_nothing

    mock = DOMAINS.get("mock")
    reads_only = [t for t in mock.tasks(None) if not any(mock.toolset[a.name].writes for a in t.gold.actions)]
    domain = Domain("mock", "tau_emotion.domain_packs.mock.tools", load_database=lambda: mock.database,
                    load_policy=lambda: mock.policy, load_tasks=lambda: reads_only)
    problems = write_then_raise_changes_nothing(domain)
    assert any("write tool transfer is called by no gold" in p for p in problems), problems
