"""Stored trajectories -> training data in the formats TRL takes.

SFT rows are conversations (`messages`, `tools`) for `SFTTrainer`: the system prompt is the one the
agent saw (the domain's policy rendered in `agent_system.j2`), assistant tool calls keep their
OpenAI shape, and tool-call arguments and the tool schemas are JSON strings, because in an Arrow
table dicts of different shapes are unified into one struct with nulls, which corrupts the rendered
text. DPO rows pair a +1 and a -1 (`###UNSATISFIED###`) trajectory of the same task: the shared
conversation prefix is the prompt, the two continuations are `chosen` and `rejected`.

A named mixture (`--mixture tracer-high|tracer-low`, `MIXTURES`) selects the domains the paper trains
on and keeps at most a cap of rows per domain, drawn round-robin over emotion families; the card
records it. Rows are split into train and validation by task, so no task is in both. JSONL is always written and
needs nothing beyond the core; `datasets` (the `[train]` extra) is imported only to add the
`save_to_disk` copy. The JSONL files and the card are written atomically together (`core.outputs`): a kill or a
full disk leaves the earlier export whole, never rows beside a card that counts others.

Template markup is never training data. A trajectory whose text (any message, tool-call name or arguments) holds a
chat template's structure (`TEMPLATE_MARKUP`: ChatML's `<|im_start|>`/`<|im_end|>`, tool-call markup such as
`<tool_call>`, Llama-2's `[INST]`/`<<SYS>>`, Llama-3's header tokens, Gemma's turn tokens, any other `<|name|>`
token) is left out whole: rendered by the chat template, that text would become a turn or a tool call the model
never made (an injected `<|im_start|>system`, a forged `transfer_funds` call). Escaping would keep a text the
model learns to write back, so the row is dropped and counted in the card by reason.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tau_emotion.core.errors import TauError
from tau_emotion.core.models import EpisodeResult, Message
from tau_emotion.core.outputs import write_outputs
from tau_emotion.tracer.collect import FAMILY_TAG, NO_FAMILY, SEEN, UNSEEN, TrajectoryStats, kept_keys

FORMATS = ("sft", "dpo")
META_COLUMNS = ("run_id", "task_id", "trial", "domain", "emotion_family", "emotion_condition")


class ExportError(TauError):
    """Nothing to export, or the output folder is not usable."""


def chat_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Transcript messages as chat rows with a fixed set of keys (Arrow needs one shape per column).

    Tool-call arguments become JSON strings; the trailing user message (the goodbye after the
    agent's last turn) is dropped, since there is nothing left for the agent to learn from it.
    """
    while messages and messages[-1].role == "user":
        messages = messages[:-1]
    rows = []
    for m in messages:
        calls = [{"type": "function", "function": {
            "name": c.name, "arguments": c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments)}}
            for c in m.tool_calls] if m.role == "assistant" and m.tool_calls else None
        rows.append({"role": m.role, "content": m.content or "", "tool_calls": calls,
                     "name": m.name if m.role == "tool" else None})
    return rows


#: chat-template structure, by the template family it belongs to; checked in this order (the last is any other
#: `<|name|>` special token). A row holding any of them in any text is left out (see the module's docstring).
TEMPLATE_MARKUP: dict[str, re.Pattern[str]] = {
    "chatml": re.compile(r"<\|(?:im_start|im_end|im_sep|endoftext)\|>"),
    "tool_markup": re.compile(r"</?(?:tool_call|tool_response|tools|function_call|functions)>"
                              r"|\[/?(?:TOOL_CALLS|AVAILABLE_TOOLS|TOOL_RESULTS)\]|<\|python_tag\|>"),
    "llama2": re.compile(r"\[/?INST\]|<</?SYS>>|</?s>"),
    "llama3": re.compile(r"<\|(?:begin_of_text|end_of_text|start_header_id|end_header_id|eot_id|eom_id)\|>"),
    "gemma": re.compile(r"<(?:start|end)_of_turn>"),
    "think": re.compile(r"</?think>"),
    "special_token": re.compile(r"<\|[A-Za-z0-9_.:-]{1,48}\|>"),
}
#: the prefix of a markup family's drop reason (`markup:chatml`, ...)
MARKUP = "markup:"


