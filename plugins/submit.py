"""The `submit` plugin: results a team can hand over and someone else can verify (docs/submit.md).

`tau submit prepare RUN... --out FILE` writes one self-contained JSON file: per run its config (secrets
already out, as the store keeps it), its metadata (without host and process id), its kind, its
scoring mode (`paper` unless the run records another), the content hash of each task set it ran (a
domain's split), the tasks its trajectories came from with their hashes, every trajectory with its
stored score, and its summary; with the harness version and a digest of the whole. `tau submit
verify FILE` checks the digest, the task sets and tasks against the installed packs, re-scores every
trajectory with the current scorer (`core.reward.rescore`) and recomputes the summary's figures
from the trajectories, and prints what differs (exit 1 when anything does). `tau leaderboard FILE...`
prints Avg@k and Pass^k by domain, seen/unseen and emotion family, as Markdown or JSON.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import click

from tau_emotion.core import hookimpl
from tau_emotion.core.errors import TauError
from tau_emotion.core.terminal import reward as terminal_reward

FORMAT = "tau-emotion-submission"
FORMAT_VERSION = 1
#: the scoring a run records when it records none (the paper's: database, outputs, reasons, terminal tool)
DEFAULT_SCORING = "paper"
#: the scorings this harness re-scores
SCORINGS = (DEFAULT_SCORING,)
#: run metadata that says where it ran, not what: left out of a file handed to others
PRIVATE_META = ("host", "pid")
#: a derived task id (`TASK~control`, a plugin's variant of TASK) shares its source task's gold
VARIANT = "~"


class SubmissionError(TauError):
    """A file that is not a submission, or a run that cannot be put in one."""


# ----------------------------------------------------------------------------- prepare


def source_task(tasks: dict[str, Any], task_id: str) -> Any | None:
    """The task a trajectory ran: `task_id` itself, or for a variant (`TASK~control`) the task it derives from."""
    return tasks.get(task_id) or tasks.get(task_id.split(VARIANT, 1)[0])


def domain_of(pm: Any, name: str) -> Any | None:
    catalog = pm.catalog("domains")
    if name not in catalog:
        return None
    obj = catalog.get(name)
    return obj if hasattr(obj, "toolset") else obj()


def scoring_of(summary: dict[str, Any], meta: dict[str, Any], config: dict[str, Any]) -> str:
    """The run's scoring mode as it records it (summary, metadata or an option named `scoring`), else `paper`."""
    for source in (summary, meta, *(config.get("options") or {}).values()):
        value = source.get("scoring") if isinstance(source, dict) else None
        if isinstance(value, str) and value:
            return value
    return DEFAULT_SCORING


def run_record(store: Any, run_id: str, pm: Any) -> dict[str, Any]:
    """One run as a submission holds it (see the module docstring)."""
    from tau_emotion.core.limits import redact
    from tau_emotion.core.models import task_set_hash

    config = store.run_config(run_id)
    meta = {k: v for k, v in ((store.run_meta(run_id) if hasattr(store, "run_meta") else None) or {}).items()
            if k not in PRIVATE_META}
    summary = store.summary(run_id) or {}
    results = store.results(run_id)
    if not results:
        raise SubmissionError(f"run {run_id} has no stored trials: nothing to submit")
    config_json = redact(config.model_dump(mode="json"))
    task_sets: dict[str, Any] = {}
    tasks: dict[str, Any] = {}
    for name in sorted({r.domain for r in results}):
        domain = domain_of(pm, name)
        if domain is None:
            raise SubmissionError(f"run {run_id} ran domain '{name}', which is not installed: its tasks cannot be "
                                  f"hashed (install the pack, or add it with --plugins)")
        split = domain.tasks(config.split)
        task_sets[f"{name}/{config.split}"] = {"domain": name, "split": config.split, "n_tasks": len(split),
                                               "content_hash": task_set_hash(split)}
        by_id = {t.id: t for t in domain.tasks(None)}
        for r in (r for r in results if r.domain == name):
            task = source_task(by_id, r.task_id)
            if task is None:
                raise SubmissionError(f"run {run_id}: domain '{name}' has no task '{r.task_id}' any more")
            tasks[f"{name}/{task.id}"] = {"task": task.model_dump(mode="json"), "content_hash": task.content_hash}
    return {"run_id": run_id, "kind": config.kind, "scoring": scoring_of(summary, meta, config_json),
            "config": config_json, "meta": redact(meta), "summary": redact(summary), "task_sets": task_sets,
            "tasks": tasks, "trajectories": [r.model_dump(mode="json") for r in results]}


