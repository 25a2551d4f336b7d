"""The `openai` plugin: the lean model client for OpenAI-compatible endpoints (vLLM, llama.cpp, hosted APIs).

It serves a model named `openai/NAME`, `hosted_vllm/NAME` or a bare `NAME` whenever an api_base is
given (or any model with `--agent-client openai`); litellm keeps every other provider. Why a second
client: at 256 concurrent episodes litellm spent ~5 ms of client CPU per call and the official `openai`
SDK's `AsyncOpenAI` 13-18 ms (`benchmarks/load.py --client sdk`; docs/scale.md), so a run on two cores
could not keep a model server busy. Here a request is the chat-completions body in compact JSON, each
history message encoded once (`body`), POSTed on keep-alive connections shared
by every client of the run (`http_pool`), and the reply is read with `json.loads` into attribute
objects. Retries, the per-attempt deadline, reply checks, usage and the error text are shared with
the litellm client (`model_calls`). Cost comes from litellm's price table file when litellm (the
`[providers]` extra) is installed and prices the model, read without importing litellm; else it is 0.
No vendor library is imported.
"""

from __future__ import annotations

import json
import os
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

from tau_emotion.core import hookimpl
from tau_emotion.core.models import Message, ModelSettings, RunConfig
from tau_emotion.plugins.http_pool import APIStatusError, origin
from tau_emotion.plugins.model_calls import (
    MalformedReply,
    RetryOptions,
    counted,
    retry_options,
    to_message,
    token_usage,
    with_retries,
)

#: the retry options and loop both clients share
tau_requires = ["model_calls"]

PREFIXES = ("openai", "hosted_vllm")


def serves(settings: ModelSettings) -> bool:
    """True for an OpenAI-compatible endpoint this client takes without being named.

    The pool speaks HTTP directly and knows no proxies, so an endpoint that the environment's proxy
    settings (HTTP(S)_PROXY / ALL_PROXY, minus NO_PROXY) would route is left to litellm.
    """
    prefix, slash, _ = settings.model.partition("/")
    if not settings.api_base or not (prefix in PREFIXES or not slash):
        return False
    return not _proxied(settings.api_base)


def _proxied(url: str) -> bool:
    import urllib.request

    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(parts.hostname or "")


def wire_model(model: str) -> str:
    prefix, slash, rest = model.partition("/")
    return rest if slash and prefix in PREFIXES else model


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


#: built once: `json.loads(..., object_hook=)` builds a decoder on every call
_DECODER = json.JSONDecoder(object_hook=_namespace)

#: compact JSON (no blank after `,` and `:`): the defaults send ~7% more bytes per request for the same text
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


def encoded(obj: Any) -> bytes:
    """`obj` as request-body JSON."""
    return _ENCODE(obj).encode()


def _reply(payload: bytes) -> Any:
    """A reply's JSON (as `json.loads` reads bytes) as attribute objects."""
    return _DECODER.decode(payload.decode(json.detect_encoding(payload), "surrogatepass"))


#: wire forms of the read-only objects every episode of a run sends alike (the agent's system message, the
#: tool list: frozen, hence hashable by content), shared by all clients; bounded
_shared: dict[Any, tuple[Any, bytes]] = {}
SHARED_MAX = 256


def _shared_encoded(obj: Any) -> bytes | None:
    """`obj`'s JSON from the shared cache when `obj` is hashable (read-only), else None."""
    try:
        hit = _shared.get(obj)
    except TypeError:  # a plain dict or list: it may change, so it is encoded where it is used
        return None
    if hit is None or hit[0] is not obj:  # an equal object (1 == 1.0) may still encode differently
        if len(_shared) >= SHARED_MAX:
            _shared.clear()
        hit = _shared[obj] = (obj, encoded(obj))
    return hit[1]


def transport() -> Any:
    """The pool `origin(url)` function of the HTTP transport: the hand-written pool, or aiohttp with
    `TAU_HTTP=aiohttp` (what `benchmarks/load.py --http` compares)."""
    if os.environ.get("TAU_HTTP") == "aiohttp":
        from tau_emotion.plugins.http_aiohttp import origin as aiohttp_origin

        return aiohttp_origin
    return origin


