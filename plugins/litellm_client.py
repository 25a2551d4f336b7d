"""The `litellm` plugin: the default model client, serving every caller of a chat model.

Agents, simulated users and Tracer's model-backed steps get their client from the model-client
catalog (`pm.model_client(settings, config)`); this plugin registers the litellm one and owns
the retry options (`--max-retries`, `--retry-wait`, `--model-timeout`). litellm is imported on
first call, after LITELLM_LOCAL_MODEL_COST_MAP is set, so loading the plugin never touches the
network and costs nothing. Rate limits, 5xx, connection errors and timeouts are retried with
exponential backoff, and so are replies with no usable message (empty `choices`, a `null`
message); anything else (a bad request, a wrong key) fails at once with the server's message,
scrubbed of keys. `--model-timeout` is a wall-clock deadline on each attempt (`asyncio.wait_for`),
so a server that trickles bytes cannot hold a call for ever.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from pydantic import BaseModel, Field

from tau_emotion.core import hookimpl
from tau_emotion.core.errors import TauError
from tau_emotion.core.limits import scrub
from tau_emotion.core.models import Message, ModelSettings, RunConfig, ToolCall

RETRYABLE = ("RateLimitError", "APIConnectionError", "Timeout", "APITimeoutError", "InternalServerError",
             "ServiceUnavailableError", "BadGatewayError", "TimeoutError", "EmptyReply")


class EmptyReply(Exception):
    """The server answered 200 with no usable message (no choices, a null message); retried like a 5xx."""


class ModelCallError(TauError):
    """A model call failed for good (after retries, or with a non-retryable error)."""


class RetryOptions(BaseModel):
    max_retries: int = Field(4, ge=0, description="Retries of a failing model call.")
    retry_wait: float = Field(1.0, ge=0, description="First backoff in seconds (doubles each retry).")
    model_timeout: float = Field(120.0, gt=0, description="Wall-clock seconds one model call attempt may take "
                                 "(a deadline on the whole reply, not per read).")


def import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    return litellm


def _parse_arguments(raw: Any) -> dict[str, Any] | str:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError, RecursionError):
        return str(raw)
    return value if isinstance(value, dict) else str(raw)


def _usage(litellm: Any, response: Any) -> dict[str, float]:
    usage = getattr(response, "usage", None)
    out = {k: float(getattr(usage, k, 0) or 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    try:
        out["cost"] = float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception:  # unknown model price: cost is simply not known
        out["cost"] = 0.0
    return out


def _is_retryable(exc: Exception) -> bool:
    names = {cls.__name__ for cls in type(exc).__mro__}
    status = getattr(exc, "status_code", None)
    return bool(names & set(RETRYABLE)) or (isinstance(status, int) and (status == 429 or status >= 500))


def _message_of(response: Any) -> Any:
    """The first choice's message; EmptyReply (retried) when the reply has none."""
    choices = getattr(response, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    if message is None:
        raise EmptyReply("the reply has no choices" if not choices else "the reply's message is null")
    content, calls = getattr(message, "content", None), getattr(message, "tool_calls", None)
    if content is not None and not isinstance(content, str):
        raise EmptyReply(f"the reply's content is a {type(content).__name__}, not text")
    if calls is not None and not isinstance(calls, list):
        raise EmptyReply("the reply's tool_calls is not a list")
    return message


class LitellmClient:
    """A `ModelClient` over `litellm.acompletion`."""

    def __init__(self, settings: ModelSettings, config: RunConfig | None = None, retry: RetryOptions | None = None):
        self.settings = settings
        self.retry = retry or (config.options_for("litellm", RetryOptions) if config is not None else RetryOptions())

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Message:
        return await complete(self.settings, self.retry, messages, tools)


async def complete(settings: ModelSettings, retry: RetryOptions, messages: list[dict[str, Any]],
                   tools: list[dict[str, Any]] | None = None) -> Message:
    """One assistant message from the model, retried on transient failures."""
    litellm = import_litellm()
    kwargs: dict[str, Any] = {"model": settings.model, "messages": messages, "temperature": settings.temperature,
                              "timeout": retry.model_timeout, "num_retries": 0}
    if settings.api_base:
        kwargs["api_base"] = settings.api_base
        if settings.model.partition("/")[0] not in litellm.provider_list:
            kwargs["custom_llm_provider"] = "openai"  # a bare model name served by an OpenAI-compatible server
    if settings.api_key:
        kwargs["api_key"] = settings.api_key
    if tools:
        kwargs["tools"] = tools
    attempt = 0
    while True:
        try:
            response = await asyncio.wait_for(litellm.acompletion(**kwargs), timeout=retry.model_timeout)
            choice = _message_of(response)
            break
        except Exception as exc:
            if not _is_retryable(exc) or attempt >= retry.max_retries:
                if isinstance(exc, TimeoutError):
                    detail = f"no complete reply within --model-timeout {retry.model_timeout:g} s"
                else:
                    detail = str(exc).splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise ModelCallError(scrub(f"{settings.model} at {settings.api_base or 'default endpoint'} "
                                           f"failed{tries}: {type(exc).__name__}: {detail}")) from None
            await asyncio.sleep(retry.retry_wait * (2 ** attempt))
            attempt += 1
    calls = []
    for i, c in enumerate(getattr(choice, "tool_calls", None) or []):
        function = getattr(c, "function", None)  # a garbled call still reaches the agent's tools as an error
        calls.append(ToolCall(id=str(getattr(c, "id", None) or f"call-{i}"), name=str(getattr(function, "name", None) or ""),
                              arguments=_parse_arguments(getattr(function, "arguments", None))))
    return Message(role="assistant", content=choice.content, tool_calls=calls, usage=_usage(litellm, response))


@hookimpl
def tau_register_model_clients(register):
    register("litellm", LitellmClient, default=True)


@hookimpl
def tau_register_options(register):
    register("litellm", RetryOptions)
