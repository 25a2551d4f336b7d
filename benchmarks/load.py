"""How close the harness gets to a model server's throughput: N concurrent airline episodes on loopback.

    python benchmarks/load.py [--client openai|sdk|litellm] [--concurrency 256] [--latency 0.5]
                              [--steps 10] [--episodes 512] [--tasks 64]

A lean fake OpenAI-compatible server runs in its own process (asyncio, keep-alive, no JSON parse of
the request) and answers every chat completion after exactly `--latency` seconds with one tool call
(`get_user_details` of a real airline user), so the `tool_calling` agent with the scripted user runs
`--steps` agent steps per episode (the `stop` plugin's max steps) through the whole harness: episode
loop, tools on copy-on-write state, scoring, the SQLite writer. `--client openai` is the shipped lean
client (hand-written HTTP pool), `sdk` the official `openai` SDK's `AsyncOpenAI` with its httpx pool sized
to the concurrency (`benchmarks/sdk_client.py`; `pip install openai`), `litellm` the `[providers]` client.
Prints one JSON object:

- `ideal_rps`: concurrency / latency, what the server could serve if the client cost nothing;
- `rps`: model calls served / wall seconds of the run (episodes start and end inside that window);
- `ratio`: rps / ideal_rps;
- `client_cpu_ms_per_call`: CPU seconds of the harness process (all threads) during the run / calls; the
  window holds everything `run_sync` does: building the episodes, the store writes on their thread,
  and the end-of-run summary (metrics over the results without their transcripts, bootstrap included);
- `peak_rss_mb`: the harness process's peak resident memory (imports included);
- `load`: the machine's 1-minute load average before the run (other users of the machine count).

Figures are measured, never asserted in tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_TOOL = re.compile(rb'"role":\s*"tool"')


async def serve(port: int, latency: float, user_id: str) -> None:
    """The fake model server: HTTP/1.1 keep-alive, every POST answered after `latency` with one tool call."""
    calls = 0
    arguments = json.dumps({"user_id": user_id})

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal calls
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                method = head.split(b" ", 1)[0]
                match = re.search(rb"(?i)content-length:\s*(\d+)", head)
                body = await reader.readexactly(int(match.group(1))) if match else b""
                if method == b"GET":
                    payload = json.dumps({"object": "list", "calls": calls,
                                          "data": [{"id": "scripted", "object": "model"}]}).encode()
                else:
                    calls += 1
                    await asyncio.sleep(latency)
                    n = len(_TOOL.findall(body))
                    payload = json.dumps({
                        "id": f"c{calls}", "object": "chat.completion", "created": 0, "model": "scripted",
                        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                            "role": "assistant", "content": None, "tool_calls": [{
                                "id": f"call_{n}", "type": "function",
                                "function": {"name": "get_user_details", "arguments": arguments}}]}}],
                        "usage": {"prompt_tokens": 100 + 10 * n, "completion_tokens": 10, "total_tokens": 110 + 10 * n},
                    }).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(payload)).encode() + b"\r\n\r\n" + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=4096)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


def start_server(latency: float, user_id: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, __file__, "--serve", "--latency", str(latency), "--user-id", user_id],
                            stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline())  # type: ignore[union-attr]
    return proc, f"http://127.0.0.1:{port}/v1"


def served(base: str) -> int:
    with urllib.request.urlopen(f"{base}/models", timeout=10) as reply:
        return int(json.load(reply)["calls"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", choices=["openai", "sdk", "litellm"], default="openai")
    parser.add_argument("--http", choices=["pool", "aiohttp"], default="pool",
                        help="the openai client's HTTP transport: the hand-written pool or aiohttp")
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--steps", type=int, default=10, help="agent steps (model calls) per episode")
    parser.add_argument("--episodes", type=int, default=None, help="default: 2 x concurrency")
    parser.add_argument("--tasks", type=int, default=64, help="distinct airline tasks (train split), each run "
                        "episodes / tasks times")
    parser.add_argument("--json", action="store_true", help="one JSON object (the default prints one figure a line)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--user-id", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(0, args.latency, args.user_id))
        return

    if args.http == "aiohttp":
        os.environ["TAU_HTTP"] = "aiohttp"
        import aiohttp  # noqa: F401 - its import is not part of the run's figures
    from tau_emotion.core.models import RunConfig
    from tau_emotion.core.runner import prepare_run, run_sync

    db = json.loads((ROOT / "domain_packs/airline/data/db.json").read_text())
    proc, base = start_server(args.latency, next(iter(db["users"])))
    del db
    episodes = args.episodes or 2 * args.concurrency
    # as in a sweep, each task runs several times (trials, conditions): its gold replay and the scripted
    # user's goals are built once per task, not once per episode; a multiple of the concurrency, so
    # every wave is full
    n_tasks = min(args.tasks, episodes)
    trials = -(-episodes // n_tasks)
    try:
        if args.client == "litellm":
            from tau_emotion.plugins.litellm_client import import_litellm

            import_litellm()  # its import (seconds) is not part of the run's figures
        elif args.client == "sdk":
            sys.path.insert(0, str(ROOT / "benchmarks"))
            import openai

            async def warm() -> None:  # its lazy modules and reply models are built here, not inside the measured run
                async with openai.AsyncOpenAI(api_key="x", base_url=base, max_retries=0) as client:
                    await client.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "hi"}])

            asyncio.run(warm())
        with tempfile.TemporaryDirectory() as tmp:
            plugins = ["airline", *(["sdk_client"] if args.client == "sdk" else [])]
            config = RunConfig(plugins=plugins, split="train", n_tasks=n_tasks, trials=trials, agent="tool_calling",
                               user="scripted", max_steps=args.steps, concurrency=args.concurrency, seed=0,
                               options={"agent": {"agent_model": "openai/scripted", "agent_api_base": base,
                                                  "agent_client": args.client},
                                        "progress": {"no_progress": True},
                                        "model_calls": {"max_retries": 0, "model_timeout": 60}})
            run = prepare_run(config, os.path.join(tmp, "load.sqlite"))
            load = os.getloadavg()[0]
            calls0 = served(base)
            cpu0, t0 = time.process_time(), time.perf_counter()
            summary = run_sync(run)
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            calls = served(base) - calls0
            errors = summary["errors"]  # not by reading every stored transcript back: that would be the peak RSS
            first_error = next((r.error for r in run.results if r.error), None)
    finally:
        proc.terminate()
        proc.wait()
    ideal = args.concurrency / args.latency
    figures = {
        "client": args.client, "http": args.http, "concurrency": args.concurrency, "latency_s": args.latency, "steps": args.steps,
        "episodes": len(run.pending), "model_calls": calls, "errors": errors, "wall_s": round(wall, 2),
        "ideal_rps": round(ideal, 1), "rps": round(calls / wall, 1), "ratio": round(calls / wall / ideal, 3),
        "client_cpu_ms_per_call": round(1000 * cpu / max(calls, 1), 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "load": round(load, 2), "cpus": os.cpu_count(), "trials_in_summary": summary.get("n_trials"),
    }
    if first_error:
        figures["first_error"] = first_error[:200]
    print(json.dumps(figures) if args.json else "\n".join(f"{k:24} {v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
