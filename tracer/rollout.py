"""Optional validation by rollout: a model plays both the agent and the user, and must solve the task once.

This runs the harness's own episode loop (the `tool_calling` agent and the `llm` user from the
default plugins, at most 50 agent steps as for Tracer collection), so a candidate is kept only when
an end-to-end conversation reaches reward 1: the instruction is followable and the gold trajectory
reachable from it. What went wrong is the validator's to judge: a failed rollout rejects the candidate with the
check `rollout` (`Validator.check_rollout`).
"""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tau_emotion.core.domain import Domain
    from tau_emotion.tracer.grounding import Candidate

ROLLOUT_STEPS = 50


class RolloutCheck:
    """Call with a candidate (whose task is set): None when the rollout scores 1, else what it scored and why."""

    def __init__(self, domain: Domain, model: str, api_base: str | None = None, *, max_steps: int = ROLLOUT_STEPS,
                 options: dict[str, dict[str, Any]] | None = None, pm: Any = None):
        """`options`: extra plugin options by group (e.g. `{"model_calls": {"retry_wait": 0.01}}`)."""
        from tau_emotion.core.manager import get_plugin_manager
        from tau_emotion.core.models import RunConfig

        self.domain = domain
        self.model = model
        self.pm = get_plugin_manager() if pm is None else pm
        groups: dict[str, dict[str, Any]] = {
            "agent": {"agent_model": model, "agent_api_base": api_base},  # the roles contract's groups (core.roles)
            "user": {"user_model": model, "user_api_base": api_base},
            "progress": {"no_progress": True},
        }
        for group, values in (options or {}).items():
            groups.setdefault(group, {}).update(values)
        self.config = RunConfig(agent="tool_calling", user="llm", max_steps=max_steps, trials=1, options=groups)

    def __call__(self, cand: Candidate) -> str | None:
        result = asyncio.run(self._run(cand))
        if result.reward == 1.0:
            return None
        why = result.error or result.termination.reason
        return f"the {self.model} rollout scored {result.reward:+.0f} ({why})"

    async def _run(self, cand: Candidate) -> Any:
        from tau_emotion.core.runner import Run, run_one

        assert cand.task is not None
        run = Run(run_id="tracer-rollout", config=self.config, pm=self.pm, store=None,
                  domains={self.domain.name: self.domain}, tasks=[cand.task])
        outcome = run_one(run, cand.task, 0)
        return await outcome if inspect.isawaitable(outcome) else outcome
