"""The `model_calls` plugin: what every model client shares: retry options, the retry loop with its deadline,
reply checks, usage.

It owns `--max-retries`, `--retry-wait`, `--model-timeout` and `--no-preflight` (option group
`model_calls`); both client plugins require it (`tau_requires`), so blocking one client leaves the
options with their owner.

The `litellm` and `openai` client plugins differ only in how one attempt reaches the server;
everything a caller can observe (which failures are retried and how long, the wall-clock
deadline on each attempt, a reply with no usable message or a 200 body that is not a completion retried like a
5xx, the one-line
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
from tau_emotion.core.limits import MAX_NAME_CHARS, finite_number, scrub, truncate
from tau_emotion.core.models import Message, ModelSettings, ToolCall

RETRYABLE = ("RateLimitError", "APIConnectionError", "Timeout", "APITimeoutError", "InternalServerError",
             "ServiceUnavailableError", "BadGatewayError", "TimeoutError", "EmptyReply", "MalformedReply")


class EmptyReply(Exception):
    """The server answered 200 with no usable message (no choices, a null message); retried like a 5xx."""


class MalformedReply(EmptyReply):
    """The server answered 200 with a body that is not a chat completion (not JSON, not an object, choices that
    are not a list): a fault of the server's like a 5xx, so it is retried the same way (`--max-retries`)."""


class ModelCallError(TauError):
    """A model call failed for good (after retries, or with a non-retryable error)."""


#: the option group of the retry options: this plugin's own
GROUP = "model_calls"
#: longest single backoff between two attempts (and the largest --retry-wait)
MAX_WAIT = 600.0


class RetryOptions(BaseModel):
    max_retries: int = Field(4, ge=0, description="Retries of a failing model call.")
    retry_wait: float = Field(1.0, ge=0, le=MAX_WAIT, allow_inf_nan=False,
                              description="First backoff in seconds (doubles each retry, at most 10 minutes).")
    model_timeout: float = Field(120.0, gt=0, le=86_400, allow_inf_nan=False, description="Wall-clock seconds one model call attempt may take "
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
    if not isinstance(choices, (list, tuple)):
        raise MalformedReply(f"the reply's choices is a {type(choices).__name__}, not a list")
    message = getattr(choices[0], "message", None) if choices else None
    if message is None:
        raise EmptyReply("the reply has no choices" if not choices else "the reply's message is null")
    if isinstance(message, (str, bytes, int, float, list, tuple)):
        raise MalformedReply(f"the reply's message is a {type(message).__name__}, not an object")
    content, calls = getattr(message, "content", None), getattr(message, "tool_calls", None)
    if content is not None and not isinstance(content, str):
        raise EmptyReply(f"the reply's content is a {type(content).__name__}, not text")
    if calls is not None and not isinstance(calls, list):
        raise EmptyReply("the reply's tool_calls is not a list")
    return message


def token_usage(response: Any, cost: float = 0.0) -> dict[str, float]:
    """Token counts and cost of a reply; a count that is not a finite number (`1e400`, `NaN`, `"n/a"`) is 0."""
    usage = getattr(response, "usage", None)
    out = {k: finite_number(getattr(usage, k, 0)) or 0.0 for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    out["cost"] = finite_number(cost) or 0.0
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
        # a name or id is stored with every call and shown in tables: bounded like other text (a 10 MB
        # tool name made a 480 MB results file); an unknown name is a tool error the agent sees anyway
        name = truncate(str(getattr(function, "name", None) or ""), MAX_NAME_CHARS)
        ident = truncate(str(getattr(c, "id", None) or f"call-{i}"), MAX_NAME_CHARS)
        calls.append(ToolCall(id=ident, name=name, arguments=parse_arguments(getattr(function, "arguments", None))))
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
            await asyncio.sleep(min(retry.retry_wait * (2 ** min(attempt, 30)), MAX_WAIT))
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
    shown = without_userinfo(base)
    problem = _models_problem(f"{base}/models", settings.api_key, timeout, role)
    if problem:
        raise ModelCallError(scrub(f"the {role} model endpoint {shown} does not answer (GET {shown}/models): {problem}; "
                                   f"check --{role}-api-base (or pass --no-preflight)"))
    if run_id is not None:
        if len(_checked) >= CHECKED_MAX:
            _checked.clear()
        _checked[(run_id, base)] = None


def without_userinfo(url: str) -> str:
    """`url` with any `user:password@` taken out (it must never be shown or stored)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _models_problem(url: str, api_key: str | None, timeout: float, role: str) -> str | None:
    """Why GET `url` does not show a live endpoint, or None; at most `timeout` seconds in total (a server
    trickling its headers cannot hold it: the request runs on a daemon thread the caller stops waiting for).
    Redirects are not followed, so the key is never sent to another origin."""
    import http.client
    import threading
    from urllib.parse import urlsplit

    answer: dict[str, Any] = {}

    def ask() -> None:
        try:
            parts = urlsplit(url)
            kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"not an http(s) URL: {without_userinfo(url)}")
            conn = kind(parts.hostname, parts.port, timeout=timeout)
            try:
                path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
                conn.request("GET", path, headers={"Authorization": f"Bearer {api_key or 'EMPTY'}"})
                reply = conn.getresponse()
                answer["status"], answer["reason"] = reply.status, reply.reason
            finally:
                conn.close()
        except Exception as exc:  # noqa: BLE001 - the caller words it
            answer["error"] = exc

    worker = threading.Thread(target=ask, name="tau-preflight", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return f"no complete answer within {timeout:g} s"
    if "error" in answer:
        exc = answer["error"]
        return f"{type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}"
    if answer["status"] in (401, 403):
        return f"HTTP {answer['status']} {answer['reason']} (check --{role}-api-key or TAU_API_KEY)"
    return None
