"""Terminal and markup injection (issue 24, item 6): data is shown escaped, never interpreted."""

from __future__ import annotations

import json
import sqlite3

from tau_emotion.core.terminal import cell, safe

ESCAPES = "\x1b[2J\x1b]0;owned\x07\x1b]52;c;ZXZpbA==\x07"


def test_safe_escapes_controls_osc_bidi_and_surrogates_but_keeps_text():
    text = safe(f"hi{ESCAPES}\u202eevil\ud800 café\n")
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text and "\n" not in text
    assert text.startswith("hi\\x1b[2J") and "café" in text and "\\u202e" in text and "\\ud800" in text
    assert safe("a\nb\tc\rd", multiline=True) == "a\nb\tc\\x0dd"  # newlines and tabs kept
    assert cell("[/] [link=http://x]y[/link]").plain == "[/] [link=http://x]y[/link]"


def test_runs_shows_a_markup_model_name_literally_and_show_escapes_stored_text(tau, tmp_path):
    db = str(tmp_path / "m.sqlite")
    tau("run", "--plugins", "mock", "--trials", "1", "--tasks", "1", "--db", db, "--no-progress",
        "--agent-model", "[/]", "-o", "user_model=qwen[int4]")
    listed = tau("runs", "--db", db)
    assert listed.exit_code == 0, listed.output
    assert "[/]" in listed.output and "MarkupError" not in listed.output
    run_id = json.loads(tau("runs", "--json", "--db", db).output)[-1]["run_id"]
    with sqlite3.connect(db) as conn:  # a stored error text holding escapes (as a server's error can)
        [(payload,)] = conn.execute("SELECT result FROM trials").fetchall()
        row = json.loads(payload)
        row.update(status="error", error=f"server said {ESCAPES}\nFAKE LINE trial=0 reward=+1")
        conn.execute("UPDATE trials SET result = ?, status = 'error'", (json.dumps(row),))
    shown = tau("show", run_id, "--db", db)
    assert "\x1b" not in shown.output and "\x07" not in shown.output
    assert "\nFAKE LINE" not in shown.output and "\\x1b[2J" in shown.output


def test_plugin_given_summary_rows_and_header_lines_are_shown_literally(capsys):
    """Main moved the summary table and `tau show`'s header into plugins (hooks): the core still renders
    what they give through the sanitiser, so a scope named `[/]` or holding escapes is shown, not run."""
    from tau_emotion.core import hookimpl
    from tau_emotion.core.cli import print_summary
    from tau_emotion.core.manager import get_plugin_manager
    from tau_emotion.plugins.report.meta import run_header

    class Rows:
        @hookimpl
        def tau_summary_rows(self, summary):
            return [(f"[/]{ESCAPES}", {"n": 1})]

        @hookimpl
        def tau_summary_columns(self, summary):
            return [("[bold]n", lambda g: f"[link=http://x]{g['n']}")]

    pm = get_plugin_manager(["mock"], ["metrics"])
    pm.register(Rows(), name="rows")
    print_summary({"run_id": "r[/]", "terminations": {}}, pm)
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "[/]\\x1b[2J" in out and "[bold]n" in out and "[link=http://x]1" in out and "r[/]" in out
    lines = run_header({"run_id": "r1", "meta": {"status": "complete", "agent": f"a{ESCAPES}\nFAKE LINE"}})
    assert lines and all("\x1b" not in line and "\n" not in line for line in lines)
    assert "\\x1b[2J" in " ".join(lines)
