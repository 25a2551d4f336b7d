"""The user-condition contract: a plugin registers a condition space, others get it from their plugin manager."""

import random

import pytest

from tau_emotion.core import hookimpl
from tau_emotion.core.conditions import CATALOG, ConditionSpace, condition_space
from tau_emotion.core.errors import TauError
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.registry import RegistryError


class Weather:
    """A toy space: skies (labels) in two groups, crossed with a wind dimension."""

    fields = ("kind", "sky", "wind")
    groups = {"dry": ("sunny", "hazy"), "wet": ("drizzle",)}
    labels = {"sunny": "dry", "hazy": "dry", "drizzle": "wet"}
    dimensions = {"wind": ("calm", "gusty")}

    def condition(self, **values):
        if self.labels.get(values.get("sky")) != values.get("kind") or values.get("wind") not in self.dimensions["wind"]:
            raise TauError(f"not a weather condition: {values}")
        return {f: values[f] for f in self.fields}

    def default(self, dimension):
        return self.dimensions[dimension][0]

    def lexicon(self, label):
        return {"sunny": ["bright"], "hazy": ["murky"], "drizzle": ["damp"]}[label]

    def anchor(self, condition, rng):
        return f"It is {rng.choice(self.lexicon(condition['sky']))} and {condition['wind']}."

    def classifier(self):
        return lambda text: self.condition(kind="wet", sky="drizzle", wind="gusty" if "!" in text else "calm")


class WeatherPlugin:
    @hookimpl
    def tau_register_condition_spaces(self, register):
        register("weather", Weather())


class Adapter:
    """A pack whose domain registration asks the manager filling its catalog for a space (as the classic adapter)."""

    seen: list

    def __init__(self):
        self.seen = []

    @hookimpl
    def tau_register_domains(self, register, pluginmanager):
        self.seen.append(condition_space(pluginmanager, "weather", missing_ok=True))


def test_a_registered_space_is_found_by_name_with_its_owner():
    pm = get_plugin_manager(defaults=False, extra=[WeatherPlugin()])
    space = condition_space(pm, "weather")
    assert isinstance(space, ConditionSpace) and pm.catalog(CATALOG).entry("weather").owner != "?"
    assert space.condition(kind="dry", sky="hazy", wind="calm") == {"kind": "dry", "sky": "hazy", "wind": "calm"}
    assert space.anchor({"kind": "dry", "sky": "sunny", "wind": "gusty"}, random.Random(0)) == "It is bright and gusty."
    assert space.classifier()("wet out there!")["wind"] == "gusty"
    with pytest.raises(TauError, match="not a weather condition"):
        space.condition(kind="wet", sky="sunny", wind="calm")


def test_an_unknown_space_names_what_is_installed_or_is_none_when_optional():
    pm = get_plugin_manager(defaults=False, extra=[WeatherPlugin()])
    with pytest.raises(RegistryError, match=r"unknown condition space 'wether'. Did you mean 'weather'\?"):
        condition_space(pm, "wether")
    assert condition_space(pm, "wether", missing_ok=True) is None


def test_a_registered_object_that_is_no_space_is_named_with_its_plugin():
    class Half:
        fields, groups, labels, dimensions = (), {}, {}, {}

    class HalfPlugin:
        @hookimpl
        def tau_register_condition_spaces(self, register):
            register("half", Half())

    pm = get_plugin_manager(defaults=False, extra=[HalfPlugin()])
    with pytest.raises(RegistryError, match=r"condition space 'half' \(registered by plugin '.+'\) is not a "
                                            r"ConditionSpace: it lacks condition, default, lexicon, anchor, classifier"):
        condition_space(pm, "half")


def test_domain_registration_gets_the_manager_that_fills_the_catalog():
    adapter = Adapter()
    with_space = get_plugin_manager(defaults=False, extra=[WeatherPlugin(), adapter])
    with_space.catalog("domains")
    without = get_plugin_manager(defaults=False, extra=[adapter])
    without.catalog("domains")
    assert isinstance(adapter.seen[0], Weather) and adapter.seen[1] is None


def test_the_emotion_plugin_registers_its_taxonomy_as_a_space():
    space = condition_space(get_plugin_manager(["emotion"], defaults=False), "emotion")
    assert isinstance(space, ConditionSpace)
    assert len(space.labels) == 22 and set(space.groups) == set(space.labels.values())
    assert space.fields[:2] == ("family", "emotion") and set(space.fields[2:]) == set(space.dimensions)
    condition = space.condition(family="fear", emotion="anxiety", politeness="warm", urgency="high", trust="cautious")
    assert space.anchor(condition, random.Random(1)) == space.anchor(condition, random.Random(1))
    with pytest.raises(TauError, match="did you mean 'anxiety'"):
        space.condition(family="fear", emotion="anxeity", politeness="warm", urgency="high", trust="cautious")