def digest(runs: list[dict[str, Any]]) -> str:
    from tau_emotion.core.models import content_hash

    return content_hash(runs)


def prepare(store: Any, run_ids: list[str], pm: Any) -> dict[str, Any]:
    from tau_emotion.core import __version__

    runs = [run_record(store, run_id, pm) for run_id in run_ids]
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "harness_version": __version__,
            "prepared": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "digest": digest(runs), "runs": runs}


# ----------------------------------------------------------------------------- verify


def read_submission(path: str) -> dict[str, Any]:
    from tau_emotion.core.state import not_a_regular_file

    problem = not_a_regular_file(Path(path))
    if problem:
        raise SubmissionError(f"{path}: {problem}")
    try:
        bundle = json.loads(Path(path).read_text(encoding="utf-8"))
    except RecursionError:
        raise SubmissionError(f"{path}: the JSON nests too deep to read") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SubmissionError(f"{path}: not a readable JSON file ({str(exc).splitlines()[0][:200]})") from None
    if not isinstance(bundle, dict) or bundle.get("format") != FORMAT:
        raise SubmissionError(f"{path}: not a tau-emotion submission (no \"format\": \"{FORMAT}\"; make one with "
                              "`tau submit prepare RUN --out FILE`)")
    if bundle.get("format_version") != FORMAT_VERSION:
        raise SubmissionError(f"{path}: submission format version {bundle.get('format_version')!r}; this harness "
                              f"reads version {FORMAT_VERSION}")
    if not isinstance(bundle.get("runs"), list) or not all(isinstance(r, dict) for r in bundle["runs"]):
        raise SubmissionError(f"{path}: \"runs\" must be a list of runs")
    return bundle


