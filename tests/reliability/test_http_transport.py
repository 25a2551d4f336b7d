"""The lean client's HTTP transport (issue 24, item 7): bytes after Content-Length never become the next
reply, a reply's size is bounded, 1xx replies are skipped, redirects are not followed (the key stays
with its origin). Each runs against both transports (`TAU_HTTP`): the hand-written pool and aiohttp."""

from __future__ import annotations

import asyncio
import json
import socket
import threading

import pytest

from tau_emotion.plugins import http_pool
from tau_emotion.plugins.http_pool import APIConnectionError

OK = json.dumps({"n": 1}).encode()


def _reply(body: bytes, extra: bytes = b"", status: bytes = b"200 OK", head: bytes = b"") -> bytes:
    return (head + b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body + extra)


class RawServer:
    """A loopback server answering the i-th request on each connection with `replies[i]` (raw bytes)."""

    def __init__(self, replies):
        self.replies = replies
        self.seen: list[bytes] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        buffer = b""
        with conn:
            for reply in self.replies:
                while b"\r\n\r\n" not in buffer:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                                   if line.lower().startswith(b"content-length")), b"0"))
                while len(buffer) < length:
                    buffer += conn.recv(65536)
                self.seen.append(head)
                buffer = buffer[length:]
                for piece in (reply if isinstance(reply, list) else [reply]):
                    conn.sendall(piece)
            conn.recv(1)

    def close(self):
        self.sock.close()


@pytest.fixture(params=["pool", "aiohttp"])
def transport(request, monkeypatch):
    if request.param == "aiohttp":
        from tau_emotion.plugins import http_aiohttp

        return http_aiohttp.origin
    return http_pool.origin


def _run(transport, url, n=1):
    async def go():
        out = []
        for _ in range(n):
            try:
                out.append(await transport(url).request("POST", "/v1/chat/completions",
                                                        b"Authorization: Bearer sk-test-123456789\r\n", b"{}"))
            except APIConnectionError as exc:
                out.append(exc)
        from tau_emotion.plugins import http_aiohttp

        await http_aiohttp.close()
        return out

    return asyncio.run(go())


def test_bytes_after_the_content_length_never_become_the_next_reply(transport):
    injected = _reply(b'{"injected": true}')
    server = RawServer([_reply(OK, extra=injected), _reply(OK), _reply(OK)])
    try:
        replies = _run(transport, server.url, n=2)
    finally:
        server.close()
    assert all(not isinstance(r, Exception) and r[1] == OK for r in replies), replies


def test_a_reply_larger_than_the_bound_is_refused_without_reading_it(transport, monkeypatch):
    monkeypatch.setattr(http_pool, "MAX_REPLY_BYTES", 1000)
    from tau_emotion.plugins import http_aiohttp

    monkeypatch.setattr(http_aiohttp, "MAX_REPLY_BYTES", 1000)
    big = b'{"x": "' + b"a" * 5000 + b'"}'
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               + b"".join(b"%x\r\n" % 500 + b"b" * 500 + b"\r\n" for _ in range(10)) + b"0\r\n\r\n")
    for reply in (_reply(big), chunked):
        server = RawServer([reply])
        try:
            [result] = _run(transport, server.url)
        finally:
            server.close()
        assert isinstance(result, APIConnectionError) and "1000" in str(result)


def test_a_100_continue_before_the_reply_is_skipped(transport):
    server = RawServer([_reply(OK, head=b"HTTP/1.1 100 Continue\r\n\r\n")])
    try:
        [result] = _run(transport, server.url)
    finally:
        server.close()
    assert result == (200, OK)


def test_a_redirect_is_not_followed(transport):
    other = RawServer([_reply(OK)])
    server = RawServer([b"HTTP/1.1 307 Temporary Redirect\r\nLocation: " + other.url.encode()
                        + b"/v1/chat/completions\r\nContent-Length: 0\r\n\r\n"])
    try:
        [result] = _run(transport, server.url)
    finally:
        server.close()
        other.close()
    assert result[0] == 307 and other.seen == []


def test_a_huge_tool_name_is_stored_bounded(openai_server, tmp_path):
    from tau_emotion.core.limits import MAX_NAME_CHARS
    from tau_emotion.core.models import RunConfig
    from tau_emotion.core.runner import prepare_run, run_sync

    openai_server.script("agent-model", {"tool_calls": [{"name": "n" * 1_000_000, "arguments": "{}"}]})
    openai_server.respond("agent-model", {"content": "bye ###STOP###"})
    config = RunConfig(plugins=["mock"], agent="tool_calling", max_steps=4, task_ids=["mock-001"], trials=1,
                       options={"agent": {"agent_model": "openai/agent-model",
                                                 "agent_api_base": openai_server.base_url},
                                "progress": {"no_progress": True}, "model_calls": {"max_retries": 0}})
    run = prepare_run(config, str(tmp_path / "n.sqlite"))
    run_sync(run)
    [result] = run.store.results(run.run_id)
    call = next(m for m in result.messages if m.tool_calls).tool_calls[0]
    assert len(call.name) < MAX_NAME_CHARS + 40
    assert (tmp_path / "n.sqlite").stat().st_size < 500_000
