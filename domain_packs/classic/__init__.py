"""Classic suites: τ-bench-style env packages (`tau-trait` from PyPI; `tau_bench` and the τ-Emotion-Bench
release `tau_emotion_bench` from source) as domains.

Every row of SUITES becomes one plugin object, named by an entry point
(`tautrait-airline = "tau_emotion.domain_packs.classic:tautrait_airline"`). A missing package makes
the plugin unavailable with its install hint. The env's pieces are read and imported without the
package `__init__`s (`source.py`), their tools run unchanged on our copy-on-write state (`adapter.py`)
and their tasks become ours (`tasks.py`), so a trajectory changes the database exactly as in their
env and our reward agrees with their `calculate_reward`: the final database must equal the gold
replay's, and every gold output must have been told. Deliberate differences stay, all from core's
scorer: outputs match by meaning (numbers by value, so "10" does not match "100" but "$10.00"
matches "10"; their substring check takes "100" for "10" and misses "$10.00"), when the gold ends in
a transfer the agent must have called it, and a user who gives up scores -1. Parity with their
reward is therefore stated for their gold trajectories (and the perturbations the tests make: an
output withheld, a write dropped or doubled, thousands separators), not for every wording.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tau_emotion.core import hookimpl
from tau_emotion.core.conditions import ConditionSpace, condition_space
from tau_emotion.core.domain import Domain
from tau_emotion.core.manager import PluginUnavailable
from tau_emotion.core.models import Task
from tau_emotion.core.state import Database
from tau_emotion.core.tools import Toolset
from tau_emotion.domain_packs.classic import emotions
from tau_emotion.domain_packs.classic.adapter import ClassicTool, database_from
from tau_emotion.domain_packs.classic.source import EnvModule
from tau_emotion.domain_packs.classic.tasks import load_tasks


@dataclass(frozen=True)
class Distribution:
    """A package of τ-bench-style envs: how it is named in titles and task meta, and how to install it."""

    label: str  # in the domain's description: "τ-Trait airline ..."
    source: str  # Task.meta["source"] and the description's "... from the tau-trait package"
    hint: str  # the PluginUnavailable message when it is missing
    conditions: bool = False  # whether its tasks carry emotion conditions (τ-Emotion-Bench: `emotions.py`)


DISTRIBUTIONS = {
    "tau_trait": Distribution("τ-Trait", "tau-trait", "pip install 'tau-emotion[classic]'"),
    "tau_bench": Distribution("τ-bench", "tau-bench", "install tau-bench from source: "
                              "pip install git+https://github.com/sierra-research/tau-bench"),
    "tau_emotion_bench": Distribution("τ-Emotion-Bench", "tau-emotion-bench",
                                      "install the τ-Emotion-Bench release from source (package "
                                      "`tau_emotion_bench`, not on PyPI; github.com/rishitoshsingh/"
                                      "tau-emotion-bench): pip install /path/to/its/checkout", conditions=True),
}

# plugin (and domain) name -> (their package, their env); the entry points name each one
SUITES: dict[str, tuple[str, str]] = {
    "tautrait-airline": ("tau_trait", "airline"),
    "tautrait-retail": ("tau_trait", "retail"),
    "tautrait-telecom": ("tau_trait", "telecom"),
    "tautrait-telehealth": ("tau_trait", "telehealth"),
    "taubench-airline": ("tau_bench", "airline"),
    "taubench-retail": ("tau_bench", "retail"),
    "tauemo-airline": ("tau_emotion_bench", "airline"),
    "tauemo-retail": ("tau_emotion_bench", "retail"),
    "tauemo-telecom": ("tau_emotion_bench", "telecom"),
    "tauemo-telehealth": ("tau_emotion_bench", "telehealth"),
}


class ClassicPlugin:
    """The plugin for one classic domain, e.g. `tautrait-airline` from `tau_trait.envs.airline`."""

    def __init__(self, name: str, package: str, env: str, distribution: Distribution | None = None):
        self.name = name
        self.env = EnvModule(package, env)
        self.distribution = distribution or DISTRIBUTIONS[package]
        self.title = f"{self.distribution.label} {env} (classic env from the {self.distribution.source} package)"
        self.skipped_splits: dict[str, str] = {}
        self._domains: dict[ConditionSpace | None, Domain] = {}

    def __repr__(self) -> str:
        return f"ClassicPlugin({self.name!r})"

    def check_available(self) -> None:
        if not self.env.installed():
            raise PluginUnavailable(self.distribution.hint)

    @hookimpl
    def tau_register_domains(self, register: Any, pluginmanager: Any) -> None:
        space = None
        if self.distribution.conditions:  # their conditions become the block of the emotion plugin, if loaded
            space = condition_space(pluginmanager, emotions.BLOCK, missing_ok=True)
        register(self.domain(space))

    def toolset(self) -> Toolset:
        terminal = set(self.env.source.terminate_tools)
        return Toolset([ClassicTool(cls, terminal=cls.get_info()["function"]["name"] in terminal)
                        for cls in self.env.tool_classes])

    def database(self) -> Database:
        return database_from(self.env.load_data(), self.name)

    def tasks(self, space: ConditionSpace | None = None) -> list[Task]:
        names = {cls.get_info()["function"]["name"] for cls in self.env.tool_classes}
        tasks, self.skipped_splits = load_tasks(self.env, domain=self.name, source=self.distribution.source,
                                                tools=names, space=space)
        domain = self._domains.get(space)
        if domain is not None and self.skipped_splits:
            domain.meta["skipped_splits"] = dict(self.skipped_splits)
            domain.description = self.title + "".join(
                f" [split '{s}' unavailable: {why}]" for s, why in self.skipped_splits.items())
        return tasks

    def domain(self, space: ConditionSpace | None = None) -> Domain:
        """The domain, made once per process and condition space: its loaders run on first use and are cached.

        `space` is the emotion plugin's condition space, which turns a τ-Emotion-Bench task's condition into
        its `emotion` block (`emotions.py`); without it the tasks carry none. Other packages ignore it.
        """
        space = space if self.distribution.conditions else None
        if space not in self._domains:
            self._domains[space] = Domain(
                self.name, self.toolset, description=self.title,
                load_database=self.database, load_policy=self.env.wiki, load_tasks=lambda: self.tasks(space),
                meta={"source": self.distribution.source, "env": self.env.module, "classic": True,
                      "verbatim_schemas": True},
            )
        return self._domains[space]


PLUGINS = {name: ClassicPlugin(name, package, env) for name, (package, env) in SUITES.items()}


def __getattr__(attr: str) -> ClassicPlugin:
    """The entry points' targets: `tautrait_airline` is `PLUGINS["tautrait-airline"]`."""
    plugin = PLUGINS.get(attr.replace("_", "-"))
    if plugin is None:
        raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
    return plugin
