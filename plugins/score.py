"""The `score` plugin: `tau score`, the current scorer applied to stored runs and to single trajectories.

`tau score RUN_ID` re-scores every stored trial of a run (its database is rebuilt by running the
trial's tool calls again) with today's scorer, task data and procedure rules, and prints the trials
whose reward or procedure verdict changed; `--save` is not offered: a stored run keeps what was
measured. `tau score --domain D --task ID --messages FILE [--json]` scores one trajectory, FILE being
a JSON list of messages in the export format (`tau export` rows carry them under "messages").
`--scoring paper|strict` scores under that scoring (a run's default: the one it was run with), and
`--violations` lists each procedure violation with the message it happens at.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from tau_emotion.core import hookimpl
from tau_emotion.core.errors import TauError
from tau_emotion.core.terminal import reward as terminal_reward


def find_task(domain: Any, task_id: str) -> Any:
    """The task `task_id` of `domain`; a derived id (a plugin's suffix, e.g. a control copy) finds its source."""
    tasks = {t.id: t for t in domain.all_tasks}
    if task_id in tasks:
        return tasks[task_id]
    sources = [t for t in tasks if task_id.startswith(t) and not task_id[len(t)].isalnum()]
    if not sources:
        raise TauError(f"domain '{domain.name}' has no task '{task_id}'")
    return tasks[max(sources, key=len)]


def read_messages(path: str) -> list[Any]:
    from pydantic import TypeAdapter, ValidationError

    from tau_emotion.core.models import Message
    from tau_emotion.core.state import not_a_regular_file

    problem = not_a_regular_file(Path(path))
    if problem:
        raise TauError(f"{path}: {problem}")
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except RecursionError:
        raise TauError(f"{path}: the JSON nests too deep to read") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: bad JSON, a 5000-digit integer
        raise TauError(f"{path}: cannot read a JSON list of messages ({str(exc).splitlines()[0][:200]})") from None
    if isinstance(raw, dict) and "messages" in raw:  # one `tau export` row
        raw = raw["messages"]
    try:
        return TypeAdapter(list[Message]).validate_python(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise TauError(f"{path}: message {'.'.join(str(x) for x in err['loc'])}: {err['msg']}") from None


@click.command("score")
@click.argument("run_id", required=False)
@click.option("--domain", "domain_name", default=None, help="Score one trajectory: its domain ...")
@click.option("--task", "task_id", default=None, help="... its task id ...")
@click.option("--messages", "messages_path", type=click.Path(dir_okay=False), default=None,
              help="... and a JSON list of its messages (export format).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {reward, parts} (or the changed trials).")
@click.option("--scoring", type=click.Choice(["paper", "strict"]), default=None,
              help="Score under this scoring (default: the run's own; paper for one trajectory).")
@click.option("--violations", "show_violations", is_flag=True,
              help="List each procedure violation with the index of its message.")
@click.option("--store", "store", default=None, help="Result store plugin (default: the installed default store).")
@click.option("--db", "db_path", default=None, help="Where results are kept (default: as `tau show`). Env: TAU_DB.")
@click.option("--plugins", "extra_plugins", multiple=True, help="Also load these plugins (packs not installed).")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
def score_command(run_id: str | None, domain_name: str | None, task_id: str | None, messages_path: str | None,
                  as_json: bool, scoring: str | None, show_violations: bool, store: str | None, db_path: str | None,
                  extra_plugins: tuple[str, ...], debug: bool) -> None:
    """Re-score a stored run (RUN_ID) with the current scorer, or score one trajectory (--domain --task --messages)."""
    from tau_emotion.core import plugin_cli as cli

    @cli.guarded
    def go(debug: bool = False) -> None:
        if run_id is None:
            if not (domain_name and task_id and messages_path):
                raise click.UsageError("give RUN_ID, or --domain, --task and --messages")
            score_one(cli, domain_name, task_id, messages_path, as_json, scoring or "paper", show_violations,
                      extra_plugins)
        else:
            score_run(cli, run_id, as_json, scoring, show_violations, store, db_path or cli.default_db(),
                      extra_plugins)

    go(debug=debug)


def rescore(domain: Any, task: Any, messages: list[Any], termination: Any, scoring: str) -> tuple[float, Any]:
    """Today's reward and parts of a stored trajectory under `scoring`, procedure included."""
    from tau_emotion.core.procedure import apply_scoring
    from tau_emotion.core.reward import rescore as paper_rescore

    reward, parts = paper_rescore(domain, task, messages, termination)
    return apply_scoring(domain, task, messages, reward, parts, scoring)  # type: ignore[arg-type]


def violation_lines(parts: Any, prefix: str = "  ") -> list[str]:
    from tau_emotion.core.terminal import safe

    procedure = parts.procedure
    if procedure is None:
        return [f"{prefix}no procedure declared for this domain"]
    return [safe(f"{prefix}{v.rule} at message {v.message}{f' ({v.tool})' if v.tool else ''}: {v.detail}")
            for v in procedure.violations]


def score_one(cli: Any, domain_name: str, task_id: str, path: str, as_json: bool, scoring: str, show: bool,
              extra: tuple[str, ...]) -> None:
    from tau_emotion.core.models import Termination

    domain = cli.all_domains(extra).get(domain_name)
    reward, parts = rescore(domain, find_task(domain, task_id), read_messages(path), Termination(reason="scored"),
                            scoring)
    if as_json:
        click.echo(json.dumps({"reward": reward, "parts": parts.model_dump(mode="json")}))
        return
    click.echo(f"{domain_name}/{task_id}: reward {terminal_reward(reward)}  {parts.model_dump_json(exclude={'procedure'})}")
    ok = "no procedure" if parts.procedure is None else f"procedure_ok={parts.procedure.procedure_ok}"
    click.echo(f"  {ok} ({len(parts.procedure.violations) if parts.procedure else 0} violation(s))")
    if show:
        for line in violation_lines(parts, "    "):
            click.echo(line)


def score_run(cli: Any, run_id: str, as_json: bool, scoring: str | None, show: bool, store_name: str | None,
              db_path: str, extra: tuple[str, ...]) -> None:
    store = cli.open_results(db_path, store_name, extra)
    run_id = cli.require_run(store, run_id, db_path)
    config = store.run_config(run_id)
    scoring = scoring or (config.scoring if config is not None else "paper")
    domains = cli.all_domains(extra)
    changed, n, followed, measured = [], 0, 0, 0
    results = store.results(run_id)
    lost = cli.unreadable(results)
    for r in results:
        if r.status != "ok":
            continue
        n += 1
        domain = domains.get(r.domain)
        reward, parts = rescore(domain, find_task(domain, r.task_id), r.messages, r.termination, scoring)
        before = r.parts.procedure.procedure_ok if r.parts is not None and r.parts.procedure is not None else None
        now = parts.procedure.procedure_ok if parts.procedure is not None else None
        measured += now is not None
        followed += bool(now)
        if reward != r.reward or before != now or show:
            changed.append({"task_id": r.task_id, "trial": r.trial, "stored": r.reward, "now": reward,
                            "procedure_stored": before, "procedure_now": now,
                            "parts": parts.model_dump(mode="json"), "_parts": parts})
    if as_json:
        for c in changed:
            c.pop("_parts")
        click.echo(json.dumps({"run_id": run_id, "trials": n, "scoring": scoring, "changed": changed,
                               **({"unreadable": lost} if lost else {})}))
        if lost:
            raise cli.unreadable_error(lost, run_id, "the re-score")
        return
    for c in changed:
        p = c["parts"]
        why = [k for k in ("outputs_missing", "reasons_missing") if p[k]] + ([] if p["db_match"] else ["db"])
        proc = "" if c["procedure_stored"] == c["procedure_now"] else \
            f" procedure_ok {c['procedure_stored']} -> {c['procedure_now']}"
        click.echo(f"{c['task_id']:22} trial={c['trial']} {terminal_reward(c['stored'])} -> {terminal_reward(c['now'])}  "
                   f"{' '.join(f'{k}={p[k]}' for k in why if k != 'db') + (' db differs' if 'db' in why else '')}"
                   f"{proc}")
        if show:
            for line in violation_lines(c["_parts"], "    "):
                click.echo(line)
    changed_n = sum(1 for c in changed if c["stored"] != c["now"] or c["procedure_stored"] != c["procedure_now"])
    click.echo(f"{changed_n} of {n} trial(s) changed reward or procedure verdict under the current scorer "
               f"({scoring} scoring; procedure followed in {followed} of {measured} measured)"
               + (f"; {lost} unreadable" if lost else ""))
    if lost:  # "0 changed" would vouch for trials it never read
        raise cli.unreadable_error(lost, run_id, "the re-score")


@hookimpl
def tau_register_commands(cli):
    cli.add_command(score_command)
