"""Keys are used, never stored or printed; error texts are scrubbed (failure 5)."""

from __future__ import annotations

import sqlite3

from tau_emotion.core.limits import REDACTED, redact_options, scrub
from tau_emotion.core.models import RunConfig
from tau_emotion.core.runner import prepare_run, run_sync

KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"


def _config(server, **options):
    return RunConfig(plugins=["mock"], task_ids=["mock-001"], trials=1, agent="tool_calling",
                     options={"agent": {"agent_model": "openai/agent-model", "agent_api_base": server.base_url,
                                               **options},
                              "progress": {"no_progress": True}, "model_calls": {"retry_wait": 0.01, "max_retries": 0}})


def test_an_api_key_option_is_used_but_never_stored(openai_server, tmp_path, tau, monkeypatch):
    openai_server.respond("agent-model", {"content": "hello ###STOP###"})
    db = tmp_path / "k.sqlite"
    result = tau("run", "--plugins", "mock", "--task-ids", "mock-001", "--trials", "1", "--agent", "tool_calling",
                 "--agent-model", "openai/agent-model", "--agent-api-base", openai_server.base_url,
                 "-o", f"agent_api_key={KEY}", "--retry-wait", "0", "--db", str(db), "--no-progress")
    assert KEY not in result.output
    assert openai_server.requests, result.output
    raw = db.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("k.sqlite-*"))
    assert KEY.encode() not in raw
    with sqlite3.connect(db) as conn:
        [(config, run_id)] = conn.execute("SELECT config, run_id FROM runs").fetchall()
    assert REDACTED in config
    # --resume needs the key again, and says so
    monkeypatch.delenv("TAU_AGENT_API_KEY", raising=False)
    monkeypatch.delenv("TAU_API_KEY", raising=False)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE trials SET status = 'error'")
    again = tau("run", "--resume", run_id, "--db", str(db), "--no-progress")
    assert again.exit_code == 1 and "--agent-api-key" in again.output and "TAU_AGENT_API_KEY" in again.output
    monkeypatch.setenv("TAU_AGENT_API_KEY", KEY)
    again = tau("run", "--resume", run_id, "--db", str(db), "--no-progress")
    assert "already done" not in again.output and "not stored" not in again.output, again.output


def test_the_key_header_reaches_the_server(openai_server, tmp_path):
    seen = []
    openai_server.respond("agent-model", lambda body: seen.append(body) or {"content": "hi ###STOP###"})
    run = prepare_run(_config(openai_server, agent_api_key=KEY), str(tmp_path / "h.sqlite"))
    run_sync(run)
    assert seen and run.config.options["agent"]["agent_api_key"] == KEY  # used for the run
    assert {k.lower(): v for k, v in openai_server.headers[-1].items()}["authorization"] == f"Bearer {KEY}"


def test_a_server_error_echoing_the_authorization_header_is_stored_scrubbed(openai_server, tmp_path):
    echo = f"invalid request; headers were Authorization: Bearer {KEY} and x-api-key: {KEY[3:]}"
    openai_server.respond("agent-model", {"status": 400, "message": echo})
    run = prepare_run(_config(openai_server, agent_api_key=KEY), str(tmp_path / "e.sqlite"))
    run_sync(run)
    [result] = run.store.results(run.run_id)
    assert result.status == "error" and "agent-model" in result.error
    assert KEY not in result.error and KEY[3:] not in result.error and "Authorization: [REDACTED]" in result.error
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("e.sqlite*"))
    assert KEY[3:].encode() not in raw


def test_scrub_and_redact():
    hexkey = "a3f9" * 10
    b64 = "QWxhZGRpbjpvcGVuIHNlc2FtZQ9xK3mZ8pL2vN4rT6yU"
    text = scrub(f"Bearer abc.def-ghi12345 token={hexkey} key {b64} sk-proj-abcdefghijklmnop ghp_abcdefghijklmnopqrstu")
    for secret in ("abc.def-ghi12345", hexkey, b64, "sk-proj-abcdefghijklmnop", "ghp_abcdefghijklmnopqrstu"):
        assert secret not in text, text
    assert scrub("task 'airline-017' trial 2: ValueError: balance 123.45") == \
        "task 'airline-017' trial 2: ValueError: balance 123.45"
    assert redact_options({"g": {"user_api_key": "x", "db_password": "y", "secret_sauce": "z", "auth_token": "t",
                                 "agent_model": "m", "user_api_key_unset": None}}) == \
        {"g": {"user_api_key": REDACTED, "db_password": REDACTED, "secret_sauce": REDACTED, "auth_token": REDACTED,
               "agent_model": "m", "user_api_key_unset": None}}
