"""One redaction walk over everything stored, printed or exported (issue 24, item 2): nested keys and
headers, URL credentials, serve arguments and the literal value of every secret the run was given."""

from __future__ import annotations

import json

from tau_emotion.core.limits import REDACTED, redact, remember_secrets, scrub

NESTED_KEY = "nested-secret-value-123"
BEARER = "Bearer hdr-secret-9876543"
PASSWORD = "Pa55w0rdXYZ"
ODD_KEY = "letmein42"  # a key that does not look like a key


def _everything(db, tmp_path):
    files = b"".join(p.read_bytes() for p in tmp_path.glob(db.name + "*"))
    return files


def test_nested_secrets_and_url_credentials_are_stored_printed_and_listed_nowhere(openai_server, tmp_path, tau):
    openai_server.respond("agent-model", {"content": "hello ###STOP###"})
    db = tmp_path / "n.sqlite"
    base = openai_server.base_url.replace("http://", f"http://admin:{PASSWORD}@")
    args = json.dumps({"api_key": NESTED_KEY, "extra_headers": {"Authorization": BEARER}, "max_tokens": 64})
    summary_json = tmp_path / "summary.json"
    result = tau("run", "--plugins", "mock", "--task-ids", "mock-001", "--trials", "1", "--agent", "tool_calling",
                 "--agent-model", "openai/agent-model", "--agent-api-base", base, "--agent-args", args,
                 "--retry-wait", "0", "--db", str(db), "--no-progress", "--summary-json", str(summary_json))
    listed = tau("runs", "--json", "--db", str(db))
    printed = result.output + listed.output + summary_json.read_text()
    stored = _everything(db, tmp_path)
    for secret in (NESTED_KEY, BEARER, PASSWORD):
        assert secret not in printed, secret
        assert secret.encode() not in stored, secret
    assert b"max_tokens" in stored and b"64" in stored  # a count is no secret


def test_a_key_echoed_by_the_server_is_scrubbed_by_its_literal_value(openai_server, tmp_path, tau):
    openai_server.respond("agent-model", {"status": 401, "message": f"unknown key {ODD_KEY} for this account"})
    db = tmp_path / "e.sqlite"
    result = tau("run", "--plugins", "mock", "--task-ids", "mock-001", "--trials", "1", "--agent", "tool_calling",
                 "--agent-model", "openai/agent-model", "--agent-api-base", openai_server.base_url,
                 "-o", f"agent_api_key={ODD_KEY}", "--retry-wait", "0", "--no-preflight", "--db", str(db),
                 "--no-progress")
    assert ODD_KEY not in result.output
    assert ODD_KEY.encode() not in _everything(db, tmp_path)
    assert {k.lower(): v for k, v in openai_server.headers[-1].items()}["authorization"] == f"Bearer {ODD_KEY}"


def test_print_config_never_writes_a_key(tau):
    args = json.dumps({"extra_headers": {"Authorization": BEARER}, "temperature": 0})
    result = tau("run", "--plugins", "mock", "--print-config", "-o", "agent_api_key=sk-print-config-123456",
                 "--agent-args", args, "-o", f"user_args={args}")
    assert "sk-print-config-123456" not in result.output and BEARER not in result.output
    assert "agent_api_key: not written" in result.output and "temperature" in result.output


def test_the_walk_covers_serve_arguments_headers_and_urls():
    remember_secrets({"serve": {"serve_args": "--api-key servekey77 --port 1"}})
    out = redact({"serve_args": "--api-key servekey77 --hf-token=hf_abcdefgh --port 1",
                  "agent_api_base": "http://u:p4ssword@host/v1", "headers": {"X-Api-Key": "abcdef", "Cookie": "c=1"},
                  "max_tokens": 5, "key_facts": 3})
    text = json.dumps(out)
    for secret in ("servekey77", "hf_abcdefgh", "p4ssword", "abcdef", "c=1"):
        assert secret not in text
    assert out["max_tokens"] == 5 and out["key_facts"] == 3 and "--port 1" in out["serve_args"]
    assert scrub("the server said servekey77") == f"the server said {REDACTED}"
