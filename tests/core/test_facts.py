"""Fact-key morphology (core/facts.py): one module, and it round-trips every key every committed split holds."""

import json
from importlib.resources import files

import pytest

from tau_emotion.core.facts import is_plural_key, key_terms, named_by, plural, plural_key, singular, singular_key

PACKS = ("airline", "bank", "basketball", "movie", "restaurant", "retail", "school", "telecom", "telehealth", "travel",
         "mock")


def _keys() -> set[str]:
    keys: set[str] = set()
    for pack in PACKS:
        rows = json.loads(files(f"tau_emotion.domain_packs.{pack}").joinpath("data/tasks.json").read_text())
        for row in rows:
            keys |= set(row["user"].get("known", {}))
            plan = row.get("plan") or {}
            keys |= {f["key"] for r in plan.get("requests", []) for f in r.get("facts", [])}
    return keys


def test_every_committed_key_round_trips():
    keys = _keys()
    assert len(keys) > 250
    bad = [k for k in sorted(keys)
           if singular_key(plural_key(k)) != singular_key(k) or plural_key(singular_key(k)) != plural_key(k)]
    assert bad == []
    singulars = [k for k in keys if not is_plural_key(k)]
    assert [k for k in singulars if singular_key(plural_key(k)) != k] == []
    assert [k for k in keys if is_plural_key(k) and plural_key(singular_key(k)) != k] == []


@pytest.mark.parametrize(("key", "many"), [
    ("reservation_id", "reservation_ids"), ("passenger_to_correct", "passengers_to_correct"),
    ("specialty", "specialties"), ("check_in", "check_ins"), ("set_menu", "set_menus"), ("status", "status"),
    ("address", "address"), ("date_of_birth", "dates_of_birth"), ("day", "days"),
])
def test_plural_and_singular_of_keys(key, many):
    assert plural_key(key) == many
    assert singular_key(many) == key


def test_words_ending_in_s_that_are_singular_stay():
    assert [singular(w) for w in ("status", "address", "class", "basis", "bus", "menus", "ins", "baggages")] == [
        "status", "address", "class", "basis", "bus", "menu", "in", "baggage"]
    assert plural("copy") == "copies" and plural("day") == "days" and plural("status") == "status"


def test_terms_name_a_key_with_its_aliases():
    assert key_terms("check_ins") == key_terms("check_in")
    assert named_by("reservation_id", {"reservation", "number"}) == 2  # 'number' is an alias of 'id'
    assert named_by("date_of_birth", {"date", "birth"}) == 2 and named_by("date_of_birth", {"date"}) == 0
