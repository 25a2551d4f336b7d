"""The `openai` plugin: the lean model client for OpenAI-compatible endpoints (vLLM, llama.cpp, hosted APIs).

It serves a model named `openai/NAME`, `hosted_vllm/NAME` or a bare `NAME` whenever an api_base is
given (or any model with `--agent-client openai`); litellm keeps every other provider. Why a second
client: at 256 concurrent episodes litellm spent ~5 ms of client CPU per call, and even the `openai`
SDK's request building (options, headers, pydantic reply models) cost ~1 ms, so a run on two cores
could not keep a model server busy. Here a request is one `json.dumps` of the chat-completions body
POSTed on `httpx` connection pools shared by every client of the run (the SDK's own transport), and
the reply is read with `json.loads` into attribute objects. Retries, the per-attempt deadline, reply
checks, usage and the error text are shared with the litellm client (`model_calls`); HTTP errors are
raised as the SDK's `APIStatusError` family, so error names stay those of the SDK. Cost comes from
litellm's price table file when the model is in it, read without importing litellm. `httpx` and
`openai` are imported on first use.
"""

from __future__ import annotations

import json
import ssl
import weakref
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.models import Message, ModelSettings, RunConfig
from tau_emotion.plugins.model_calls import RetryOptions, retry_options, to_message, token_usage, with_retries

PREFIXES = ("openai", "hosted_vllm")
#: httpcore's pool does O(connections^2) bookkeeping on every request (an `is_idle` scan inside a loop
#: over its connections): at 256 connections in one pool that was ~20 ms of CPU per call. A run's
#: connections are therefore spread over a fixed set of small pools, taken in turn per request.
SHARDS = 32
_pools: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def serves(settings: ModelSettings) -> bool:
    """True for an OpenAI-compatible endpoint this client takes without being named."""
    prefix, slash, _ = settings.model.partition("/")
    return bool(settings.api_base) and (prefix in PREFIXES or not slash)


def wire_model(model: str) -> str:
    prefix, slash, rest = model.partition("/")
    return rest if slash and prefix in PREFIXES else model


def pool() -> Any:
    """The next of the running loop's shared `httpx.AsyncClient`s (made on first use)."""
    import asyncio

    state = _pools.setdefault(asyncio.get_running_loop(), {"turn": 0})
    if "clients" not in state:
        import httpx

        tls = ssl.create_default_context()  # loading the CA bundle costs ~17 ms: once, not once per pool
        state["clients"] = [httpx.AsyncClient(limits=httpx.Limits(max_connections=None, max_keepalive_connections=64),
                                              timeout=None, verify=tls) for _ in range(SHARDS)]
    state["turn"] = (state["turn"] + 1) % SHARDS
    return state["clients"][state["turn"]]


@cache
def _prices() -> dict[str, Any]:
    spec = find_spec("litellm")
    if spec is None or not spec.origin:
        return {}
    path = Path(spec.origin).parent / "model_prices_and_context_window_backup.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def cost_of(model: str, usage: dict[str, float]) -> float:
    """Dollars for this call by litellm's price table (0 for a model it does not price, e.g. a local one)."""
    price = _prices().get(model) or _prices().get(wire_model(model)) or {}
    return (usage["prompt_tokens"] * float(price.get("input_cost_per_token") or 0)
            + usage["completion_tokens"] * float(price.get("output_cost_per_token") or 0))


def _namespace(obj: dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(**obj)


def status_error(response: Any) -> Exception:
    """The `openai` SDK's exception for an HTTP error reply (429 and 5xx are retried by their status)."""
    import openai

    try:
        body = response.json()
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    detail = error.get("message") if isinstance(error, dict) else (response.text or "").strip()[:300]
    cls = {400: openai.BadRequestError, 401: openai.AuthenticationError, 403: openai.PermissionDeniedError,
           404: openai.NotFoundError, 409: openai.ConflictError, 422: openai.UnprocessableEntityError,
           429: openai.RateLimitError}.get(response.status_code)
    if cls is None:
        cls = openai.InternalServerError if response.status_code >= 500 else openai.APIStatusError
    return cls(f"Error code: {response.status_code} - {detail}", response=response, body=body)


class OpenAIClient:
    """A `ModelClient` that POSTs chat completions to an OpenAI-compatible endpoint."""

    def __init__(self, settings: ModelSettings, config: RunConfig | None = None, retry: RetryOptions | None = None):
        self.settings = settings
        self.retry = retry or retry_options(config)
        self.url = (settings.api_base or "https://api.openai.com/v1").rstrip("/") + "/chat/completions"
        self.headers = {"Authorization": f"Bearer {settings.api_key or 'EMPTY'}", "Content-Type": "application/json"}
        self.model = wire_model(settings.model)
        self._wire: dict[int, tuple[Any, bytes]] = {}

    async def _attempt(self, content: bytes) -> Any:
        import httpx

        try:
            response = await pool().post(self.url, content=content, headers=self.headers,
                                          timeout=self.retry.model_timeout)
        except httpx.TimeoutException as exc:
            raise TimeoutError(str(exc)) from None
        except httpx.TransportError as exc:
            import openai

            raise openai.APIConnectionError(message=f"Connection error: {type(exc).__name__}: {exc}",
                                            request=exc.request) from None
        if response.status_code >= 400:
            raise status_error(response)
        return json.loads(response.content, object_hook=_namespace)

    def _encoded(self, obj: Any) -> bytes:
        """`obj`'s JSON, encoded once per object: a caller's history (`Message.chat()` dicts, the same
        system message and tool list each step) is not re-serialised on every step."""
        hit = self._wire.get(id(obj))
        if hit is None or hit[0] is not obj:
            hit = self._wire[id(obj)] = (obj, json.dumps(obj).encode())  # holding obj keeps its id unique
        return hit[1]

    def body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> bytes:
        head = {"model": self.model, "temperature": self.settings.temperature, **self.settings.args}
        parts = [json.dumps(head).encode()[:-1], b', "messages": [', b", ".join(map(self._encoded, messages)), b"]"]
        if tools:
            parts += [b', "tools": ', self._encoded(tools)]
        parts.append(b"}")
        return b"".join(parts)

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Message:
        content = self.body(messages, tools)
        response, choice = await with_retries(self.settings, self.retry, lambda: self._attempt(content))
        usage = token_usage(response)
        usage["cost"] = cost_of(self.settings.model, usage)
        return to_message(choice, usage)


@hookimpl
def tau_register_model_clients(register):
    register("openai", OpenAIClient, serves=serves)