def markup_in(text: str) -> str | None:
    """The template family whose markup `text` holds (a key of `TEMPLATE_MARKUP`), or None."""
    if "<" not in text and "[" not in text:
        return None
    for family, pattern in TEMPLATE_MARKUP.items():
        if pattern.search(text):
            return family
    return None


def _texts(messages: list[dict[str, Any]]) -> Any:
    for m in messages:
        yield m["content"] or ""
        yield m.get("name") or ""
        for call in m.get("tool_calls") or ():
            yield call["function"]["name"]
            yield call["function"]["arguments"]


def row_markup(*conversations: list[dict[str, Any]]) -> str | None:
    """The drop reason (`markup:FAMILY`) of a row whose conversations hold template markup anywhere, or None."""
    for conversation in conversations:
        for text in _texts(conversation):
            family = markup_in(text)
            if family:
                return MARKUP + family
    return None


def same_message(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (a["role"], a["content"], a["tool_calls"]) == (b["role"], b["content"], b["tool_calls"])


class Exporter:
    """Turns stored results into rows; `domain(name)` gives the system prompt and tool schemas."""

    def __init__(self, domain: Callable[[str], Any]):
        self._domain = domain
        self._context: dict[str, tuple[str, str]] = {}

    def context(self, domain_name: str) -> tuple[str, str]:
        """(system prompt, tools as a JSON string) of a domain, as the agent saw them."""
        if domain_name not in self._context:
            from tau_emotion.templates import render

            domain = self._domain(domain_name)
            system = render("agent_system.j2", domain=domain.name, policy=domain.policy)
            self._context[domain_name] = (system, json.dumps(domain.toolset.schemas))
        return self._context[domain_name]

    def meta(self, run_id: str, r: EpisodeResult) -> dict[str, Any]:
        return {"run_id": run_id, "task_id": r.task_id, "trial": r.trial, "domain": r.domain,
                "emotion_family": r.tags.get(FAMILY_TAG, NO_FAMILY),
                "emotion_condition": r.tags.get("emotion.condition", "")}

    def sft_row(self, run_id: str, r: EpisodeResult) -> dict[str, Any]:
        system, tools = self.context(r.domain)
        stats = TrajectoryStats.of(r)
        return {"messages": [{"role": "system", "content": system, "tool_calls": None, "name": None},
                             *chat_messages(r.messages)],
                "tools": tools, **self.meta(run_id, r),
                "n_tool_calls": stats.tool_calls, "n_questions": stats.questions,
                "tools_outnumber_questions": stats.tools_outnumber_questions}

    def dpo_row(self, run_id: str, good: EpisodeResult, bad_run_id: str, bad: EpisodeResult) -> dict[str, Any] | None:
        row = self.dpo_pair(run_id, good, bad_run_id, bad)
        return row if isinstance(row, dict) else None

    def dpo_pair(self, run_id: str, good: EpisodeResult, bad_run_id: str, bad: EpisodeResult) -> dict[str, Any] | str:
        """The preference row of a +1 and a -1 trajectory of one task, or why they make none (one of `DROPPED`)."""
        system, tools = self.context(good.domain)
        chosen, rejected = chat_messages(good.messages), chat_messages(bad.messages)
        markup = row_markup(chosen, rejected)
        if markup:
            return markup
        n = 0
        while n < min(len(chosen), len(rejected)) and same_message(chosen[n], rejected[n]):
            n += 1
        while n > 0 and chosen[n - 1]["role"] == "assistant":  # the prompt ends on a user or tool turn
            n -= 1
        if n == 0:
            return "no_shared_prefix"
        if n >= len(chosen) or n >= len(rejected):
            return "one_contains_the_other"
        if chosen[n]["role"] != "assistant" or rejected[n]["role"] != "assistant":
            return "part_at_a_user_turn"  # no agent choice to prefer
        prompt = [{"role": "system", "content": system, "tool_calls": None, "name": None}, *chosen[:n]]
        return {"prompt": prompt, "chosen": chosen[n:], "rejected": rejected[n:], "tools": tools,
                **self.meta(run_id, good), "rejected_run_id": bad_run_id, "rejected_trial": bad.trial}


#: why a +1/-1 pair of one task gives no DPO row
DROPPED = {
    "no_shared_prefix": "no shared conversation prefix (they differ from the user's first message: a different "
                        "user simulator, emotion or seed; pair runs with the same user and emotion)",
    "one_contains_the_other": "one trajectory is a prefix of the other (no continuation to prefer)",
    "part_at_a_user_turn": "they part at a user turn, not at an agent choice",
    **{MARKUP + family: f"text holding {family.replace('_', ' ')} chat-template markup (left out: the template "
                        f"would read it as structure)" for family in TEMPLATE_MARKUP},
}


def describe_drops(dropped: Counter[str]) -> str:
    """`22 with no shared conversation prefix (...); 1 ...` for the export's message."""
    return "; ".join(f"{n} with {DROPPED.get(reason, reason)}" for reason, n in dropped.most_common())


def sft_rows(runs: dict[str, tuple[list[EpisodeResult], dict[str, Any] | None]], exporter: Exporter,
             dropped: Counter[str] | None = None) -> list[dict[str, Any]]:
    """One row per kept trajectory: a collection's selection, or every +1 trial of another run. Rows holding
    template markup are left out and counted in `dropped` by reason (`markup:FAMILY`)."""
    rows = []
    for run_id, (results, summary) in runs.items():
        kept = kept_keys(summary)
        for r in results:
            if r.status != "ok" or r.reward != 1:
                continue
            if kept is not None and (r.task_id, r.trial) not in kept:
                continue
            row = exporter.sft_row(run_id, r)
            markup = row_markup(row["messages"])
            if markup is None:
                rows.append(row)
            elif dropped is not None:
                dropped[markup] += 1
    return rows


def dpo_rows(runs: dict[str, tuple[list[EpisodeResult], dict[str, Any] | None]], exporter: Exporter,
             dropped: Counter[str] | None = None) -> list[dict[str, Any]]:
    """Preference pairs from tasks with a +1 and a -1 trajectory (over all the runs): each +1 with one -1.
    Pairs that give no row are counted in `dropped` by reason (`DROPPED`)."""
    good: dict[str, list[tuple[str, EpisodeResult]]] = defaultdict(list)
    bad: dict[str, list[tuple[str, EpisodeResult]]] = defaultdict(list)
    for run_id, (results, _) in runs.items():
        for r in results:
            if r.status == "ok" and r.reward == 1:
                good[r.task_id].append((run_id, r))
            elif r.status == "ok" and r.reward == -1:
                bad[r.task_id].append((run_id, r))
    rows = []
    for task_id in sorted(set(good) & set(bad)):
        for i, (run_id, g) in enumerate(good[task_id]):
            bad_run, b = bad[task_id][i % len(bad[task_id])]
            row = exporter.dpo_pair(run_id, g, bad_run, b)
            if isinstance(row, dict):
                rows.append(row)
            elif dropped is not None:
                dropped[row] += 1
    return rows


#: the per-domain cap of both mixtures by default: the paper capped every domain at 250 trajectories, which
#: trimmed the three that had more (retail, telehealth and basketball)
MIXTURE_CAP = 250


@dataclass(frozen=True)
class Mixture:
    """A named training mixture: which domains it draws from and how many rows each may give at most."""

    name: str
    domains: tuple[str, ...]
    description: str
    cap: int | None = MIXTURE_CAP
    caps: dict[str, int | None] = field(default_factory=dict)

    def cap_of(self, domain: str) -> int | None:
        return self.caps.get(domain, self.cap)

    def owns(self, domain_name: str) -> str | None:
        """The mixture domain a row's domain is: by exact name, so an adapter's `tautrait-retail` is not retail."""
        return domain_name if domain_name in self.domains else None


MIXTURES = {
    "tracer-high": Mixture("tracer-high", (*SEEN, *UNSEEN), "Tracer-High: all ten domains, balanced by domain"),
    "tracer-low": Mixture("tracer-low", SEEN, "Tracer-Low: the four seen domains only (the transfer experiment "
                                              "trains on it and evaluates on the six unseen ones)"),
}


def parse_caps(mixture: Mixture, values: tuple[str, ...] | list[str]) -> Mixture:
    """`mixture` with caps from `--cap`: `N` or `none` for every domain, `DOMAIN=N` or `DOMAIN=none` for one."""
    cap, caps = mixture.cap, dict(mixture.caps)
    for value in values:
        name, _, amount = value.rpartition("=")
        if name and name not in mixture.domains:
            raise ExportError(f"--cap {value}: '{name}' is not a domain of mixture {mixture.name} "
                              f"({', '.join(mixture.domains)})")
        if amount.strip().lower() == "none":
            number = None
        elif amount.strip().isdigit() and int(amount) > 0:
            number = int(amount)
        else:
            raise ExportError(f"--cap {value}: expected N, none, DOMAIN=N or DOMAIN=none (N a positive integer)")
        if name:
            caps[name] = number
        else:
            cap = number
    return Mixture(mixture.name, mixture.domains, mixture.description, cap, caps)


def mix(rows: list[dict[str, Any]], mixture: Mixture, seed: int = 0) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows of `mixture`'s domains, at most its cap per domain, and a report of what was kept.

    Over the cap, a domain's rows are drawn round-robin over emotion families (the family with the
    fewest kept so far first), so the cap trims the over-represented families, as collection does.
    """
    by_domain: dict[str, list[dict[str, Any]]] = {d: [] for d in mixture.domains}
    left_out: Counter[str] = Counter()
    for row in sorted(rows, key=lambda r: (r["domain"], r["task_id"], r["trial"], r["run_id"])):
        want = mixture.owns(row["domain"])
        if want is None:
            left_out[row["domain"]] += 1
        else:
            by_domain[want].append(row)
    kept: list[dict[str, Any]] = []
    counts = {}
    for domain, items in by_domain.items():
        cap = mixture.cap_of(domain)
        chosen = items if cap is None or len(items) <= cap else _round_robin(items, cap, random.Random(f"{seed}:{domain}"))
        kept.extend(chosen)
        counts[domain] = {"available": len(items), "cap": cap, "kept": len(chosen)}
    report = {"name": mixture.name, "description": mixture.description, "domains": list(mixture.domains),
              "cap": mixture.cap, "caps": dict(mixture.caps), "counts": counts, "left_out": dict(left_out)}
    return kept, report


def _round_robin(items: list[dict[str, Any]], cap: int, rng: random.Random) -> list[dict[str, Any]]:
    pools: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in items:
        pools[row["emotion_family"]].append(row)
    for pool in pools.values():
        rng.shuffle(pool)
    taken: Counter[str] = Counter()
    out: list[dict[str, Any]] = []
    while len(out) < cap:
        family = min((f for f in pools if pools[f]), key=lambda f: (taken[f], f))
        out.append(pools[family].pop())
        taken[family] += 1
    return out


def mixture_lines(report: dict[str, Any]) -> list[str]:
    """The card's section on the mixture: its domains, caps and what each domain gave."""
    cap = report["cap"]
    lines = ["", f"## Mixture: {report['name']}", "", f"{report['description']}. Each domain keeps at most its cap of "
             f"trajectories (default {cap if cap is not None else 'none'}"
             + (", " + ", ".join(f"{d} {c if c is not None else 'none'}" for d, c in report["caps"].items())
                if report["caps"] else "")
             + "), drawn round-robin over emotion families so the cap trims the over-represented ones.", "",
             "| domain | collected | cap | kept |", "|---|---:|---:|---:|"]
    for domain, c in report["counts"].items():
        note = "" if c["available"] else " (none collected)"
        lines.append(f"| {domain} | {c['available']} | {c['cap'] if c['cap'] is not None else '-'} | {c['kept']}{note} |")
    if report["left_out"]:
        lines += ["", "Left out (not domains of the mixture): "
                  + ", ".join(f"{d} {n}" for d, n in sorted(report["left_out"].items())) + " row(s)."]
    return lines


