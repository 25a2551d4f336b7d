"""`tau run --config FILE` holds every flag; `--print-config` writes one; flags given still win."""

import json


def test_print_config_round_trips_and_flags_win(tau, tmp_path):
    printed = tau("run", "--plugins", "mock", "--trials", "1", "--concurrency", "3", "--agent-args", '{"max_tokens": 5}',
                  "--agent-api-key", "sk-secret", "--no-progress", "--print-config")
    assert printed.exit_code == 0, printed.output
    text = printed.output
    assert 'plugins = ["mock"]' in text and "concurrency = 3" in text and "sk-secret" not in text
    (tmp_path / "run.toml").write_text(text.replace("concurrency = 3", "concurrency = 2\nagent_args = {max_tokens = 9}"
                                                    ).replace('agent_args = "{\\"max_tokens\\": 5}"\n', ""))
    again = tau("run", "--config", "run.toml", "--print-config")
    assert "concurrency = 2" in again.output and 'agent_args = "{\\"max_tokens\\": 9}"' in again.output
    result = tau("run", "--config", "run.toml", "--trials", "2", "--summary-json", "s.json")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["trials"] == 2 and summary["plugins"] == ["mock"]


def test_unknown_config_key_suggests(tau, tmp_path):
    (tmp_path / "bad.toml").write_text("concurency = 2\n")
    result = tau("run", "--config", "bad.toml")
    assert result.exit_code == 2 and "unknown key 'concurency'" in result.output and "concurrency" in result.output
