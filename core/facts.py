"""Fact keys as words: plural and singular forms, aliases, and the terms a question names a key by.

A fact key is a snake_case noun phrase (`reservation_id`, `passenger_to_correct`, `check_in`). When two
requests of a task know one key with different values, a task builder merges them under the key's plural
(`reservation_ids`, `passengers_to_correct`, `check_ins`), and the simulated user narrows it back to one
request's value under the singular. Both directions live here, once, so that `singular_key(plural_key(k)) == k`
for every singular key a task holds (`tests/core/test_facts.py` checks every key of every committed split).

The head noun of a key is its last word, or the word before a preposition that has a word after it
(`passenger` in `passenger_to_correct`); a trailing preposition is part of the noun (`check_in` -> `check_ins`).
A word ending in s is left as it is by `plural` (`status`, `address`), as task files have always been merged.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: words that join a head noun to what qualifies it ("passenger to correct", "date of birth")
PREPOSITIONS = frozenset({"to", "for", "of", "on", "in"})
#: words a question may use for a key's word: "the confirmation number?" asks for an id
ALIASES: dict[str, frozenset[str]] = {
    "id": frozenset({"id", "number", "code", "identifier", "confirmation", "locator"}),
    "dob": frozenset({"dob", "birth", "birthday"}),
    "email": frozenset({"email", "mail"}),
}
#: words that name no part of a key
STOPWORDS = frozenset({"of", "the", "a", "an", "to", "for", "my", "your"})
#: a key's last word that says what kind of value it is rather than what it is about ("the id?" alone names nothing)
GENERIC = frozenset({"id", "name", "number", "code", "identifier"})
#: endings of singular words that end in s ("address", "basis"), and such words with other endings
_SINGULAR_S = ("ss", "is")
_SINGULAR_WORDS = frozenset({"status", "bonus", "campus", "bus", "census", "virus", "plus", "surplus", "focus", "minus",
                             "news", "series", "species", "gas", "yes", "this", "has", "was", "does"})


def plural(word: str) -> str:
    """'specialty' -> 'specialties', 'id' -> 'ids', 'in' -> 'ins'; a word ending in s stays."""
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word if word.endswith("s") else word + "s"


def singular(word: str) -> str:
    """'specialties' -> 'specialty', 'ids' -> 'id', 'ins' -> 'in', 'menus' -> 'menu'; 'status', 'address' stay."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and len(word) > 2 and not word.endswith(_SINGULAR_S) and word not in _SINGULAR_WORDS:
        return word[:-1]
    return word


def _head(words: list[str]) -> int:
    """The index of the head noun: the word before the first preposition that has a word after it, else the last."""
    return next((i - 1 for i, w in enumerate(words) if w in PREPOSITIONS and 0 < i < len(words) - 1), len(words) - 1)


def plural_key(key: str) -> str:
    """'reservation_id' -> 'reservation_ids', 'passenger_to_correct' -> 'passengers_to_correct',
    'specialty' -> 'specialties', 'check_in' -> 'check_ins'."""
    words = key.split("_")
    at = _head(words)
    words[at] = plural(words[at])
    return "_".join(words)


def singular_key(key: str) -> str:
    """The inverse of `plural_key`: 'passengers_to_correct' -> 'passenger_to_correct', 'check_ins' -> 'check_in'."""
    words = key.split("_")
    at = _head(words)
    words[at] = singular(words[at])
    return "_".join(words)


def is_plural_key(key: str) -> bool:
    """'copies', 'suspension_days', 'passengers_to_correct' name several things ('address', 'status' do not)."""
    return singular_key(key) != key


def key_terms(key: str) -> list[frozenset[str]]:
    """Per word of a key (stopwords left out), the singular words a question may name it by."""
    terms = []
    for token in key.lower().replace(" ", "_").split("_"):
        if token and token not in STOPWORDS:
            names = ALIASES.get(singular(token), frozenset()) | {token}
            terms.append(frozenset(singular(t) for t in names))
    return terms


def named_by(key: str, words: set[str]) -> int:
    """How many words of `key` the singular `words` of a question name, when they name every one of them; else 0."""
    terms = key_terms(key)
    return len(terms) if terms and all(t & words for t in terms) else 0


def head_named(key: str, words: set[str]) -> bool:
    """The question names the key's head noun, and it is not a generic one: "which cabin?" for `new_cabin`."""
    terms = key_terms(key)
    return bool(terms) and not terms[-1] & GENERIC and bool(terms[-1] & words)


# --------------------------------------------------------------------------- facts as said

_ENUM = re.compile(r"[a-z]+(?:_[a-z]+)+")


def leaves(value: Any) -> list[Any]:
    if isinstance(value, dict | list):
        return [x for v in (value.values() if isinstance(value, dict) else value) for x in leaves(v)]
    return [value]


def scalar(value: Any) -> str:
    """One value as said: 65.0 as '65', 'not_recognised' as 'not recognised' (ids with digits stay as they are)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str) and _ENUM.fullmatch(value):
        return value.replace("_", " ")
    return str(value)


def format_value(value: Any) -> str:
    """A fact as a person says it: lists and flat records (an address) as their values joined by commas."""
    if isinstance(value, dict) and all(isinstance(v, (str, int, float)) or v is None for v in value.values()):
        value = [v for v in value.values() if v not in (None, "")]
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return ", ".join(scalar(v) for v in value)
    return scalar(value) if isinstance(value, (str, int, float)) else json.dumps(value)


def state_fact(key: str, value: Any) -> str:
    """'seat', ['H10', 'H11'] -> 'My seats are H10, H11.'; 'trip_origins', 'Miami' -> 'My trip origin is Miami.'
    (the noun's number follows the value's; a count keeps its plural noun: 'My suspension days are 30.')."""
    several = isinstance(value, list) and len(value) > 1
    count = isinstance(value, (int, float)) and not isinstance(value, bool)
    if several and not is_plural_key(key):
        key = plural_key(key)
    elif not several and not count and is_plural_key(key):
        key = singular_key(key)
    verb = "are" if several or (count and is_plural_key(key)) else "is"
    return f"My {key.replace('_', ' ')} {verb} {format_value(value)}."
