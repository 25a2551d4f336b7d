"""The optional LLM judge of `tau analyze --judge-model`: for each failed trial, did the agent misread
the user's intent, and did it neglect the user's emotional state? The two categories of the
taxonomy that gold-vs-actual actions cannot decide. The model is reached through the model-client
catalog (`pm.model_client`), like every other caller of a model."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from tau_emotion.core.models import EpisodeResult, Message, ModelSettings
from tau_emotion.plugins.report.reading import RunData

CONCURRENCY = 4
PROMPT = """You audit a customer-service conversation between a support agent and a customer.
The customer wanted: {instruction}
Their requests, in order: {intents}
Their emotional state (tags): {tags}
The agent failed the task. Answer with one JSON object and nothing else:
{{"intent_misreading": true|false, "emotion_neglect": true|false, "reason": "<one sentence>"}}
intent_misreading: the agent acted on, or answered, something other than what the customer asked for.
emotion_neglect: the customer showed an emotion that the agent ignored or handled in a way that made things worse.

Conversation:
{transcript}"""


def transcript(result: EpisodeResult, limit: int = 12000) -> str:
    lines = []
    for m in result.messages:
        if m.role == "tool":
            lines.append(f"[tool {m.name}] {(m.content or '')[:300]}")
        elif m.tool_calls:
            lines += [f"[agent calls {c.name}] {json.dumps(c.arguments) if isinstance(c.arguments, dict) else c.arguments}"
                      for c in m.tool_calls]
        else:
            lines.append(f"[{'agent' if m.role == 'assistant' else m.role}] {m.content or ''}")
    text = "\n".join(lines)
    return text if len(text) <= limit else text[: limit // 2] + "\n...\n" + text[-limit // 2:]


def parse(reply: Message) -> dict[str, Any]:
    match = re.search(r"\{.*\}", reply.content or "", re.DOTALL)
    try:
        found = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        found = None
    if not isinstance(found, dict):
        return {"error": f"the judge's reply is not a JSON object: {(reply.content or '')[:200]!r}"}
    return {"intent_misreading": bool(found.get("intent_misreading")), "emotion_neglect": bool(found.get("emotion_neglect")),
            "reason": str(found.get("reason", ""))}


async def judge(pm: Any, settings: ModelSettings, data: RunData) -> dict[str, Any]:
    """Verdicts on every failed (not errored) trial whose task is known: {"TASK#TRIAL": verdict}, plus counts."""
    client = pm.model_client(settings, data.config)
    gate = asyncio.Semaphore(CONCURRENCY)
    failed = [r for r in data.results if r.status == "ok" and not r.success and data.task(r) is not None]

    async def one(r: EpisodeResult) -> tuple[str, dict[str, Any]]:
        task = data.task(r)
        prompt = PROMPT.format(instruction=task.user.instruction, intents="; ".join(task.user.intents) or "-",
                               tags=", ".join(f"{k}={v}" for k, v in sorted(r.tags.items())) or "none",
                               transcript=transcript(r))
        async with gate:
            reply = await client.complete([{"role": "user", "content": prompt}])
        return f"{r.task_id}#{r.trial}", parse(reply)

    verdicts = dict(await asyncio.gather(*(one(r) for r in failed)))
    counts = {key: sum(bool(v.get(key)) for v in verdicts.values()) for key in ("intent_misreading", "emotion_neglect")}
    counts["unparsable"] = sum("error" in v for v in verdicts.values())
    return {"model": settings.model, "judged": len(verdicts), "counts": counts, "trials": verdicts}
