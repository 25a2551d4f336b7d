"""The lean `openai` client: chosen for OpenAI-compatible endpoints, wire form, its HTTP pool, preflight, model args."""

import asyncio
import json
import time

import pytest

from tau_emotion.core.models import Message, ModelSettings, RunConfig, ToolCall, to_chat
from tau_emotion.core.runner import prepare_run, run_sync
from tau_emotion.plugins.http_pool import origin
from tau_emotion.plugins.model_calls import ModelCallError, preflight
from tau_emotion.plugins.openai_client import OpenAIClient


@pytest.mark.parametrize(("model", "base", "client", "expected"), [
    ("openai/x", "http://127.0.0.1:1/v1", None, "OpenAIClient"),
    ("hosted_vllm/Qwen/Qwen3-8B", "http://127.0.0.1:1/v1", None, "OpenAIClient"),
    ("bare-model", "http://127.0.0.1:1/v1", None, "OpenAIClient"),
    ("openai/gpt-4o", None, None, "LitellmClient"),  # no endpoint given: litellm's provider routing
    ("anthropic/claude", "http://127.0.0.1:1/v1", None, "LitellmClient"),  # another provider stays litellm's
    ("openai/x", "http://127.0.0.1:1/v1", "litellm", "LitellmClient"),  # --agent-client wins
    ("openai/gpt-4o", None, "openai", "OpenAIClient"),
])
def test_client_choice(pm, model, base, client, expected):
    settings = ModelSettings(model=model, api_base=base, client=client)
    assert type(pm.model_client(settings)).__name__ == expected


def test_body_is_the_chat_request_and_history_is_encoded_once():
    client = OpenAIClient(ModelSettings(model="hosted_vllm/m", api_base="http://h/v1",
                                        args={"max_tokens": 7, "extra_body": {"top_k": 3}}))
    system = {"role": "system", "content": "policy"}
    history = [Message(role="user", content="hi"),
               Message(role="assistant", tool_calls=[ToolCall(id="c1", name="f", arguments={"a": [1, "é"]})]),
               Message(role="tool", tool_call_id="c1", name="f", content="ok")]
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    body = json.loads(b"".join(client.body([system, *to_chat(history)], tools)))
    assert body == {"model": "m", "temperature": 0.0, "max_tokens": 7, "top_k": 3, "tools": tools,
                    "messages": [system, *to_chat(history)]}
    before = list(client._sent[3])
    history.append(Message(role="user", content="more"))
    json.loads(b"".join(client.body([system, *to_chat(history)], tools)))
    after = client._sent[3]
    assert len(after) == len(before) + 2 and all(a is b for a, b in zip(after[:len(before)], before, strict=True))  # only the new one encoded
    other = [system, *to_chat(history[2:])]  # not a growth of the last history: built afresh
    assert json.loads(b"".join(client.body(other)))["messages"] == other
    assert json.loads(b"".join(client.body([])))["messages"] == []
    grown = [*other, {"role": "user", "content": "again"}]
    assert json.loads(b"".join(client.body(grown, tools)))["messages"] == grown


def test_chunked_reply_and_keep_alive_reuse():
    """A chunked reply is read whole; a connection the server closed while idle is replaced transparently."""
    async def main():
        seen = []

        async def handle(reader, writer):
            seen.append(writer)
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n")
            await writer.drain()
            writer.close()  # the server drops the connection after one reply

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
        pool = origin(url)
        assert await pool.request("GET", "/v1/x", b"") == (200, b"abcde")
        await asyncio.sleep(0.05)
        assert await pool.request("GET", "/v1/x", b"") == (200, b"abcde")
        assert len(seen) == 2
        server.close()

    asyncio.run(main())


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_the_host_header_is_the_urls_authority(host):
    """`Host: [::1]:PORT` for an IPv6 endpoint (a bare `::1:PORT` is not a valid Host), `127.0.0.1:PORT` for IPv4."""
    async def main():
        heads = []

        async def handle(reader, writer):
            heads.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()
            writer.close()

        try:
            server = await asyncio.start_server(handle, host, 0)
        except OSError:
            pytest.skip(f"cannot listen on {host} here")
        port = server.sockets[0].getsockname()[1]
        authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        assert await origin(f"http://{authority}/v1").request("POST", "/v1/x", b"", b"{}") == (200, b"ok")
        assert f"Host: {authority}\r\n".encode() in heads[0]
        server.close()

    asyncio.run(main())


def test_keep_alive_connections_are_shared(openai_server):
    async def main():
        client = OpenAIClient(ModelSettings(model="openai/m", api_base=openai_server.base_url))
        for _ in range(3):
            reply = await client.complete([{"role": "user", "content": "hi"}])
        return reply, origin(openai_server.base_url)

    reply, pool = asyncio.run(main())
    assert reply.content == "###STOP###" and reply.usage["total_tokens"] == 15
    assert len(pool.idle) == 1  # three sequential calls, one connection


