"""One conformance suite for every installed domain: what a third-party pack must also pass."""

import json
import re

import pytest

from tau_emotion.core.plugins import load_all_plugins
from tau_emotion.core.reward import check_task, expected_hash, replay
from tau_emotion.core.state import Database

_PM = load_all_plugins()
DOMAINS = _PM.catalog("domains")


def _domain(name):
    return DOMAINS.get(name)


pytestmark = pytest.mark.parametrize("name", DOMAINS.names())


def test_tool_schemas_derive(name):
    domain = _domain(name)
    assert domain.toolset.tools, f"{name} has no tools"
    for schema in domain.toolset.schemas:
        fn = schema["function"]
        assert fn["description"], fn["name"]
        assert fn["parameters"]["type"] == "object"
        json.dumps(schema)
        if domain.meta.get("verbatim_schemas"):
            continue  # an adapted suite keeps its authors' schemas word for word, so agents see the same prompts
        for param in fn["parameters"].get("properties", {}).values():
            assert param.get("description"), f"{name}.{fn['name']}: a parameter has no description"


def test_tasks_validate_and_are_unique(name):
    domain = _domain(name)
    tasks = domain.tasks(None)
    assert tasks, f"{name} has no tasks"
    assert len({t.id for t in tasks}) == len(tasks)
    for task in tasks:
        assert task.domain == name
        assert task.user.instruction.strip()
        for action in task.gold.actions:
            assert action.name in domain.toolset, f"{task.id}: unknown gold tool {action.name}"


def test_every_gold_sequence_replays_without_tool_error(name):
    domain = _domain(name)
    for task in domain.tasks(None):
        replay(domain, task)  # raises GoldReplayError naming the task and action


def test_every_gold_trajectory_scores_one(name):
    domain = _domain(name)
    problems = [p for p in (check_task(domain, t) for t in domain.tasks(None)) if p]
    assert not problems, problems[:3]


def test_refusal_reasons_are_declared_with_phrasings_and_used(name):
    """Every reason a gold names is declared (check_task above) and every declared one has phrasings."""
    domain = _domain(name)
    declared = domain.refusal_reasons
    assert all(isinstance(p, list) and p and all(isinstance(x, str) and x.strip() for x in p)
               for p in declared.values())
    used = {r for t in domain.tasks(None) for r in t.gold.reasons}
    assert used <= set(declared)


def test_reset_is_deterministic_and_replay_is_repeatable(name):
    domain = _domain(name)
    initial = domain.database.content_hash
    for task in domain.tasks(None)[:10]:
        first = replay(domain, task).content_hash
        assert replay(domain, task).content_hash == first
        assert domain.database.state().content_hash == initial
        assert expected_hash(domain, task) == first


def test_hash_is_stable_under_key_order(name):
    domain = _domain(name)
    tables = domain.database.tables
    reordered = {t: {k: _reverse(rows[k]) for k in reversed(list(rows))} for t, rows in reversed(list(tables.items()))}
    assert Database(reordered).content_hash == domain.database.content_hash


GENERIC_WORDS = {"update", "modify", "manage", "details", "info", "items", "item", "user"}


def policy_problems(domain) -> list[str]:
    """What a policy fails to govern: every tool that changes data or ends the conversation must be named by
    its words in the policy, and no gold action may break one of the pack's machine-checked policy rules."""
    policy_words = set(re.findall(r"[a-z]+", domain.policy.lower()))
    problems = []
    if len(policy_words) < 20:
        problems.append(f"{domain.name}: the policy is {len(policy_words)} distinct words")
    for tool in domain.toolset.tools.values():
        if not (tool.writes or tool.terminal):
            continue
        words = [w for w in tool.name.split("_") if len(w) >= 4 and w not in GENERIC_WORDS] or [tool.name]
        said = [w for w in words if any(x.startswith(w[:5]) for x in policy_words)]
        if 2 * len(said) < len(words):
            problems.append(f"{domain.name}: the policy never speaks of {tool.name} ({', '.join(words)})")
    for task in domain.tasks(None):
        state = domain.database.state()
        for i, action in enumerate(task.gold.actions):
            for rule in domain.policy_rules:
                broken = rule(state, action.name, dict(action.arguments))
                if broken:
                    problems.append(f"{task.id}: gold action {i} ({action.name}) breaks {rule.__name__}: {broken}")
            domain.toolset.call(state, action.name, action.arguments)
    return problems


def test_policy_governs_what_the_tools_do_and_gold_obeys_its_rules(name):
    assert not policy_problems(_domain(name))[:5]


def _reverse(value):
    if isinstance(value, dict):
        return {k: _reverse(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reverse(v) for v in value]
    return value


def test_tracer_built_splits_pass_the_audit(name):
    """`tau tracer audit` on every Tracer-built split: balanced emotion design, agreeing labels, clean splits."""
    from tau_emotion.tracer.audit import audit_split
    from tau_emotion.tracer.hints import load_hints

    domain = _domain(name)
    splits = sorted({t.split for t in domain.tasks(None) if t.meta.get("source") == "tracer"})
    for split in splits:
        result = audit_split(domain, split, transfer_tool=load_hints(domain).handoff_tool)
        assert result.ok, f"{name}/{split}: " + "; ".join(f"{n}: {d}" for n, ok, d in result.checks if not ok)