def split_rows(rows: list[dict[str, Any]], validation: float, seed: int) -> dict[str, list[dict[str, Any]]]:
    """Train/validation by task (a task's rows stay together); at least one validation task when there are two."""
    tasks = sorted({r["task_id"] for r in rows})
    random.Random(seed).shuffle(tasks)
    n_val = round(len(tasks) * validation)
    if validation > 0 and n_val == 0 and len(tasks) >= 2:
        n_val = 1
    held = set(tasks[:n_val])
    return {"train": [r for r in rows if r["task_id"] not in held],
            "validation": [r for r in rows if r["task_id"] in held]}


def dropped_lines(dropped: Counter[str] | None) -> list[str]:
    """The card's section on what was left out, by reason: always present, so a card that says nothing was
    left out is a claim, not an omission."""
    lines = ["", "## Left out", "", "Trajectories whose text holds chat-template markup (ChatML `<|im_start|>`, "
             "tool-call tags such as `<tool_call>`, Llama-2 `[INST]`, Llama-3 header tokens, Gemma turn tokens, any "
             "`<|name|>` token) are left out whole: a chat template would render it as a turn or a tool call the "
             "model never made.", ""]
    if not dropped:
        return [*lines, "None was left out."]
    lines += ["| reason | rows |", "|---|---:|"]
    lines += [f"| {DROPPED.get(reason, reason)} | {n} |" for reason, n in sorted(dropped.items())]
    return lines


