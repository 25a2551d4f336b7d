"""Tool calls in generated text, as Hermes and Qwen models write them:
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, one block per call.

A fine-tuned model's output is checked with this parser (the exported data renders tool calls in
this form through the Qwen chat template), so what it reads is what an inference server such as
vLLM's `hermes` parser would hand back as OpenAI tool calls.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)


@dataclass
class ParsedToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass
class ParsedMessage:
    """The text outside tool-call blocks, the calls that parsed, and the blocks that did not."""

    content: str
    tool_calls: list[ParsedToolCall]
    errors: list[str]


def parse_tool_calls(text: str) -> ParsedMessage:
    """Split generated text into content and tool calls; a block that is not a JSON object with a
    string `name` (and object `arguments`, which may also be a JSON string) is reported in `errors`."""
    calls: list[ParsedToolCall] = []
    errors: list[str] = []
    for block in _BLOCK.findall(text):
        try:
            data = json.loads(block)
        except json.JSONDecodeError as exc:
            errors.append(f"not JSON ({exc.msg}): {block[:80]!r}")
            continue
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            errors.append(f"no tool name: {block[:80]!r}")
            continue
        args = data.get("arguments", data.get("parameters", {}))
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                errors.append(f"arguments are not JSON: {args[:80]!r}")
                continue
        if not isinstance(args, dict):
            errors.append(f"arguments are not an object: {block[:80]!r}")
            continue
        calls.append(ParsedToolCall(data["name"], args))
    content = _BLOCK.sub("", text)
    content = re.sub(r"<think>.*?</think>", "", content, flags=re.S)
    content = re.sub(r"(<\|im_end\|>|<\|endoftext\|>)+\s*$", "", content.strip()).strip()
    return ParsedMessage(content=content, tool_calls=calls, errors=errors)
