
import pytest

from tau_emotion.core import hookimpl
from tau_emotion.core.manager import PluginError, Selection, get_plugin_manager
from tau_emotion.core.registry import RegistryError
from tau_emotion.plugins import DEFAULT_PLUGINS


def test_selection_parse():
    assert Selection.parse("emotion, airline,no:unsatisfied") == Selection(("emotion", "airline"), ("unsatisfied",))
    assert Selection.parse(["a,b", "no:c"]) == Selection(("a", "b"), ("c",))
    assert Selection.parse("a,no:b,a").items() == ["a", "no:b"]


def test_selection_parse_reads_env(monkeypatch):
    monkeypatch.setenv("TAU_PLUGINS", "mock,no:progress")
    assert Selection.parse(None) == Selection(("mock",), ("progress",))


def test_defaults_plus_selected_and_blocking():
    pm = get_plugin_manager(["mock"])
    assert set(DEFAULT_PLUGINS) | {"mock", "core"} == {name for name, _ in pm.list_name_plugin()}
    assert pm.catalog("domains").names() == ["mock"]
    blocked = get_plugin_manager(["mock"], ["stop", "oracle"])
    names = {name for name, _ in blocked.list_name_plugin()}
    assert "stop" not in names and "oracle" not in names
    assert "oracle" not in blocked.catalog("agents")
    assert get_plugin_manager().catalog("domains").names() == []


def test_unknown_plugin_suggests_nearest():
    with pytest.raises(PluginError, match=r"unknown plugin 'mok'\. Did you mean 'mock'\? Installed plugins: .*airline"):
        get_plugin_manager(["mok"])


def test_unknown_catalog_name_suggests_nearest():
    pm = get_plugin_manager(["mock"])
    with pytest.raises(RegistryError, match=r"unknown agent 'orcale'\. Did you mean 'oracle'\? Installed: asker, hasty, null, oracle, repeater, tool_calling"):
        pm.catalog("agents").get("orcale")


def test_tau_requires_pulls_plugins_in_and_no_blocks_them(plugin_module):
    plugin_module("needs_mock", """
        tau_requires = ["mock"]
    """)
    pm = get_plugin_manager(["needs_mock"])
    assert "mock" in pm.catalog("domains")
    pm = get_plugin_manager(["needs_mock"], ["mock"])
    assert "mock" not in pm.catalog("domains")


def test_dotted_module_plugin_and_duplicate_names_name_both_owners(plugin_module):
    plugin_module("dup_agent", """
        from tau_emotion.core import hookimpl

        @hookimpl
        def tau_register_agents(register):
            register("oracle", object)
    """)
    pm = get_plugin_manager(["dup_agent"])
    with pytest.raises(RegistryError, match=r"agent 'oracle' is registered twice: by plugin '(oracle|dup_agent)' and by plugin '(oracle|dup_agent)'"):
        pm.catalog("agents")


def test_broken_plugin_is_one_readable_error(plugin_module):
    plugin_module("broken_plugin", "raise RuntimeError('boom at import')\n")
    with pytest.raises(PluginError, match=r"plugin 'broken_plugin' \(broken_plugin\) failed to import: RuntimeError: boom at import"):
        get_plugin_manager(["broken_plugin"])


def test_misspelt_hookimpl_fails_loudly(plugin_module):
    plugin_module("typo_plugin", """
        from tau_emotion.core import hookimpl

        @hookimpl
        def tau_register_agent(register):
            pass
    """)
    with pytest.raises(PluginError, match="tau_register_agent"):
        get_plugin_manager(["typo_plugin"])


def test_in_test_plugin_object_can_terminate_episodes():
    from tau_emotion.core.models import RunConfig, Termination
    from tau_emotion.core.runner import prepare_run, run_sync

    class CutAfterFirstUserMessage:
        @hookimpl(tryfirst=True)
        def tau_check_termination(self, episode, message):
            if message.role == "user":
                return Termination(reason="cut", by="test")

    pm = get_plugin_manager(["mock"], extra=[CutAfterFirstUserMessage()])
    run = prepare_run(RunConfig(plugins=["mock"], trials=1, options={"progress": {"no_progress": True}}), ":memory:", pm=pm)
    summary = run_sync(run)
    assert summary["terminations"] == {"cut": 4}


def test_owners_of_catalog_entries_tell_instances_of_one_class_apart():
    class Pack:
        def __init__(self, name):
            self.name = name

        @hookimpl
        def tau_register_suites(self, register):
            register(f"suite-{self.name}", [self.name])

    pm = get_plugin_manager(defaults=False)
    pm.register(Pack("a"), name="pack-a")
    pm.register(Pack("b"), name="pack-b")
    suites = pm.catalog("suites")
    assert suites.entry("suite-a").owner == "pack-a" and suites.entry("suite-b").owner == "pack-b"
    from tau_emotion.core.manager import load_all_plugins

    domains = load_all_plugins().catalog("domains")
    assert all(entry.owner == name for name, entry in domains.items() if name.startswith("tautrait-"))