def test_preflight_names_the_url_fast(openai_server):
    config = RunConfig()
    start = time.monotonic()
    with pytest.raises(ModelCallError, match=r"agent model endpoint http://127\.0\.0\.1:9/v1 .*ConnectionRefused"):
        preflight(ModelSettings(model="openai/x", api_base="http://127.0.0.1:9/v1"), config, "agent")
    assert time.monotonic() - start < 5
    preflight(ModelSettings(model="openai/x", api_base=openai_server.base_url), config, "agent")  # answers: fine
    preflight(ModelSettings(model="openai/x", api_base="http://127.0.0.1:9/v1"),
              RunConfig(options={"model_calls": {"no_preflight": True}}), "agent")  # skipped


@pytest.mark.slow
def test_run_refuses_a_dead_endpoint_before_any_trial(tau):
    start = time.monotonic()
    result = tau("run", "--plugins", "airline", "--agent", "tool_calling", "--agent-model", "openai/x",
                 "--agent-api-base", "http://127.0.0.1:9/v1", "--user", "scripted", "--tasks", "3", "--no-progress")
    assert result.exit_code != 0 and "127.0.0.1:9" in result.output
    assert time.monotonic() - start < 10
    assert json.loads(tau("runs", "--json").output) == []  # the refused run is not left behind, empty


def test_a_resumed_run_whose_preflight_fails_is_kept(openai_server, tmp_path):
    config = RunConfig(plugins=["mock"], task_ids=["mock-001"], trials=1, agent="tool_calling", user="scripted",
                       options={"agent": {"agent_model": "openai/m", "agent_api_base": "http://127.0.0.1:9/v1"},
                                "progress": {"no_progress": True}})
    db = str(tmp_path / "r.sqlite")
    run = prepare_run(config, db)
    run.prior_rows = True  # as `resume_run` prepares it
    with pytest.raises(ModelCallError):
        run_sync(run)
    assert run.store.run_ids() == [run.run_id]


def test_model_args_reach_the_server(openai_server, tmp_path):
    openai_server.script("user-model", {"content": "I need help."})
    config = RunConfig(plugins=["mock"], task_ids=["mock-001"], trials=1, agent="tool_calling", user="llm",
                       options={"agent": {"agent_model": "openai/agent-model", "agent_api_base": openai_server.base_url,
                                                 "agent_args": '{"max_tokens": 512, "extra_body": {"top_k": 20}}'},
                                "user": {"user_model": "openai/user-model", "user_api_base": openai_server.base_url,
                                             "user_args": {"max_tokens": 64}},
                                "progress": {"no_progress": True}})
    run_sync(prepare_run(config, str(tmp_path / "r.sqlite")))
    agent = next(r for r in openai_server.requests if r["model"] == "agent-model")
    user = next(r for r in openai_server.requests if r["model"] == "user-model")
    assert (agent["max_tokens"], agent["top_k"], user["max_tokens"]) == (512, 20, 64)


def test_progress_line_shows_flight_retries_errors_within_80_columns():
    from tau_emotion.core import hookimpl
    from tau_emotion.core.manager import get_plugin_manager
    from tau_emotion.plugins.progress import _live

    line = _live({"n": 9999, "ok": 9998, "reward": 9998.0, "errors": 9999, "flying": 1024, "retries": 12345})
    assert "run 1024" in line and "retry 12345" in line and "err 9999" in line
    assert len(line) + len(" ━━━━━━━━━━━━ 99999/99999 0:00:00 ") <= 80
    class Judge:  # a plugin that counts something shows it on the line through tau_live_counters
        @hookimpl
        def tau_live_counters(self, run):
            return {"judge": 7}

    pm = get_plugin_manager(extra=[Judge()])
    counters = {k: v for got in pm.hook.tau_live_counters(run=None) for k, v in (got or {}).items()}
    assert " judge 7 err" in _live({"n": 1, "ok": 1, "reward": 1.0, "errors": 0, "flying": 0}, counters)


def test_an_endpoint_behind_a_proxy_is_left_to_litellm(monkeypatch):
    from tau_emotion.core.models import ModelSettings
    from tau_emotion.plugins.openai_client import serves

    remote = ModelSettings(model="openai/m", api_base="https://models.example.org/v1")
    local = ModelSettings(model="openai/m", api_base="http://127.0.0.1:8000/v1")
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert serves(remote) and serves(local)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example.org:3128")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    assert not serves(remote) and serves(local)
