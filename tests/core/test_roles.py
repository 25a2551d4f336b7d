"""The roles contract: one model option set per role, registered by its owner, read through `core.roles`."""

import pytest

from tau_emotion.core import hookimpl
from tau_emotion.core.errors import TauError
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import RunConfig
from tau_emotion.core.roles import Role, point_role, role_options, role_settings
from tau_emotion.core.runner import check_resume_changes, restore_secrets


class JudgePlugin:
    @hookimpl
    def tau_register_roles(self, register):
        register("judge", Role("the judge"))


def test_a_plugin_role_gets_the_same_option_set_owned_by_that_plugin():
    pm = get_plugin_manager(["mock"], extra=[JudgePlugin()])
    options = pm.catalog("options")
    agent, judge = options.get("agent"), options.get("judge")
    assert [f.removeprefix("judge_") for f in judge.model_fields] == [f.removeprefix("agent_") for f in agent.model_fields]
    assert options.entry("agent").owner == "core" and options.entry("user").owner == "core"
    assert options.entry("judge").owner != "core" and "the judge" in judge.model_fields["judge_model"].description
    config = RunConfig(options={"judge": {"judge_model": "m", "judge_args": '{"max_tokens": 5}', "judge_temperature": 0.5}})
    assert role_settings(config, "judge").args == {"max_tokens": 5} and role_settings(config, "judge").temperature == 0.5
    with pytest.raises(TauError, match="the judge needs a model: pass --judge-model"):
        role_settings(RunConfig(), "judge")


def test_keys_come_from_the_role_then_its_env_then_tau_api_key(monkeypatch):
    config = RunConfig(options={"agent": {"agent_model": "m", "agent_api_base": "http://127.0.0.1:9/v1"}})
    monkeypatch.delenv("TAU_API_KEY", raising=False)
    monkeypatch.delenv("TAU_AGENT_API_KEY", raising=False)
    assert role_settings(config, "agent").api_key == "EMPTY"  # a self-hosted endpoint needs none
    monkeypatch.setenv("TAU_API_KEY", "shared")
    assert role_settings(config, "agent").api_key == "shared"
    monkeypatch.setenv("TAU_AGENT_API_KEY", "agent-only")
    assert role_settings(config, "agent").api_key == "agent-only"
    assert role_settings(RunConfig(options={"user": {"user_model": "m"}}), "user").api_key == "shared"
    config.options["agent"]["agent_api_key"] = "given"
    assert role_settings(config, "agent").api_key == "given"


def test_a_resume_finds_a_redacted_role_key_in_the_role_env(monkeypatch):
    monkeypatch.delenv("TAU_API_KEY", raising=False)
    config = RunConfig(options={"user": {"user_model": "m", "user_api_key": "[REDACTED]"}})
    with pytest.raises(TauError, match="used --user-api-key, which is not stored"):
        restore_secrets("r1", config.model_copy(deep=True), None)
    monkeypatch.setenv("TAU_USER_API_KEY", "from-env")
    restore_secrets("r1", config, None)
    assert role_settings(config, "user").api_key == "from-env"


def test_point_role_is_seen_by_readers_but_not_stored():
    config = RunConfig(options={"agent": {"agent_model": "hosted_vllm/x"}})
    point_role(config, "agent", "hosted_vllm/x", "http://127.0.0.1:1234/v1")
    assert role_options(config, "agent").api_base == "http://127.0.0.1:1234/v1"
    assert "1234" not in config.model_dump_json() and config.options["agent"] == {"agent_model": "hosted_vllm/x"}


def test_only_fields_marked_by_their_owner_define_a_run():
    pm = get_plugin_manager(["mock"], extra=[JudgePlugin()])
    config = RunConfig(options={"judge": {"judge_model": "a"}})
    check_resume_changes("r1", config, {}, {"judge": {"judge_api_base": "http://x", "judge_temperature": 1.0}}, pm)
    with pytest.raises(TauError, match=r"--judge-model 'a' -> 'b'"):
        check_resume_changes("r1", config, {}, {"judge": {"judge_model": "b"}}, pm)


def test_a_pointed_role_travels_to_ray_workers():
    from tau_emotion.plugins.ray_executor import EpisodeWorker

    config = RunConfig(plugins=["mock"], options={"agent": {"agent_model": "hosted_vllm/x"}})
    point_role(config, "agent", "hosted_vllm/x", "http://127.0.0.1:4321/v1")
    worker = EpisodeWorker("r1", config.model_dump_json(), dict(config.role_endpoints))  # the actor, built in-process
    assert role_settings(worker.run.config, "agent").api_base == "http://127.0.0.1:4321/v1"
