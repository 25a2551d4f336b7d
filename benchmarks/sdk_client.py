"""The official `openai` SDK as a model client, for `benchmarks/load.py --client sdk` only.

Issue 36 asked for the SDK's `AsyncOpenAI` (its httpx pool sized to the run's concurrency) to be measured
side by side with the hand-written pool before deciding whether the harness depends on `openai`. This is
that client, a plugin named by module path (`benchmarks` is on sys.path when load.py runs): one
`AsyncOpenAI` per event loop and endpoint, shared by every episode like the pool is, `max_retries=0`
(the retry loop, deadline, reply checks and usage are `model_calls`', the same as both shipped clients).
It needs `pip install openai`; the harness itself does not import it.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.models import Message, ModelSettings, RunConfig
from tau_emotion.plugins.model_calls import RetryOptions, counted, retry_options, to_message, token_usage, with_retries
from tau_emotion.plugins.openai_client import wire_model

tau_requires = ["model_calls"]

_clients: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], Any]] = weakref.WeakKeyDictionary()


def shared_client(base_url: str, api_key: str, connections: int) -> Any:
    """The running loop's `AsyncOpenAI` for this endpoint, its pool holding `connections` keep-alive connections."""
    import sys

    import openai

    http = openai.DefaultAsyncHttpxClient  # the SDK's own defaults (timeouts, redirects) on its httpx flavour
    httpx = sys.modules[http.__mro__[1].__module__.partition(".")[0]]  # httpx, or httpx2 for openai 3
    clients = _clients.setdefault(asyncio.get_running_loop(), {})
    key = (base_url, api_key)
    if key not in clients:
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        clients[key] = openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0,
                                          http_client=http(limits=limits))
    return clients[key]


class SDKClient:
    """A `ModelClient` over `AsyncOpenAI.chat.completions.create`."""

    def __init__(self, settings: ModelSettings, config: RunConfig | None = None, retry: RetryOptions | None = None):
        self.settings = settings
        self.retry = retry or retry_options(config)
        self.connections = max(config.concurrency if config is not None else 1, 1)
        self.model = wire_model(settings.model)

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Message:
        client = shared_client(self.settings.api_base or "https://api.openai.com/v1", self.settings.api_key or "EMPTY",
                               self.connections)
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.settings.temperature,
                                  **self.settings.args}
        if tools:
            kwargs["tools"] = tools
        response, choice, retries = await with_retries(self.settings, self.retry,
                                                       lambda: client.chat.completions.create(**kwargs))
        return to_message(choice, counted(token_usage(response), retries))


@hookimpl
def tau_register_model_clients(register):
    register("sdk", SDKClient)
