"""The `report` plugin: run metadata, and the commands that read and compare results.

It records each run's metadata through the store (`tau_run_start`, `tau_run_end`, and the summary
`--summary-json` writes) and reads it back for `tau runs` (`tau_run_row`: started, status, models) and
`tau show` (`tau_run_header`), extends `tau show` with a trial viewer (`tau show RUN TASK`, `--failed`),
and adds `tau analyze`, `tau report` (one self-contained HTML file), `tau compare` and `tau gate`.
Every command reads through the stores catalog, so any store works. Heavy work (Jinja, the
analyses) is imported inside the commands.
"""

from __future__ import annotations

import time

from tau_emotion.core import hookimpl


def _save(run, meta) -> None:
    save = getattr(run.store, "save_run_meta", None)
    if save is not None:  # a store written before metadata existed still runs
        save(run.run_id, meta)


@hookimpl
def tau_run_start(run):
    from tau_emotion.plugins.report.meta import start_meta

    previous = run.store.run_meta(run.run_id) if hasattr(run.store, "run_meta") else None
    run.report_meta = start_meta(run, previous)
    _save(run, run.report_meta)


@hookimpl
def tau_run_end(run, summary):
    from tau_emotion.plugins.report.meta import end_status

    meta = dict(getattr(run, "report_meta", None) or {})
    stored = summary.get("n_trials")
    if stored is None:  # the metrics plugin was blocked: count the stored trials
        stored = len(run.store.results(run.run_id))
    meta.update(status=end_status(run.total, stored, summary.get("errors", 0)), ended=time.time(),
                n_trials_stored=stored, n_trials_expected=run.total)
    _save(run, meta)
    summary["meta"] = meta


@hookimpl
def tau_run_row(run):
    from tau_emotion.plugins.report.meta import run_row

    return run_row(run)


@hookimpl
def tau_run_header(run):
    from tau_emotion.plugins.report.meta import run_header

    return run_header(run)


@hookimpl
def tau_register_commands(cli):
    from tau_emotion.plugins.report import commands

    commands.register(cli)
