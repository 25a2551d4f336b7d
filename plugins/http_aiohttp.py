"""The lean `openai` client's transport on aiohttp: one session per event loop, a tuned connector.

The same interface as `http_pool.Origin.request` (status, body), chosen with `TAU_HTTP=aiohttp` so
`benchmarks/load.py --http aiohttp` measures both transports side by side on the same harness. The
connector keeps connections alive without a per-host cap (the run's concurrency is the cap), skips
aiohttp's DNS cache for loopback, and the session sends no default headers and follows no redirect
(a redirect never carries the key to another origin); a reply is read up to `MAX_REPLY_BYTES`.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from tau_emotion.plugins.http_pool import MAX_REPLY_BYTES, APIConnectionError

_sessions: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_parsed: dict[bytes, dict[str, str]] = {}


def _headers(raw: bytes) -> dict[str, str]:
    """`Name: value\\r\\n` lines as a dict, parsed once per distinct block (a client sends the same each call)."""
    hit = _parsed.get(raw)
    if hit is None:
        hit = {}
        for line in raw.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.strip():
                hit[name.strip()] = value.strip()
        if len(_parsed) > 256:
            _parsed.clear()
        _parsed[raw] = hit
    return hit


def _session() -> Any:
    import aiohttp

    loop = asyncio.get_running_loop()
    session = _sessions.get(loop)
    if session is None or session.closed:
        connector = aiohttp.TCPConnector(limit=0, limit_per_host=0, force_close=False, keepalive_timeout=60,
                                         enable_cleanup_closed=False, ttl_dns_cache=None)
        session = aiohttp.ClientSession(connector=connector, skip_auto_headers=("User-Agent",),
                                        auto_decompress=False, timeout=aiohttp.ClientTimeout(total=None))
        _sessions[loop] = session
    return session


class AiohttpOrigin:
    def __init__(self, url: str):
        self.url = url.rstrip("/")
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        self.base = f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"

    async def request(self, method: str, path: str, headers: bytes, body: bytes | list[bytes] = b"") -> tuple[int, bytes]:
        import aiohttp

        data = body if isinstance(body, bytes) else b"".join(body)
        try:
            async with _session().request(method, self.base + path, data=data, headers=_headers(headers),
                                          allow_redirects=False) as reply:
                if reply.content_length is not None and reply.content_length > MAX_REPLY_BYTES:
                    raise APIConnectionError(f"Connection error: the reply is {reply.content_length} bytes, "
                                             f"more than {MAX_REPLY_BYTES}")
                payload = await reply.content.read(MAX_REPLY_BYTES + 1)
                while len(payload) <= MAX_REPLY_BYTES and not reply.content.at_eof():
                    more = await reply.content.read(MAX_REPLY_BYTES + 1 - len(payload))
                    if not more:
                        break
                    payload += more
                if len(payload) > MAX_REPLY_BYTES:
                    raise APIConnectionError(f"Connection error: the reply is more than {MAX_REPLY_BYTES} bytes")
                return reply.status, payload
        except aiohttp.ClientError as exc:
            raise APIConnectionError(f"Connection error: {type(exc).__name__}: {exc}") from None


_origins: weakref.WeakKeyDictionary[Any, dict[str, AiohttpOrigin]] = weakref.WeakKeyDictionary()


def origin(url: str) -> AiohttpOrigin:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    key = f"{parts.scheme}://{parts.netloc}"
    pools = _origins.setdefault(asyncio.get_running_loop(), {})
    if key not in pools:
        pools[key] = AiohttpOrigin(url)
    return pools[key]


async def close() -> None:
    """Close the running loop's session (at the end of a run: its connections are not left to the collector)."""
    session = _sessions.pop(asyncio.get_running_loop(), None)
    _origins.pop(asyncio.get_running_loop(), None)
    if session is not None and not session.closed:
        await session.close()
