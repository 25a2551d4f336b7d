"""The `litellm` plugin: the default model client, serving every caller of a chat model.

litellm itself is the optional `[providers]` extra (it is ~200 MB): without it the plugin still loads,
and making a client for a model that needs it is one line naming the extra to install, raised when the
run starts (the agent's and user's `tau_run_start` make their clients), not once per trial.

Agents, simulated users and Tracer's model-backed steps get their client from the model-client
catalog (`pm.model_client(settings, config)`); this plugin registers the litellm one. The retry
options (`--max-retries`, `--retry-wait`, `--model-timeout`) are the `model_calls` plugin's, which
it requires. litellm is imported on first call, with LITELLM_LOCAL_MODEL_COST_MAP set for that
import only, so loading the plugin never touches the network and costs nothing. Rate limits, 5xx, connection errors and timeouts are retried with
exponential backoff, and so are replies with no usable message (empty `choices`, a `null`
message); anything else (a bad request, a wrong key) fails at once with the server's message,
scrubbed of keys. `--model-timeout` is a wall-clock deadline on each attempt (`asyncio.wait_for`),
so a server that trickles bytes cannot hold a call for ever.
"""

from __future__ import annotations

import os
import sys
from importlib.util import find_spec
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.models import Message, ModelSettings, RunConfig
from tau_emotion.plugins.model_calls import (
    EmptyReply,
    ModelCallError,
    RetryOptions,
    counted,
    retry_options,
    to_message,
    token_usage,
    with_retries,
)

#: the retry options and loop both clients share
tau_requires = ["model_calls"]

COST_MAP_ENV = "LITELLM_LOCAL_MODEL_COST_MAP"
#: what to install for litellm (`pyproject.toml`'s `providers` extra)
INSTALL_HINT = "pip install 'tau-emotion[providers]'"

__all__ = ["EmptyReply", "LitellmClient", "ModelCallError", "RetryOptions", "complete"]


def installed() -> bool:
    """Whether litellm can be imported (without importing it: that takes seconds)."""
    if "litellm" in sys.modules:
        return sys.modules["litellm"] is not None
    return find_spec("litellm") is not None


def not_installed(settings: ModelSettings) -> ModelCallError:
    """The one line for a model only litellm serves, in an install without it."""
    return ModelCallError(f"model '{settings.model}' needs litellm, which is not installed: {INSTALL_HINT} (an "
                          "OpenAI-compatible endpoint, given with --agent-api-base or --user-api-base, needs no extra)")


def import_litellm() -> Any:
    """litellm, imported with its packaged price map: litellm reads LITELLM_LOCAL_MODEL_COST_MAP once, while it
    imports (else it downloads the map), so the variable is set for the import only and the process environment
    is left as it was."""
    if not installed():
        raise ModelCallError(f"litellm is not installed: {INSTALL_HINT}")
    if "litellm" not in sys.modules:
        before = os.environ.get(COST_MAP_ENV)
        os.environ.setdefault(COST_MAP_ENV, "True")
        try:
            import litellm  # noqa: F401
        finally:
            if before is None:
                os.environ.pop(COST_MAP_ENV, None)
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    return litellm


def _cost(litellm: Any, response: Any) -> float:
    try:
        return float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception:  # unknown model price: cost is simply not known
        return 0.0


class LitellmClient:
    """A `ModelClient` over `litellm.acompletion`."""

    def __init__(self, settings: ModelSettings, config: RunConfig | None = None, retry: RetryOptions | None = None):
        if not installed():
            raise not_installed(settings)
        self.settings = settings
        self.retry = retry or retry_options(config)

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Message:
        return await complete(self.settings, self.retry, messages, tools)


async def complete(settings: ModelSettings, retry: RetryOptions, messages: list[dict[str, Any]],
                   tools: list[dict[str, Any]] | None = None) -> Message:
    """One assistant message from the model, retried on transient failures."""
    litellm = import_litellm()
    kwargs: dict[str, Any] = {"model": settings.model, "messages": messages, "temperature": settings.temperature,
                              "timeout": retry.model_timeout, "num_retries": 0, **settings.args}
    if settings.api_base:
        kwargs["api_base"] = settings.api_base
        if settings.model.partition("/")[0] not in litellm.provider_list:
            kwargs["custom_llm_provider"] = "openai"  # a bare model name served by an OpenAI-compatible server
    if settings.api_key:
        kwargs["api_key"] = settings.api_key
    if tools:
        kwargs["tools"] = tools
    response, choice, retries = await with_retries(settings, retry, lambda: litellm.acompletion(**kwargs))
    return to_message(choice, counted(token_usage(response, _cost(litellm, response)), retries))


@hookimpl
def tau_register_model_clients(register):
    register("litellm", LitellmClient, default=True)