def _fields_that_differ(a: Any, b: Any, prefix: str = "") -> list[str]:
    """Dotted paths where two JSON values differ (objects recursed; anything else compared whole)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in sorted({*a, *b}):
            out += _fields_that_differ(a.get(key), b.get(key), f"{prefix}.{key}" if prefix else key)
        return out
    return [] if a == b else [prefix or "(task)"]


def verify_run(run: dict[str, Any], pm: Any) -> tuple[list[str], dict[str, int]]:
    """The differences of one run record against the installed packs and the current scorer, and counts."""
    from pydantic import ValidationError

    from tau_emotion.core.models import EpisodeResult, Task, task_set_hash
    from tau_emotion.core.reward import GoldReplayError, rescore
    from tau_emotion.core.statistics import score_group

    rid = run.get("run_id", "?")
    out: list[str] = []
    counts = {"trajectories": 0, "rescored": 0, "tasks": 0, "task_sets": 0, "errored": 0}
    scoring = run.get("scoring") or DEFAULT_SCORING
    if scoring not in SCORINGS:
        out.append(f"run {rid}: scoring '{scoring}' is not one this harness re-scores ({', '.join(SCORINGS)}): "
                   "its trajectories were not re-scored")
    domains: dict[str, Any] = {}
    for key, ts in sorted((run.get("task_sets") or {}).items()):
        counts["task_sets"] += 1
        domain = domains.setdefault(ts.get("domain"), domain_of(pm, ts.get("domain")))
        if domain is None:
            out.append(f"run {rid}: task set {key}: domain '{ts.get('domain')}' is not installed")
            continue
        now = task_set_hash(domain.tasks(ts.get("split")))
        if now != ts.get("content_hash"):
            out.append(f"run {rid}: task set {key} differs from the installed one (content hash "
                       f"{str(ts.get('content_hash'))[:12]} in the file, {now[:12]} installed)")
    tasks: dict[str, Any] = {}
    for key, entry in sorted((run.get("tasks") or {}).items()):
        counts["tasks"] += 1
        name = key.split("/", 1)[0]
        try:
            stored = Task.model_validate(entry.get("task"))
        except ValidationError as exc:
            out.append(f"run {rid}: task {key} in the file is not a valid task ({exc.errors()[0]['msg']})")
            continue
        domain = domains.setdefault(name, domain_of(pm, name))
        installed = {t.id: t for t in domain.tasks(None)}.get(stored.id) if domain is not None else None
        fields = _fields_that_differ(entry.get("task"), installed.model_dump(mode="json")) if installed else []
        if stored.content_hash != entry.get("content_hash"):
            out.append(f"run {rid}: task {key} in the file does not match its recorded content hash (edited"
                       + (f"; it differs from the installed task in {', '.join(fields[:6])})" if fields else ")"))
        if domain is None:
            out.append(f"run {rid}: task {key}: domain '{name}' is not installed")
            continue
        if installed is None:
            out.append(f"run {rid}: task {key} is not in the installed domain '{name}'")
            continue
        tasks[key] = installed
        if installed.content_hash != entry.get("content_hash"):
            out.append(f"run {rid}: the installed task {key} differs from the one the run used, in "
                       f"{', '.join(fields[:6]) or 'its content hash'}")
    results = []
    for i, raw in enumerate(run.get("trajectories") or []):
        counts["trajectories"] += 1
        try:
            r = EpisodeResult.model_validate(raw)
        except ValidationError as exc:
            out.append(f"run {rid}: trajectory {i} is not a valid result ({exc.errors()[0]['msg']})")
            continue
        results.append(r)
        where = f"run {rid}: {r.domain}/{r.task_id} trial {r.trial}"
        if r.status != "ok":
            counts["errored"] += 1
            continue
        if scoring not in SCORINGS:
            continue
        task = tasks.get(f"{r.domain}/{r.task_id}") or tasks.get(f"{r.domain}/{r.task_id.split(VARIANT, 1)[0]}")
        domain = domains.get(r.domain)
        if task is None or domain is None:
            out.append(f"{where}: its task is not in the file or not installed: not re-scored")
            continue
        try:
            reward, parts = rescore(domain, task, r.messages, r.termination)
        except GoldReplayError as exc:
            out.append(f"{where}: the installed task's gold does not replay ({exc})")
            continue
        counts["rescored"] += 1
        if reward != r.reward or (reward == 1.0) != r.success:
            why = ([] if parts.db_match else ["database differs from the gold"]) + \
                  [f"{k}={getattr(parts, k)}" for k in ("outputs_missing", "reasons_missing") if getattr(parts, k)]
            out.append(f"{where}: stored reward {terminal_reward(r.reward)} (success {r.success}), re-scored {terminal_reward(reward)}"
                       + (f" ({'; '.join(why)})" if why else ""))
    out += summary_differences(rid, run, results, score_group)
    return out, counts


def summary_differences(rid: str, run: dict[str, Any], results: list[Any], score_group: Any) -> list[str]:
    """The summary's Avg@k and Pass^k against the same figures computed from the file's own trajectories."""
    summary, config = run.get("summary") or {}, run.get("config") or {}
    if "avg_at_k" not in summary or not results:
        return []
    again = score_group(results, int(config.get("trials") or 1), int(config.get("seed") or 0))
    out = []
    pairs = [("avg_at_k", summary.get("avg_at_k"), again.get("avg_at_k"))]
    pairs += [(f"pass^{k}", v, again.get("pass_hat_k", {}).get(k)) for k, v in (summary.get("pass_hat_k") or {}).items()]
    for name, stated, computed in pairs:
        if not isinstance(stated, int | float) or computed is None or abs(stated - computed) > 1e-4:
            out.append(f"run {rid}: summary {name} is {stated}, its trajectories give {computed}")
    return out


def verify(bundle: dict[str, Any], pm: Any) -> dict[str, Any]:
    from tau_emotion.core import __version__

    differences = []
    if digest(bundle["runs"]) != bundle.get("digest"):
        differences.append("file: its digest does not match its runs (edited after `tau submit prepare`)")
    totals: dict[str, int] = defaultdict(int)
    for run in bundle["runs"]:
        found, counts = verify_run(run, pm)
        differences += found
        for k, v in counts.items():
            totals[k] += v
    notes = []
    if bundle.get("harness_version") != __version__:
        notes.append(f"prepared with harness {bundle.get('harness_version')}, verified with {__version__}")
    return {"runs": len(bundle["runs"]), **totals, "differences": differences, "notes": notes}


# ----------------------------------------------------------------------------- leaderboard


def _label(run: dict[str, Any]) -> str:
    config, meta = run.get("config") or {}, run.get("meta") or {}
    model = (meta.get("models") or {}).get("agent_model")
    return f"{config.get('agent', '?')}/{model}" if model else f"{config.get('agent', '?')} vs {config.get('user', '?')}"


def suite_domain_names(pm: Any, suite: str) -> set[str]:
    """The domains of a suite (`tau suites`); empty when the suite or its packs are not installed."""
    from tau_emotion.core.suites import suite_domains

    catalog = pm.catalog("suites")
    if suite not in catalog:
        return set()
    try:
        return set(suite_domains(pm, list(catalog.get(suite))))
    except TauError:
        return set()


def board_entry(path: str, run: dict[str, Any], ok: bool, by: str, groups: dict[str, set[str]]) -> dict[str, Any]:
    from tau_emotion.core.models import EpisodeResult
    from tau_emotion.core.statistics import score_group

    config = run.get("config") or {}
    k, seed = int(config.get("trials") or 1), int(config.get("seed") or 0)
    results = [EpisodeResult.model_validate(t) for t in run.get("trajectories") or []]

    def figures(rs: list[Any]) -> dict[str, Any]:
        s = score_group(rs, k, seed)
        return {"tasks": s["n_tasks"], "trials": s["n_trials"], "avg_at_k": s.get("avg_at_k"),
                "avg_at_k_ci95": s.get("avg_at_k_ci95"), "pass_hat_k": s.get("pass_hat_k", {}).get(str(k))}

    by_domain: dict[str, list] = defaultdict(list)
    by_tag: dict[str, list] = defaultdict(list)
    for r in results:
        by_domain[r.domain].append(r)
        if by in r.tags:
            by_tag[r.tags[by]].append(r)
    split = {name: [r for r in results if r.domain in domains] for name, domains in groups.items()}
    return {"file": path, "run_id": run.get("run_id"), "label": _label(run), "k": k, "digest_ok": ok,
            "scoring": run.get("scoring") or DEFAULT_SCORING, "overall": figures(results),
            "by_domain": {d: figures(rs) for d, rs in sorted(by_domain.items())},
            "seen_unseen": {n: figures(rs) for n, rs in split.items() if rs},
            "by_tag": {"tag": by, "groups": {v: figures(rs) for v, rs in sorted(by_tag.items())}}}


def leaderboard(paths: list[str], pm: Any, by: str, seen: str, unseen: str) -> dict[str, Any]:
    groups = {"seen": suite_domain_names(pm, seen), "unseen": suite_domain_names(pm, unseen)}
    entries = []
    for path in paths:
        bundle = read_submission(path)
        ok = digest(bundle["runs"]) == bundle.get("digest")
        entries += [board_entry(path, run, ok, by, groups) for run in bundle["runs"]]
    entries.sort(key=lambda e: -(e["overall"]["avg_at_k"] or 0))
    return {"by": by, "seen_suite": seen, "unseen_suite": unseen, "entries": entries}


def _cell(f: dict[str, Any] | None) -> str:
    if not f or f.get("avg_at_k") is None:
        return "-"
    p = f.get("pass_hat_k")
    return f"{f['avg_at_k']:.3f} / {'-' if p is None else f'{p:.3f}'}"


def _md(text: Any) -> str:
    """A Markdown table cell: pipes and line breaks in data would break the row."""
    from tau_emotion.core.terminal import safe

    return safe(str(text)).replace("|", "\\|")


def markdown(board: dict[str, Any]) -> str:
    entries = board["entries"]
    names = [f"{e['label']} ({str(e['run_id'])[-6:]})" + ("" if e["digest_ok"] else " (edited)") for e in entries]
    lines = ["## Overall", "", "| # | submission | k | tasks | trials | Avg@k [95%] | Pass^k |", "|---:|---|---:|---:|---:|---|---:|"]
    for i, (e, name) in enumerate(zip(entries, names, strict=True), start=1):
        o = e["overall"]
        avg, pass_k, ci = o.get("avg_at_k"), o.get("pass_hat_k"), o.get("avg_at_k_ci95") or []
        avg_text = "-" if avg is None else f"{avg:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if len(ci) == 2 else "")
        pass_text = "-" if pass_k is None else f"{pass_k:.3f}"
        lines.append(f"| {i} | {_md(name)} | {e['k']} | {o['tasks']} | {o['trials']} | {avg_text} | {pass_text} |")
    for title, key, columns in (
            ("By domain (Avg@k / Pass^k)", "by_domain", sorted({d for e in entries for d in e["by_domain"]})),
            (f"Seen / unseen domains ({board['seen_suite']}, {board['unseen_suite']}; Avg@k / Pass^k)", "seen_unseen",
             [c for c in ("seen", "unseen") if any(c in e["seen_unseen"] for e in entries)]),
            (f"By {board['by']} (Avg@k / Pass^k)", "by_tag",
             sorted({v for e in entries for v in e["by_tag"]["groups"]}))):
        if not columns:
            continue
        lines += ["", f"## {title}", "", "| submission | " + " | ".join(_md(c) for c in columns) + " |",
                  "|---|" + "---:|" * len(columns)]
        for e, name in zip(entries, names, strict=True):
            cells = e[key]["groups"] if key == "by_tag" else e[key]
            lines.append(f"| {_md(name)} | " + " | ".join(_cell(cells.get(c)) for c in columns) + " |")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- commands


@hookimpl
def tau_register_commands(cli):
    if "submit" not in cli.commands:
        cli.add_command(submit_group)
    if "leaderboard" not in cli.commands:
        cli.add_command(leaderboard_command)


@click.group("submit")
def submit_group() -> None:
    """Results you can hand over and others can verify: one self-contained file (docs/submit.md)."""


def _shared(command: Any) -> Any:
    from tau_emotion.core.plugin_cli import db_option, debug_option, guarded, plugins_option, store_option

    return store_option(db_option(plugins_option(debug_option(guarded(command)))))


@submit_group.command("prepare")
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The submission file to write (JSON).")
@_shared
def prepare_command(run_ids: tuple[str, ...], out: str, db_path: str, store: str | None,
                    extra_plugins: tuple[str, ...]) -> None:
    """Write RUN... (ids, `latest`, unique prefixes) into one self-contained submission file."""
    from tau_emotion.core.plugin_cli import command_pm, writable_parent
    from tau_emotion.core.runner import open_store, resolve_run
    from tau_emotion.core.state import write_text_atomic

    writable_parent(out, "--out")
    pm = command_pm(extra_plugins)
    opened = open_store(pm, store, db_path, create=False)
    ids = list(dict.fromkeys(resolve_run(opened, ref, db_path) for ref in run_ids))
    bundle = prepare(opened, ids, pm)
    write_text_atomic(Path(out), json.dumps(bundle, ensure_ascii=False, separators=(",", ":")) + "\n")
    n = sum(len(r["trajectories"]) for r in bundle["runs"])
    click.echo(f"wrote {out}: {len(ids)} run(s), {n} trajectories, digest {bundle['digest'][:12]}", err=True)


@submit_group.command("verify")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="The verification as JSON.")
@click.option("--plugins", "extra_plugins", multiple=True, help="Also load these plugins (packs not installed).")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
def verify_command(path: str, as_json: bool, extra_plugins: tuple[str, ...], debug: bool) -> None:
    """Re-score every trajectory of a submission with the current scorer, check its task hashes against the
    installed packs and its summary against its trajectories; print what differs (exit 1 when anything does)."""
    from tau_emotion.core.plugin_cli import command_pm, guarded
    from tau_emotion.core.terminal import safe

    @guarded
    def go(debug: bool = False) -> None:
        result = verify(read_submission(path), command_pm(extra_plugins))
        if as_json:
            click.echo(json.dumps(result, indent=2))
        else:
            for line in result["notes"]:
                click.echo(f"note: {safe(line)}")
            for line in result["differences"]:
                click.echo(safe(line))
            click.echo(f"verified {path}: {result['runs']} run(s), {result['rescored']} of {result['trajectories']} "
                       f"trajectories re-scored ({result['errored']} errored, not scored), {result['tasks']} task(s) and "
                       f"{result['task_sets']} task set(s) checked: {len(result['differences'])} difference(s)")
        if result["differences"]:
            raise SystemExit(1)

    go(debug=debug)


@click.command("leaderboard")
@click.argument("paths", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="The leaderboard as JSON (every figure, with intervals).")
@click.option("--by", default="emotion.family", show_default=True, help="The result tag of the family columns.")
@click.option("--seen", default="tau-emotion-seen", show_default=True, help="The suite whose domains are 'seen'.")
@click.option("--unseen", default="tau-emotion-unseen", show_default=True, help="The suite whose domains are 'unseen'.")
@click.option("--plugins", "extra_plugins", multiple=True, help="Also load these plugins (packs not installed).")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
def leaderboard_command(paths: tuple[str, ...], as_json: bool, by: str, seen: str, unseen: str,
                        extra_plugins: tuple[str, ...], debug: bool) -> None:
    """Avg@k / Pass^k of every run in the submission FILEs: overall, by domain, seen/unseen and emotion family."""
    from tau_emotion.core.plugin_cli import command_pm, guarded

    @guarded
    def go(debug: bool = False) -> None:
        board = leaderboard(list(paths), command_pm(extra_plugins), by, seen, unseen)
        click.echo(json.dumps(board, indent=2) if as_json else markdown(board), nl=as_json)

    go(debug=debug)
