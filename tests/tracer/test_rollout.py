"""The optional rollout check: a model playing agent and user must solve the candidate once."""

import pytest

from tau_emotion.tracer.build import TracerError, build_tasks
from tau_emotion.tracer.rollout import RolloutCheck
from tests.tracer.tiny_pack import HINTS


def _script_good(server):
    server.script("both-agent", {"tool_calls": [{"name": "look", "arguments": {"item_id": "i1"}}]},
                  {"tool_calls": [{"name": "mark", "arguments": {"item_id": "i1", "note": "fragile"}}]},
                  {"content": "Done. The label says red box."})

def test_rollout_keeps_a_task_the_model_solves(domains, openai_server, space):
    tiny = domains.get("tiny_chain")
    rollout = RolloutCheck(tiny, "openai/both-agent", openai_server.base_url, options={"model_calls": {"retry_wait": 0.01}})
    rollout.config.options["user"]["user_model"] = "openai/both-user"
    _script_good(openai_server)
    openai_server.script("both-user", {"content": "Please note 'fragile' on item i1."}, {"content": "Thanks! ###STOP###"})
    report = build_tasks(tiny, "train", 1, 0, min_calls=2, rollout=rollout, space=space, hints=HINTS)
    assert report.accepted == 1 and not report.rejected
    first = [r for r in openai_server.requests if r["model"] == "both-agent"][0]
    assert {t["function"]["name"] for t in first["tools"]} == {"look", "mark"}

def test_rollout_rejects_a_task_the_model_fails(domains, openai_server, space):
    tiny = domains.get("tiny_chain")
    rollout = RolloutCheck(tiny, "openai/both-agent", openai_server.base_url, options={"model_calls": {"retry_wait": 0.01}})
    rollout.config.options["user"]["user_model"] = "openai/both-user"
    for _ in range(3):
        openai_server.script("both-agent", {"content": "Sorry, I can't help with that."})
        openai_server.script("both-user", {"content": "Mark item i1 please."}, {"content": "Bye ###STOP###"})
    with pytest.raises(TracerError) as info:
        build_tasks(tiny, "train", 1, 0, min_calls=2, rollout=rollout, max_candidates=3, space=space,
                    hints=HINTS)
    assert "rollout 3" in str(info.value)
