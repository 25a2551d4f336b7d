"""Chat completions through litellm with retries, shared by the `tool_calling` agent and the `llm` user.

litellm is imported on first call, after LITELLM_LOCAL_MODEL_COST_MAP is set, so importing a
plugin never touches the network and costs nothing. Rate limits, 5xx, connection errors and
timeouts are retried with exponential backoff; anything else (a bad request, a wrong key)
fails at once with the server's message.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from typing import Any

from tau_emotion.core.models import Message, ToolCall

RETRYABLE = ("RateLimitError", "APIConnectionError", "Timeout", "APITimeoutError", "InternalServerError",
             "ServiceUnavailableError", "BadGatewayError")


class ModelCallError(RuntimeError):
    """A model call failed for good (after retries, or with a non-retryable error)."""


def import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    return litellm


@dataclass
class ModelSettings:
    model: str
    api_base: str | None = None
    api_key: str | None = None
    temperature: float = 0.0
    max_retries: int = 4
    retry_wait_s: float = 1.0
    timeout_s: float = 120.0

    @classmethod
    def from_config(cls, config: Any, role: str) -> ModelSettings:
        model = getattr(config, f"{role}_model")
        if not model:
            raise ModelCallError(f"the {role} needs a model: pass --{role}-model (e.g. openai/Qwen3-8B with --{role}-api-base)")
        opts = config.options
        base = getattr(config, f"{role}_api_base")
        key = opts.get(f"{role}_api_key") or os.environ.get("TAU_API_KEY") or ("EMPTY" if base else None)
        return cls(model=model, api_base=base, api_key=key, temperature=getattr(config, f"{role}_temperature"),
                   max_retries=int(opts.get("max_retries", 4)), retry_wait_s=float(opts.get("retry_wait", 1.0)),
                   timeout_s=float(opts.get("model_timeout", 120.0)))


def to_openai(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "name": m.name, "content": m.content or ""})
        elif m.role == "assistant" and m.tool_calls:
            out.append({"role": "assistant", "content": m.content, "tool_calls": [
                {"id": c.id, "type": "function", "function": {
                    "name": c.name,
                    "arguments": c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments)}}
                for c in m.tool_calls]})
        else:
            out.append({"role": m.role, "content": m.content or ""})
    return out


def _parse_arguments(raw: Any) -> dict[str, Any] | str:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, json.JSONDecodeError):
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


async def complete(settings: ModelSettings, messages: list[dict[str, Any]],
                   tools: list[dict[str, Any]] | None = None) -> Message:
    """One assistant message from the model, retried on transient failures."""
    litellm = import_litellm()
    kwargs: dict[str, Any] = {"model": settings.model, "messages": messages, "temperature": settings.temperature,
                              "timeout": settings.timeout_s, "num_retries": 0}
    if settings.api_base:
        kwargs["api_base"] = settings.api_base
    if settings.api_key:
        kwargs["api_key"] = settings.api_key
    if tools:
        kwargs["tools"] = tools
    attempt = 0
    while True:
        try:
            response = await litellm.acompletion(**kwargs)
            break
        except Exception as exc:
            if not _is_retryable(exc) or attempt >= settings.max_retries:
                detail = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
                tries = f" after {attempt + 1} attempts" if attempt else ""
                raise ModelCallError(f"{settings.model} at {settings.api_base or 'default endpoint'} failed{tries}: "
                                     f"{type(exc).__name__}: {detail}") from None
            await asyncio.sleep(settings.retry_wait_s * (2 ** attempt))
            attempt += 1
    choice = response.choices[0].message
    calls = [ToolCall(id=c.id or f"call-{i}", name=c.function.name or "", arguments=_parse_arguments(c.function.arguments))
             for i, c in enumerate(getattr(choice, "tool_calls", None) or [])]
    return Message(role="assistant", content=choice.content, tool_calls=calls, usage=_usage(litellm, response))