def card(fmt: str, splits: dict[str, list[dict[str, Any]]], runs: list[str],
         mixture: dict[str, Any] | None = None, dropped: Counter[str] | None = None) -> str:
    """The dataset card: what the rows are, where they came from, counts by domain and emotion family, and
    the mixture (its domains, caps and per-domain counts) when one was named."""
    rows = [r for part in splits.values() for r in part]
    how = f"--format {fmt}" + (f" --mixture {mixture['name']}" if mixture else "")
    lines = [f"# tau-emotion {fmt.upper()} dataset", "",
             f"Exported by `tau export-sft {how}` from run(s): {', '.join(runs)}.", ""]
    if fmt == "sft":
        lines += ["Rows are conversations for TRL's `SFTTrainer`: `messages` (system prompt with the domain policy, "
                  "user, assistant with `tool_calls`, tool results) and `tools` (the tool schemas). Tool-call "
                  "`arguments` and `tools` are JSON strings. Only trajectories with reward +1 are included.", ""]
    else:
        lines += ["Rows are preference pairs for TRL's `DPOTrainer`: `prompt` (the shared conversation prefix), "
                  "`chosen` (the rest of a +1 trajectory) and `rejected` (the rest of a -1, ###UNSATISFIED###, "
                  "trajectory of the same task), plus `tools`. Tool-call `arguments` and `tools` are JSON strings.", ""]
    lines += ["| split | rows | tasks |", "|---|---:|---:|"]
    for name, part in splits.items():
        lines.append(f"| {name} | {len(part)} | {len({r['task_id'] for r in part})} |")
    for title, key in (("domain", "domain"), ("emotion family", "emotion_family")):
        lines += ["", f"| {title} | rows | share |", "|---|---:|---:|"]
        counts = Counter(r[key] for r in rows)
        for value, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"| {value} | {count} | {count / max(len(rows), 1):.1%} |")
    if fmt == "sft" and rows:
        stats = [(r["n_tool_calls"], r["n_questions"]) for r in rows]
        lines += ["", f"Per trajectory: {sum(c for c, _ in stats) / len(stats):.2f} tool calls, "
                      f"{sum(q for _, q in stats) / len(stats):.2f} follow-up questions; tool calls outnumber "
                      f"questions in {sum(c > q for c, q in stats) / len(stats):.1%}."]
    lines += dropped_lines(dropped)
    if mixture:
        lines += mixture_lines(mixture)
    return "\n".join(lines) + "\n"


