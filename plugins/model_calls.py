"""The `model_calls` plugin: what every model client shares: retry options, the retry loop with its deadline,
reply checks, usage.

It owns `--max-retries`, `--retry-wait`, `--model-timeout` and `--no-preflight` (option group
`model_calls`); both client plugins require it (`tau_requires`), so blocking one client leaves the
options with their owner.

The `litellm` and `openai` client plugins differ only in how one attempt reaches the server;
everything a caller can observe (which failures are retried and how long, the wall-clock
deadline on each attempt, a reply with no usable message retried like a 5xx, the one-line
error naming model and endpoint with keys scrubbed, tool calls parsed, usage and cost) lives
here once. This module imports no vendor library.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, Field

from tau_emotion.core import hookimpl
from tau_emotion.core.errors import TauError
from tau_emotion.core.limits import scrub
from tau_emotion.core.models import Message, ModelSettings, ToolCall

RETRYABLE = ("RateLimitError", "APIConnectionError", "Timeout", "APITimeoutError", "InternalServerError",
             "ServiceUnavailableError", "BadGatewayError", "TimeoutError", "EmptyReply")


class EmptyReply(Exception):
    """The server answered 200 with no usable message (no choices, a null message); retried like a 5xx."""


class ModelCallError(TauError):
    """A model call failed for good (after retries, or with a non-retryable error)."""


#: the option group of the retry options: this plugin's own
GROUP = "model_calls"


class RetryOptions(BaseModel):
    max_retries: int = Field(4, ge=0, description="Retries of a failing model call.")
    retry_wait: float = Field(1.0, ge=0, description="First backoff in seconds (doubles each retry).")
    model_timeout: float = Field(120.0, gt=0, description="Wall-clock seconds one model call attempt may take "
                                 "(a deadline on the whole reply, not per read).")
    no_preflight: bool = Field(False, description="Do not check each model endpoint (GET /models) before the run.")


def retry_options(config: Any) -> RetryOptions:
    """The run's retry options (option group `model_calls`, registered by this module as a plugin, read by every
    client)."""
    return config.options_for(GROUP, RetryOptions) if config is not None else RetryOptions()


@hookimpl
def tau_register_options(register):
    register(GROUP, RetryOptions)


def parse_arguments(raw: Any) -> dict[str, Any] | str:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError, RecursionError):
        return str(raw)
    return value if isinstance(value, dict) else str(raw)


def is_retryable(exc: Exception) -> bool:
    names = {cls.__name__ for cls in type(exc).__mro__}
    status = getattr(exc, "status_code", None)
    return bool(names & set(RETRYABLE)) or (isinstance(status, int) and (status == 429 or status >= 500))


def message_of(response: Any) -> Any:
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


def token_usage(response: Any, cost: float = 0.0) -> dict[str, float]:
    usage = getattr(response, "usage", None)
    out = {k: float(getattr(usage, k, 0) or 0) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    out["cost"] = cost
    return out


def counted(usage: dict[str, float], retries: int) -> dict[str, float]:
    """`usage` with the call's retries (`retries`, only when there were some)."""
    if retries:
        usage["retries"] = float(retries)
    return usage


def to_message(choice: Any, usage: dict[str, float]) -> Message:
    """Our assistant `Message` from a reply's message; its wire form is kept so later steps send it as is."""
    calls = []
    for i, c in enumerate(getattr(choice, "tool_calls", None) or []):
        function = getattr(c, "function", None)  # a garbled call still reaches the agent's tools as an error
        calls.append(ToolCall(id=str(getattr(c, "id", None) or f"call-{i}"), name=str(getattr(function, "name", None) or ""),
                              arguments=parse_arguments(getattr(function, "arguments", None))))
    return Message(role="assistant", content=choice.content, tool_calls=calls, usage=usage)


async def with_retries(settings: ModelSettings, retry: RetryOptions,
                       attempt_call: Callable[[], Awaitable[Any]]) -> tuple[Any, Any, int]:
    """(response, message, retries) of the first attempt that gives a usable message; transient failures are
    retried with exponential backoff, each attempt under the `--model-timeout` deadline. A client puts the
    retries in the reply's usage (`counted`), so they travel with the episode's result, from any process."""
    attempt = 0
    while True:
        try:
            async with asyncio.timeout(retry.model_timeout):  # no task per attempt, as wait_for makes
                response = await attempt_call()
            return response, message_of(response), attempt
        except Exception as exc:
            if not is_retryable(exc) or attempt >= retry.max_retries:
                raise call_error(settings, retry, exc, attempt + 1) from None
            await asyncio.sleep(retry.retry_wait * (2 ** attempt))
            attempt += 1


def call_error(settings: ModelSettings, retry: RetryOptions, exc: BaseException, attempts: int = 1) -> ModelCallError:
    if isinstance(exc, TimeoutError):
        detail = f"no complete reply within --model-timeout {retry.model_timeout:g} s"
    else:
        detail = str(exc).splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    return ModelCallError(scrub(f"{settings.model} at {settings.api_base or 'default endpoint'} "
                                f"failed{tries}: {type(exc).__name__}: {detail}"))


#: (run id, endpoint) pairs checked already: the agent and the user of a run often share an endpoint
_checked: dict[tuple[str, str], None] = {}
CHECKED_MAX = 256


def preflight(settings: ModelSettings, config: Any, role: str, timeout: float = 5.0, run_id: str | None = None) -> None:
    """Check `settings`' endpoint before any trial starts: GET `{api_base}/models`, once per run when `run_id`
    is given.

    A refused connection, a timeout, a reply that is not HTTP or a 401/403 is a one-line `TauError`
    naming the URL and the error (within `timeout` seconds); any other answer (404 from a server
    without a models listing included) proves the endpoint is there. A model with no api_base (a
    hosted provider) is not checked: that would spend a paid call. `--no-preflight` skips it.
    """
    if not settings.api_base or retry_options(config).no_preflight:
        return
    base = settings.api_base.rstrip("/")
    if run_id is not None and (run_id, base) in _checked:
        return
    import urllib.error
    import urllib.request

    request = urllib.request.Request(f"{base}/models", headers={"Authorization": f"Bearer {settings.api_key or 'EMPTY'}"})
    problem = None
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            pass
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            problem = f"HTTP {exc.code} {exc.reason} (check --{role}-api-key or TAU_API_KEY)"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        problem = f"{type(reason).__name__}: {getattr(reason, 'strerror', None) or reason}"
    if problem:
        raise ModelCallError(scrub(f"the {role} model endpoint {base} does not answer (GET {base}/models): {problem}; "
                                   f"check --{role}-api-base (or pass --no-preflight)"))
    if run_id is not None:
        if len(_checked) >= CHECKED_MAX:
            _checked.clear()
        _checked[(run_id, base)] = None
