"""One run as the reading commands see it: its stored config, metadata, summary and trials, plus the
tasks and domains behind them (looked up in the domains catalog; a domain that is no longer
installed only costs the analyses that need it), and the trial viewer of `tau show RUN TASK`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tau_emotion.core.models import EpisodeResult, Message, RunConfig, Task
from tau_emotion.core.terminal import reward as terminal_reward


@dataclass
class RunData:
    run_id: str
    config: RunConfig
    meta: dict[str, Any]
    summary: dict[str, Any]
    results: list[EpisodeResult]
    domains: dict[str, Any] = field(default_factory=dict)
    tasks: dict[tuple[str, str], Task] = field(default_factory=dict)

    def task(self, result: EpisodeResult) -> Task | None:
        """The task behind a result; a variant id (`TASK~control`, as a plugin may derive) falls back to TASK."""
        found = self.tasks.get((result.domain, result.task_id))
        if found is None and "~" in result.task_id:
            found = self.tasks.get((result.domain, result.task_id.split("~", 1)[0]))
        return found


def load_run(store: Any, run_id: str, pm: Any | None = None, where: str = "") -> RunData:
    from tau_emotion.core.runner import resolve_run

    run_id = resolve_run(store, run_id, where)  # an id, `latest`, a unique prefix or tag:NAME
    config = store.run_config(run_id)
    meta = (store.run_meta(run_id) if hasattr(store, "run_meta") else None) or {}
    data = RunData(run_id, config, meta, store.summary(run_id) or {}, store.results(run_id))
    if pm is not None:
        catalog = pm.catalog("domains")
        for name in sorted({r.domain for r in data.results}):
            if name not in catalog:
                continue
            obj = catalog.get(name)
            domain = obj if hasattr(obj, "toolset") else obj()
            data.domains[name] = domain
            for task in domain.tasks(None):
                data.tasks[(name, task.id)] = task
    return data


# ----------------------------------------------------------------------------- actions of a trial


def actions(messages: list[Message]) -> list[tuple[str, dict[str, Any] | str, bool]]:
    """(tool name, arguments, succeeded) of every tool call the agent made, in order.

    A call is paired with its result by position (the loop appends one tool message per call, in
    order, right after the agent's message), not by id: a model may omit ids or reuse one."""
    out: list[tuple[str, dict[str, Any] | str, bool]] = []
    for i, m in enumerate(messages):
        if m.role != "assistant" or not m.tool_calls:
            continue
        following = messages[i + 1:i + 1 + len(m.tool_calls)]
        for k, c in enumerate(m.tool_calls):
            result = following[k] if k < len(following) and following[k].role == "tool" else None
            out.append((c.name, c.arguments, result is not None and not result.error))
    return out


def questions(messages: list[Message]) -> int:
    """Agent messages that ask the user something (follow-up questions)."""
    return sum(1 for m in messages if m.role == "assistant" and not m.tool_calls and "?" in (m.content or ""))


def replay_calls(domain: Any, calls: list[tuple[str, Any]]) -> Any:
    state = domain.database.state()
    for name, arguments in calls:
        domain.toolset.call(state, name, arguments)
    return state


def db_diff(domain: Any, task: Task, result: EpisodeResult) -> list[dict[str, Any]]:
    """Rows where the trial's database differs from the gold one: the gold replay against a replay
    of the trial's own successful calls. Each: table, key, gold row, actual row, the fields that differ."""
    from tau_emotion.core.reward import GoldReplayError, replay

    try:
        gold = replay(domain, task)
    except GoldReplayError:
        return []
    actual = replay_calls(domain, [(n, a) for n, a, ok in actions(result.messages) if ok])
    gold_rows, actual_rows = gold.changed(), actual.changed()
    out = []
    for table in sorted({*gold_rows, *actual_rows}):
        keys = {*gold_rows.get(table, {}), *actual_rows.get(table, {})}
        for key in sorted(keys):
            g, a = gold[table].peek(key), actual[table].peek(key)
            if json.dumps(g, sort_keys=True, default=str) == json.dumps(a, sort_keys=True, default=str):
                continue
            fields = sorted(k for k in {*(g or {}), *(a or {})}
                            if (g or {}).get(k) != (a or {}).get(k)) if isinstance(g, dict) or isinstance(a, dict) else []
            out.append({"table": table, "key": key, "gold": g, "actual": a, "fields": fields,
                        "paths": path_diff(g, a)})
    return out


#: what a path diff shows for a side that has no value there
MISSING = "(absent)"


def path_diff(gold: Any, actual: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """The leaves where two JSON values differ, as (dotted path, gold, actual): one changed seat count of a
    flight is `dates.2024-05-19.available_seats.economy`, not the flight's whole 30-day `dates` object.
    Lists of the same length are compared item by item (`passengers.1.name`); otherwise whole."""
    if isinstance(gold, dict) and isinstance(actual, dict):
        out = []
        for key in sorted({*gold, *actual}, key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            out += path_diff(gold.get(key, MISSING), actual.get(key, MISSING), path)
        return out
    if isinstance(gold, list) and isinstance(actual, list) and len(gold) == len(actual):
        out = []
        for i, (g, a) in enumerate(zip(gold, actual, strict=True)):
            out += path_diff(g, a, f"{prefix}.{i}" if prefix else str(i))
        return out
    if gold == actual:
        return []
    return [(prefix or "(row)", None if gold is None else gold, actual)]


# ----------------------------------------------------------------------------- terminal view


def usage_text(usage: dict[str, float]) -> str:
    """`1,234 tokens (1,000 prompt + 234 completion), $0.0123`; empty when nothing was counted."""
    tokens = usage.get("total_tokens") or usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    parts = []
    if tokens:
        split = [f"{usage[k]:,.0f} {k.split('_')[0]}" for k in ("prompt_tokens", "completion_tokens") if usage.get(k)]
        parts.append(f"{tokens:,.0f} tokens" + (f" ({' + '.join(split)})" if split else ""))
    if usage.get("cost"):
        parts.append(f"${usage['cost']:.4f}")
    return ", ".join(parts)


def _value(value: Any) -> str:
    text = value if value == MISSING else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 200 else text[:200] + "..."


def _args(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def trial_text(data: RunData, result: EpisodeResult, category: str | None = None) -> str:
    """The conversation with roles, tool calls, arguments and results; the ending and the reward parts."""
    lines = [f"== {result.domain}/{result.task_id} trial {result.trial}: "
             + (f"ERROR ({result.error})" if result.status == "error" else f"reward {terminal_reward(result.reward)}")
             + f"  termination={result.termination.reason}"
             + (f" by {result.termination.by}" if result.termination.by else "")
             + (f" ({result.termination.detail})" if result.termination.detail else "")]
    if result.tags:  # the condition the user was put in (emotion.condition=...) and every other tag
        lines.append("  tags: " + " ".join(f"{k}={v}" for k, v in sorted(result.tags.items())))
    spent = usage_text(result.usage)
    if spent:
        lines.append(f"  usage: {spent}")
    for m in result.messages:
        if m.role == "tool":
            mark = " ERROR" if m.error else ""
            lines.append(f"  [tool {m.name}{mark}] {m.content or ''}")
        elif m.role == "assistant" and m.tool_calls:
            if m.content:
                lines.append(f"  [agent] {m.content}")
            for c in m.tool_calls:
                lines.append(f"  [agent -> {c.name}] {_args(c.arguments)}")
        else:
            lines.append(f"  [{'agent' if m.role == 'assistant' else m.role}] {m.content or ''}")
    parts = result.parts
    if parts is not None:
        lines.append(f"  reward parts: db_match={parts.db_match} outputs_missing={parts.outputs_missing or '[]'}"
                     f" terminal_done={parts.terminal_done} negative_termination={parts.negative_termination}")
    if category:
        lines.append(f"  error category: {category}")
    task, domain = data.task(result), data.domains.get(result.domain)
    if task is not None and domain is not None and parts is not None and not parts.db_match:
        diff = db_diff(domain, task, result)
        lines.append(f"  database rows that differ from the gold state: {len(diff)} (gold → this trial)")
        for row in diff:
            lines.append(f"    {row['table']}[{row['key']}]" + ("" if row["gold"] is not None and row["actual"] is not None
                                                            else " (only in " + ("the trial" if row["gold"] is None
                                                                                 else "the gold") + ")"))
            for path, g, a in row["paths"]:
                lines.append(f"      {path}: {_value(g)} → {_value(a)}")
    elif domain is None:
        lines.append(f"  (domain '{result.domain}' is not installed: no database diff)")
    return "\n".join(lines)