def status_error(status: int, payload: bytes) -> APIStatusError:
    """An HTTP error reply as one line: the server's error message when it sent one (429 and 5xx are retried)."""
    try:
        body = json.loads(payload)
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    detail = error.get("message") if isinstance(error, dict) else payload.decode("utf-8", "replace").strip()
    return APIStatusError(f"Error code: {status} - {' '.join(str(detail).split())[:300]}", status, payload)


class OpenAIClient:
    """A `ModelClient` that POSTs chat completions to an OpenAI-compatible endpoint."""

    def __init__(self, settings: ModelSettings, config: RunConfig | None = None, retry: RetryOptions | None = None):
        self.settings = settings
        self.retry = retry or retry_options(config)
        self.url = (settings.api_base or "https://api.openai.com/v1").rstrip("/") + "/chat/completions"
        self.path = urlsplit(self.url).path
        self.headers = (f"Authorization: Bearer {settings.api_key or 'EMPTY'}\r\nContent-Type: application/json\r\n"
                        "Accept: application/json\r\nUser-Agent: tau-emotion\r\n").encode()
        self.model = wire_model(settings.model)
        self._origin = transport()
        #: the last tool list sent (held, so `is` identifies it) and its wire form
        self._tools: tuple[Any, bytes] = (None, b"")
        #: (first message, last message, count, encoded parts) of the last history sent
        self._sent: tuple[Any, Any, int, list[bytes]] = (None, None, 0, [])

    async def _attempt(self, content: bytes) -> Any:
        status, payload = await self._origin(self.url).request("POST", self.path, self.headers, content)
        if status >= 400:
            raise status_error(status, payload)
        try:
            return _reply(payload)
        except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, nested past the parser's limit
            detail = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
            raise MalformedReply(f"the 200 reply's body is not a JSON completion ({detail})") from None

    def _tools_encoded(self, tools: Any) -> bytes:
        """The tool list's JSON: from the shared cache when it is read-only, else once while the caller sends
        the same list object (the one it holds keeps `is` meaningful)."""
        shared = _shared_encoded(tools)
        if shared is not None:
            return shared
        if self._tools[0] is not tools:
            self._tools = (tools, encoded(tools))
        return self._tools[1]

    def body(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> list[bytes]:
        """The request body as parts (joined, they are the JSON object): nothing is copied into one buffer.

        A read-only (frozen) system message and tool list go through a cache every client shares (each
        episode's agent sends the same ones); the history is encoded once per message (`_history`)."""
        args = dict(self.settings.args)
        extra = args.pop("extra_body", None) or {}  # as the SDK does: merged into the body (vLLM's own fields)
        head = {"model": self.model, "temperature": self.settings.temperature, **args, **extra}
        parts = [encoded(head)[:-1] + b',"messages":[', *self._history(messages), b"]"]
        if tools:
            parts += [b',"tools":', self._tools_encoded(tools)]
        parts.append(b"}")
        return parts

    def _history(self, messages: list[dict[str, Any]]) -> list[bytes]:
        """The messages' encoded parts with their separators. A history that grew from the last one sent (the
        same first and last objects at the same places: histories are appended to, never edited) adds only
        its new messages, so a 200-step episode does not look up 400 messages on every step."""
        first, last, count, parts = self._sent
        if not (count and len(messages) >= count and messages[0] is first and messages[count - 1] is last):
            count, parts = 0, []
        for message in messages[count:]:
            if parts:
                parts.append(b",")
            parts.append(_shared_encoded(message) or encoded(message))
        self._sent = (messages[0], messages[-1], len(messages), parts) if messages else (None, None, 0, [])
        return parts

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Message:
        content = self.body(messages, tools)
        response, choice, retries = await with_retries(self.settings, self.retry, lambda: self._attempt(content))
        usage = counted(token_usage(response), retries)
        usage["cost"] = cost_of(self.settings.model, usage)
        return to_message(choice, usage)


@hookimpl
def tau_run_end(run, summary):
    """An aiohttp session (`TAU_HTTP=aiohttp`) is closed with the run; the hand-written pool needs nothing."""
    import asyncio
    import sys

    module = sys.modules.get("tau_emotion.plugins.http_aiohttp")
    if module is not None:
        try:
            asyncio.get_running_loop().create_task(module.close())  # awaited by the run's shutdown
        except RuntimeError:  # no running loop (a store-only end): nothing to close
            pass


@hookimpl
def tau_register_model_clients(register):
    register("openai", OpenAIClient, serves=serves)
