"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions API with scripted replies.

Replies are queued per model name, so one server can play the agent and the user; `respond` sets
a standing reply for a model once its queue is empty. A reply is a dict (or fn(request) -> dict): {"content": str} and/or {"tool_calls": [{"name": ..., "arguments": "<raw string>"}]}, or
{"status": 500} for a server error. Every request (and its headers) is recorded for assertions.

Faults, for the reliability suite: {"status": 503, "html": True} (an HTML error page),
{"sleep": s} (a slow reply), {"trickle": s} (the body one byte at a time over s seconds),
{"raw": "..."} (a 200 whose body is that text: malformed JSON), {"choices": []} (no choices),
{"null_message": True}, {"extra": "..."} (bytes after the body), {"continue": True} (a 100 Continue
first), {"pad": n} (n more bytes in the body), {"drop": "before"} (close without answering) and {"drop": "mid"} (close
halfway through the body).
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up on a slow reply (a timeout test) is expected


class ScriptedOpenAI:
    def __init__(self, port: int = 0) -> None:
        self.scripts: dict[str, deque[Any]] = defaultdict(deque)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.responders: dict[str, Any] = {}  # model -> reply (or fn(body) -> reply) once its script is used up
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any] | bytes, content_type: str = "application/json",
                      trickle: float = 0.0, drop_mid: bool = False, extra: bytes = b"", cont: bool = False) -> None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                if cont:  # an interim reply first (a client must skip it)
                    self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if drop_mid:
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if trickle:
                    for i in range(len(data)):
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                        time.sleep(trickle / len(data))
                    return
                self.wfile.write(data + extra)  # extra: bytes after Content-Length (a desynchronising server)

            def do_GET(self) -> None:  # noqa: N802
                self._send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in owner.scripts]})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with owner.lock:
                    owner.requests.append(body)
                    owner.headers.append(dict(self.headers))
                    model = body.get("model", "")
                    queue = owner.scripts.get(model)
                    if queue:
                        reply = queue.popleft()
                    else:
                        reply = owner.responders.get(model, {"content": "###STOP###"})
                if callable(reply):
                    reply = reply(body)
                if "sleep" in reply:
                    time.sleep(reply["sleep"])
                if reply.get("drop") == "before":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if "status" in reply and reply.get("html"):
                    self._send(reply["status"], b"<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>",
                               content_type="text/html")
                    return
                if "status" in reply:
                    self._send(reply["status"], {"error": {"message": reply.get("message", "scripted failure"),
                                                           "type": "server_error"}})
                    return
                if "raw" in reply:
                    self._send(200, reply["raw"].encode(), extra=reply.get("extra", "").encode(),
                               cont=reply.get("continue", False))
                    return
                completion = owner.completion(body, reply)
                if reply.get("pad"):
                    completion["padding"] = "p" * reply["pad"]
                if "choices" in reply:
                    completion["choices"] = reply["choices"]
                if reply.get("null_message"):
                    completion["choices"][0]["message"] = None
                self._send(200, completion, trickle=reply.get("trickle", 0.0), drop_mid=reply.get("drop") == "mid",
                           extra=reply.get("extra", "").encode(), cont=reply.get("continue", False))

        self.server = _QuietServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def completion(self, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
        if reply.get("tool_calls"):
            message["tool_calls"] = [
                {"id": f"call_{len(self.requests)}_{i}", "type": "function",
                 "function": {"name": c["name"], "arguments": c["arguments"] if isinstance(c["arguments"], str)
                              else json.dumps(c["arguments"])}}
                for i, c in enumerate(reply["tool_calls"])]
        return {"id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 0,
                "model": body.get("model"),
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def script(self, model: str, *replies: Any) -> None:
        self.scripts[model].extend(replies)

    def respond(self, model: str, reply: Any) -> None:
        """Answer every further request for `model` with `reply` (a dict, or fn(request body) -> dict)."""
        self.responders[model] = reply

    def start(self) -> ScriptedOpenAI:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
