"""The `score` plugin: `tau score`, the current scorer applied to stored runs and to single trajectories.

`tau score RUN_ID` re-scores every stored trial of a run (its database is rebuilt by running the
trial's tool calls again) with today's scorer and task data, and prints the trials whose reward
changed; `--save` is not offered: a stored run keeps what was measured. `tau score --domain D
--task ID --messages FILE [--json]` scores one trajectory, FILE being a JSON list of messages in
the export format (`tau export` rows carry them under "messages").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from tau_emotion.core import hookimpl
from tau_emotion.core.errors import TauError


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
@click.option("--store", "store", default=None, help="Result store plugin (default: the installed default store).")
@click.option("--db", "db_path", default=None, help="Where results are kept (default: as `tau show`). Env: TAU_DB.")
@click.option("--plugins", "extra_plugins", multiple=True, help="Also load these plugins (packs not installed).")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
def score_command(run_id: str | None, domain_name: str | None, task_id: str | None, messages_path: str | None,
                  as_json: bool, store: str | None, db_path: str | None, extra_plugins: tuple[str, ...],
                  debug: bool) -> None:
    """Re-score a stored run (RUN_ID) with the current scorer, or score one trajectory (--domain --task --messages)."""
    from tau_emotion.core import plugin_cli as cli

    @cli.guarded
    def go(debug: bool = False) -> None:
        if run_id is None:
            if not (domain_name and task_id and messages_path):
                raise click.UsageError("give RUN_ID, or --domain, --task and --messages")
            score_one(cli, domain_name, task_id, messages_path, as_json, extra_plugins)
        else:
            score_run(cli, run_id, as_json, store, db_path or cli.default_db(), extra_plugins)

    go(debug=debug)


def score_one(cli: Any, domain_name: str, task_id: str, path: str, as_json: bool, extra: tuple[str, ...]) -> None:
    from tau_emotion.core.models import Termination
    from tau_emotion.core.reward import rescore

    domain = cli.all_domains(extra).get(domain_name)
    reward, parts = rescore(domain, find_task(domain, task_id), read_messages(path), Termination(reason="scored"))
    if as_json:
        click.echo(json.dumps({"reward": reward, "parts": parts.model_dump(mode="json")}))
    else:
        click.echo(f"{domain_name}/{task_id}: reward {reward:+.0f}  {parts.model_dump_json()}")


def score_run(cli: Any, run_id: str, as_json: bool, store_name: str | None, db_path: str,
              extra: tuple[str, ...]) -> None:
    from tau_emotion.core.reward import rescore

    store = cli.open_results(db_path, store_name, extra)
    run_id = cli.require_run(store, run_id, db_path)
    domains = cli.all_domains(extra)
    changed, n = [], 0
    results = store.results(run_id)
    lost = cli.unreadable(results)
    for r in results:
        if r.status != "ok":
            continue
        n += 1
        domain = domains.get(r.domain)
        reward, parts = rescore(domain, find_task(domain, r.task_id), r.messages, r.termination)
        if reward != r.reward:
            changed.append({"task_id": r.task_id, "trial": r.trial, "stored": r.reward, "now": reward,
                            "parts": parts.model_dump(mode="json")})
    if as_json:
        click.echo(json.dumps({"run_id": run_id, "trials": n, "changed": changed, **({"unreadable": lost} if lost else {})}))
        if lost:
            raise cli.unreadable_error(lost, run_id, "the re-score")
        return
    for c in changed:
        p = c["parts"]
        why = [k for k in ("outputs_missing", "reasons_missing") if p[k]] + ([] if p["db_match"] else ["db"])
        click.echo(f"{c['task_id']:22} trial={c['trial']} {c['stored']:+.0f} -> {c['now']:+.0f}  "
                   f"{' '.join(f'{k}={p[k]}' for k in why if k != 'db') + (' db differs' if 'db' in why else '')}")
    click.echo(f"{len(changed)} of {n} trial(s) changed reward under the current scorer"
               + (f"; {lost} unreadable" if lost else ""))
    if lost:  # "0 changed" would vouch for trials it never read
        raise cli.unreadable_error(lost, run_id, "the re-score")


@hookimpl
def tau_register_commands(cli):
    cli.add_command(score_command)