#: how to get `datasets` without pulling a CUDA torch: pin the CPU wheel first
DATASETS_HINT = "pip install torch==2.13.0 (the CPU wheel; pin it first) && pip install -e '.[train]'"


def write(splits: dict[str, list[dict[str, Any]]], out: Path, fmt: str, runs: list[str], jsonl: bool = True,
          mixture: dict[str, Any] | None = None, dropped: Counter[str] | None = None) -> bool:
    """Write one JSONL file per split and README.md into `out`, and a `datasets.DatasetDict` (`save_to_disk`)
    when `datasets` is installed. Returns whether the dataset was written (JSONL needs nothing beyond the core).

    The JSONL files and the card are written together and atomically (`write_outputs`): each is complete on
    disk before any replaces its earlier version, and an `OSError` is one line leaving the earlier export as it was."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        from tau_emotion.core.outputs import cause

        raise ExportError(f"cannot create the folder {out}: {cause(exc)}") from None
    files: dict[Path, Any] = {out / f"{name}.jsonl": (json.dumps(row) + "\n" for row in part)
                              for name, part in splits.items() if jsonl or not part}
    files[out / "README.md"] = card(fmt, splits, runs, mixture, dropped)
    write_outputs(files)
    try:
        import datasets
    except ImportError:
        return False
    datasets.disable_progress_bars()
    built = datasets.DatasetDict({name: datasets.Dataset.from_list(part) for name, part in splits.items() if part})
    built.save_to_disk(str(out))
    return True
