"""A minimal keep-alive HTTP/1.1 client on asyncio streams: the transport of the lean `openai` client.

One pool per event loop and origin, shared by every model client of a run. It speaks just what a
chat-completions POST needs: a Content-Length request, a reply framed by Content-Length, chunked
encoding or end of stream, TLS for https. Why not httpx: at 256 concurrent episodes httpx and
httpcore cost ~0.6 ms of CPU per call on top of the harness, and httpcore's pool does
O(connections^2) bookkeeping per request (~20 ms per call at 256 connections in one pool); this
costs ~0.1 ms. A connection that fails or is cancelled mid-exchange (a deadline) is closed, never
reused; a reused idle connection the server had closed is retried once on a fresh one.
"""

from __future__ import annotations

import asyncio
import ssl
import weakref
from typing import Any
from urllib.parse import urlsplit

#: largest reply body read (a chat completion is kilobytes; a 300 MB reply must not become 600 MB of RSS)
MAX_REPLY_BYTES = 32 << 20


class APIConnectionError(Exception):
    """The server could not be reached or the connection broke (retried)."""


class APIStatusError(Exception):
    """An HTTP error reply; `status_code` decides whether it is retried (429, 5xx)."""

    def __init__(self, message: str, status_code: int, body: bytes):
        super().__init__(message)
        self.status_code = status_code
        self.body = body


class Origin:
    """Idle keep-alive connections to one scheme://host:port."""

    def __init__(self, url: str):
        parts = urlsplit(url)
        self.tls = parts.scheme == "https"
        self.host = parts.hostname or "localhost"
        self.port = parts.port or (443 if self.tls else 80)
        # the Host header as the URL wrote it (an IPv6 literal keeps its brackets), without user info
        self.authority = parts.netloc.rpartition("@")[2]
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self.context = ssl.create_default_context() if self.tls else None

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            return await asyncio.open_connection(self.host, self.port, ssl=self.context,
                                                 server_hostname=self.host if self.tls else None, limit=1 << 20)
        except OSError as exc:
            raise APIConnectionError(f"Connection error: {exc.strerror or exc}") from None

    async def request(self, method: str, path: str, headers: bytes, body: bytes | list[bytes] = b"") -> tuple[int, bytes]:
        """(status, body) of one exchange; `headers` are extra `Name: value\\r\\n` lines. A body given as parts
        is written part by part, never joined (a 200-step history is ~250 kB per request in flight)."""
        parts = [body] if isinstance(body, bytes) else body
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.authority}\r\n"
                f"Content-Length: {sum(map(len, parts))}\r\n").encode() + headers + b"\r\n"
        data = [head, *parts]
        while self.idle:
            reader, writer = self.idle.pop()
            if writer.is_closing() or reader.at_eof() or _buffered(reader):  # unasked-for bytes: desynchronised
                writer.close()
                continue
            try:
                return await self._exchange(reader, writer, data)
            except _Stale:
                continue
        reader, writer = await self._connect()
        try:
            return await self._exchange(reader, writer, data, fresh=True)
        except _Stale as exc:
            raise APIConnectionError(f"Connection error: {exc}") from None

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data: list[bytes],
                        fresh: bool = False) -> tuple[int, bytes]:
        keep = False
        try:
            writer.writelines(data)
            await writer.drain()
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError as exc:
                if not exc.partial:
                    raise _Stale("the server closed the connection without a reply") from None
                raise
            status, fields = _head(head)
            while 100 <= status < 200:  # 100 Continue, 103 Early Hints: the real reply follows
                status, fields = _head(await reader.readuntil(b"\r\n\r\n"))
            if "content-length" in fields:
                size = int(fields["content-length"])
                if size > MAX_REPLY_BYTES or size < 0:
                    raise _TooLarge(f"the reply is {size} bytes, more than {MAX_REPLY_BYTES}")
                payload = await reader.readexactly(size)
                keep = fields.get("connection", "").lower() != "close"
            elif "chunked" in fields.get("transfer-encoding", "").lower():
                payload = await _chunks(reader)
                keep = fields.get("connection", "").lower() != "close"
            else:
                payload = await _to_end(reader)
            # bytes after the reply's end would be taken as the next request's reply: never reuse that connection
            keep = keep and not _buffered(reader)
            return status, payload
        except _TooLarge as exc:
            raise APIConnectionError(f"Connection error: {exc}") from None
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, IndexError) as exc:
            if isinstance(exc, ConnectionError) and not fresh:
                raise _Stale(str(exc)) from None
            raise APIConnectionError(f"Connection error: {type(exc).__name__}: {exc}") from None
        finally:
            if keep:
                self.idle.append((reader, writer))
            else:  # failed, cancelled (a deadline) or not reusable: never handed out again
                writer.close()


class _Stale(Exception):
    """A reused connection the server had already closed."""


class _TooLarge(Exception):
    """A reply larger than MAX_REPLY_BYTES."""


def _head(head: bytes) -> tuple[int, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return status, fields


def _buffered(reader: asyncio.StreamReader) -> bool:
    """Whether the server sent bytes no request asked for (they sit in the reader's buffer)."""
    return bool(getattr(reader, "_buffer", b""))


async def _to_end(reader: asyncio.StreamReader) -> bytes:
    payload = await reader.read(MAX_REPLY_BYTES + 1)
    parts = [payload]
    total = len(payload)
    while payload:
        payload = await reader.read(MAX_REPLY_BYTES + 1 - total)
        total += len(payload)
        parts.append(payload)
        if total > MAX_REPLY_BYTES:
            raise _TooLarge(f"the reply is more than {MAX_REPLY_BYTES} bytes")
    return b"".join(parts)


async def _chunks(reader: asyncio.StreamReader) -> bytes:
    parts = []
    total = 0
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
        total += size
        if total > MAX_REPLY_BYTES:
            raise _TooLarge(f"the reply is more than {MAX_REPLY_BYTES} bytes")
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


_origins: weakref.WeakKeyDictionary[Any, dict[str, Origin]] = weakref.WeakKeyDictionary()


def origin(url: str) -> Origin:
    """The running loop's shared pool for `url`'s origin."""
    parts = urlsplit(url)
    key = f"{parts.scheme}://{parts.netloc}"
    pools = _origins.setdefault(asyncio.get_running_loop(), {})
    if key not in pools:
        pools[key] = Origin(url)
    return pools[key]
